/* SPDX-License-Identifier: MIT */
/*
 * The virtual GICv3 each partition sees at the board's GIC addresses.
 *
 * Delivery uses the list registers of the core the vCPU is pinned on.  The
 * common case (an owned timer PPI or pass-through SPI, a free list register,
 * nothing queued) is handled in vectors.S from lr_template[]; this file
 * handles the rest and keeps lr_template[] true.  Distributor and
 * redistributor registers are trapped: a partition changes only what it
 * owns; writes aimed at anything else are dropped and counted
 * (STAT_GIC_IGNORED).
 *
 * Who writes what: a vCPU's core alone writes its own list registers, lr_template[] and
 * queue (struct arm64_cpu).  The virtual distributor and redistributors (struct vgic_dist)
 * are written by any vCPU of the partition under the distributor's lock; a change another
 * core must act on is posted to it (vgic_post) and applied there (vgic_sync), so no core
 * ever rewrites another's delivery state under its feet.
 */
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/vgicv3.h>
#include <tern/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/platform.h>

#define NO_LR (~0u)

/* GICD registers that describe one or more bits per interrupt, by their first byte. */
struct gicd_reg {
	uint32_t base;
	uint32_t bits;              /* per interrupt */
};

static const struct gicd_reg gicd_regs[] = {
	{ GICD_IGROUPR, 1 }, { GICD_ISENABLER, 1 }, { GICD_ICENABLER, 1 },
	{ GICD_ISPENDR, 1 }, { GICD_ICPENDR, 1 }, { GICD_ISACTIVER, 1 }, { GICD_ICACTIVER, 1 },
	{ GICD_IPRIORITYR, 8 }, { GICD_ITARGETSR, 8 }, { GICD_ICFGR, 2 }, { GICD_IGRPMODR, 1 },
	{ GICD_NSACR, 2 }, { GICD_IROUTER, 64 },
};

bool vgic_gicd_decode(uint32_t off, struct gicd_access *a)
{
	for (uint32_t i = 0; i < ARRAY_SIZE(gicd_regs); i++) {
		const struct gicd_reg *r = &gicd_regs[i];
		uint64_t span = (uint64_t)NR_INTIDS * r->bits / 8;
		if (off < r->base || off - r->base >= span)
			continue;
		a->reg = r->base;
		a->intid = (uint32_t)((uint64_t)(off - r->base) * 8 / r->bits);
		a->byte = (off - r->base) % (r->bits >= 8 ? r->bits / 8 : 4);
		return true;
	}
	return false;
}

static bool is_direct(const struct vcpu *v)
{
	return v->partition->cfg->flags & TERN_PF_IRQ_DIRECT;
}

/* A direct guest's priorities are the GIC's, never above the control path's. */
static uint8_t direct_prio(uint8_t prio)
{
	return prio < PRIO_GUEST_MIN ? PRIO_GUEST_MIN : prio;
}

static struct vgic_dist *dist_of(const struct vcpu *v)
{
	return &v->partition->arch.dist;
}

static bool spi_owned(const struct vgic_dist *d, uint32_t intid)
{
	return intid >= 32 && intid < NR_INTIDS && (d->owned[intid / 32] & BIT(intid % 32));
}

/* A physical interrupt the vCPU on core `c` owns: injected hardware-linked. */
bool vgic_owned_hw(const struct arm64_cpu *c, uint32_t intid)
{
	if (intid < 32)
		return OWNED_PPIS & BIT(intid);
	return spi_owned(dist_of(c->vcpu), intid);
}

static uint8_t virq_prio(const struct arm64_cpu *c, uint32_t intid)
{
	/* cppcheck-suppress arrayIndexOutOfBoundsCond ; it takes the distributor's prio[] for the redistributor's */
	return intid < 32 ? c->vgic.redist->prio[intid] : dist_of(c->vcpu)->prio[intid];
}

static bool virq_group1(const struct arm64_cpu *c, uint32_t intid)
{
	if (intid < 32)
		return c->vgic.redist->group & BIT(intid);
	return dist_of(c->vcpu)->group[intid / 32] & BIT(intid % 32);
}

static uint64_t make_lr(const struct arm64_cpu *c, uint32_t intid)
{
	uint64_t lr = ICH_LR_PENDING | ((uint64_t)virq_prio(c, intid) << ICH_LR_PRIO_SHIFT) | intid;

	if (virq_group1(c, intid))
		lr |= ICH_LR_GROUP1;
	if (vgic_owned_hw(c, intid))
		lr |= ICH_LR_HW | ((uint64_t)intid << ICH_LR_PINTID_SHIFT);
	return lr;
}

/* The fast path's table for this core: owned PPIs, and the partition's SPIs routed here. */
static void update_templates(struct arm64_cpu *c)
{
	const struct vgic_dist *d = dist_of(c->vcpu);

	for (uint32_t intid = 16; intid < 32; intid++) {
		if (vgic_owned_hw(c, intid))
			c->lr_template[intid] = c->vgic.fast_path_off ? 0 : make_lr(c, intid);
	}
	for (uint32_t w = 1; w < TERN_IRQ_WORDS; w++) {
		for (uint32_t bits = d->owned[w]; bits; bits &= bits - 1) {
			uint32_t intid = w * 32 + (uint32_t)__builtin_ctz(bits);
			bool here = d->target[intid] == c->vcpu->index && !c->vgic.fast_path_off &&
				    !(d->hyp_first[w] & BIT(intid % 32));
			c->lr_template[intid] = here ? make_lr(c, intid) : 0;
		}
	}
}

/* No fast path for anything: only what update_templates() ever sets needs clearing. */
static void clear_templates(struct arm64_cpu *c)
{
	const struct vgic_dist *d = dist_of(c->vcpu);

	for (uint32_t intid = 16; intid < 32; intid++)
		c->lr_template[intid] = 0;
	for (uint32_t w = 1; w < TERN_IRQ_WORDS; w++) {
		for (uint32_t bits = d->owned[w]; bits; bits &= bits - 1)
			c->lr_template[w * 32 + (uint32_t)__builtin_ctz(bits)] = 0;
	}
}

/*
 * A vCPU switch's templates: the owned PPIs' (its timers) go into the context as they are and
 * come back as they were (a change of priority since is posted to its redistributor,
 * VGIC_SYNC_TEMPLATES, and the restore's sync applies it in full); its SPIs' are made again,
 * visiting only the words that own any (owned_words) rather than all 32.  The entry and sync
 * paths keep update_templates(), so a core in no shared pool runs as before.
 */
static void switch_templates(struct arm64_cpu *c, struct arch_vcpu_context *x, bool in)
{
	const struct vgic_dist *d = dist_of(c->vcpu);

	/* By the constant mask's bits, not all 16 PPIs: the compiler does not fold the test. */
	for (uint32_t ppis = (uint32_t)OWNED_PPIS & 0xffff0000u; ppis; ppis &= ppis - 1u) {
		uint32_t intid = (uint32_t)__builtin_ctz(ppis);
		if (in) {
			c->lr_template[intid] = x->ppi_template[intid - 16u];
		} else {
			x->ppi_template[intid - 16u] = c->lr_template[intid];
			c->lr_template[intid] = 0;
		}
	}
	for (uint32_t words = d->owned_words & ~1u; words; words &= words - 1u) {
		uint32_t w = (uint32_t)__builtin_ctz(words);
		for (uint32_t bits = d->owned[w]; bits; bits &= bits - 1u) {
			uint32_t intid = w * 32u + (uint32_t)__builtin_ctz(bits);
			bool here = in && d->target[intid] == c->vcpu->index && !c->vgic.fast_path_off &&
				    !(d->hyp_first[w] & BIT(intid % 32));
			c->lr_template[intid] = here ? make_lr(c, intid) : 0;
		}
	}
}

