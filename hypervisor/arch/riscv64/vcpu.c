/* SPDX-License-Identifier: MIT */
/*
 * The vCPU on its core: entering it (VS-mode, its state reset), quiescing it when it stops, and
 * the counts the fast paths keep for it.  What brings it back is traps.c's.
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/entry.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vaplic.h>
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

/*
 * sstatus.FS, HS-level: with V=1 the guest's FPU works only if both this and its own
 * vsstatus.FS are not Off.  The hypervisor has no FPU code (rv64imac), so Initial is left
 * for the guest, whose kernel keeps its own FS and saves its FP registers itself.
 */
#define SSTATUS_FS_INITIAL (1ULL << 13)

/* The guest interrupt file hstatus.VGEIN selects, as at power-on: nothing enabled or pending. */
static void guest_file_reset(void)
{
	csr_write(CSR_VSISELECT, IMSIC_EIDELIVERY);
	csr_write(CSR_VSIREG, 0);
	csr_write(CSR_VSISELECT, IMSIC_EITHRESHOLD);
	csr_write(CSR_VSIREG, 0);
	/* Only the registers of the identities the file has: QEMU refuses the rest. */
	for (unsigned i = 0; i * IMSIC_EIX_BITS <= platform.arch.imsic_num_ids; i += 2) {
		csr_write(CSR_VSISELECT, IMSIC_EIP0 + i);
		csr_write(CSR_VSIREG, 0);
		csr_write(CSR_VSISELECT, IMSIC_EIE0 + i);
		csr_write(CSR_VSIREG, 0);
	}
}

/* What the doorbell path's gates read: a member it rings, and a k it leaves to C. */
static const _Atomic uint32_t gate_open = 0u;
static const _Atomic uint32_t gate_closed = (uint32_t)BIT(DOORBELL_GATE_BIT);

/*
 * A vCPU of a channel member rings its first channel's doorbells in the vector (vectors.S,
 * doorbell): the page it traps on, and per member the APLIC source the ring sets and its gate.
 * A k that is no member, or a VirtIO frontend (its ring is a request: virtio_backend_rang), gets
 * the closed gate rather than a test of its own in the vector.  Inlined into its two callers:
 * arch_vcpu_run's code stays what it was before arch_vcpu_restore shared this.
 */
static inline __attribute__((always_inline)) void doorbell_fast_path_setup(struct riscv_cpu *c,
								      const struct partition *p)
{
	_Static_assert(DOORBELL_MEMBERS == TERN_MAX_PARTITIONS, "a channel's members, all");
	_Static_assert(DOORBELL_GATE_BIT == IVSHMEM_RING_GATE_BIT, "vectors.S tests the gate's bit");
	ipaddr_t page = 0;
	struct channel_fast_ring ring[TERN_MAX_PARTITIONS];

	c->doorbell_htval = (uint64_t)DOORBELL_NONE;
	if (!channel_fast_doorbell(p, &page, ring))
		return;
	for (uint32_t k = 0; k < DOORBELL_MEMBERS; k++) {
		c->doorbell_irq[k] = ring[k].irq;
		c->doorbell_gate[k] = ring[k].irq == 0u ? &gate_closed :
				      ring[k].gate ? ring[k].gate : &gate_open;
	}
	c->doorbell_setipnum = platform.arch.aplic_s_base + SETIPNUM;
	c->doorbell_htval = page >> 2; /* as htval gives the GPA */
}

void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct riscv_cpu *c = this_cpu();
	const struct partition *p = v->partition;
	struct guest_regs *r = guest_frame(c);
	bool trapless = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	c->vcpu = v;
	doorbell_fast_path_setup(c, p);
	atomic_store(&v->arch.posted, 0); /* meant for the vCPU's previous life */
	atomic_store(&v->arch.suspended, false); /* it may have left from a suspend */
	csr_write(CSR_HENVCFG, trapless ? HENVCFG_STCE : 0);
	csr_write(CSR_VSTIMECMP, ~0ULL);
	arch_vcpu_quiesce(v); /* the SBI timer's stand-in disarmed (QEMU resets stimecmp to 0) */
#define VS_CSR_RESET(csr) csr_write(csr, 0);
	RISCV_VCPU_VS_CSRS(VS_CSR_RESET)
	csr_write(hgatp, p->arch.hgatp);
	/* A restarted partition must not see translations from its previous life. */
	hfence_gvma_all();
	csr_write(hstatus, HSTATUS_SPV | HSTATUS_SPVP |
			   ((p->cfg->flags & TERN_PF_WFI_NATIVE) ? 0 : HSTATUS_VTW) |
			   (trapless ? (uint64_t)VCPU_GUEST_FILE << HSTATUS_VGEIN_SHIFT : 0));
	if (trapless)
		guest_file_reset();
	else
		vaplic_update(v); /* what its APLIC holds for this hart, pending while it was off */
	csr_set(sstatus, SSTATUS_SPP | SSTATUS_FS_INITIAL);
	/*
	 * While the guest runs, the core's kicks reach the hypervisor, and a trap-and-emulate
	 * guest's SBI timer.  A trap-less guest's timer is its own: the core's only nudges QEMU.
	 */
	csr_write(sie, trapless ? SIE_SEIE : SIE_SEIE | SIE_STIE);

	(void)memset(r, 0, sizeof(*r));
	if (!v->partition->first_entry)
		v->partition->first_entry = arch_counter();
	r->x[10] = v->index;  /* a0: hart id */
	r->x[11] = context;   /* a1: device tree, or HSM's opaque */
	r->sepc = entry;
	guest_enter(r);
}

