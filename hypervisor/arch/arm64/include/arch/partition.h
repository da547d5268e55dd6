/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <arch/cpu.h>
#include <tern/config_abi.h>
#include <tern/spinlock.h>

/* What a vCPU's own core must re-read of its virtual interrupt state (vgic_redist.sync). */
#define VGIC_SYNC_TEMPLATES BIT(0)  /* priorities, groups or routes changed */
#define VGIC_SYNC_ENABLES   BIT(1)  /* its SGI/PPI enables changed */
#define VGIC_SYNC_STATE     BIT(2)  /* pending or active state to clear or set (unpend, ...) */

/*
 * The arch state core objects embed (struct partition.arch, struct vcpu.arch).  Included by
 * tern/partition.h: nothing here may need struct partition or struct vcpu complete.
 */

/*
 * The virtual redistributor of one vCPU.  It lives with the vCPU, not with the core:
 * any vCPU of the partition may write it (under the distributor's lock), whether or not its
 * own vCPU runs, and it keeps its state from the partition's start until the partition
 * restarts.  Only the vCPU's own core turns it into list-register templates and physical
 * GIC state: a writer posts `sync` bits and kicks that core (vgic_post).
 */
struct vgic_redist {
	_Atomic uint32_t enabled;         /* GICR_ISENABLER0 */
	uint32_t group;                   /* GICR_IGROUPR0 */
	uint32_t icfgr1;                  /* GICR_ICFGR1 */
	uint32_t waker;                   /* GICR_WAKER.ProcessorSleep */
	uint8_t prio[32];                 /* GICR_IPRIORITYR */
	_Atomic uint32_t pending;         /* SGIs raised for it, not yet taken by its core */
	/*
	 * GICR_ICPENDR0, ICACTIVER0 and ISACTIVER0 writes (trap-and-inject) its core has yet to
	 * apply to its list registers and queue, which only that core may touch.
	 */
	_Atomic uint32_t unpend;
	_Atomic uint32_t deactivate;
	_Atomic uint32_t activate;
	_Atomic uint32_t sync;            /* VGIC_SYNC_* */
};

/*
 * The partition's view of the distributor: the SPIs passed to it.  Enable,
 * pending, active and trigger state live in the physical distributor; what
 * the guest sees differently (group, priority, target vCPU) lives here.
 */
struct vgic_dist {
	struct spinlock lock;             /* GICD/GICR writes by the partition's vCPUs */
	uint32_t ctlr;                    /* GICD_CTLR enables */
	uint32_t owned[TERN_IRQ_WORDS];   /* from the system description */
	uint32_t owned_words;             /* bit w: owned[w] has a bit (a switch's templates) */
	uint32_t group[TERN_IRQ_WORDS];   /* virtual GICD_IGROUPR */
	uint8_t prio[NR_INTIDS];          /* virtual GICD_IPRIORITYR */
	uint8_t target[NR_INTIDS];        /* GICD_IROUTER: vCPU index (Aff0) */
	/* owned SPIs the C path takes first (arch_irq_hypervisor_first): no fast path; set at boot */
	uint32_t hyp_first[TERN_IRQ_WORDS];
};

/* A partition's address space (its stage-2 root and the VTTBR that selects it), its GIC view. */
struct arch_partition {
	uint64_t *s2_root;
	uint64_t vttbr;
	struct vgic_dist dist;
};

/*
 * The EL1 registers a vCPU owns.  One list, so that what arch_vcpu_run's reset clears
 * (vcpu.c, reset_el1) and what a vCPU switch carries (arch_vcpu_save/restore) cannot drift
 * apart: a register added to the reset is in the context by construction.  X(reg, reset value);
 * reset_el1 writes them in this order.  The second list only where the core has pointer
 * authentication (struct arm64_cpu.pauth).
 */
/* SCTLR_EL1's RES1 bits, MMU and caches off: a cold core's. */
#define SCTLR_EL1_RESET 0x30d00800u
/* cppcheck-suppress misra-c2012-20.7 ; an X-macro list: X names a macro, (X) would not call it */
#define ARM64_EL1_REGS(X)                                                              \
	X(sctlr_el1, SCTLR_EL1_RESET) X(cpacr_el1, 0) X(tcr_el1, 0) X(ttbr0_el1, 0)     \
	X(ttbr1_el1, 0) X(mair_el1, 0) X(vbar_el1, 0) X(contextidr_el1, 0)              \
	X(tpidr_el1, 0) X(tpidr_el0, 0) X(tpidrro_el0, 0) X(sp_el0, 0) X(sp_el1, 0)     \
	X(elr_el1, 0) X(spsr_el1, 0) X(esr_el1, 0) X(far_el1, 0) X(cntkctl_el1, 0)      \
	X(cntv_ctl_el0, 0) X(cntp_ctl_el0, 0) X(mdscr_el1, 0) X(amair_el1, 0)         \
	X(afsr0_el1, 0) X(afsr1_el1, 0) X(par_el1, 0) X(csselr_el1, 0)
/* cppcheck-suppress misra-c2012-20.7 ; an X-macro list: X names a macro, (X) would not call it */
#define ARM64_PAUTH_REGS(X)                                                            \
	X(apiakeylo_el1, 0) X(apiakeyhi_el1, 0) X(apibkeylo_el1, 0) X(apibkeyhi_el1, 0) \
	X(apdakeylo_el1, 0) X(apdakeyhi_el1, 0) X(apdbkeylo_el1, 0) X(apdbkeyhi_el1, 0) \
	X(apgakeylo_el1, 0) X(apgakeyhi_el1, 0)
