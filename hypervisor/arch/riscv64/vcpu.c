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

/*
 * Whether vCPUs take turns on this core, and so the scauses its fast paths take (vectors.S):
 * on a shared core none, and its WFI, SBI timer and doorbell traps go to C.  Inlined into
 * both entries.
 */
_Static_assert(FAST_VIRTUAL_INSN == EXC_VIRTUAL_INSTRUCTION && FAST_TIMER_IRQ == IRQ_S_TIMER * 2,
	       "the scauses vectors.S's fast paths take");

static inline __attribute__((always_inline)) void fast_paths_setup(struct riscv_cpu *c)
{
	bool shared = cpu_is_shared((unsigned)c->id);

	c->shared = shared;
	if (shared) {
		c->fast_virtual_insn = FAST_NEVER;
		c->fast_timer_irq = FAST_NEVER;
	} else {
		c->fast_virtual_insn = FAST_VIRTUAL_INSN;
		c->fast_timer_irq = FAST_TIMER_IRQ;
	}
}

/*
 * A shared core's own: the two deadlines its stimecmp stands for (its scheduler's event, and
 * the SBI timer of the trap-and-emulate vCPU it runs), and per partition the vCPU of it that
 * ran here last (a vCPU of the same guest leaves other VS-stage translations under the VMID).
 * Only its own core touches it.
 */
struct rv_shared_core {
	uint64_t sched;  /* arch_sched_timer's, 0: none */
	uint64_t guest;  /* the running vCPU's SBI timer, ~0: none */
	const struct vcpu *ran[TERN_MAX_PARTITIONS];
};
static struct rv_shared_core rv_shared_cores[MAX_CPUS];
/* The core each vCPU last ran on (+1: 0 is never), for the same question from its side. */
static uint8_t last_core[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS];

static struct rv_shared_core *this_shared(void)
{
	return &rv_shared_cores[this_cpu()->id];
}

/* The earlier of the two deadlines on the core's stimecmp; its STIP drops if both are ahead. */
static void shared_stimecmp(const struct rv_shared_core *s)
{
	uint64_t sched = s->sched != 0u ? s->sched : ~0ULL;

	csr_write(CSR_STIMECMP, s->guest < sched ? s->guest : sched);
}

/*
 * v enters a shared core with SBI timer `guest`: the core's timer is the earlier of it and the
 * core's event, and v's VS-stage translations are dropped here (hfence.vvma: hgatp is v's
 * already) if it ran elsewhere since or another vCPU of its partition did here (`fence`: a
 * resume; arch_vcpu_run drops every guest translation anyway).  The core's timer interrupt is
 * the scheduler's whatever v's delivery, and the others' guest files wake it (SGEI: their
 * hgeie bits, set while they are saved); a trap-less v's own file is VGEIN's again, its
 * interrupts the guest's with no trap, so its SGEI is off.
 */
static __attribute__((noinline)) void shared_entry(const struct riscv_cpu *c, const struct vcpu *v,
						   uint64_t guest, bool fence)
{
	struct rv_shared_core *s = &rv_shared_cores[c->id];
	const struct vcpu **ran = &s->ran[v->partition->index];
	uint8_t *core = &last_core[v->partition->index][v->index];

	if (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT)
		csr_clear(CSR_HGEIE, BIT(riscv_vcpu_file(v->partition, v->index)));
	csr_set(sie, SIE_STIE | SIE_SGEIE);
	if (fence && (*ran != v || *core != c->id + 1u))
		hfence_vvma_all();
	*ran = v;
	*core = (uint8_t)(c->id + 1u);
	s->guest = guest;
	shared_stimecmp(s);
}

/*
 * Per partition: a member of no channel (its channels are the description's, for good), as its
 * first entry on a shared core found; a switch into it then skips channel_fast_doorbell's scan
 * of every channel, so that every switch costs the same, the first one too (ARINC 653's window
 * starts move by none of it frame to frame).
 */
