/* SPDX-License-Identifier: MIT */
/*
 * Where assembly and C meet: the C functions boot.S and vectors.S enter (the hypervisor's entry
 * points: tools/stackdepth.py checks each one's worst-case stack), and what C uses of theirs.
 */
#ifndef ARCH_ENTRY_H
#define ARCH_ENTRY_H

#include <arch/cpu.h>

/* boot.S: every core's first C function, on the top of its stack (set_stack). */
__attribute__((noreturn)) void arm64_boot_primary(unsigned id, uint64_t entry_time, paddr_t fdt);
__attribute__((noreturn)) void arm64_boot_secondary(unsigned id);
/* Where a core started with PSCI CPU_ON begins. */
void secondary_entry(void);
extern struct core_stack cpu_stacks[MAX_CPUS];
extern uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE];

/*
 * vectors.S: the guest left, its registers saved in `r` (guest_frame()); returning resumes it
 * from `r`.
 */
void arm64_guest_sync(struct guest_regs *r);
void arm64_guest_irq(uint32_t intid, struct guest_regs *r);
void arm64_guest_fiq(struct guest_regs *r);
void arm64_guest_wfi(struct guest_regs *r);
void arm64_guest_async_abort(struct guest_regs *r, int kind);
/* An exception at EL2 itself: a hypervisor bug. */
/* `sp`: the stack pointer the exception came with (the report runs on the panic stack). */
__attribute__((noreturn)) void arm64_hyp_panic(struct guest_regs *r, int async, uint64_t sp);
/*
 * The vector tables: 16 entries of 128 bytes.  A shared core's (arm64_shared_entry) saves the
 * guest's registers in its running vCPU's context and runs C on the core's stack.
 */
extern char hyp_vectors[2048];
extern char hyp_vectors_shared[2048];
/* Resume a guest from the core's frame (guest_frame()), abandoning everything on the stack. */
__attribute__((noreturn)) void guest_enter(struct guest_regs *frame);

/* mmu.c: the hypervisor's own map, built and switched on by each core at boot. */
void mmu_init_tables(void);
void mmu_enable(void);
/* Is the hypervisor's text read-only at EL2 on this core (W^X), and its stack's guard page unmapped? */
bool mmu_text_protected(void);

#endif