/*
 * Guest state the reset leaves alone but a switch must carry: the timers' compare values,
 * meaningless while their CTL is off (the reset clears those).  Anything else the guest can
 * write and read back belongs in the reset's list: a new life must not read the previous
 * one's PAR or AFSR.
 */
/* cppcheck-suppress misra-c2012-20.7 ; an X-macro list: X names a macro, (X) would not call it */
#define ARM64_EL1_CARRIED_REGS(X)                                                      \
	X(cntv_cval_el0) X(cntp_cval_el0)

#define ARM64_CTX_INDEX(reg, reset) ARM64_CTX_##reg,
#define ARM64_CTX_INDEX_CARRIED(reg) ARM64_CTX_##reg,
/* cppcheck-suppress misra-c2012-2.4 ; an index per register, used through the lists */
enum {
	ARM64_EL1_REGS(ARM64_CTX_INDEX)
	ARM64_PAUTH_REGS(ARM64_CTX_INDEX)
	ARM64_EL1_CARRIED_REGS(ARM64_CTX_INDEX_CARRIED)
	ARM64_CTX_REGS
};
/* The switch moves el1[] by pairs, each list's from its first register (vcpu.c). */
_Static_assert(ARM64_CTX_apiakeylo_el1 % 2 == 0 && ARM64_CTX_apgakeyhi_el1 % 2 == 1 &&
	       ARM64_CTX_cntv_cval_el0 % 2 == 0 && ARM64_CTX_REGS % 2 == 0, "el1[]: lists of pairs");

#define ARM64_CTX_MAX_LRS 16u     /* ICH_VTR_EL2.ListRegs: at most 16 */
#define ARM64_CTX_MAX_APRS 4u     /* ICH_AP0R<n>/AP1R<n>: at most 4 each (7 priority bits) */

/*
 * What a vCPU switch carries (arch_vcpu_save/restore): everything of the guest the core
 * holds while it runs.  A vCPU that never leaves its core (a null pool) never uses it.  It
 * lives beside struct vcpu, not in it (arm64_vcpu_context): embedded, its 2.5 KiB made
 * struct vcpu 344 -> 2864 bytes, which moved struct partition's later fields out of the
 * loads' immediate range and cost instructions in cpu_idle, mmio_trap and the GICD/GICR
 * emulation (measured: 14 functions, +2 to +8 each).  Not carried: SVE and SME state
 * (Z/P/FFR, ZA, ZT0, ZCR/SMCR/SMPRI/SVCR/TPIDR2), so a core that offers them cannot be shared
 * (arm64_vcpu_switchable), and the direct mode's physical CPU interface (shared pools are
 * trap-and-inject only).
 */
/* What vectors.S counts on a core (struct arm64_cpu's fast_*), for a vCPU's runs there. */
struct arm64_fast_counts {
	uint64_t irqs;
	uint64_t wfi_exits;
	uint64_t wfe_exits;
	uint64_t sgi;
	uint64_t doorbell;
};

struct arch_vcpu_context {
	struct guest_regs frame;              /* the exit's frame (guest_frame) */
	uint64_t el1[ARM64_CTX_REGS] __attribute__((aligned(16))); /* by ARM64_CTX_<reg>, in pairs */
	uint64_t q[32][2];                    /* Q0-Q31, low half first */
	uint64_t fpcr;
	uint64_t fpsr;
	uint64_t cntvoff;                     /* CNTVOFF_EL2 */
	uint64_t lr[ARM64_CTX_MAX_LRS];       /* ICH_LR<n>_EL2, the core's gic_nr_lrs of them */
	uint64_t ap0r[ARM64_CTX_MAX_APRS];
	uint64_t ap1r[ARM64_CTX_MAX_APRS];
	uint64_t vmcr;                        /* ICH_VMCR_EL2 */
	uint64_t ich_hcr;                     /* ICH_HCR_EL2 */
	uint32_t linked;                      /* the PPIs lr[] holds hardware-linked (vgic_save) */
	uint32_t used_lrs;                    /* the lr[] in use, a bit each (vgic_save) */
	uint64_t ppi_template[16];            /* its lr_template[16..31] as the save found them */
	uint64_t hcr;                         /* HCR_EL2 */
	uint64_t vmpidr;                      /* VMPIDR_EL2 */
	uint64_t vttbr;                       /* VTTBR_EL2 */
	struct vgic_cpu vgic;                 /* the core's queue and held SGIs for this vCPU */
	struct arm64_fast_counts folded;      /* its runs' counts but the one on now (boot: 0) */
};

struct arch_vcpu {
	struct vgic_redist redist;
};

struct vcpu;
/* vCPU v's saved context (vcpu.c: one per vCPU of every partition, not cleared at boot). */
struct arch_vcpu_context *arm64_vcpu_context(const struct vcpu *v);
/*
 * vcpu.c, a shared core's entries: what every entry there adds (arch_vcpu_run), and
 * arch_vcpu_resume but its fast paths' caches and the return to the guest (the host tests'
 * arch_vcpu_resume is this and a record).
 */
void arm64_shared_entry(struct arm64_cpu *c, const struct vcpu *v);
void arm64_vcpu_resume_here(struct arm64_cpu *c, struct vcpu *v);
/*
 * vcpu.c, a vCPU's reset of EL1 (arch_vcpu_run, and the host tests' stand-in for it): the
 * ARM64_EL1_REGS and ARM64_PAUTH_REGS lists at their reset values, and the core's optional
 * extensions' registers.
 */
void arm64_reset_el1(const struct arm64_cpu *c);
/*
 * vcpu.c, the port's look at each partition's vCPUs at boot: their switch contexts, and a
 * shared pool's cores, which must be ones whose vector state the switch carries.
 */
struct partition;
bool arm64_partition_vcpus(struct partition *p, char *err, size_t errlen);

#endif
