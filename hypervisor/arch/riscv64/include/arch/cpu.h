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
#define CPU_SCRATCH     16     /* the trap entry's spare register slots */
#define CPU_SCRATCH2    24
#define CPU_FAST_TIMER  32     /* SBI timer interrupts handed to the guest by the fast path */
#define CPU_FAST_WFI    40     /* trapped WFIs the fast path waited for */
#define CPU_PANIC_TOP   48     /* the top of the core's panic stack (vectors.S: from_hs) */
#define CPU_SCRATCH3    56     /* the doorbell path's: the trapped store's stval */
#define CPU_FAST_DOORBELL 64   /* doorbell rings handled by the vector */
#define CPU_DOORBELL_HTVAL 72  /* vCPU cache: its fast doorbell page's IPA >> 2 (htval's form), DOORBELL_NONE: none */
#define CPU_DOORBELL_SETIPNUM 80 /* the APLIC domain's setipnum (arch_irq_raise's store) */
#define CPU_FETCH_VEC   88     /* stvec while the doorbell path reads the guest's instruction */
#define CPU_TRAP_VEC    96     /* stvec otherwise: trap_entry */
#define CPU_DOORBELL_IRQ 104   /* vCPU cache: uint64_t[8], the APLIC source ringing member k sets */
#define CPU_DOORBELL_GATE 168  /* vCPU cache: member k's ring gate, never 0 (closed: the ring is C's) */
#define CPU_FAST_VIRTUAL_INSN 244 /* scause the trapped WFI's fast path takes (22), set at entry */
#define CPU_FAST_TIMER_IRQ 248 /* scause << 1 the SBI timer's fast path takes (10), set at entry */
#define FAST_NEVER      (-1)   /* either, on a shared core: no scause matches, the trap goes to C */
#define FAST_VIRTUAL_INSN 22   /* EXC_VIRTUAL_INSTRUCTION */
#define FAST_TIMER_IRQ  10     /* IRQ_S_TIMER << 1 */
#define DOORBELL_GATE_BIT 1    /* IVSHMEM_RING_GATE_BIT */
#define DOORBELL_MEMBERS  8
#define DOORBELL_NONE   (-1)   /* no page: htval (a GPA >> 2) is never all-ones */
#define GUEST_FRAME_SIZE 272   /* x0 (unused) - x31, sepc, padding: kept at the stack top */
#define GUEST_SEPC      256
#define RISCV_FP_FCSR   256    /* struct riscv_fp: fcsr after f0-f31 (fp.S) */
#define STACK_SIZE      16384
#define STACK_GUARD     4096   /* unmapped, below each core's stack: an overflow faults */
#define PANIC_STACK_SIZE 4096  /* a trap in HS-mode runs on its own: sp may be the fault */
#define MAX_CPUS        8

#ifndef __ASSEMBLER__
#include <stdatomic.h>
#include <tern/types.h>

/* What another core of the partition asks of a vCPU (struct arch_vcpu.posted), with a kick. */
#define POSTED_VSSIP  BIT(0)  /* an SBI IPI: the guest's supervisor software interrupt */
#define POSTED_FENCE  BIT(1)  /* an SBI RFENCE: drop the guest's translations and instructions */
#define POSTED_VAPLIC BIT(2)  /* its virtual APLIC changed: re-evaluate VSEIP */

struct vcpu;

/*
 * The physical core's: its stacks, the trap entry's scratch slots and the fast paths' counts
 * the assembly reads at fixed offsets, the doorbell path's cache of the vCPU it runs (filled
 * at its entry, vcpu.c), the vCPU it runs.  A cache line each, and a power of
 * two in size (checked below): cpus[] is indexed by a shift, not a multiply.  The fast paths'
 * counts stay here although they count for the vCPU: per vCPU, the assembly would load the
 * vCPU's address first, an instruction more on each fast path.
 */
struct __attribute__((aligned(64))) riscv_cpu {
	uint64_t id;
	uint64_t stack_top;
	uint64_t scratch;
	uint64_t scratch2;
	uint64_t fast_timer;
	uint64_t fast_wfi;
	uint64_t panic_top;
	uint64_t scratch3;
	uint64_t fast_doorbell;    /* vCPU */
	uint64_t doorbell_htval;   /* vCPU cache (channel_fast_doorbell) */
	uint64_t doorbell_setipnum;
	uint64_t fetch_vec;
	uint64_t trap_vec;
	uint64_t doorbell_irq[DOORBELL_MEMBERS];  /* vCPU cache */
	const _Atomic uint32_t *doorbell_gate[DOORBELL_MEMBERS]; /* vCPU cache */
	struct vcpu *vcpu;
	bool panicking;            /* a fault while reporting one ends the board at once */
	/*
	 * vCPUs take turns on this core (cpu_is_shared), and the fast paths' scauses: set at each
	 * entry (arch_vcpu_run, arch_vcpu_resume).  A shared core's are FAST_NEVER, so its WFI,
	 * SBI timer and doorbell traps reach C, which can switch, with no instruction added to the
	 * fast paths of a core that is not shared (each compares with its value instead of an
	 * immediate).
	 */
	bool shared;
	int32_t fast_virtual_insn;
	int32_t fast_timer_irq;
};