static void set_fast_path(struct arm64_cpu *c, bool on)
{
	if (c->vgic.fast_path_off == !on)
		return;
	c->vgic.fast_path_off = !on;
	update_templates(c);
}

static uint64_t free_lrs(void)
{
	return read_sysreg(ich_elrsr_el2) & (BIT(gic_nr_lrs) - 1);
}

/*
 * Ask for a maintenance interrupt when queued interrupts can move into list
 * registers: when none is pending any more (NPIE), or, if all are active
 * (nested handlers), when they drain (UIE) - NPIE would fire at once then.
 */
static void arm_maintenance(struct arm64_cpu *c)
{
	uint64_t hcr = ICH_HCR_EN;

	if (!virq_queue_empty(&c->vgic.queue)) {
		bool any_pending = false;
		for (unsigned n = 0; n < gic_nr_lrs; n++)
			any_pending |= (gic_read_lr(n) & ICH_LR_PENDING) != 0;
		hcr |= any_pending ? ICH_HCR_NPIE : ICH_HCR_UIE;
		set_fast_path(c, false);
	} else {
		set_fast_path(c, true);
	}
	write_sysreg(ich_hcr_el2, hcr);
	isb();
}

static void refill(struct arm64_cpu *c)
{
	uint32_t intid;
	uint8_t prio;

	while (!virq_queue_empty(&c->vgic.queue)) {
		uint64_t free = free_lrs();
		if (!free)
			break;
		(void)virq_queue_pop(&c->vgic.queue, &intid, &prio);
		gic_write_lr((unsigned)__builtin_ctzll(free), make_lr(c, intid));
		vcpu_count(c->vcpu, STAT_IRQ_INJECTED);
	}
	arm_maintenance(c);
}

void vgic_inject(struct arm64_cpu *c, uint32_t intid)
{
	struct vgic_cpu *g = &c->vgic;
	uint8_t prio = virq_prio(c, intid);
	unsigned victim = NO_LR;
	uint8_t worst = prio;

	if (intid < 16 && !(atomic_load(&c->vgic.redist->enabled) & BIT(intid))) {
		g->sgi_held |= (uint32_t)BIT(intid);
		return;
	}
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = gic_read_lr(n);
		if (!(lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)))
			continue;
		if ((lr & ICH_LR_VINTID_MASK) == intid) {
			/* Only a software interrupt can be raised again while active. */
			if (!(lr & ICH_LR_PENDING))
				gic_write_lr(n, lr | ICH_LR_PENDING);
			return;
		}
		uint8_t lr_prio = (uint8_t)(lr >> ICH_LR_PRIO_SHIFT);
		if (!(lr & ICH_LR_ACTIVE) && lr_prio > worst) {
			worst = lr_prio;
			victim = n;
		}
	}
	if (virq_queue_contains(&g->queue, intid))
		return;
	uint64_t free = free_lrs();
	if (free && virq_queue_empty(&g->queue)) {
		/* Nothing waits: any free list register keeps the order. */
		gic_write_lr((unsigned)__builtin_ctzll(free), make_lr(c, intid));
		vcpu_count(c->vcpu, STAT_IRQ_INJECTED);
		return;
	}
	if (free) {
		/* Through the queue, so anything waiting with a higher priority goes first. */
		virq_queue_push(&g->queue, intid, prio);
		refill(c);
		return;
	}
	if (victim != NO_LR) {
		/* Keep the most urgent interrupts in list registers; the evicted one waits. */
		uint64_t evicted = gic_read_lr(victim);
		virq_queue_push(&g->queue, (uint32_t)(evicted & ICH_LR_VINTID_MASK),
				(uint8_t)(evicted >> ICH_LR_PRIO_SHIFT));
		gic_write_lr(victim, make_lr(c, intid));
		vcpu_count(c->vcpu, STAT_IRQ_INJECTED);
	} else {
		virq_queue_push(&g->queue, intid, prio);
	}
	vcpu_count(c->vcpu, STAT_IRQ_QUEUED);
	arm_maintenance(c);
}

void vgic_maintenance(struct arm64_cpu *c)
{
	refill(c);
}

/*
 * The physical side of the vCPU's SGI and PPI configuration on its own core: the owned PPIs'
 * enables (both modes), and a direct guest's SGI enables and priorities (it takes them from
 * the GIC itself).
 */
static void apply_physical(struct arm64_cpu *c, const struct vgic_redist *r)
{
	uint32_t allowed = c->direct ? DIRECT_GROUP1 : OWNED_PPIS;
	uint32_t on = atomic_load(&r->enabled) & allowed;
	uintptr_t sgi = c->gicr + GICR_SGI_BASE;

	if (c->direct) {
		for (uint32_t i = 0; i < 32; i++) {
			if (allowed & BIT(i))
				mmio_write8(sgi + GICD_IPRIORITYR + i, direct_prio(r->prio[i]));
		}
	}
	mmio_write32(sgi + GICD_ICENABLER, allowed & ~on);
	mmio_write32(sgi + GICD_ISENABLER, on);
}

/*
 * Priorities changed (VGIC_SYNC_TEMPLATES): what waits for a list register, and what is
 * pending in one, takes its new priority, as it would in the GIC; then, as vgic_inject()
 * keeps it, nothing waiting is more urgent than a pending list register.
 */
static void reprioritise(struct arm64_cpu *c)
{
	struct virq_queue *q = &c->vgic.queue;
	uint32_t intid;
	uint8_t prio;

	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = gic_read_lr(n);
		if ((lr & ICH_LR_PENDING) && !(lr & ICH_LR_ACTIVE))
			gic_write_lr(n, make_lr(c, (uint32_t)(lr & ICH_LR_VINTID_MASK)));
	}
	if (virq_queue_empty(q))
		return;
	for (uint32_t w = 0; w < VIRQ_MAX / 64; w++) {
		for (uint64_t bits = q->pending[w]; bits; bits &= bits - 1) {
			uint32_t id = w * 64 + (uint32_t)__builtin_ctzll(bits);
			q->prio[id] = virq_prio(c, id);
		}
	}
	while (virq_queue_peek(q, &intid, &prio)) {
		unsigned victim = NO_LR;
		uint8_t worst = prio;
		for (unsigned n = 0; n < gic_nr_lrs; n++) {
			uint64_t lr = gic_read_lr(n);
			uint8_t lr_prio = (uint8_t)(lr >> ICH_LR_PRIO_SHIFT);
			if ((lr & ICH_LR_PENDING) && !(lr & ICH_LR_ACTIVE) && lr_prio > worst) {
				worst = lr_prio;
				victim = n;
			}
		}
		if (victim == NO_LR)
			break;
		uint64_t evicted = gic_read_lr(victim);
		(void)virq_queue_remove(q, intid);
		virq_queue_push(q, (uint32_t)(evicted & ICH_LR_VINTID_MASK), worst);
		gic_write_lr(victim, make_lr(c, intid));
	}
	arm_maintenance(c);
}

/* What no list register holds any more: its physical interrupt, if linked, is done with. */
static void lr_release(unsigned n, uint64_t lr)
{
	gic_write_lr(n, 0);
	if (lr & ICH_LR_HW)
		write_sysreg(icc_dir_el1, (lr >> ICH_LR_PINTID_SHIFT) & 0x3ff);
}

