/* SPDX-License-Identifier: MIT */
/*
 * The partitions' virtual APLICs.
 *
 * The board's supervisor-level APLIC domain delivers by MSI, and only the hypervisor writes
 * its target registers (aplic.c).  A wired source a partition owns (its devices' INTx lines) is sent:
 *   - trap-less partitions (irq = "direct"): into the guest interrupt file behind the vCPU
 *     the guest aimed it at.  The guest programs an APLIC in MSI delivery mode, as on the
 *     bare board; its writes trap, but the interrupt itself reaches the guest with no trap.
 *   - trap-and-emulate partitions: into the hypervisor's own file on that vCPU's core (one
 *     identity per source), which raises the vCPU's VSEIP.  The guest sees an APLIC in direct
 *     delivery mode (QEMU's aia=aplic board), whose interrupt delivery controls are emulated.
 * Sources a partition does not own are, in its APLIC, sources the APLIC does not implement:
 * read-only zero (counted as aplic_ignored).  A partition that owns none has no APLIC: an
 * access is outside its map and ends it.
 *
 * Only the partition's own vCPUs write its state (under its lock); a source's interrupt sets
 * a pending bit atomically and re-evaluates VSEIP without the lock.  Every writer re-evaluates
 * the vCPUs afterwards, so the last evaluation sees the last state.
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/imsic.h>
#include <arch/io.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vaplic.h>
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>

/* The partition that owns each source (set once, at boot). */
static struct partition *source_owner[APLIC_MAX_SOURCES];

static bool bit_of(const uint32_t *words, uint32_t s)
{
	return (words[s / 32u] >> (s % 32u)) & 1u;
}

static void bit_put(uint32_t *words, uint32_t s, bool on)
{
	if (on)
		words[s / 32u] |= 1u << (s % 32u);
	else
		words[s / 32u] &= ~(1u << (s % 32u));
}

static bool trapless(const struct partition *p)
{
	return (p->cfg->flags & TERN_PF_IRQ_DIRECT) != 0u;
}

static uint32_t target_hart(uint32_t target)
{
	return (target >> TARGET_HART_SHIFT) & TARGET_HART_MASK;
}

/*
 * A channel's doorbell (a spare source) and a VirtIO slot's source (no device behind the
 * board's transport drives it) have no input line: only the hypervisor's setipnum makes them
 * pending, which a level mode would ignore with the input low.  A level mode the guest picks
 * for one (the ivshmem function's INTx, the virtio-mmio slot's interrupt in QEMU's tree: both
 * level-high) is latched as an edge, on the board and in the partition's pending bits; the
 * function or the device re-raises a level still high.
 */
static bool no_input(uint32_t s)
{
	return s - platform.doorbell_irq_base < platform.num_doorbell_irqs ||
	       s - platform.virtio_irq_base < platform.num_virtio_slots;
}

static bool guest_level(uint32_t sm)
{
	return sm == SM_LEVEL_HIGH || sm == SM_LEVEL_LOW;
}

static uint32_t board_mode(uint32_t s, uint32_t sm)
{
	return (no_input(s) && guest_level(sm)) ? SM_EDGE_RISE : sm;
}

/* Source s as the board must deliver it for the partition's current settings. */
static void program_source(struct partition *p, uint32_t s)
{
	const struct vaplic *va = &p->arch.vaplic;
	uint32_t hart = target_hart(va->target[s]);
	bool valid = hart < p->num_vcpus;
	uint32_t pcpu = p->vcpu[valid ? hart : 0u].pcpu;
	uint32_t sm = board_mode(s, va->sourcecfg[s]);

	if (trapless(p))
		aplic_route(s, sm,
			   aplic_target(pcpu, riscv_vcpu_file(p, valid ? hart : 0u),
					va->target[s] & TARGET_EIID_MASK),
			   valid && va->domain_ie && bit_of(va->enabled, s));
	else
		aplic_route(s, sm, aplic_target(pcpu, 0, EIID_WIRED_BASE + s), true);
}

void arch_partition_irqs_reset(struct partition *p)
{
	struct vaplic *va = &p->arch.vaplic;
	const uint32_t *irqs = p->cfg->irqs;

	(void)memset(va, 0, sizeof(*va));
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		p->vcpu[i].arch.idc = (struct vaplic_idc){ 0 };
	for (uint32_t s = 1; s < APLIC_MAX_SOURCES; s++) {
		if (!bit_of(irqs, s))
			continue;
		bit_put(va->owned, s, true);
		source_owner[s] = p;
		/* Direct delivery mode's reset: priority 1 at hart 0, as QEMU's APLIC has it. */
		va->target[s] = trapless(p) ? 0u : 1u;
		aplic_route(s, 0, 0, false); /* inactive: nothing pending or enabled */
	}
}

