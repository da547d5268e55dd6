/* SPDX-License-Identifier: MIT */
/*
 * Per-core state.  TPIDR_EL2 points at the core's `struct arm64_cpu`; the
 * interrupt fast path (vectors.S) reads the first fields at fixed offsets.
 * What is a vCPU's wherever it runs is in its struct arch_vcpu (arch/partition.h).
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#define CPU_LR_TEMPLATE 0      /* uint64_t[1024]: list-register value per INTID, 0 = slow path */
#define CPU_FAST_IRQS   8192   /* interrupts injected by the fast path */
#define CPU_STACK_TOP   8200
#define CPU_ID          8208
#define CPU_LRS_IDLE    8216   /* ICH_ELRSR_EL2 value when every list register is empty */
#define CPU_LRS_NEVER   0xffffffffffffffffu /* lrs_idle of a shared core: ICH_ELRSR_EL2 has 16 bits */
#define CPU_FAST_WFI    8224   /* WFI exits handled by the fast path */
#define CPU_FAST_WFE    8232
#define CPU_SGI_VCPUS   8240   /* direct vCPU: target-list bits of its partition's vCPUs, else 0 */
#define CPU_SGI_SHIFT   8248   /* ... and how far to shift them to get physical Aff0 bits */
#define CPU_FAST_SGI    8256   /* SGI writes handled by the vector (direct vCPUs) */
#define CPU_PANIC_TOP   8264   /* the top of the core's panic stack (vectors.S: hyp_panic_*) */
#define CPU_DOORBELL_PAGE 8272 /* vCPU cache: its fast doorbell page's IPA >> 12, or DOORBELL_NO_PAGE */
#define CPU_FAST_DOORBELL 8280 /* doorbell rings handled by the vector */
#define CPU_DOORBELL_REG  8288 /* vCPU cache: uint64_t[8], GICD_ISPENDRn ringing member k sets, 0: C */
#define CPU_DOORBELL_BIT  8352 /* vCPU cache: uint32_t[8], the bit written there */
#define CPU_DOORBELL_GATE 8384 /* vCPU cache: member k's ring gate (channel_fast_doorbell), 0: none */
#define CPU_FRAME       8448   /* guest_frame(): a shared core's way back from C (vectors.S) */
#define DOORBELL_GATE_BIT 1    /* IVSHMEM_RING_GATE_BIT */
#define DOORBELL_MEMBERS  8
#define DOORBELL_NO_PAGE  0xffffffffffffffffu /* no fast doorbell: HPFAR_EL2.FIPA's 40 bits never match it */
#define NR_INTIDS       1024   /* SGI, PPI, SPI and special INTIDs; LPIs are never enabled */
#define GUEST_FRAME_SIZE 272   /* x0-x30, ELR_EL2, SPSR_EL2, padding */
#define GUEST_ELR       248
#define GUEST_SPSR      256
#define STACK_SIZE      16384
#define STACK_GUARD     4096   /* unmapped, below each core's stack: an overflow faults */
#define PANIC_STACK_SIZE 4096  /* an exception at EL2 runs on its own: SP_EL2 may be the fault */
#define MAX_CPUS        8

#ifndef __ASSEMBLER__
#include <stdatomic.h>
#include <tern/config_abi.h>
#include <tern/types.h>
#include <tern/virq_queue.h>

struct guest_regs {
	uint64_t x[31];
	uint64_t elr;
	uint64_t spsr;
	uint64_t pad;
};

/*
 * The running vCPU's delivery state beside its list registers, kept per core: the interrupt
 * and SGI paths (vgicv3.c) reach it at a fixed offset from the core's struct, with no pointer
 * to follow.  In struct arch_vcpu instead, the queue cost the trap-and-inject SGI path two
 * instructions and the held SGIs cost every vCPU entry and stop one or two (measured).
 * `redist` points at the vCPU's own virtual redistributor, its state that outlives the
 * vCPU's stay on the core (set when it enters); the rest is reset at entry and emptied at
 * stop (held SGIs into the redistributor's pending bits), and is what a vCPU switch would
 * save and restore with the list registers; fast_path_off follows the queue.
 */
struct vgic_redist;

struct vgic_cpu {
	struct vgic_redist *redist; /* the vCPU's virtual redistributor (set when it enters) */
	uint32_t sgi_held;       /* SGIs raised while disabled, delivered on enable */
	bool fast_path_off;      /* queue non-empty: every injection takes the ordered path */
	struct virq_queue queue;
};

struct vcpu;

/* A core's stack, with the page below it left out of EL2's map (mmu.c). */
struct core_stack {
	uint8_t guard[STACK_GUARD];
	uint8_t stack[STACK_SIZE];
};

/*
 * The core's own: its id, MPIDR, stacks, redistributor, list registers' count (lrs_idle),
 * features and guest frame (guest_frame).  The rest is the running vCPU's, kept here because
 * vectors.S reads it at fixed offsets with no pointer to follow: lr_template, direct and
 * sgi_vcpus/sgi_shift are a cache rebuilt whenever the vCPU enters (arch_vcpu_run,
 * vgic_vcpu_reset), as is `vgic`; the fast_* counters count its exits on this core
 * (arch_vcpu_stat).  On a shared core
 * (`shared`, cpu_is_shared) the cache is rebuilt at every switch (arch_vcpu_resume), the
 * counters are folded into the vCPU that leaves (arch_vcpu_save), and lrs_idle never matches,
 * so that vectors.S leaves every WFI to C (arm64_guest_wfi), which may let another vCPU run.
 */