/*
 * Give SGI/PPI `intid` a list register of its own, pending and/or active (a GICR_ISACTIVER0
 * write, or a queued one made active).  A hardware-linked one is active in the GIC while a
 * list register or the queue holds it, so that its line is not taken twice: one that was
 * never taken is made active there first.  With no list register free, an activation is
 * dropped and counted.
 */
static void place_state(struct arm64_cpu *c, uint32_t intid, bool pending, bool was_taken)
{
	uint64_t free = free_lrs();
	bool hw = vgic_owned_hw(c, intid);

	if (!free) {
		if (pending)
			virq_queue_push(&c->vgic.queue, intid, virq_prio(c, intid));
		else if (hw && was_taken)
			write_sysreg(icc_dir_el1, intid);
		vcpu_count(c->vcpu, STAT_GIC_IGNORED);
		return;
	}
	if (hw && !was_taken)
		mmio_write32(c->gicr + GICR_SGI_BASE + GICD_ISACTIVER, (uint32_t)BIT(intid));
	uint64_t lr = (make_lr(c, intid) & ~ICH_LR_PENDING) | ICH_LR_ACTIVE;
	gic_write_lr((unsigned)__builtin_ctzll(free), pending ? lr | ICH_LR_PENDING : lr);
}

/*
 * On the vCPU's own core: GICR_ICPENDR0, ICACTIVER0 and ISACTIVER0 for what only this core
 * holds, its list registers, queue and held SGIs (a trap-and-inject vCPU's).  A linked
 * interrupt that leaves them is deactivated in the GIC: a level line still high is then
 * pending again, as on the board.
 */
static void apply_state(struct arm64_cpu *c, uint32_t unpend, uint32_t deactivate, uint32_t activate)
{
	struct virq_queue *q = &c->vgic.queue;
	uint32_t in_lrs = 0;
	bool now_pending = false;

	c->vgic.sgi_held &= ~unpend;
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = gic_read_lr(n);
		uint32_t id = (uint32_t)(lr & ICH_LR_VINTID_MASK);
		if (id >= 32 || !(lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)))
			continue;
		in_lrs |= (uint32_t)BIT(id);
		if (unpend & BIT(id))
			lr &= ~ICH_LR_PENDING;
		if ((deactivate & BIT(id)) && (lr & ICH_LR_ACTIVE)) {
			lr &= ~ICH_LR_ACTIVE;
			now_pending |= (lr & ICH_LR_PENDING) != 0u;
		}
		if (activate & BIT(id))
			lr |= ICH_LR_ACTIVE;
		if (lr & (ICH_LR_PENDING | ICH_LR_ACTIVE))
			gic_write_lr(n, lr);
		else
			lr_release(n, lr);
	}
	for (uint32_t bits = (unpend | activate) & ~in_lrs; bits; bits &= bits - 1) {
		uint32_t id = (uint32_t)__builtin_ctz(bits);
		bool queued = virq_queue_remove(q, id);
		bool pending = queued && !(unpend & BIT(id));
		if (activate & BIT(id))
			place_state(c, id, pending, queued);
		else if (queued && vgic_owned_hw(c, id))
			write_sysreg(icc_dir_el1, id);
	}
	refill(c);
	/*
	 * A pending and active interrupt made only pending by GICR_ICACTIVER0 competes again:
	 * one queued behind it with a higher priority must not wait for it (fuzz_vgic).
	 */
	if (now_pending)
		reprioritise(c);
}

/* SGIs held while disabled that are enabled now. */
static void release_held_sgis(struct arm64_cpu *c, const struct vgic_redist *r)
{
	uint32_t release = c->vgic.sgi_held & atomic_load(&r->enabled);

	c->vgic.sgi_held &= ~release;
	for (; release; release &= release - 1)
		vgic_inject(c, (uint32_t)__builtin_ctz(release));
}

/* On the vCPU's own core: act on what other cores changed of its state (vgic_post). */
static void vgic_sync(struct arm64_cpu *c)
{
	struct vgic_redist *r = c->vgic.redist;
	uint32_t sync = atomic_exchange(&r->sync, 0);

	if (sync & VGIC_SYNC_TEMPLATES) {
		update_templates(c);
		reprioritise(c);
	}
	if (sync & (VGIC_SYNC_TEMPLATES | VGIC_SYNC_ENABLES))
		apply_physical(c, r);
	if (sync & VGIC_SYNC_STATE)
		apply_state(c, atomic_exchange(&r->unpend, 0), atomic_exchange(&r->deactivate, 0),
			    atomic_exchange(&r->activate, 0));
	if (sync & VGIC_SYNC_ENABLES)
		release_held_sgis(c, r);
}

/* SGIs other vCPUs raised for this core's vCPU, and changes they made to its state. */
void vgic_kicked(struct arm64_cpu *c)
{
	uint32_t bits = atomic_exchange(&c->vgic.redist->pending, 0);

	/* A plain look first: a kick for an SGI, the common case, changed nothing else. */
	if (atomic_load_explicit(&c->vgic.redist->sync, memory_order_relaxed))
		vgic_sync(c);
	for (; bits; bits &= bits - 1)
		vgic_inject(c, (uint32_t)__builtin_ctz(bits));
}

/* Tell `t`'s core that its virtual interrupt state changed (VGIC_SYNC_*). */
static void vgic_post(struct vcpu *t, uint32_t what)
{
	struct arm64_cpu *self = this_cpu();

	atomic_fetch_or(&t->arch.redist.sync, what);
	if (self->vcpu == t)
		vgic_sync(self);
	else
		arch_cpu_kick(t->pcpu); /* a core that is not running it reads it all at entry */
}

static void vgic_post_partition(struct partition *p, uint32_t what)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		vgic_post(&p->vcpu[i], what);
}

bool vgic_lrs_pending(void)
{
	struct arm64_cpu *c = this_cpu();

	if (!virq_queue_empty(&c->vgic.queue))
		return true;
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		if (gic_read_lr(n) & ICH_LR_PENDING)
			return true;
	}
	return false;
}

/* SGIs other vCPUs posted to r's vCPU, or held while disabled, that are enabled now. */
static bool sgis_deliverable(const struct vgic_redist *r, uint32_t held)
{
	return ((atomic_load(&r->pending) | held) & atomic_load(&r->enabled) & GUEST_SGIS) != 0u;
}

bool vgic_posted_pending(const struct arm64_cpu *c)
{
	return sgis_deliverable(c->vgic.redist, c->vgic.sgi_held);
}

/*
 * What vgic_restore would put pending in v's list registers: a saved pending one that no
 * GICR_ICPENDR0 write has cleared since, its queue, and its deliverable SGIs.
 */
bool vgic_saved_pending(const struct vcpu *v)
{
	const struct arch_vcpu_context *x = arm64_vcpu_context(v);
	uint32_t unpend = atomic_load(&v->arch.redist.unpend);

	if (!virq_queue_empty(&x->vgic.queue) || sgis_deliverable(&v->arch.redist, x->vgic.sgi_held))
		return true;
	for (uint32_t used = x->used_lrs; used; used &= used - 1u) {
		uint64_t lr = x->lr[__builtin_ctz(used)];
		uint32_t id = (uint32_t)(lr & ICH_LR_VINTID_MASK);
		if ((lr & ICH_LR_PENDING) && !(id < 32u && (unpend & BIT(id))))
			return true;
	}
	return false;
}

/* The core's PPI a list register holds hardware-linked (pending or active), as a bit. */
static uint32_t linked_ppi(uint64_t lr)
{
	uint64_t pintid = (lr >> ICH_LR_PINTID_SHIFT) & 0x3ffu;

	if ((lr & ICH_LR_HW) && (lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)) && pintid < 32u)
		return (uint32_t)BIT(pintid);
	return 0;
}