/*
 * Direct delivery mode's pending bits: edge sources' as set and cleared, level sources'
 * their rectified inputs (the board's, configured alike).
 */
static uint32_t raw_pending(const struct vaplic *va, uint32_t w)
{
	uint32_t level = va->level[w] ? aplic_read(IN_CLRIP + 4u * w) & va->level[w] : 0u;

	return (atomic_load(&va->pending[w]) | level) & va->owned[w];
}

static uint32_t pending_word(const struct vaplic *va, uint32_t w)
{
	return raw_pending(va, w) & va->enabled[w];
}

/* The highest-priority interrupt for `hart` (direct delivery mode's topi): id << 16 | priority. */
static uint32_t topi(const struct vaplic *va, const struct vaplic_idc *idc, uint32_t hart)
{
	uint32_t threshold = idc->ithreshold;
	uint32_t best = 0;
	uint32_t best_prio = TARGET_IPRIO_MASK + 1u;

	for (uint32_t w = 0; w < APLIC_WORDS; w++) {
		if (va->enabled[w] == 0u)
			continue; /* enabled bits are only ever set for its active sources */
		for (uint32_t bits = pending_word(va, w); bits != 0u; bits &= bits - 1u) {
			uint32_t s = w * 32u + (uint32_t)__builtin_ctz(bits);
			uint32_t prio = va->target[s] & TARGET_IPRIO_MASK;
			if (target_hart(va->target[s]) == hart && (threshold == 0u || prio < threshold) &&
			    prio < best_prio) {
				best = s;
				best_prio = prio;
			}
		}
	}
	return best ? (best << 16) | best_prio : 0u;
}

/* What vaplic_update sets, for a vCPU that is off its core; the same test, kept out of its code. */
bool vaplic_raised(const struct vcpu *v)
{
	const struct vaplic *va = &v->partition->arch.vaplic;
	const struct vaplic_idc *idc = &v->arch.idc;

	return va->domain_ie && idc->idelivery && (idc->iforce || topi(va, idc, v->index));
}

void vaplic_update(struct vcpu *v)
{
	const struct vaplic *va = &v->partition->arch.vaplic;
	const struct vaplic_idc *idc = &v->arch.idc;
	bool raise = va->domain_ie && idc->idelivery && (idc->iforce || topi(va, idc, v->index));

	if (raise)
		csr_set(hvip, HVIP_VSEIP);
	else
		csr_clear(hvip, HVIP_VSEIP);
}

/* Re-evaluate vCPU `v`: here if it is this core's, else on its core. */
static void update_vcpu(struct vcpu *v)
{
	if (v->pcpu == this_cpu()->id)
		vaplic_update(v);
	else
		riscv_post(v, POSTED_VAPLIC);
}

static void update_all(struct partition *p)
{
	for (uint32_t i = 0; !trapless(p) && i < p->num_vcpus; i++)
		update_vcpu(&p->vcpu[i]);
}

/* Claimed from this core's file: a trap-and-emulate partition's wired source. */
void vaplic_host_interrupt(uint32_t eiid)
{
	uint32_t s = eiid - EIID_WIRED_BASE;
	struct partition *p = (s < APLIC_MAX_SOURCES) ? source_owner[s] : NULL;

	if (!p || trapless(p))
		return;
	struct vaplic *va = &p->arch.vaplic;
	uint32_t hart = target_hart(va->target[s]);
	if (!bit_of(va->level, s))
		(void)atomic_fetch_or(&va->pending[s / 32u], 1u << (s % 32u));
	if (hart < p->num_vcpus) {
		vcpu_count(&p->vcpu[hart], STAT_IRQ_INJECTED);
		update_vcpu(&p->vcpu[hart]);
	}
}

/* The guest's set or clear of source s's pending bit (setip, setipnum, a claim). */
static void set_pending(struct partition *p, uint32_t s, bool on)
{
	struct vaplic *va = &p->arch.vaplic;
	bool level = bit_of(va->level, s);

	/*
	 * A doorbell the guest made level-sensitive takes a set only while its PCI function's
	 * INTx (or its VirtIO device's interrupt) is asserted, as a level source's input must be
	 * high: Linux's MSI-mode EOI sets a level source pending again to catch a line still
	 * high, which with the latch alone would re-deliver the interrupt for ever.
	 */
	if (on && no_input(s) && guest_level(va->sourcecfg[s]) && !channel_irq_line(p, s))
		return;

	if (trapless(p) && on) {
		aplic_set_pending(s, level);
	} else if (trapless(p)) {
		aplic_write(CLRIPNUM, s);
	} else if (!on) {
		(void)atomic_fetch_and(&va->pending[s / 32u], ~(1u << (s % 32u)));
	} else if (va->sourcecfg[s] != 0u && !level) {
		(void)atomic_fetch_or(&va->pending[s / 32u], 1u << (s % 32u));
	} else {
		/* direct delivery mode: a level source's pending bit is its input */
	}
}

