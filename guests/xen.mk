# The Xen build variant of the latency guest: build/lat-xen.img, from the same sources as
# build/lat.img with xen/board.h pre-included (Xen's guest memory map, console on vpl011).
#   make -C guests -f xen.mk
# The default Makefile is not involved and its builds are unchanged.

CC      := clang
LD      := ld.lld
OBJCOPY := llvm-objcopy

BUILD   := build
XBUILD  := $(BUILD)/xen

TARGET  := --target=aarch64-none-elf
CFLAGS  := $(TARGET) -std=c11 -ffreestanding -fno-builtin -nostdlib -mgeneral-regs-only \
	   -mstrict-align -O2 -g -Wall -Wextra -Werror -include xen/board.h -Ilib -MMD -MP
ASFLAGS := $(TARGET) -g -include xen/board.h -Ilib -MMD -MP
LDFLAGS := -nostdlib -static -T lib/link.ld

LIB_SRCS := $(wildcard lib/*.c lib/*.S)
LAT_SRCS := $(wildcard lat/*.c lat/*.S)

obj = $(patsubst %,$(XBUILD)/%.o,$(basename $(1)))

OBJS := $(call obj,$(LAT_SRCS)) $(call obj,$(LIB_SRCS))

.PHONY: all clean
all: $(BUILD)/lat-xen.img

$(XBUILD)/%.o: %.c xen/board.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(XBUILD)/%.o: %.S xen/board.h
	@mkdir -p $(dir $@)
	$(CC) $(ASFLAGS) -c $< -o $@

$(BUILD)/lat-xen.elf: $(OBJS) lib/link.ld
	$(LD) $(LDFLAGS) $(OBJS) -o $@

$(BUILD)/lat-xen.img: $(BUILD)/lat-xen.elf
	$(OBJCOPY) -O binary $< $@

clean:
	rm -rf $(XBUILD) $(BUILD)/lat-xen.elf $(BUILD)/lat-xen.img

-include $(shell find $(XBUILD) -name '*.d' 2>/dev/null)
