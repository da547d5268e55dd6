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
 */
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/platform.h>

#define NO_LR (~0u)

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
	return &arm64_part(v->partition)->dist;
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
	return intid < 32 ? c->vgic.prio[intid] : dist_of(c->vcpu)->prio[intid];
}

static bool virq_group1(const struct arm64_cpu *c, uint32_t intid)
{
	if (intid < 32)
		return c->vgic.group & BIT(intid);
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
			bool here = d->target[intid] == c->vcpu->index && !c->vgic.fast_path_off;
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
	uint64_t free;
	uint32_t intid;
	uint8_t prio;

	while (!virq_queue_empty(&c->vgic.queue) && (free = free_lrs())) {
		virq_queue_pop(&c->vgic.queue, &intid, &prio);
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

	if (intid < 16 && !(g->enabled & BIT(intid))) {
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

void vgic_take_incoming(struct arm64_cpu *c)
{
	uint32_t bits = atomic_exchange(&c->vgic.incoming, 0);

	while (bits) {
		vgic_inject(c, (uint32_t)__builtin_ctz(bits));
		bits &= bits - 1;
	}
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

void vgic_vcpu_reset(struct arm64_cpu *c, struct vcpu *v)
{
	c->vcpu = v;
	memset(&c->vgic, 0, sizeof(c->vgic));
	atomic_store(&c->vgic.incoming, 0);
	c->vgic.waker = GICR_WAKER_SLEEP;
	if (c->direct)
		c->vgic.group = DIRECT_GROUP1;
	memset(c->lr_template, 0, sizeof(c->lr_template));
	update_templates(c);
	for (unsigned n = 0; n < gic_nr_lrs; n++)
		gic_write_lr(n, 0);
	write_sysreg(ich_vmcr_el2, 0);
	/* A direct guest uses the physical CPU interface: no list registers, no maintenance. */
	write_sysreg(ich_hcr_el2, c->direct ? 0 : ICH_HCR_EN);
	gic_set_eoimode(!c->direct);
	isb();
}

/* Hand a direct core's GIC CPU interface back: nothing of the guest pending, active or enabled. */
static void quiesce_direct(struct arm64_cpu *c)
{
	uintptr_t sgi = c->gicr + GICR_SGI_BASE;
	uint32_t guest = GUEST_SGIS | OWNED_PPIS;

	mmio_write32(sgi + GICD_ICENABLER, guest);
	mmio_write32(sgi + GICD_ICPENDR, guest);
	mmio_write32(sgi + GICD_ICACTIVER, guest);
	for (uint32_t i = 0; i < 32; i++) {
		if (guest & BIT(i))
			*(volatile uint8_t *)(sgi + GICD_IPRIORITYR + i) = PRIO_GUEST;
	}
	write_sysreg(icc_ap1r0_el1, 0);   /* the guest may have left handlers active */
	write_sysreg(icc_bpr1_el1, 0);
	write_sysreg(icc_igrpen1_el1, 1);
	c->direct = false;
	gic_set_eoimode(true);
}

void vgic_quiesce(struct arm64_cpu *c)
{
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
	memset(c->lr_template, 0, sizeof(c->lr_template));
	write_sysreg(ich_hcr_el2, ICH_HCR_EN);
	isb();
}

/* Raise SGI `intid` on vCPU `to` of the caller's partition. */
static void deliver_sgi(struct vcpu *to, uint32_t intid)
{
	struct arm64_cpu *target = &cpus[to->pcpu];

	if (is_direct(to)) {
		gic_send_sgi(to->pcpu, intid); /* the target takes it from its GIC: no hypervisor */
		return;
	}

	if (target == this_cpu()) {
		vgic_inject(target, intid);
		return;
	}
	atomic_fetch_or(&target->vgic.incoming, (uint32_t)BIT(intid));
	gic_send_sgi(to->pcpu, SGI_KICK);
}

void vgic_send_sgi(struct vcpu *v, uint64_t sgi1r)
{
	struct partition *p = v->partition;
	uint32_t intid = (sgi1r >> 24) & 0xf;

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
	uint64_t outside = sgi1r & (0xffull << 16 | 0xffull << 32 | 0xfull << 44 | 0xffull << 48);
	uint32_t list = sgi1r & 0xffff;
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

/* The first INTID a per-interrupt GICD register at `off` describes, or -1. */
static int64_t gicd_intid(uint32_t off)
{
	if (off >= GICD_IGROUPR && off < GICD_IPRIORITYR)
		return (int64_t)(off & 0x7f) * 8;
	if (off >= GICD_IPRIORITYR && off < GICD_ITARGETSR + 0x400)
		return (int64_t)(off & 0x3ff);
	if (off >= GICD_ICFGR && off < GICD_ICFGR + 0x100)
		return (int64_t)(off - GICD_ICFGR) * 4;
	if (off >= GICD_IGRPMODR && off < GICD_IGRPMODR + 0x80)
		return (int64_t)(off - GICD_IGRPMODR) * 8;
	if (off >= GICD_IROUTER && off < GICD_IROUTER + 8 * 1020)
		return (int64_t)(off - GICD_IROUTER) / 8;
	return -1;
}

static void route_spi(struct partition *p, uint32_t intid, uint32_t vcpu)
{
	/* Aff0 = core index on this board, as for SGIs and PSCI; IRM = 0. */
	mmio_write64(platform.gicd_base + GICD_IROUTER + 8 * intid, p->vcpu[vcpu].pcpu);
}

/* Templates of every core of the partition, after a change to its SPIs' priority, group or route. */
static void update_partition_templates(struct partition *p)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct arm64_cpu *c = &cpus[p->vcpu[i].pcpu];
		if (c->vcpu == &p->vcpu[i])
			update_templates(c);
	}
}

void arch_partition_irqs_reset(struct partition *p)
{
	struct vgic_dist *d = &arm64_part(p)->dist;
	bool direct = p->cfg->flags & TERN_PF_IRQ_DIRECT;
	uintptr_t gicd = platform.gicd_base;

	spin_lock(&d->lock);
	d->ctlr = 0;
	d->owned[0] = d->group[0] = 0;
	/* prio[] and target[] are only ever read for owned SPIs: only those are reset. */
	for (uint32_t w = 1; w < TERN_IRQ_WORDS; w++) {
		uint32_t bits = p->cfg->spis[w];
		d->owned[w] = bits;
		/* A direct guest's interrupts are Group 1 for good: it sees them so. */
		d->group[w] = direct ? bits : 0;
		if (!bits)
			continue;
		mmio_write32(gicd + GICD_ICENABLER + 4 * w, bits);
		mmio_write32(gicd + GICD_ICPENDR + 4 * w, bits);
		mmio_write32(gicd + GICD_ICACTIVER + 4 * w, bits);
		for (; bits; bits &= bits - 1) {
			uint32_t intid = w * 32 + (uint32_t)__builtin_ctz(bits);
			d->prio[intid] = 0;
			d->target[intid] = 0;
			*(volatile uint8_t *)(gicd + GICD_IPRIORITYR + intid) = PRIO_GUEST;
			route_spi(p, intid, 0);
		}
	}
	spin_unlock(&d->lock);
}

uint32_t arch_irq_max_intid(void)
{
	return gic_nr_irqs - 1;
}

/*
 * A set/clear register word (enable, pending, active): the partition's bits
 * go to the physical distributor, whose state is the truth for both delivery
 * modes; reads show only the partition's bits.
 */
static void gicd_bits(struct vcpu *v, uint32_t off, uint32_t word, bool write, uint64_t *value)
{
	uint32_t owned = dist_of(v)->owned[word];
	uint32_t val = (uint32_t)*value;

	if (write) {
		if (val & ~owned)
			vcpu_count(v, STAT_GIC_IGNORED);
		if (val & owned)
			mmio_write32(platform.gicd_base + off, val & owned);
		return;
	}
	*value = mmio_read32(platform.gicd_base + off) & owned;
}

static void gicd_group(struct vcpu *v, uint32_t word, bool write, uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);
	uint32_t owned = d->owned[word];
	uint32_t val = (uint32_t)*value;

	if (write) {
		if (val & ~owned)
			vcpu_count(v, STAT_GIC_IGNORED);
		/* Group 0 is the hypervisor's (FIQ at EL2): a direct guest's SPIs stay Group 1. */
		if (is_direct(v) && (~val & owned))
			vcpu_count(v, STAT_GIC_IGNORED);
		else
			d->group[word] = (d->group[word] & ~owned) | (val & owned);
		update_partition_templates(v->partition);
		return;
	}
	*value = d->group[word] & owned;
}

static void gicd_priority(struct vcpu *v, uint32_t intid, unsigned size, bool write, uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);
	bool direct = is_direct(v);
	uint64_t out = 0;

	for (unsigned i = 0; i < size; i++, intid++) {
		uint8_t prio = (uint8_t)(*value >> (8 * i));
		if (!spi_owned(d, intid)) {
			if (write && prio)
				vcpu_count(v, STAT_GIC_IGNORED);
			continue;
		}
		if (!write) {
			out |= (uint64_t)d->prio[intid] << (8 * i);
			continue;
		}
		/* Rewriting an unchanged value (a read-modify-write of a neighbour) is no attempt. */
		if (direct && prio < PRIO_GUEST_MIN && prio != d->prio[intid])
			vcpu_count(v, STAT_GIC_CLAMPED);
		d->prio[intid] = prio;
		if (direct) {
			*(volatile uint8_t *)(platform.gicd_base + GICD_IPRIORITYR + intid) = direct_prio(prio);
		}
	}
	if (write)
		update_partition_templates(v->partition);
	else
		*value = out;
}

/* GICD_ICFGR: two bits per interrupt, 16 per word, shared with other partitions' SPIs. */
static void gicd_config(struct vcpu *v, uint32_t off, uint32_t first, bool write, uint64_t *value)
{
	const struct vgic_dist *d = dist_of(v);
	uint32_t mask = 0;

	for (uint32_t i = 0; i < 16; i++) {
		if (spi_owned(d, first + i))
			mask |= 3u << (2 * i);
	}
	if (!write) {
		*value = mmio_read32(platform.gicd_base + off) & mask;
		return;
	}
	uint32_t val = (uint32_t)*value;
	if (val & ~mask)
		vcpu_count(v, STAT_GIC_IGNORED);
	if (!mask)
		return;
	spin_lock(&gicd_rmw_lock);
	uint32_t phys = mmio_read32(platform.gicd_base + off);
	mmio_write32(platform.gicd_base + off, (phys & ~mask) | (val & mask));
	spin_unlock(&gicd_rmw_lock);
}

/* GICD_IROUTER<n>: one of the partition's own vCPUs (Aff0 = index), never 1-of-N. */
static void gicd_router(struct vcpu *v, uint32_t intid, uint32_t off, unsigned size, bool write,
			uint64_t *value)
{
	struct partition *p = v->partition;
	struct vgic_dist *d = dist_of(v);
	bool high = off & 4;

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
	d->target[intid] = (uint8_t)val;
	route_spi(p, intid, (uint32_t)val);
	update_partition_templates(p);
}

static bool vgicd_access(struct vcpu *v, uint32_t off, unsigned size, bool write, uint64_t *value)
{
	struct vgic_dist *d = dist_of(v);

	if (off == GICD_CTLR && size == 4) {
		if (write)
			d->ctlr = (uint32_t)*value & (GICD_CTLR_ENGRP0 | GICD_CTLR_ENGRP1);
		*value = d->ctlr | GICD_CTLR_ARE | GICD_CTLR_DS;
		return true;
	}
	if (!write && size == 4) {
		switch (off) {
		case GICD_TYPER:
			/* Same SPI range as the board, 10 INTID bits, no LPIs, no 1-of-N. */
			*value = (mmio_read32(platform.gicd_base + GICD_TYPER) & 0x1f) | (9u << 19) | BIT(25);
			return true;
		case GICD_IIDR:
			*value = mmio_read32(platform.gicd_base + GICD_IIDR);
			return true;
		case GICD_PIDR2:
			*value = 0x3b; /* GICv3 */
			return true;
		}
	}
	int64_t first = gicd_intid(off);
	bool router = off >= GICD_IROUTER && off < GICD_IROUTER + 8 * 1020;
	bool bytes = off >= GICD_IPRIORITYR && off < GICD_ITARGETSR + 0x400;

	if (size == 8 && !router)
		return false; /* no 64-bit register there: the guest faults, as before */
	if (size != 4 && !bytes && !router) {
		if (write)
			vcpu_count(v, STAT_GIC_IGNORED); /* word registers are accessed as words */
		*value = 0;
		return true;
	}
	if (first < 0 || first + (bytes ? size : 1) <= 32 || (off >= GICD_ITARGETSR && bytes) ||
	    (off >= GICD_IGRPMODR && !router)) {
		/*
		 * Identification, the SGI/PPI banks (RAZ/WI with affinity routing),
		 * ITARGETSR (ignored with affinity routing), IGRPMODR and NSACR (one
		 * security state): legal, nothing to change.
		 */
		*value = 0;
		return true;
	}
	uint32_t intid = (uint32_t)first;
	bool locked = write;

	if (locked)
		spin_lock(&d->lock);
	if (router)
		gicd_router(v, intid, off, size, write, value);
	else if (bytes)
		gicd_priority(v, intid, size, write, value);
	else if (off >= GICD_ICFGR)
		gicd_config(v, off, intid, write, value);
	else if (off < GICD_ISENABLER)
		gicd_group(v, intid / 32, write, value);
	else if (off < GICD_IPRIORITYR)
		gicd_bits(v, off, intid / 32, write, value);
	if (locked)
		spin_unlock(&d->lock);
	return true;
}

/* ---- redistributor ---- */

static void set_enables(struct vcpu *caller, struct vcpu *t, uint32_t bits, bool on)
{
	struct arm64_cpu *tc = &cpus[t->pcpu];
	bool direct = is_direct(t);
	uint32_t allowed = (direct ? GUEST_SGIS : 0xffff) | OWNED_PPIS;

	if (bits & ~allowed)
		vcpu_count(caller, STAT_GIC_IGNORED);
	bits &= allowed;
	if (on)
		tc->vgic.enabled |= bits;
	else
		tc->vgic.enabled &= ~bits;
	/* The physical GIC delivers owned PPIs in both modes, and a direct guest's SGIs too. */
	uint32_t physical = bits & (direct ? allowed : OWNED_PPIS);
	if (physical)
		mmio_write32(tc->gicr + GICR_SGI_BASE + (on ? GICD_ISENABLER : GICD_ICENABLER), physical);
	if (direct)
		return;
	uint32_t release = on ? (tc->vgic.sgi_held & bits) : 0;
	tc->vgic.sgi_held &= ~release;
	for (; release; release &= release - 1)
		deliver_sgi(t, (uint32_t)__builtin_ctz(release));
}

static bool vgicr_sgi_frame(struct vcpu *v, struct vcpu *t, uint32_t off, unsigned size,
			    bool write, uint64_t *value)
{
	struct arm64_cpu *tc = &cpus[t->pcpu];
	struct vgic_cpu *g = &tc->vgic;

	if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + 32) {
		uint32_t idx = off - GICD_IPRIORITYR;
		if (idx + size > 32)
			return false;
		if (!write) {
			uint64_t v64 = 0;
			for (unsigned i = 0; i < size; i++)
				v64 |= (uint64_t)g->prio[idx + i] << (8 * i);
			*value = v64;
			return true;
		}
		for (unsigned i = 0; i < size; i++) {
			uint8_t prio = (uint8_t)(*value >> (8 * i));
			bool changed = prio != g->prio[idx + i];
			g->prio[idx + i] = prio;
			/* A direct guest's priorities are the GIC's; never above the control path's. */
			if (is_direct(t) && ((GUEST_SGIS | OWNED_PPIS) & BIT(idx + i))) {
				if (prio < PRIO_GUEST_MIN && changed)
					vcpu_count(v, STAT_GIC_CLAMPED);
				*(volatile uint8_t *)(tc->gicr + GICR_SGI_BASE + GICD_IPRIORITYR + idx + i) =
					direct_prio(prio);
			}
		}
		update_templates(tc);
		return true;
	}
	if (size != 4)
		return false;
	uint32_t val = (uint32_t)*value;
	switch (off) {
	case GICD_IGROUPR:
		if (write && is_direct(t)) {
			/* Group 0 is the hypervisor's (FIQ at EL2): a direct guest's stay Group 1. */
			if (~val & DIRECT_GROUP1)
				vcpu_count(v, STAT_GIC_IGNORED);
		} else if (write) {
			g->group = val;
			update_templates(tc);
		}
		*value = g->group;
		return true;
	case GICD_ISENABLER:
	case GICD_ICENABLER:
		if (write)
			set_enables(v, t, val, off == GICD_ISENABLER);
		*value = g->enabled;
		return true;
	case GICD_ISPENDR:
		if (write) {
			/* A direct vCPU's SGI 15 is the hypervisor's control SGI (as in vgic_send_sgi). */
			uint32_t allowed = is_direct(t) ? GUEST_SGIS : 0xffff;
			for (uint32_t sgis = val & allowed; sgis; sgis &= sgis - 1)
				deliver_sgi(t, (uint32_t)__builtin_ctz(sgis));
			if (val & ~allowed)
				vcpu_count(v, STAT_GIC_IGNORED);
		}
		*value = 0;
		return true;
	case GICD_ICPENDR:
		if (write) {
			uint32_t own = OWNED_PPIS | (is_direct(t) ? GUEST_SGIS : 0);
			if (val & own)
				mmio_write32(tc->gicr + GICR_SGI_BASE + GICD_ICPENDR, val & own);
		}
		*value = 0;
		return true;
	case GICD_ICFGR:
		*value = 0xaaaaaaaa; /* SGIs are edge-triggered, fixed */
		return true;
	case GICD_ICFGR + 4:
		if (write)
			g->icfgr1 = val;
		*value = g->icfgr1;
		return true;
	case GICD_ISACTIVER:
	case GICD_ICACTIVER:
	case GICD_IGRPMODR:
	case GICD_NSACR:
		*value = 0; /* active state lives in the list registers; no secure state */
		return true;
	default:
		if (write)
			vcpu_count(v, STAT_GIC_IGNORED);
		*value = 0;
		return true;
	}
}