/* The active priorities of a CPU interface: as many registers as its priority bits need. */
static unsigned active_priority_regs(uint64_t pri_bits_minus_1)
{
	return pri_bits_minus_1 >= 6 ? 4 : pri_bits_minus_1 == 5 ? 2 : 1;
}

/* Nothing active left in the virtual CPU interface (a guest may stop inside a handler). */
static void clear_virtual_active(void)
{
	unsigned n = active_priority_regs((read_sysreg(ich_vtr_el2) >> 26) & 7);

	if (n == 4) {
		write_sysreg(ich_ap0r3_el2, 0);
		write_sysreg(ich_ap0r2_el2, 0);
	}
	if (n >= 2)
		write_sysreg(ich_ap0r1_el2, 0);
	write_sysreg(ich_ap0r0_el2, 0);
	if (n == 4) {
		write_sysreg(ich_ap1r3_el2, 0);
		write_sysreg(ich_ap1r2_el2, 0);
	}
	if (n >= 2)
		write_sysreg(ich_ap1r1_el2, 0);
	write_sysreg(ich_ap1r0_el2, 0);
}

void vgic_vcpu_reset(struct arm64_cpu *c, struct vcpu *v)
{
	struct vgic_redist *r = &v->arch.redist;

	c->vcpu = v;
	c->vgic.redist = r;
	c->vgic.sgi_held = 0;
	c->vgic.fast_path_off = false;
	virq_queue_init(&c->vgic.queue);
	/* lr_template[] is all zero here: at boot, and since vgic_quiesce() cleared it. */
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		gic_write_lr(n, 0);
	clear_virtual_active();
	write_sysreg(ich_vmcr_el2, 0);
	/* A direct guest uses the physical CPU interface: no list registers, no maintenance. */
	write_sysreg(ich_hcr_el2, c->direct ? 0ULL : ICH_HCR_EN);
	gic_set_eoimode(!c->direct);
	isb();
	/* Its list registers are empty: state changes posted while it was off concern nothing. */
	atomic_store(&r->unpend, 0);
	atomic_store(&r->deactivate, 0);
	atomic_store(&r->activate, 0);
	/* Everything of its virtual state, whatever was posted before it ran. */
	atomic_store(&r->sync, VGIC_SYNC_TEMPLATES | VGIC_SYNC_ENABLES);
	vgic_kicked(c);
}

/* The CPU interface's own active priorities (direct mode: the guest used it). */
static void clear_physical_active(void)
{
	unsigned n = active_priority_regs((read_sysreg(icc_ctlr_el1) >> 8) & 7);

	if (n == 4) {
		write_sysreg(icc_ap1r3_el1, 0);
		write_sysreg(icc_ap1r2_el1, 0);
	}
	if (n >= 2)
		write_sysreg(icc_ap1r1_el1, 0);
	write_sysreg(icc_ap1r0_el1, 0);
}

/* Hand a direct core's GIC CPU interface back: nothing of the guest pending, active or enabled. */
static void quiesce_direct(struct arm64_cpu *c)
{
	uintptr_t sgi = c->gicr + GICR_SGI_BASE;
	uint32_t guest = (uint32_t)(GUEST_SGIS | OWNED_PPIS);

	mmio_write32(sgi + GICD_ICENABLER, guest);
	mmio_write32(sgi + GICD_ICPENDR, guest);
	mmio_write32(sgi + GICD_ICACTIVER, guest);
	for (uint32_t i = 0; i < 32; i++) {
		if (guest & BIT(i))
			mmio_write8(sgi + GICD_IPRIORITYR + i, PRIO_GUEST);
	}
	clear_physical_active();   /* the guest may have left handlers active */
	write_sysreg(icc_bpr1_el1, 0);
	write_sysreg(icc_igrpen1_el1, 1);
	c->direct = false;
	gic_set_eoimode(true);
}

void vgic_quiesce(struct arm64_cpu *c)
{
	struct vgic_redist *r = &c->vcpu->arch.redist;
	uint32_t intid;
	uint8_t prio;

	if (c->direct)
		quiesce_direct(c);

	for (uint32_t i = 16; i < 32; i++) {
		if (vgic_owned_hw(c, i))
			gic_ppi_enable(c->gicr, i, false);
	}
	/* Hardware-linked interrupts are still active in the GIC: deactivate them. */
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = gic_read_lr(n);
		if ((lr & ICH_LR_HW) && (lr & (ICH_LR_PENDING | ICH_LR_ACTIVE)))
			write_sysreg(icc_dir_el1, (lr >> ICH_LR_PINTID_SHIFT) & 0x3ff);
		gic_write_lr(n, 0);
	}
	while (virq_queue_pop(&c->vgic.queue, &intid, &prio)) {
		if (vgic_owned_hw(c, intid))
			write_sysreg(icc_dir_el1, intid);
	}
	for (uint32_t i = 16; i < 32; i++) {
		if (vgic_owned_hw(c, i))
			gic_ppi_clear(c->gicr, i);
	}
	/* SGIs raised while disabled stay pending in its redistributor, as on the board. */
	atomic_fetch_or(&r->pending, c->vgic.sgi_held);
	c->vgic.sgi_held = 0;
	clear_virtual_active();
	clear_templates(c);
	write_sysreg(ich_hcr_el2, ICH_HCR_EN);
	isb();
}

/*
 * A switch's vGIC half (arch_vcpu_save): the list registers, active priorities and control
 * into the context, untouched, so that a pending or active interrupt is taken up again where
 * it was; a hardware-linked SPI stays active in the GIC until the guest's EOI, after it runs
 * again.  A hardware-linked PPI (its timers) is made inactive until its restore: the core's
 * PPI is every vCPU's there, and left active it would hold back the next one's own timer
 * until this guest's EOI.  The core is then left as vgic_quiesce leaves it for the next vCPU:
 * no list register, active priority, template or queued interrupt of this one.
 */
void vgic_save(struct arm64_cpu *c, struct arch_vcpu_context *x)
{
	unsigned n = active_priority_regs((read_sysreg(ich_vtr_el2) >> 26) & 7);

	uint32_t linked = 0;
	/*
	 * Only the list registers in use (the empty ones' status, one read): an empty one may keep
	 * an old interrupt's bits, which every reader ignores by their state (none), as the GIC
	 * does.  At a switch most are empty, and a read or a write names its register in the
	 * instruction (a call and a case each).  Only those of x->lr[] are written, and read
	 * (used_lrs).
	 */
	uint64_t used = ~read_sysreg(ich_elrsr_el2) & (BIT(gic_nr_lrs) - 1u);

	x->used_lrs = (uint32_t)used;
	for (; used; used &= used - 1u) {
		unsigned i = (unsigned)__builtin_ctzll(used);
		uint64_t lr = gic_read_lr(i);
		x->lr[i] = lr;
		gic_write_lr(i, 0);
		linked |= linked_ppi(lr);
	}
	x->linked = linked; /* for the restore: lr[] does not change while the vCPU is out */
	x->ap0r[0] = read_sysreg(ich_ap0r0_el2);
	x->ap1r[0] = read_sysreg(ich_ap1r0_el2);
	uint64_t active = x->ap0r[0] | x->ap1r[0];
	if (n >= 2) {
		x->ap0r[1] = read_sysreg(ich_ap0r1_el2);
		x->ap1r[1] = read_sysreg(ich_ap1r1_el2);
		active |= x->ap0r[1] | x->ap1r[1];
	}
	if (n == 4) {
		x->ap0r[2] = read_sysreg(ich_ap0r2_el2);
		x->ap0r[3] = read_sysreg(ich_ap0r3_el2);
		x->ap1r[2] = read_sysreg(ich_ap1r2_el2);
		x->ap1r[3] = read_sysreg(ich_ap1r3_el2);
		active |= x->ap0r[2] | x->ap0r[3] | x->ap1r[2] | x->ap1r[3];
	}
	x->vmcr = read_sysreg(ich_vmcr_el2);
	x->ich_hcr = read_sysreg(ich_hcr_el2);
	x->vgic.redist = c->vgic.redist;
	x->vgic.sgi_held = c->vgic.sgi_held;
	x->vgic.fast_path_off = c->vgic.fast_path_off;
	virq_queue_move(&x->vgic.queue, &c->vgic.queue); /* leaves the core's empty */
	/* Its PPIs must not fire for the next vCPU; restore's sync enables them again. */
	mmio_write32(c->gicr + GICR_SGI_BASE + GICD_ICENABLER, (uint32_t)OWNED_PPIS);
	if (linked)
		mmio_write32(c->gicr + GICR_SGI_BASE + GICD_ICACTIVER, linked);
	if (active) /* at a switch a guest is seldom inside a handler */
		clear_virtual_active();
	switch_templates(c, x, false);
	c->vgic.sgi_held = 0;
	c->vgic.fast_path_off = false;
	write_sysreg(ich_hcr_el2, ICH_HCR_EN);
	isb();
}

