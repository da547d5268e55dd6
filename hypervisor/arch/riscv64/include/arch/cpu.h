/* SPDX-License-Identifier: MIT */
/*
 * Per-core state.  `tp` points at the core's `struct riscv_cpu` while the hypervisor runs
 * (and `sscratch` will, while a guest runs); the assembly reads the first fields at fixed
 * offsets.  Core numbers are hart ids (QEMU virt numbers its harts from 0).
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#define CPU_ID          0
#define CPU_STACK_TOP   8
#define GUEST_FRAME_SIZE 272   /* x1-x31, sepc, sstatus, hstatus, padding: room kept at the stack top */
#define STACK_SIZE      16384
#define MAX_CPUS        8

#ifndef __ASSEMBLER__
#include <tern/types.h>

struct vcpu;

struct riscv_cpu {
	uint64_t id;
	uint64_t stack_top;
	struct vcpu *vcpu;
};

_Static_assert(__builtin_offsetof(struct riscv_cpu, id) == CPU_ID, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, stack_top) == CPU_STACK_TOP, "asm offset");

extern struct riscv_cpu cpus[MAX_CPUS];

static inline struct riscv_cpu *this_cpu(void)
{
	struct riscv_cpu *c;
	__asm__ volatile("mv %0, tp" : "=r"(c));
	return c;
}

#endif
#endif
