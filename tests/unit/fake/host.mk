# The hypervisor's code as the host tests and fuzzers build it: every file a guest or a
# configuration can reach, unchanged, on the fake architecture (fake.h).  Include with HYP set
# to the hypervisor tree, FAKE to this directory and ARCH to the port (arm64 if unset).
ARCH ?= arm64
# The partitions' UART model, as the port's board has it (platform/*/platform.mk's VUART).
VUART_arm64 := pl011
VUART_riscv64 := ns16550
VUART := $(VUART_$(ARCH))
HOST_SUT_arm64 := $(HYP)/arch/arm64/vgicv3.c $(HYP)/arch/arm64/traps.c $(HYP)/arch/arm64/decode.c \
	$(HYP)/arch/arm64/vcpu.c $(HYP)/arch/arm64/firmware.c
HOST_SUT_riscv64 := $(HYP)/arch/riscv64/vcpu.c $(HYP)/arch/riscv64/traps.c \
	$(HYP)/arch/riscv64/firmware.c $(HYP)/arch/riscv64/aplic.c $(HYP)/arch/riscv64/vaplic.c \
	$(HYP)/arch/riscv64/decode.c $(HYP)/arch/riscv64/stage2.c
HOST_SUT := $(wildcard $(HYP)/core/*.c $(HYP)/devices/$(VUART)/*.c) $(HYP)/lib/printf.c \
	$(HOST_SUT_$(ARCH))
FAKE_SRCS := $(wildcard $(FAKE)/*.c) $(wildcard $(FAKE)/$(ARCH)/*.c)
HOST_DEPS := $(HOST_SUT) $(FAKE_SRCS) $(wildcard $(FAKE)/*.h) $(wildcard $(FAKE)/$(ARCH)/*.h) \
	$(wildcard $(HYP)/include/tern/*.h) $(wildcard $(HYP)/arch/$(ARCH)/include/arch/*.h) \
	$(wildcard $(HYP)/devices/$(VUART)/*.h) \
	$(wildcard $(HYP)/arch/$(ARCH)/*.h)
# TERN_HOST: the arch headers' host mode.  The hypervisor's printf replaces libc's under its
# own name.
HOST_CFLAGS := -std=c11 -g -Wall -Wextra -Werror -DTERN_HOST -I$(HYP)/include \
	-I$(HYP)/arch/$(ARCH)/include -I$(HYP)/devices/$(VUART) -I$(FAKE) -I$(FAKE)/$(ARCH) \
	-DFAKE_VUART_MODEL=v$(VUART)_model -fno-omit-frame-pointer \
	-Dvsnprintf=tern_vsnprintf -Dsnprintf=tern_snprintf
# riscv64: linked at a fixed address, not as PIE.  The fake's RAM (fake_ram, a static array)
# is the partitions' guest-physical memory, which must lie inside the G-stage's input range
# (Sv39x4: 41 bits); a PIE is loaded near 2^46.  arm64's fake builds no stage 2, and its tests
# want that RAM above 4 GiB (32-bit PSCI calls cannot name it).
# Both ports wrap the core's calls the port makes on a shared core (fake/sched_wraps.c): a
# test sees what the port hands sched_guest_waits and sched_timer_expired without running the
# core's loop; with no hook set the wrappers call the real ones.  riscv64 also wraps
# cpu_is_shared (a test makes a core shared) and a kick's vcpu_check_requests
# (fake/riscv64/riscv64.c), whatever core/shared_core.c would do.
HOST_LDFLAGS_riscv64 := -no-pie -Wl,--wrap=cpu_is_shared,--wrap=vcpu_check_requests
HOST_LDFLAGS := -Wl,--wrap=sched_guest_waits,--wrap=sched_timer_expired $(HOST_LDFLAGS_$(ARCH))
