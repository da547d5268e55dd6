/* SPDX-License-Identifier: MIT */
/* What boot.S and C call across the assembly boundary. */
#ifndef ARCH_ENTRY_H
#define ARCH_ENTRY_H

#include <arch/cpu.h>

extern uint8_t cpu_stacks[MAX_CPUS][STACK_SIZE];

/* boot.S */
void secondary_entry(void);
void hyp_trap(void);

/* C entry points boot.S branches to. */
__attribute__((noreturn)) void riscv_boot_primary(unsigned id, uint64_t entry_time);
__attribute__((noreturn)) void riscv_boot_secondary(unsigned id);
__attribute__((noreturn)) void riscv_hyp_panic(const uint64_t *regs);

#endif