static bool no_doorbell[TERN_MAX_PARTITIONS];

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
			   (trapless ? (uint64_t)riscv_vcpu_file(p, v->index) << HSTATUS_VGEIN_SHIFT : 0));
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
	fast_paths_setup(c);
	if (c->shared) {
		no_doorbell[p->index] = c->doorbell_htval == (uint64_t)DOORBELL_NONE;
		shared_entry(c, v, ~0ULL, false); /* the core's event, armed before, survives the quiesce */
	}
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
/*
 * v leaves a shared core: its SBI timer is its own deadline, not the core's stimecmp (the
 * earlier of it and the core's event); what the fast paths counted while it ran is its own
 * (arch_vcpu_stat reads a shared core's counters for the vCPU running there only); and the
 * core runs no vCPU until the next entry (a sibling's RFENCE need not wait for it:
 * arch_vcpu_resume fences first).
 */
static __attribute__((noinline)) void shared_leave(struct vcpu *v, struct arch_vcpu_context *x)
{
	struct riscv_cpu *c = this_cpu();
	struct rv_shared_core *s = &rv_shared_cores[c->id];

	/* A trap-less vCPU's file keeps what arrives for it, and wakes the core (SGEI). */
	if (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT)
		csr_set(CSR_HGEIE, BIT(riscv_vcpu_file(v->partition, v->index)));
	x->stimecmp = s->guest;
	s->guest = ~0ULL;
	v->stats[STAT_EXIT_IRQ] += c->fast_timer;
	v->stats[STAT_IRQ_INJECTED] += c->fast_timer;
	v->stats[STAT_EXIT_WFI] += c->fast_wfi;
	v->stats[STAT_EXIT_MMIO] += c->fast_doorbell;
	v->stats[STAT_DOORBELL_RING] += c->fast_doorbell;
	v->stats[STAT_FAST_DOORBELL] += c->fast_doorbell;
	c->fast_timer = 0;
	c->fast_wfi = 0;
	c->fast_doorbell = 0;
	__atomic_store_n(&c->vcpu, NULL, __ATOMIC_SEQ_CST);
}

/*
 * The exit frame by doublewords, inline: lib's memcpy, which a struct copy calls, took 220
 * instructions a copy, twice a switch.
 */
static void copy_frame(struct guest_regs *dst, const struct guest_regs *src)
{
	/* Unrolled: a loop's own count and branch took as much as the copy. */
#pragma clang loop unroll(full)
	for (size_t i = 0; i < sizeof(dst->x) / sizeof(dst->x[0]); i++)
		dst->x[i] = src->x[i];
	dst->sepc = src->sepc;
	dst->pad = src->pad;
}

void arch_vcpu_save(struct vcpu *v)
{
	struct arch_vcpu_context *x = riscv_vcpu_context(v);

	copy_frame(&x->frame, guest_frame(this_cpu()));
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
	if (this_cpu()->shared)
		shared_leave(v, x);
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
	if (no_doorbell[v->partition->index])
		c->doorbell_htval = (uint64_t)DOORBELL_NONE;
	else
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
	copy_frame(guest_frame(c), &x->frame);
}

/* The fast paths' counts (vectors.S: the SBI timer handed to the guest, trapped WFIs, rings). */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id)
{
	const struct riscv_cpu *c = &cpus[v->pcpu];

	if (c->shared && c->vcpu != v)
		return 0; /* its own were folded into its counters when it left (shared_leave) */

	if (id == STAT_EXIT_IRQ || id == STAT_IRQ_INJECTED)
		return c->fast_timer;
	if (id == STAT_EXIT_WFI)
		return c->fast_wfi;
	if (id == STAT_EXIT_MMIO || id == STAT_DOORBELL_RING || id == STAT_FAST_DOORBELL)
		return c->fast_doorbell;
	return 0;
}

/*
 * A shared core (the core's loop): v where its saved context left it, with what arch_vcpu_run
 * sets up per core (arch_vcpu_restore: the core's vCPU, the doorbell cache, sie; then the fast
 * paths' scauses, the core's timer, a local fence if its VS-stage translations may be stale
 * here), and what was posted to it while it was off (its siblings' IPIs and fences, its
 * APLIC's changes: riscv_post leaves them in its posted state), applied as a kick would.
 */