/*
 * The reverse, before v enters again.  Its templates and physical enables are rebuilt from its
 * redistributor as at entry (vgic_vcpu_reset), and what other vCPUs posted while it was out
 * (SGIs, state changes) is applied now: after its list registers are back, which those
 * changes may concern.
 */
void vgic_restore(struct arm64_cpu *c, struct vcpu *v, struct arch_vcpu_context *x)
{
	unsigned n = active_priority_regs((read_sysreg(ich_vtr_el2) >> 26) & 7);

	uint32_t linked = x->linked;

	c->vcpu = v;
	c->vgic.redist = &v->arch.redist;
	c->vgic.sgi_held = x->vgic.sgi_held;
	c->vgic.fast_path_off = x->vgic.fast_path_off;
	virq_queue_move(&c->vgic.queue, &x->vgic.queue);
	if (linked)
		mmio_write32(c->gicr + GICR_SGI_BASE + GICD_ISACTIVER, linked);
	/* No list register holds an interrupt since a save or a stop (vgic_save, vgic_quiesce). */
	for (uint32_t used = x->used_lrs; used; used &= used - 1u) {
		unsigned i = (unsigned)__builtin_ctz(used);
		gic_write_lr(i, x->lr[i]);
	}
	write_sysreg(ich_ap0r0_el2, x->ap0r[0]);
	write_sysreg(ich_ap1r0_el2, x->ap1r[0]);
	if (n >= 2) {
		write_sysreg(ich_ap0r1_el2, x->ap0r[1]);
		write_sysreg(ich_ap1r1_el2, x->ap1r[1]);
	}
	if (n == 4) {
		write_sysreg(ich_ap0r2_el2, x->ap0r[2]);
		write_sysreg(ich_ap0r3_el2, x->ap0r[3]);
		write_sysreg(ich_ap1r2_el2, x->ap1r[2]);
		write_sysreg(ich_ap1r3_el2, x->ap1r[3]);
	}
	write_sysreg(ich_vmcr_el2, x->vmcr);
	write_sysreg(ich_hcr_el2, x->ich_hcr);
	isb();
	/*
	 * Its templates as they were at the save: a change of priority or routing since was
	 * posted to its redistributor (VGIC_SYNC_TEMPLATES) and the sync below applies it in full.
	 */
	switch_templates(c, x, true);
	/* An enables sync of its own (vgic_save turned its PPIs off), without posting it. */
	apply_physical(c, &v->arch.redist);
	release_held_sgis(c, &v->arch.redist);
	vgic_kicked(c);
}

/* Raise SGI `intid` on vCPU `to` of the caller's partition. */
static void deliver_sgi(struct vcpu *to, uint32_t intid)
{
	if (is_direct(to)) {
		gic_send_sgi(to->pcpu, intid); /* the target takes it from its GIC: no hypervisor */
		return;
	}
	atomic_fetch_or(&to->arch.redist.pending, (uint32_t)BIT(intid));
	if (this_cpu()->vcpu == to)
		vgic_kicked(this_cpu());
	else
		gic_send_sgi(to->pcpu, SGI_KICK);
}

void vgic_send_sgi(struct vcpu *v, uint64_t sgi1r)
{
	struct partition *p = v->partition;
	uint32_t intid = (uint32_t)(sgi1r >> 24) & 0xf;

	if (intid == SGI_KICK && is_direct(v)) {
		vcpu_count(v, STAT_SGI_DENIED); /* the hypervisor's control SGI */
		return;
	}

	if (sgi1r & BIT(40)) {
		for (uint32_t i = 0; i < p->num_vcpus; i++) {
			if (&p->vcpu[i] != v)
				deliver_sgi(&p->vcpu[i], intid);
		}
		vcpu_count(v, STAT_SGI_SENT);
		return;
	}
	/* vCPU i is Aff0 = i in cluster 0.0.0; anything else is outside the partition. */
	uint64_t outside = sgi1r & (0xffULL << 16 | 0xffULL << 32 | 0xfULL << 44 | 0xffULL << 48);
	uint32_t list = (uint32_t)sgi1r & 0xffff;
	if (outside || (list >> p->num_vcpus)) {
		vcpu_count(v, STAT_SGI_DENIED);
		if (outside)
			return;
		list &= (uint32_t)BIT(p->num_vcpus) - 1;
	}
	while (list) {
		deliver_sgi(&p->vcpu[__builtin_ctz(list)], intid);
		list &= list - 1;
	}
	vcpu_count(v, STAT_SGI_SENT);
}

/* ---- distributor ---- */

/* Serialises read-modify-write of physical GICD words that partitions share (ICFGR). */
static struct spinlock gicd_rmw_lock = SPINLOCK_INIT;

static uintptr_t gicd_phys(uint32_t reg, uint32_t intid, uint32_t bits)
{
	return platform.arch.gicd_base + reg + (uintptr_t)intid * bits / 8;
}

static void route_spi(struct partition *p, uint32_t intid, uint32_t vcpu)
{
	/* Aff0 = core index on this board, as for SGIs and PSCI; IRM = 0. */
	mmio_write64(gicd_phys(GICD_IROUTER, intid, 64), p->vcpu[vcpu].pcpu);
}