static bool vgicr_access(struct vcpu *v, struct vcpu *t, uint32_t off, unsigned size,
			 bool write, uint64_t *value)
{
	struct vgic_cpu *g = &cpus[t->pcpu].vgic;
	struct partition *p = v->partition;

	if (off >= GICR_SGI_BASE)
		return vgicr_sgi_frame(v, t, off - GICR_SGI_BASE, size, write, value);
	if (off == GICR_TYPER || off == GICR_TYPER + 4) {
		uint64_t typer = ((uint64_t)t->index << 32) | ((uint64_t)t->index << 8) |
				 (t->index == p->num_vcpus - 1 ? GICR_TYPER_LAST : 0);
		if (write)
			return true;
		*value = off == GICR_TYPER ? (size == 8 ? typer : (uint32_t)typer) : typer >> 32;
		return true;
	}
	if (size != 4)
		return false;
	switch (off) {
	case GICR_WAKER:
		if (write)
			g->waker = (uint32_t)*value & GICR_WAKER_SLEEP;
		*value = g->waker | (g->waker ? GICR_WAKER_ASLEEP : 0);
		return true;
	case GICR_IIDR:
		*value = mmio_read32(platform.gicd_base + GICD_IIDR);
		return true;
	case GICR_PIDR2:
		*value = 0x3b;
		return true;
	default:
		if (write && off != GICR_CTLR)
			vcpu_count(v, STAT_GIC_IGNORED);
		*value = 0; /* GICR_CTLR: no LPIs */
		return true;
	}
}

bool arch_vgic_mmio(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write, uint64_t *value)
{
	struct partition *p = v->partition;

	if (ipa >= platform.gicd_base && ipa < platform.gicd_base + platform.gicd_size) {
		uint32_t off = (uint32_t)(ipa - platform.gicd_base);
		return vgicd_access(v, off, size, write, value);
	}
	if (ipa >= platform.gicr_base && ipa < platform.gicr_base + p->num_vcpus * platform.gicr_stride) {
		uint64_t rel = ipa - platform.gicr_base;
		struct vcpu *t = &p->vcpu[rel / platform.gicr_stride];
		return vgicr_access(v, t, (uint32_t)(rel % platform.gicr_stride), size, write, value);
	}
	return false;
}