static void set_enabled(struct partition *p, uint32_t s, bool on)
{
	struct vaplic *va = &p->arch.vaplic;

	bit_put(va->enabled, s, on && va->sourcecfg[s] != 0u);
	if (trapless(p))
		program_source(p, s);
}

static void write_sourcecfg(struct partition *p, uint32_t s, uint32_t value)
{
	struct vaplic *va = &p->arch.vaplic;
	uint32_t sm = (value & SOURCECFG_D) ? 0u : value & SM_MASK;

	if (sm != SM_DETACHED && sm < SM_EDGE_RISE)
		sm = 0; /* inactive, or a reserved mode */
	va->sourcecfg[s] = sm;
	bit_put(va->level, s, board_mode(s, sm) == SM_LEVEL_HIGH || board_mode(s, sm) == SM_LEVEL_LOW);
	if (sm == 0u) {
		bit_put(va->enabled, s, false);
		(void)atomic_fetch_and(&va->pending[s / 32u], ~(1u << (s % 32u)));
	}
	program_source(p, s);
}

static void write_target(struct partition *p, uint32_t s, uint32_t value)
{
	struct vaplic *va = &p->arch.vaplic;
	uint32_t hart = value & TARGET_HART_FIELD;

	if (trapless(p)) {
		va->target[s] = hart | (value & TARGET_EIID_MASK); /* no guest index: it has no guests */
	} else {
		uint32_t prio = value & TARGET_IPRIO_MASK;
		va->target[s] = hart | (prio ? prio : 1u);
	}
	program_source(p, s);
}

/* genmsi: an MSI to one of the partition's harts, as if from the APLIC (MSI mode only). */
static void write_genmsi(struct partition *p, uint32_t value)
{
	uint32_t hart = target_hart(value);

	p->arch.vaplic.genmsi = value & (TARGET_HART_FIELD | TARGET_EIID_MASK);
	if (hart < p->num_vcpus)
		*(volatile uint32_t *)(uintptr_t)riscv_vcpu_file_hpa(p, hart) = value & TARGET_EIID_MASK;
}

/* The word registers (setip, in_clrip, setie, clrie): bit i of word w is source 32 w + i. */
static uint32_t read_word(struct partition *p, uint32_t base, uint32_t w)
{
	const struct vaplic *va = &p->arch.vaplic;
	uint32_t value = 0;

	if (base == SETIP)
		value = trapless(p) ? aplic_read(SETIP + 4u * w) : raw_pending(va, w);
	else if (base == IN_CLRIP)
		value = aplic_read(IN_CLRIP + 4u * w);
	else if (base == SETIE)
		value = va->enabled[w];
	else
		value = 0; /* clrie reads zero */
	return value & va->owned[w];
}

static void write_word(struct partition *p, uint32_t base, uint32_t w, uint32_t value)
{
	for (uint32_t bits = value & p->arch.vaplic.owned[w]; bits != 0u; bits &= bits - 1u) {
		uint32_t s = w * 32u + (uint32_t)__builtin_ctz(bits);
		if (base == SETIP || base == IN_CLRIP)
			set_pending(p, s, base == SETIP);
		else
			set_enabled(p, s, base == SETIE);
	}
}

/* One source named by number (setipnum and the like): ignored unless the partition owns it. */
static bool owned_source(const struct vaplic *va, uint32_t s)
{
	return s > 0u && s < APLIC_MAX_SOURCES && bit_of(va->owned, s);
}

/* A vCPU's interrupt delivery control (direct delivery mode). */
static uint32_t idc_access(struct partition *p, uint32_t hart, uint32_t reg, bool write,
			   uint32_t value)
{
	struct vaplic *va = &p->arch.vaplic;
	struct vaplic_idc *idc = &p->vcpu[hart].arch.idc;
	uint32_t result = 0;

	if (reg == IDELIVERY || reg == IFORCE) {
		uint32_t *field = (reg == IDELIVERY) ? &idc->idelivery : &idc->iforce;
		if (write)
			*field = value & 1u;
		result = *field;
	} else if (reg == ITHRESHOLD) {
		if (write)
			idc->ithreshold = value & TARGET_IPRIO_MASK;
		result = idc->ithreshold;
	} else if ((reg == TOPI || reg == CLAIMI) && !write) {
		result = topi(va, idc, hart);
		if (reg == CLAIMI && result == 0u)
			idc->iforce = 0;
		else if (reg == CLAIMI)
			set_pending(p, result >> 16, false); /* a level source stays pending while high */
	} else {
		result = 0;
	}
	return result;
}