void arch_partition_irqs_reset(struct partition *p)
{
	struct vgic_dist *d = &p->arch.dist;
	bool direct = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	spin_lock(&d->lock);
	d->ctlr = 0;
	d->owned[0] = 0;
	d->owned_words = 0;
	d->group[0] = 0;
	/* prio[] and target[] are only ever read for owned SPIs: only those are reset. */
	for (uint32_t w = 1; w < TERN_IRQ_WORDS; w++) {
		uint32_t bits = p->cfg->irqs[w];
		d->owned[w] = bits;
		d->owned_words |= bits ? (uint32_t)BIT(w) : 0u;
		/* A direct guest's interrupts are Group 1 for good: it sees them so. */
		d->group[w] = direct ? bits : 0;
		if (!bits)
			continue;
		mmio_write32(gicd_phys(GICD_ICENABLER, 32 * w, 1), bits);
		mmio_write32(gicd_phys(GICD_ICPENDR, 32 * w, 1), bits);
		mmio_write32(gicd_phys(GICD_ICACTIVER, 32 * w, 1), bits);
		for (; bits; bits &= bits - 1) {
			uint32_t intid = w * 32 + (uint32_t)__builtin_ctz(bits);
			d->prio[intid] = 0;
			d->target[intid] = 0;
			mmio_write8(gicd_phys(GICD_IPRIORITYR, intid, 8), PRIO_GUEST);
			route_spi(p, intid, 0);
		}
	}
	/* Every vCPU's redistributor as at power-on; none of them runs now. */
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vgic_redist *r = &p->vcpu[i].arch.redist;
		atomic_store(&r->enabled, 0);
		r->group = direct ? DIRECT_GROUP1 : 0;
		r->icfgr1 = 0;
		r->waker = GICR_WAKER_SLEEP;
		(void)memset(r->prio, 0, sizeof(r->prio));
		atomic_store(&r->pending, 0);
		atomic_store(&r->unpend, 0);
		atomic_store(&r->deactivate, 0);
		atomic_store(&r->activate, 0);
		atomic_store(&r->sync, 0);
		/* A direct vCPU's SGIs sent while it was off wait in its core's redistributor. */
		uintptr_t rd = gic_redistributor(p->vcpu[i].pcpu);
		if (direct && rd)
			mmio_write32(rd + GICR_SGI_BASE + GICD_ICPENDR, GUEST_SGIS);
	}
	spin_unlock(&d->lock);
}

bool arch_irq_hypervisor_first(struct partition *p, uint32_t irq)
{
	if ((p->cfg->flags & TERN_PF_IRQ_DIRECT) || irq < 32 || irq >= NR_INTIDS)
		return false;
	p->arch.dist.hyp_first[irq / 32] |= (uint32_t)BIT(irq % 32);
	return true;
}

/* Whether the C path must ask before the guest gets `intid` (arch_irq_hypervisor_first). */
bool vgic_hyp_first(const struct arm64_cpu *c, uint32_t intid)
{
	return intid >= 32 && intid < NR_INTIDS &&
	       (dist_of(c->vcpu)->hyp_first[intid / 32] & BIT(intid % 32));
}

/*
 * A direct vCPU's interrupts are Group 1 at the physical CPU interface, taken by the guest:
 * a core waiting at EL2 for a trapped WFI would not see them as the guest's.
 */
/* A direct vCPU owns the core's physical CPU interface: no other vCPU can share the core. */
uint32_t arch_shared_direct_vcpus(void)
{
	return 0;
}

/* A shared core's vCPU is trap-and-inject here: its interrupt state travels in its context. */
const char *arch_vcpu_can_move(const struct vcpu *v)
{
	(void)v;
	return NULL;
}

bool arch_direct_wfi_trap(void)
{
	return false;
}

/*
 * A set/clear register word (enable, pending, active): the partition's bits
 * go to the physical distributor, whose state is the truth for both delivery
 * modes; reads show only the partition's bits.
 */
static void gicd_bits(struct vcpu *v, const struct gicd_access *a, bool write, uint64_t *value)
{
	uint32_t owned = dist_of(v)->owned[a->intid / 32];
	uintptr_t phys = gicd_phys(a->reg, a->intid, 1);
	uint32_t val = (uint32_t)*value;

	if (write) {
		if (val & ~owned)
			vcpu_count(v, STAT_GIC_IGNORED);
		if (val & owned)
			mmio_write32(phys, val & owned);
		return;
	}
	*value = mmio_read32(phys) & owned;
}

static void gicd_group(struct vcpu *v, uint32_t word, bool write, uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);
	uint32_t owned = d->owned[word];
	uint32_t val = (uint32_t)*value;

	if (write) {
		if (val & ~owned)
			vcpu_count(v, STAT_GIC_IGNORED);
		uint32_t group = (d->group[word] & ~owned) | (val & owned);
		/* Group 0 is the hypervisor's (FIQ at EL2): a direct guest's SPIs stay Group 1. */
		if (is_direct(v) && (~val & owned)) {
			vcpu_count(v, STAT_GIC_IGNORED);
		} else if (group != d->group[word]) {
			d->group[word] = group;
			vgic_post_partition(v->partition, VGIC_SYNC_TEMPLATES);
		}
		return;
	}
	*value = d->group[word] & owned;
}

static void gicd_priority(struct vcpu *v, uint32_t intid, unsigned size, bool write, uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);
	bool direct = is_direct(v);
	bool changed = false;
	uint64_t out = 0;

	for (unsigned i = 0; i < size; i++) {
		uint32_t id = intid + i;
		uint8_t prio = (uint8_t)(*value >> (8 * i));
		if (!spi_owned(d, id)) {
			if (write && prio)
				vcpu_count(v, STAT_GIC_IGNORED);
			continue;
		}
		if (!write) {
			out |= (uint64_t)d->prio[id] << (8 * i);
			continue;
		}
		/* Rewriting an unchanged value (a read-modify-write of a neighbour) is no attempt. */
		if (direct && prio < PRIO_GUEST_MIN && prio != d->prio[id])
			vcpu_count(v, STAT_GIC_CLAMPED);
		changed |= prio != d->prio[id];
		d->prio[id] = prio;
		if (direct)
			mmio_write8(gicd_phys(GICD_IPRIORITYR, id, 8), direct_prio(prio));
	}
	if (changed) /* only then does any core's fast path need a new template */
		vgic_post_partition(v->partition, VGIC_SYNC_TEMPLATES);
	if (!write)
		*value = out;
}

/* GICD_ICFGR: two bits per interrupt, 16 per word, shared with other partitions' SPIs. */
static void gicd_config(struct vcpu *v, uint32_t first, bool write, uint64_t *value)
{
	const struct vgic_dist *d = dist_of(v);
	uintptr_t phys = gicd_phys(GICD_ICFGR, first, 2);
	uint32_t mask = 0;

	for (uint32_t i = 0; i < 16; i++) {
		if (spi_owned(d, first + i))
			mask |= 3u << (2 * i);
	}
	if (!write) {
		*value = mmio_read32(phys) & mask;
		return;
	}
	uint32_t val = (uint32_t)*value;
	if (val & ~mask)
		vcpu_count(v, STAT_GIC_IGNORED);
	if (!mask)
		return;
	spin_lock(&gicd_rmw_lock);
	uint32_t bits = mmio_read32(phys);
	mmio_write32(phys, (bits & ~mask) | (val & mask));
	spin_unlock(&gicd_rmw_lock);
}

/* GICD_IROUTER<n>: one of the partition's own vCPUs (Aff0 = index), never 1-of-N. */
static void gicd_router(struct vcpu *v, const struct gicd_access *a, unsigned size, bool write,
			uint64_t *value)
{
	struct partition *p = v->partition;
	struct vgic_dist *d = dist_of(v);
	uint32_t intid = a->intid;
	bool high = a->byte == 4;

	if (!spi_owned(d, intid)) {
		if (write && *value)
			vcpu_count(v, STAT_GIC_IGNORED);
		*value = 0;
		return;
	}
	if (!write) {
		*value = high ? 0 : d->target[intid];
		return;
	}
	uint64_t val = *value;
	if (size == 4 && high) {
		if (val)
			vcpu_count(v, STAT_GIC_IGNORED); /* Aff3: no such vCPU */
		return;
	}
	if (val >= p->num_vcpus) {
		vcpu_count(v, STAT_GIC_IGNORED); /* another cluster, 1-of-N, or no such vCPU */
		return;
	}
	if (d->target[intid] == val)
		return;
	d->target[intid] = (uint8_t)val;
	route_spi(p, intid, (uint32_t)val);
	vgic_post_partition(p, VGIC_SYNC_TEMPLATES);
}