void arch_vcpu_resume(struct vcpu *v)
{
	struct riscv_cpu *c = this_cpu();

	arch_vcpu_restore(v);
	fast_paths_setup(c);
	shared_entry(c, v, riscv_vcpu_context(v)->stimecmp, true);
	riscv_take_posted(v);
	atomic_store(&v->arch.suspended, false); /* an HSM suspend that blocked it has ended */
	shared_core_entering(v);
	guest_enter(guest_frame(c));
}

void arch_sched_timer(uint64_t deadline)
{
	struct rv_shared_core *s = this_shared();

	s->sched = deadline;
	shared_stimecmp(s);
}

/*
 * The S-timer interrupt on a shared core, while v runs: which deadline passed is told by time.
 * The guest's: its VSTIP, as the fast path would set it.  The core's: the scheduler decides
 * (after the guest's, so that a switch saves its VSTIP too).
 */
void riscv_shared_timer(struct vcpu *v)
{
	struct rv_shared_core *s = this_shared();
	uint64_t now = arch_counter();
	bool sched = s->sched != 0u && s->sched <= now;

	if (s->guest <= now) {
		s->guest = ~0ULL;
		csr_set(hvip, HVIP_VSTIP);
		vcpu_count(v, STAT_IRQ_INJECTED);
	}
	if (sched)
		s->sched = 0;
	shared_stimecmp(s);
	if (sched)
		sched_timer_expired(v);
}

/* A trap-and-emulate vCPU's SBI set_timer on a shared core: its deadline beside the core's. */
void riscv_shared_guest_timer(uint64_t deadline)
{
	struct rv_shared_core *s = this_shared();

	s->guest = deadline;
	shared_stimecmp(s);
}

/* The guest's timer deadline in a saved context: its SBI timer's, or (trap-less) vstimecmp's. */
static uint64_t saved_timer(const struct vcpu *v, const struct arch_vcpu_context *x)
{
	/* htimedelta is 0 (never written): the guest's time is the counter. */
	return (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT) ? x->vstimecmp : x->stimecmp;
}

/*
 * Pending for v, saved: its hvip, what its siblings posted since (an IPI; an APLIC change,
 * evaluated now), a trap-less vCPU's guest file (hgeip: read on its own core, the loop's),
 * its timer if due; enabled: its hie (vsie), whatever vsstatus.SIE says.
 */
bool arch_vcpu_wake_pending(const struct vcpu *v)
{
	const struct arch_vcpu_context *x = riscv_vcpu_context(v);
	uint32_t posted = atomic_load(&v->arch.posted);
	uint64_t pending = x->hvip;

	if (posted & POSTED_VSSIP)
		pending |= HVIP_VSSIP;
	if (posted & POSTED_VAPLIC)
		pending = (pending & ~HVIP_VSEIP) | (vaplic_raised(v) ? HVIP_VSEIP : 0u);
	if ((v->partition->cfg->flags & TERN_PF_IRQ_DIRECT) &&
	    (csr_read(CSR_HGEIP) & BIT(riscv_vcpu_file(v->partition, v->index))))
		pending |= HVIP_VSEIP;
	if (saved_timer(v, x) <= arch_counter())
		pending |= HVIP_VSTIP;
	return (pending & x->hie & HIDELEG_GUEST) != 0u;
}

/*
 * SGEI: a saved trap-less vCPU's file has an interrupt.  The files that do stop raising it
 * (their hgeie bits off until their vCPUs leave again: else a vCPU the scheduler does not run
 * yet would trap the running one at every return) and the core's loop looks at them through
 * hgeip (arch_vcpu_wake_pending): from the running vCPU, as a kick (reconsider), or after the
 * idle wait.
 */
void riscv_guest_files_raised(void)
{
	csr_clear(CSR_HGEIE, csr_read(CSR_HGEIP));
}

uint64_t arch_vcpu_timer_deadline(const struct vcpu *v)
{
	const struct arch_vcpu_context *x = riscv_vcpu_context(v);

	return (x->hie & HVIP_VSTIP) ? saved_timer(v, x) : UINT64_MAX;
}
