# The hypervisor's code as the host tests and fuzzers build it: every file a guest or a
# configuration can reach, unchanged, on the fake architecture (fake.h).  Include with HYP set
# to the hypervisor tree, FAKE to this directory and ARCH to the port (arm64 if unset).
ARCH ?= arm64
HOST_SUT_arm64 := $(HYP)/arch/arm64/vgicv3.c $(HYP)/arch/arm64/traps.c $(HYP)/arch/arm64/decode.c \
	$(HYP)/arch/arm64/vcpu.c $(HYP)/arch/arm64/firmware.c \
	$(HYP)/arch/riscv64/insn.c
HOST_SUT_riscv64 := $(HYP)/arch/riscv64/vcpu.c $(HYP)/arch/riscv64/aplic.c \
	$(HYP)/arch/riscv64/insn.c $(HYP)/arch/riscv64/gstage.c
HOST_SUT := $(wildcard $(HYP)/core/*.c) $(HYP)/lib/printf.c $(HOST_SUT_$(ARCH))
FAKE_SRCS := $(wildcard $(FAKE)/*.c) $(wildcard $(FAKE)/$(ARCH)/*.c)
HOST_DEPS := $(HOST_SUT) $(FAKE_SRCS) $(wildcard $(FAKE)/*.h) $(wildcard $(FAKE)/$(ARCH)/*.h) \
	$(wildcard $(HYP)/include/tern/*.h) $(wildcard $(HYP)/arch/$(ARCH)/include/arch/*.h) \
	$(wildcard $(HYP)/arch/$(ARCH)/*.h)
# TERN_HOST: the arch headers' host mode.  The hypervisor's printf replaces libc's under its
# own name.
HOST_CFLAGS := -std=c11 -g -Wall -Wextra -Werror -DTERN_HOST -I$(HYP)/include \
	-I$(HYP)/arch/$(ARCH)/include -I$(FAKE) -I$(FAKE)/$(ARCH) -fno-omit-frame-pointer \
	-Dvsnprintf=tern_vsnprintf -Dsnprintf=tern_snprintf