/* Registers with one word of identification or control, read as 32 bits. */
static enum mmio_result gicd_control(struct vcpu *v, uint32_t off, unsigned size, bool write,
				     uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);

	if (size != 4)
		return MMIO_ABORT;
	switch (off) {
	case GICD_CTLR:
		if (write) {
			spin_lock(&d->lock);
			d->ctlr = (uint32_t)*value & (GICD_CTLR_ENGRP0 | GICD_CTLR_ENGRP1);
			spin_unlock(&d->lock);
		}
		*value = d->ctlr | GICD_CTLR_ARE | GICD_CTLR_DS;
		return MMIO_DONE;
	case GICD_TYPER:
		/* Same SPI range as the board, 10 INTID bits, no LPIs, no 1-of-N. */
		*value = (mmio_read32(platform.arch.gicd_base + GICD_TYPER) & 0x1f) | ((uint32_t)9 << 19) | BIT(25);
		break;
	case GICD_IIDR:
		*value = mmio_read32(platform.arch.gicd_base + GICD_IIDR);
		break;
	case GICD_PIDR2:
		*value = 0x3b; /* GICv3 */
		break;
	default:
		*value = 0; /* reserved, IMPLEMENTATION DEFINED, message-based SPIs, GICv2 SGIs */
		break;
	}
	return MMIO_DONE; /* RAZ/WI or read-only: a write there changes nothing for anyone */
}

static enum mmio_result vgicd_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				     uint64_t *value, const void *ctx)
{
	(void)ctx;
	struct vgic_dist *d = dist_of(v);
	uint32_t off = (uint32_t)offset;
	struct gicd_access a;

	if (!vgic_gicd_decode(off, &a))
		return gicd_control(v, off, size, write, value);
	/* Sizes the GICv3 architecture gives each register; the access is aligned (mmio.c). */
	bool bytes = a.reg == GICD_IPRIORITYR || a.reg == GICD_ITARGETSR;
	if (a.reg == GICD_IROUTER ? size < 4 : (size != 4 && !(bytes && size == 1)))
		return MMIO_ABORT;
	if (a.intid + (bytes ? size : 1) <= 32 || a.reg == GICD_ITARGETSR ||
	    a.reg == GICD_IGRPMODR || a.reg == GICD_NSACR) {
		/*
		 * The SGI/PPI banks (RAZ/WI with affinity routing), ITARGETSR (ignored with
		 * affinity routing), IGRPMODR and NSACR (one security state): legal, nothing to
		 * change.
		 */
		*value = 0;
		return MMIO_DONE;
	}
	if (write)
		spin_lock(&d->lock);
	switch (a.reg) {
	case GICD_IROUTER:
		gicd_router(v, &a, size, write, value);
		break;
	case GICD_IPRIORITYR:
		gicd_priority(v, a.intid, size, write, value);
		break;
	case GICD_ICFGR:
		gicd_config(v, a.intid, write, value);
		break;
	case GICD_IGROUPR:
		gicd_group(v, a.intid / 32, write, value);
		break;
	default:
		gicd_bits(v, &a, write, value);
		break;
	}
	if (write)
		spin_unlock(&d->lock);
	return MMIO_DONE;
}

/* ---- redistributor ---- */

static void set_enables(struct vcpu *caller, struct vcpu *t, uint32_t bits, bool on)
{
	struct vgic_redist *r = &t->arch.redist;
	uint32_t allowed = (is_direct(t) ? GUEST_SGIS : 0xffff) | OWNED_PPIS;

	if (bits & ~allowed)
		vcpu_count(caller, STAT_GIC_IGNORED);
	bits &= allowed;
	uint32_t before = on ? atomic_fetch_or(&r->enabled, bits) : atomic_fetch_and(&r->enabled, ~bits);
	if ((on ? ~before : before) & bits) /* only a change needs its core's attention */
		vgic_post(t, VGIC_SYNC_ENABLES);
}

/*
 * GICR_ISPENDR0 (`active` false) or ISACTIVER0 of vCPU `t`, as on the board.  A direct
 * vCPU's SGIs and PPIs are its core's redistributor's.  A trap-and-inject vCPU's owned PPI
 * not yet taken is pending there (a level one while its line is high, enabled or not); once
 * taken, like every SGI, it is in the list registers, queue or held SGIs of its core, which
 * only that core can read: another vCPU's frame shows what is known outside it, the SGIs
 * raised for it not yet taken and its PPIs' pending state in the GIC.
 */
static uint32_t redist_state(const struct vcpu *t, bool active)
{
	const struct arm64_cpu *c = this_cpu();
	uintptr_t rd = gic_redistributor(t->pcpu);
	uint32_t phys = rd ? mmio_read32(rd + GICR_SGI_BASE + (active ? GICD_ISACTIVER : GICD_ISPENDR)) : 0;

	if (is_direct(t))
		return phys & DIRECT_GROUP1;
	/* A linked PPI active in the GIC is one the hypervisor took: its list register says how. */
	uint32_t state = active ? 0 : (phys & OWNED_PPIS) | atomic_load(&t->arch.redist.pending);
	if (c->vcpu != t)
		return state;
	for (unsigned n = 0; n < gic_nr_lrs; n++) {
		uint64_t lr = gic_read_lr(n);
		uint32_t id = (uint32_t)(lr & ICH_LR_VINTID_MASK);
		if (id < 32 && (lr & (active ? ICH_LR_ACTIVE : ICH_LR_PENDING)))
			state |= (uint32_t)BIT(id);
	}
	if (!active)
		state |= c->vgic.sgi_held | (uint32_t)c->vgic.queue.pending[0];
	return state;
}

/* Post GICR_ICPENDR0/IC/ISACTIVER0 bits to a trap-and-inject vCPU's core (apply_state). */
static void post_state(struct vcpu *t, _Atomic uint32_t *word, uint32_t bits)
{
	if (!bits)
		return;
	atomic_fetch_or(word, bits);
	vgic_post(t, VGIC_SYNC_STATE);
}

/* GICR_ISPENDR0 / ICPENDR0 writes: the vCPU's SGIs and owned PPIs, as on the board. */
static void set_pending(struct vcpu *v, struct vcpu *t, uint32_t val, bool set)
{
	struct vgic_redist *r = &t->arch.redist;
	/* A direct vCPU's SGI 15 is the hypervisor's control SGI (as in vgic_send_sgi). */
	uint32_t sgis = is_direct(t) ? GUEST_SGIS : 0xffff;
	uint32_t ppis = val & (uint32_t)OWNED_PPIS;
	uintptr_t rd = gic_redistributor(t->pcpu);

	if (!set) {
		/* In the GIC, where its line is: a command to its core's redistributor, atomic there. */
		uint32_t own = ppis | (is_direct(t) ? val & sgis : 0);
		if (own && rd)
			mmio_write32(rd + GICR_SGI_BASE + GICD_ICPENDR, own);
		if (!is_direct(t)) {
			(void)atomic_fetch_and(&r->pending, ~(val & sgis));
			post_state(t, &r->unpend, val & (sgis | OWNED_PPIS));
		}
		return;
	}
	for (uint32_t bits = val & sgis; bits; bits &= bits - 1)
		deliver_sgi(t, (uint32_t)__builtin_ctz(bits));
	/* Pending in the GIC where its line is: taken (or not, while disabled) as if it fired. */
	if (ppis && rd)
		mmio_write32(rd + GICR_SGI_BASE + GICD_ISPENDR, ppis);
	if (val & ~(sgis | OWNED_PPIS))
		vcpu_count(v, STAT_GIC_IGNORED);
}

