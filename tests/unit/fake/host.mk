# The hypervisor's code as the host tests and fuzzers build it: every file a guest or a
# configuration can reach, unchanged, on the fake architecture (fake.h).  Include with HYP set
# to the hypervisor tree and FAKE to this directory.
HOST_SUT := $(wildcard $(HYP)/core/*.c) $(HYP)/lib/printf.c \
	$(HYP)/arch/arm64/vgic.c $(HYP)/arch/arm64/traps.c $(HYP)/arch/arm64/esr.c \
	$(HYP)/arch/arm64/vcpu.c $(HYP)/arch/riscv64/insn.c
FAKE_SRCS := $(wildcard $(FAKE)/*.c)
HOST_DEPS := $(HOST_SUT) $(FAKE_SRCS) $(wildcard $(FAKE)/*.h) $(wildcard $(HYP)/include/tern/*.h) \
	$(wildcard $(HYP)/arch/arm64/include/arch/*.h)
# TERN_HOST: the arm64 headers' host mode.  The hypervisor's printf replaces libc's under its
# own name.
HOST_CFLAGS := -std=c11 -g -Wall -Wextra -Werror -DTERN_HOST -I$(HYP)/include \
	-I$(HYP)/arch/arm64/include -I$(FAKE) -fno-omit-frame-pointer \
	-Dvsnprintf=tern_vsnprintf -Dsnprintf=tern_snprintf