/* A core's stack, with the page below it left out of HS-mode's map (mmu.c). */
struct core_stack {
	uint8_t guard[STACK_GUARD];
	uint8_t stack[STACK_SIZE];
};

/* The guest's registers, saved at the top of its core's stack on every trap. */
struct guest_regs {
	uint64_t x[32];
	uint64_t sepc;
	uint64_t pad;
};

_Static_assert(__builtin_offsetof(struct riscv_cpu, id) == CPU_ID, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, stack_top) == CPU_STACK_TOP, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, scratch) == CPU_SCRATCH, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, scratch2) == CPU_SCRATCH2, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fast_timer) == CPU_FAST_TIMER, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fast_wfi) == CPU_FAST_WFI, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, panic_top) == CPU_PANIC_TOP, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, scratch3) == CPU_SCRATCH3, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fast_doorbell) == CPU_FAST_DOORBELL, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, doorbell_htval) == CPU_DOORBELL_HTVAL, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, doorbell_setipnum) == CPU_DOORBELL_SETIPNUM, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fetch_vec) == CPU_FETCH_VEC, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, trap_vec) == CPU_TRAP_VEC, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, doorbell_irq) == CPU_DOORBELL_IRQ, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, doorbell_gate) == CPU_DOORBELL_GATE, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fast_virtual_insn) == CPU_FAST_VIRTUAL_INSN, "asm offset");
_Static_assert(__builtin_offsetof(struct riscv_cpu, fast_timer_irq) == CPU_FAST_TIMER_IRQ, "asm offset");
_Static_assert((sizeof(struct riscv_cpu) & (sizeof(struct riscv_cpu) - 1u)) == 0u, "cpus[] by a shift");
_Static_assert(sizeof(struct core_stack) == STACK_GUARD + STACK_SIZE, "asm stride");
/* A guest's FP registers, while it is off its core (fp.S moves them). */
struct riscv_fp {
	uint64_t f[32];
	uint64_t fcsr;
};

_Static_assert(sizeof(struct guest_regs) == GUEST_FRAME_SIZE, "asm frame");
_Static_assert(__builtin_offsetof(struct riscv_fp, fcsr) == RISCV_FP_FCSR, "asm offset");
_Static_assert(__builtin_offsetof(struct guest_regs, sepc) == GUEST_SEPC, "asm frame");

extern struct riscv_cpu cpus[MAX_CPUS];

/* Post `what` (POSTED_*) to vCPU `target`: taken at once if it runs here, else with a kick. */
void riscv_post(struct vcpu *target, uint32_t what);
/* What was posted to vCPU `v`, taken on its core (traps.c). */
void riscv_take_posted(struct vcpu *v);
/* The core's own interrupts pending (SIP_SEIP: a kick, SIP_STIP: the SBI timer's stand-in), taken for `v`. */
void riscv_core_interrupts(struct vcpu *v, uint64_t pending);
/*
 * A shared core (struct riscv_cpu.shared; vcpu.c): its S timer's interrupt while `v` runs
 * (v's SBI timer, the core's scheduling event, or both), and v's SBI set_timer.
 */
void riscv_shared_timer(struct vcpu *v);
void riscv_shared_guest_timer(uint64_t deadline);
/* SGEI on a shared core: the saved trap-less vCPUs' files that have an interrupt stop raising it. */
void riscv_guest_files_raised(void);

#ifdef TERN_HOST
/* Host tests (tests/unit/fake/riscv64): the core the test acts as. */
struct riscv_cpu *fake_this_cpu(void);
#endif

static inline struct riscv_cpu *this_cpu(void)
{
#ifdef TERN_HOST
	return fake_this_cpu();
#else
	struct riscv_cpu *c;
	__asm__ volatile("mv %0, tp" : "=r"(c));
	return c;
#endif
}

static inline struct guest_regs *guest_frame(const struct riscv_cpu *c)
{
	return (struct guest_regs *)(uintptr_t)(c->stack_top - GUEST_FRAME_SIZE);
}

#endif
#endif