/* GICR_ISACTIVER0 / ICACTIVER0 writes: the GIC's state for a direct vCPU, else posted. */
static void set_active(struct vcpu *t, uint32_t val, bool set)
{
	struct vgic_redist *r = &t->arch.redist;
	uintptr_t rd = gic_redistributor(t->pcpu);

	if (is_direct(t)) {
		if ((val & DIRECT_GROUP1) && rd)
			mmio_write32(rd + GICR_SGI_BASE + (set ? GICD_ISACTIVER : GICD_ICACTIVER),
				     val & DIRECT_GROUP1);
		return;
	}
	val &= 0xffffu | (uint32_t)OWNED_PPIS;
	/* The later write wins over one its core has not applied yet. */
	(void)atomic_fetch_and(set ? &r->deactivate : &r->activate, ~val);
	post_state(t, set ? &r->activate : &r->deactivate, val);
}

static enum mmio_result vgicr_priority(struct vcpu *v, struct vcpu *t, uint32_t idx,
				       unsigned size, bool write, uint64_t *value)
{
	struct vgic_redist *r = &t->arch.redist;
	bool changed = false;
	uint64_t v64 = 0;

	if (size != 1 && size != 4)
		return MMIO_ABORT;
	for (unsigned i = 0; i < size; i++) {
		uint8_t prio = (uint8_t)(*value >> (8 * i));
		if (!write) {
			v64 |= (uint64_t)r->prio[idx + i] << (8 * i);
			continue;
		}
		/* A direct guest's priorities are the GIC's; never above the control path's. */
		if (is_direct(t) && ((GUEST_SGIS | OWNED_PPIS) & BIT(idx + i)) &&
		    prio < PRIO_GUEST_MIN && prio != r->prio[idx + i])
			vcpu_count(v, STAT_GIC_CLAMPED);
		changed |= prio != r->prio[idx + i];
		r->prio[idx + i] = prio;
	}
	if (changed)
		vgic_post(t, VGIC_SYNC_TEMPLATES);
	if (!write)
		*value = v64;
	return MMIO_DONE;
}

static enum mmio_result vgicr_sgi_frame(struct vcpu *v, struct vcpu *t, uint32_t off,
					unsigned size, bool write, uint64_t *value)
{
	struct vgic_redist *r = &t->arch.redist;

	if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + 32)
		return vgicr_priority(v, t, off - GICD_IPRIORITYR, size, write, value);
	if (size != 4)
		return MMIO_ABORT;
	uint32_t val = (uint32_t)*value;
	switch (off) {
	case GICD_IGROUPR:
		if (write && is_direct(t)) {
			/* Group 0 is the hypervisor's (FIQ at EL2): a direct guest's stay Group 1. */
			if (~val & DIRECT_GROUP1)
				vcpu_count(v, STAT_GIC_IGNORED);
		} else if (write && val != r->group) {
			r->group = val;
			vgic_post(t, VGIC_SYNC_TEMPLATES);
		}
		*value = r->group;
		return MMIO_DONE;
	case GICD_ISENABLER:
	case GICD_ICENABLER:
		if (write)
			set_enables(v, t, val, off == GICD_ISENABLER);
		*value = atomic_load(&r->enabled);
		return MMIO_DONE;
	case GICD_ISPENDR:
	case GICD_ICPENDR:
		if (write)
			set_pending(v, t, val, off == GICD_ISPENDR);
		else
			*value = redist_state(t, false);
		return MMIO_DONE;
	case GICD_ISACTIVER:
	case GICD_ICACTIVER:
		if (write)
			set_active(t, val, off == GICD_ISACTIVER);
		else
			*value = redist_state(t, true);
		return MMIO_DONE;
	case GICD_ICFGR:
		*value = 0xaaaaaaaau; /* SGIs are edge-triggered, fixed */
		return MMIO_DONE;
	case GICD_ICFGR + 4:
		if (write)
			r->icfgr1 = val;
		*value = r->icfgr1;
		return MMIO_DONE;
	case GICD_IGRPMODR:
	case GICD_NSACR:
		*value = 0; /* no secure state */
		return MMIO_DONE;
	default:
		if (write)
			vcpu_count(v, STAT_GIC_IGNORED);
		*value = 0;
		return MMIO_DONE;
	}
}

static enum mmio_result vgicr_rd_frame(struct vcpu *v, struct vcpu *t, uint32_t off,
				       unsigned size, bool write, uint64_t *value)
{
	struct vgic_redist *r = &t->arch.redist;
	struct partition *p = v->partition;

	if (off == GICR_TYPER || off == GICR_TYPER + 4) {
		uint64_t typer = ((uint64_t)t->index << 32) | ((uint64_t)t->index << 8) |
				 (t->index == p->num_vcpus - 1 ? GICR_TYPER_LAST : 0);
		if (size != 4 && !(size == 8 && off == GICR_TYPER))
			return MMIO_ABORT;
		*value = off == GICR_TYPER ? (size == 8 ? typer : (uint32_t)typer) : typer >> 32;
		return MMIO_DONE; /* read-only */
	}
	if (size != 4)
		return MMIO_ABORT;
	switch (off) {
	case GICR_WAKER:
		if (write)
			r->waker = (uint32_t)*value & GICR_WAKER_SLEEP;
		*value = r->waker | (r->waker ? GICR_WAKER_ASLEEP : 0);
		return MMIO_DONE;
	case GICR_IIDR:
		*value = mmio_read32(platform.arch.gicd_base + GICD_IIDR);
		return MMIO_DONE;
	case GICR_PIDR2:
		*value = 0x3b;
		return MMIO_DONE;
	default:
		if (write && off != GICR_CTLR)
			vcpu_count(v, STAT_GIC_IGNORED);
		*value = 0; /* GICR_CTLR: no LPIs */
		return MMIO_DONE;
	}
}

static enum mmio_result vgicr_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				     uint64_t *value, const void *ctx)
{
	(void)ctx;
	struct partition *p = v->partition;
	struct vgic_dist *d = dist_of(v);
	uint64_t index = offset / platform.arch.gicr_stride;
	uint32_t off = (uint32_t)(offset % platform.arch.gicr_stride);
	enum mmio_result result;

	if (index >= p->num_vcpus)
		return MMIO_UNHANDLED; /* the frame of a core the partition does not have */
	struct vcpu *t = &p->vcpu[index];
	if (write)
		spin_lock(&d->lock);
	if (off >= GICR_SGI_BASE)
		result = vgicr_sgi_frame(v, t, off - GICR_SGI_BASE, size, write, value);
	else
		result = vgicr_rd_frame(v, t, off, size, write, value);
	if (write)
		spin_unlock(&d->lock);
	return result;
}

/*
 * Every partition has the board's distributor and redistributor frames: a frame past its
 * vCPUs is the emulated GIC's (vgicr_access refuses it), not an access to nothing.
 */
bool arch_partition_devices(struct partition *p, char *err, size_t errlen)
{
	/* The port's one look at each partition at boot: a shared pool's cores checked here too. */
	return arm64_partition_vcpus(p, err, errlen) &&
	       mmio_add(p, platform.arch.gicd_base, platform.arch.gicd_size, vgicd_access, NULL, err, errlen) &&
	       mmio_add(p, platform.arch.gicr_base, platform.arch.gicr_stride * TERN_MAX_CPUS,
			vgicr_access, NULL, err, errlen);
}