/* Whether the access named a register of a source the partition does not own. */
static bool register_access(struct partition *p, uint32_t off, bool write, uint32_t *value)
{
	struct vaplic *va = &p->arch.vaplic;
	uint32_t num_sources = (platform.arch.aplic_num_sources < APLIC_MAX_SOURCES) ?
			       platform.arch.aplic_num_sources : APLIC_MAX_SOURCES;
	uint32_t s = 0;
	uint32_t out = 0;

	if (off == DOMAINCFG) {
		if (write) {
			va->domain_ie = (*value & DOMAINCFG_IE) != 0u;
			for (uint32_t t = 1; trapless(p) && t < APLIC_MAX_SOURCES; t++) {
				if (bit_of(va->owned, t))
					program_source(p, t);
			}
		}
		out = DOMAINCFG_RO1 | (va->domain_ie ? DOMAINCFG_IE : 0u) |
		      (trapless(p) ? DOMAINCFG_DM : 0u);
	} else if (off >= SOURCECFG && off < aplic_source_reg(SOURCECFG, num_sources)) {
		s = (off - SOURCECFG) / 4u + 1u;
		if (write && bit_of(va->owned, s))
			write_sourcecfg(p, s, *value);
		out = va->sourcecfg[s];
	} else if (off >= SETIP && off < CLRIE + 4u * APLIC_WORDS && (off & 0xffu) < 4u * APLIC_WORDS) {
		uint32_t base = off & ~0xffu;
		uint32_t w = (off & 0xffu) / 4u;
		if (write)
			write_word(p, base, w, *value);
		else
			out = read_word(p, base, w);
	} else if (write && (off == SETIPNUM || off == CLRIPNUM || off == SETIENUM ||
			     off == CLRIENUM || off == SETIPNUM_LE || off == SETIPNUM_BE)) {
		s = (off == SETIPNUM_BE) ? __builtin_bswap32(*value) : *value;
		if (owned_source(va, s) && (off == SETIENUM || off == CLRIENUM))
			set_enabled(p, s, off == SETIENUM);
		else if (owned_source(va, s))
			set_pending(p, s, off != CLRIPNUM);
	} else if (off == GENMSI && trapless(p)) {
		if (write)
			write_genmsi(p, *value);
		out = va->genmsi;
	} else if (off >= TARGET && off < aplic_source_reg(TARGET, num_sources)) {
		s = (off - TARGET) / 4u + 1u;
		if (write && bit_of(va->owned, s))
			write_target(p, s, *value);
		out = va->target[s];
	} else if (off >= IDC && !trapless(p) && (off - IDC) / IDC_SIZE < p->num_vcpus) {
		out = idc_access(p, (off - IDC) / IDC_SIZE, (off - IDC) % IDC_SIZE, write, *value);
	} else {
		out = 0; /* reserved, or another domain's (the M-level MSI address registers) */
	}
	if (!write)
		*value = out;
	return s != 0u && !owned_source(va, s);
}

static enum mmio_result vaplic_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				      uint64_t *value, const void *ctx)
{
	(void)ctx;
	struct partition *p = v->partition;
	struct vaplic *va = &p->arch.vaplic;
	uint32_t word = (uint32_t)*value;

	if (offset >= APLIC_SIZE)
		return MMIO_UNHANDLED;
	bool any = false;
	for (uint32_t w = 0; w < APLIC_WORDS; w++)
		any = any || va->owned[w] != 0u;
	if (!any)
		return MMIO_UNHANDLED; /* no APLIC in its map */
	if (size != 4u)
		return MMIO_ABORT;
	spin_lock(&va->lock);
	bool ignored = register_access(p, (uint32_t)offset, write, &word);
	spin_unlock(&va->lock);
	if (ignored)
		vcpu_count(v, STAT_APLIC_IGNORED);
	if (!write)
		*value = word;
	/*
	 * What changes delivery: a write (configuration: every vCPU looks again), and a claim,
	 * which changes only the claiming IDC's hart (a source targets one hart): a guest's
	 * interrupt handler kicks none of its siblings.
	 */
	if (write)
		update_all(p);
	else if (offset >= IDC && (offset - IDC) % IDC_SIZE == CLAIMI && !trapless(p) &&
		 (offset - IDC) / IDC_SIZE < p->num_vcpus)
		update_vcpu(&p->vcpu[(offset - IDC) / IDC_SIZE]);
	return MMIO_DONE;
}

/* Every partition has the board's S-level APLIC frame: without sources, vaplic_access refuses it. */
bool arch_partition_devices(struct partition *p, char *err, size_t errlen)
{
	return mmio_add(p, platform.arch.aplic_s_base, APLIC_SIZE, vaplic_access, NULL, err, errlen);
}
