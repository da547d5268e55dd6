/* SPDX-License-Identifier: MIT */
/* What boot.S and C call across the assembly boundary. */
#ifndef ARCH_ENTRY_H
#define ARCH_ENTRY_H

#include <arch/cpu.h>

extern uint8_t cpu_stacks[MAX_CPUS][STACK_SIZE];

/* boot.S */
void secondary_entry(void);
void trap_entry(void);
/* Resume the guest from `r` (sscratch = this core, sret to VS-mode). */
__attribute__((noreturn)) void guest_enter(struct guest_regs *r);

/* C entry points boot.S branches to. */
__attribute__((noreturn)) void riscv_boot_primary(unsigned id, uint64_t entry_time, paddr_t fdt);
__attribute__((noreturn)) void riscv_boot_secondary(unsigned id);
__attribute__((noreturn)) void riscv_hyp_panic(const uint64_t *regs);
/* Claim this core's pending kicks (its S-level IMSIC file); whether there was one. */
bool riscv_take_kicks(void);
/* The guest interrupt files each hart has (0 without the AIA's IMSIC). */
unsigned riscv_guest_files(void);
/* Hart `hart`'s S-level IMSIC file on the board; its guest files follow it. */
paddr_t riscv_imsic_hart_file(unsigned hart);
/*
 * The instruction at the guest's virtual address `gva`, as its fetch translates it; false if
 * that faults (its page tables changed meanwhile).
 */
bool riscv_fetch_guest_insn(uint64_t gva, uint32_t *insn);
/* A trap from the guest, its registers in `r`; returning resumes it from `r`. */
void riscv_guest_trap(struct guest_regs *r);

#endif