struct arm64_cpu {
	uint64_t lr_template[NR_INTIDS]; /* vCPU cache: list-register value per INTID (vgicv3.c) */
	uint64_t fast_irqs;      /* vCPU: its exits vectors.S counts */
	uint64_t stack_top;
	uint64_t id;
	uint64_t lrs_idle;
	uint64_t fast_wfi;       /* vCPU */
	uint64_t fast_wfe;       /* vCPU */
	uint64_t sgi_vcpus;      /* vCPU cache (its partition's cores) */
	uint64_t sgi_shift;      /* vCPU cache */
	uint64_t fast_sgi;       /* vCPU */
	uint64_t panic_top;
	uint64_t doorbell_page;  /* vCPU cache (channel_fast_doorbell) */
	uint64_t fast_doorbell;  /* vCPU */
	uint64_t doorbell_reg[DOORBELL_MEMBERS]; /* vCPU cache */
	uint32_t doorbell_bit[DOORBELL_MEMBERS]; /* vCPU cache */
	const _Atomic uint32_t *doorbell_gate[DOORBELL_MEMBERS]; /* vCPU cache */
	struct guest_regs *frame; /* guest_frame() */
	struct vcpu *vcpu;       /* the vCPU running here, or the last one */
	uint64_t mpidr;
	uintptr_t gicr;          /* this core's physical redistributor */
	bool direct;             /* vCPU cache: it takes its interrupts from the GIC itself */
	/* What this core's ID registers offer its guest beyond FP/SIMD. */
	bool sve;
	bool sme;
	bool pauth;
	bool panicking;          /* a fault while reporting one ends the board at once */
	bool shared;             /* vCPUs take turns here (cpu_is_shared), set at the first entry */
	struct vgic_cpu vgic;    /* vCPU cache */
	/*
	 * A shared core: per partition, its vCPU that last entered here (arch_vcpu_resume's TLB
	 * maintenance: the partition's vCPUs share its VMID).
	 */
	const struct vcpu *last_ran[TERN_MAX_PARTITIONS];
	/*
	 * A shared core: its running vCPU's switch context (arch_vcpu_run, arch_vcpu_restore), so
	 * that the save finds it with one load (by the vCPU's indices: ~10 instructions).  Last: no
	 * field before it moves.
	 */
	struct arch_vcpu_context *context;
};

_Static_assert(__builtin_offsetof(struct arm64_cpu, fast_irqs) == CPU_FAST_IRQS, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, stack_top) == CPU_STACK_TOP, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, id) == CPU_ID, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, lrs_idle) == CPU_LRS_IDLE, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, fast_wfi) == CPU_FAST_WFI, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, fast_wfe) == CPU_FAST_WFE, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, sgi_vcpus) == CPU_SGI_VCPUS, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, sgi_shift) == CPU_SGI_SHIFT, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, fast_sgi) == CPU_FAST_SGI, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, panic_top) == CPU_PANIC_TOP, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, doorbell_page) == CPU_DOORBELL_PAGE, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, fast_doorbell) == CPU_FAST_DOORBELL, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, doorbell_reg) == CPU_DOORBELL_REG, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, doorbell_bit) == CPU_DOORBELL_BIT, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, doorbell_gate) == CPU_DOORBELL_GATE, "asm offset");
_Static_assert(__builtin_offsetof(struct arm64_cpu, frame) == CPU_FRAME, "asm offset");
_Static_assert(sizeof(struct core_stack) == STACK_GUARD + STACK_SIZE, "asm stride");
_Static_assert(sizeof(struct guest_regs) == GUEST_FRAME_SIZE, "asm frame");
_Static_assert(__builtin_offsetof(struct guest_regs, elr) == GUEST_ELR, "asm frame");
_Static_assert(__builtin_offsetof(struct guest_regs, spsr) == GUEST_SPSR, "asm frame");
/* SP_EL2 is at a frame while a guest runs, and C runs below the one at the stack's top. */
_Static_assert(GUEST_FRAME_SIZE % 16 == 0, "SP stays 16-byte aligned");

extern struct arm64_cpu cpus[MAX_CPUS];

/*
 * Can this core's vCPUs share it (arch_vcpu_save/restore)?  Not where it offers SVE or SME to
 * guests: their state (vectors up to 2048 bits, ZA) is not in struct arch_vcpu_context, and a
 * shared pool is to refuse such a core rather than lose a guest's upper vector halves.
 */
static inline bool arm64_vcpu_switchable(const struct arm64_cpu *c)
{
	return !c->sve && !c->sme;
}

#ifdef TERN_HOST
/* Host tests (tests/unit/fake): the core the test acts as. */
struct arm64_cpu *fake_this_cpu(void);
#endif

static inline struct arm64_cpu *this_cpu(void)
{
#ifdef TERN_HOST
	return fake_this_cpu();
#else
	struct arm64_cpu *c;
	__asm__ volatile("mrs %0, tpidr_el2" : "=r"(c));
	return c;
#endif
}

/*
 * Where every exit saves the guest's registers and the eret takes them back (vectors.S): on a
 * core in no shared pool the top of its stack (cpu_early), on a shared core the running vCPU's
 * switch context (arch_vcpu_context.frame: set by its entry, arch_vcpu_run or
 * arch_vcpu_restore), which a switch then leaves where it is.
 */
static inline struct guest_regs *guest_frame(const struct arm64_cpu *c)
{
	return c->frame;
}

#endif
#endif