/*
 * The SBI timer's stand-in (the core's stimecmp) and what the vCPU had pending, dropped; its
 * enables too (hie's VS bits are its vsie), or its timer or interrupt file would keep waking
 * the idle core's WFI.
 */
void arch_vcpu_quiesce(struct vcpu *v)
{
	(void)v;
	csr_write(CSR_STIMECMP, ~0ULL);
	csr_write(hvip, 0);
	csr_write(hie, 0);
}

/* Not cleared at boot (.noinit): a save writes a vCPU's before a restore reads it. */
static struct arch_vcpu_context contexts[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]
	__attribute__((section(".noinit")));

struct arch_vcpu_context *riscv_vcpu_context(const struct vcpu *v)
{
	return &contexts[v->partition->index][v->index];
}

/*
 * After the save the core is left as arch_vcpu_quiesce leaves it, and the VS timer disarmed:
 * what matters for the next vCPU is the core's stimecmp, which the vector's fast path hands to
 * whoever runs as its SBI timer (the leaving vCPU's deadline must not become the next one's
 * interrupt), and hvip/hie, its pending and enabled VS interrupts.  The rest (the VS CSRs,
 * hstatus, henvcfg, hgatp, FP) matters to no one until the restore overwrites it: no guest
 * runs in between.
 */
void arch_vcpu_save(struct vcpu *v)
{
	struct arch_vcpu_context *x = riscv_vcpu_context(v);

	x->frame = *guest_frame(this_cpu());
/* cppcheck-suppress misra-c2012-20.7 ; a CSR's name, which the instruction spells (csr_read/csr_write): it cannot be parenthesised */
#define VS_CSR_SAVE(csr) x->csr = csr_read(csr);
	RISCV_VCPU_VS_CSRS(VS_CSR_SAVE)
	x->vsiselect = csr_read(CSR_VSISELECT);
	x->hvip = csr_read(hvip);
	x->hie = csr_read(hie);
	x->hstatus = csr_read(hstatus);
	x->henvcfg = csr_read(CSR_HENVCFG);
	x->vstimecmp = csr_read(CSR_VSTIMECMP);
	x->stimecmp = csr_read(CSR_STIMECMP);
	x->hgatp = csr_read(hgatp);
	csr_set(sstatus, SSTATUS_FS_INITIAL); /* on since its entry; fp.S traps if it is not */
	riscv_fp_save(&x->fp);
	csr_write(CSR_VSTIMECMP, ~0ULL);
	arch_vcpu_quiesce(v);
}

/*
 * The reverse, and what arch_vcpu_run sets for the vCPU from its partition alone (the core's
 * vCPU, the doorbell path's cache, sie by delivery mode), so that guest_enter resumes it.  No
 * hfence: each partition has its own VMID in hgatp.  Its guest interrupt file stays as it left
 * it (hstatus.VGEIN names its own).
 */
void arch_vcpu_restore(struct vcpu *v)
{
	struct riscv_cpu *c = this_cpu();
	const struct arch_vcpu_context *x = riscv_vcpu_context(v);
	bool trapless = v->partition->cfg->flags & TERN_PF_IRQ_DIRECT;

	c->vcpu = v;
	doorbell_fast_path_setup(c, v->partition);
	csr_write(hgatp, x->hgatp);
	csr_write(hstatus, x->hstatus);
	csr_write(CSR_HENVCFG, x->henvcfg);
/* cppcheck-suppress misra-c2012-20.7 ; a CSR's name, which the instruction spells (csr_read/csr_write): it cannot be parenthesised */
#define VS_CSR_RESTORE(csr) csr_write(csr, x->csr);
	RISCV_VCPU_VS_CSRS(VS_CSR_RESTORE)
	csr_write(CSR_VSISELECT, x->vsiselect);
	csr_write(CSR_VSTIMECMP, x->vstimecmp);
	csr_write(CSR_STIMECMP, x->stimecmp);
	csr_write(hvip, x->hvip);
	csr_write(hie, x->hie);
	csr_set(sstatus, SSTATUS_SPP | SSTATUS_FS_INITIAL);
	riscv_fp_restore(&x->fp);
	csr_write(sie, trapless ? SIE_SEIE : SIE_SEIE | SIE_STIE);
	*guest_frame(c) = x->frame;
}

/* The fast paths' counts (vectors.S: the SBI timer handed to the guest, trapped WFIs, rings). */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id)
{
	const struct riscv_cpu *c = &cpus[v->pcpu];

	if (id == STAT_EXIT_IRQ || id == STAT_IRQ_INJECTED)
		return c->fast_timer;
	if (id == STAT_EXIT_WFI)
		return c->fast_wfi;
	if (id == STAT_EXIT_MMIO || id == STAT_DOORBELL_RING || id == STAT_FAST_DOORBELL)
		return c->fast_doorbell;
	return 0;
}
