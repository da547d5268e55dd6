/* SPDX-License-Identifier: MIT */
/*
 * The emulated PCIe ECAM (core/pci.c, vpci_access): per input, a small bus built in the fake
 * ECAM (up to 10 functions at chosen slots, each with MSI 32- or 64-bit, with or without
 * per-vector masking, MSI-X, PCI Express, power management and vendor capabilities in any
 * list order and position, the list maybe looping back, pointers maybe with their reserved
 * low bits set), then guest configuration accesses through mmio_emulate (which partition and
 * vCPU, function, offset biased towards the capabilities, size 1/2/4/8, read or write, values
 * biased towards the vCPUs' doorbells, the board's doorbells and the MSI enable bit),
 * interleaved with operator restarts (the owner's silences its functions and forgets the
 * guest's MSI addresses).
 *
 * "direct" (vCPUs on cores 3 and 4) owns the ECAM, both buses of it (an ECAM is given out
 * whole); "trap" owns none of it.  Its restart silences both buses.
 *
 * Input: a count of functions, 6 bytes each (slot, capabilities, list order, slots and fill:
 * build_fn), then steps of `how` (size, write, actor: "direct" vCPU 0 or 1, "trap" vCPU 0, or a
 * restart, at most two an input; where the offset is), `sel` (function, unaligned, value kind),
 * the offset's bytes and the value's (pick_reg, pick_value; make_seeds.py writes them).
 *
 * The fake's config space is plain memory: what real hardware keeps read-only (IDs, header
 * type, the capability list bit, the list's pointers and IDs, MSI's capability bits, MSI-X's
 * registers but its enable and mask) is put back after every step, and an absent function
 * reads all ones again, so that the oracle is about the hypervisor, not the fake.
 *
 * Oracle, after every access:
 *  - the result is the one the rules give, computed from the harness's own model: any access
 *    of a partition that does not own the bridge, MMIO_UNHANDLED (the emulated ECAM is not in
 *    its map); misaligned, MMIO_MISALIGNED (mmio_emulate's check, before any handler); an
 *    address the owner does not own, MMIO_UNHANDLED; 8 bytes, MMIO_ABORT;
 *    a write overlapping MSI-X, an MSI address on a ninth function, a live MSI address that is
 *    none of the owner's doorbells, or MSI enabled while the guest's address is none of them,
 *    MMIO_UNHANDLED; anything else MMIO_DONE.  A refused access leaves the guest's value alone;
 *  - every byte of every function is what the model says: a read or a refused access changed
 *    nothing (of the device or of the guest's MSI addresses), a write reached the device as
 *    written, except an MSI address, for which the device holds the owner's translation of
 *    the guest's address (FAKE_MSI_GUEST + i * 4 KiB + o -> FAKE_MSI_HOST + core(i) * 4 KiB + o),
 *    or 0 when it is not one of its doorbells;
 *  - a read returns the device's bytes, with the guest's own MSI address (as last accepted,
 *    0 if none since the start) and the byte that links to MSI-X reading as MSI-X's next;
 *  - whenever a function's MSI is enabled in the device, its address is one of the owner's
 *    doorbells on the board (FAKE_MSI_HOST + core * 4 KiB + o, o < 4 KiB, for one of its
 *    cores); MSI-X is never enabled;
 *  - an owner's restart silences its functions exactly as a walk of each bus says (command,
 *    MSI and MSI-X enables) and changes nothing else; nothing is written anywhere else in the
 *    ECAM (it is read-only but for the functions built and an absent one while accessed).
 */
#include <string.h>
#include <sys/mman.h>
#include <tern/mmio.h>
#include <tern/pci.h>
#include <tern/platform.h>
#include "harness.h"

#define OWNER STD_DIRECT
#define OTHER STD_TRAP
#define STARTED (BIT(0) | BIT(3) | BIT(4))
#define BUS_SIZE (1u << 20)
#define OWNED_END FAKE_ECAM_SIZE                /* the owner's: the whole ECAM */
#define FN_SIZE 0x1000u
#define MAX_FNS 10u
#define SLOTS 6u                                /* capability slots of 0x20 bytes from 0x40 */
#define MSI_ENABLE 0x0001u
#define MSIX_ENABLE 0x8000u

enum { K_MSI, K_MSIX, K_PCIE, K_PM, K_VNDR, KINDS };
static const uint8_t kind_id[KINDS] = { 0x05, 0x11, 0x10, 0x01, 0x09 };
static const char *const kind_name[KINDS] = { "msi", "msix", "pcie", "pm", "vndr" };

struct fn {
	uint32_t off;                   /* in the ECAM */
	bool owned, multi;
	uint32_t ncaps, cap[KINDS];     /* positions, in list order */
	uint32_t msi, msix, msix_link;  /* 0: none */
	uint32_t msi_addr_size;         /* 4 or 8 */
	bool shadowed;                  /* the guest's MSI address, as last accepted */
	uint64_t guest_addr;
	uint8_t ro_mask[256], ro_val[256];
	uint8_t dev[FN_SIZE];           /* what the device holds, as the model says */
};

static struct fn fns[MAX_FNS];
static uint32_t nfns, nshadowed;
static uint8_t ones[FN_SIZE];

static void give_ecam(struct tern_config *cfg)
{
	struct tern_config_partition *o = &cfg->partition[OWNER];
	uintptr_t e = (uintptr_t)fake_ecam;

	o->num_regions = 1;
	o->region[0] = (struct tern_config_region){ .ipa = e, .hpa = e, .size = FAKE_ECAM_SIZE,
						    .flags = TERN_RF_DEVICE };
	/* One bridge, one owner: the bus's INTA (SPI 35) goes with its ECAM. */
	for (uint32_t p = 0; p < cfg->num_partitions; p++)
		cfg->partition[p].irqs[1] &= ~BIT(35 - 32);
	o->irqs[1] |= BIT(35 - 32);
}

static uint16_t get16(const uint8_t *b, uint32_t at)
{
	return (uint16_t)(b[at] | b[at + 1] << 8);
}

static void put16(uint8_t *b, uint32_t at, uint16_t v)
{
	b[at] = (uint8_t)v;
	b[at + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, uint32_t at, uint32_t v)
{
	put16(b, at, (uint16_t)v);
	put16(b, at + 2, (uint16_t)(v >> 16));
}

static uint64_t get_le(const uint8_t *b, uint32_t at, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)b[at + i] << (8 * i);
	return v;
}

static struct fn *fn_at(uint32_t off)
{
	for (uint32_t i = 0; i < nfns; i++) {
		if (fns[i].off == off)
			return &fns[i];
	}
	return NULL;
}

/*
 * Only the functions built, and an absent one while it is accessed, can be written: a write
 * anywhere else in the ECAM faults (SEGV, with the input) where it is made.
 */
static void writable(uint32_t off, size_t size, bool yes)
{
	FUZZ_ASSERT(!mprotect(fake_ecam + off, size, PROT_READ | (yes ? PROT_WRITE : 0)));
}

/* Hardware's read-only bits: kept as built. */
static void ro(struct fn *f, uint32_t at, uint8_t mask)
{
	f->ro_mask[at] |= mask;
}

/* One function, from 6 bytes of input. */
static void build_fn(struct input *in)
{
	uint32_t loc = (uint32_t)take(in, 2);
	uint8_t caps = (uint8_t)take(in, 1);
	uint32_t order = (uint32_t)take(in, 2);
	uint8_t fill = (uint8_t)take(in, 1);
	uint32_t dev = loc & 31u, bus = (loc >> 5) & 1u, fnum = (loc & 0x200) ? (loc >> 6) & 7u : 0u;
	uint32_t off = (bus << 20) | (dev << 15) | (fnum << 12);

	if (fn_at(off))
		return;
	struct fn *f = &fns[nfns++];
	uint8_t *d = f->dev;
	memset(f, 0, sizeof(*f));
	f->off = off;
	f->owned = off < OWNED_END;
	f->multi = loc & 0x400;
	put16(d, 0x00, 0x1af4);
	put16(d, 0x02, (uint16_t)(0x1040 + nfns));
	put16(d, 0x04, 0x0006);
	d[0x08] = fill;
	d[0x0e] = f->multi ? 0x80 : 0x00;
	put32(d, 0x10, 0xfe000000u | (uint32_t)fill << 12);
	for (uint32_t i = 0; i < 4; i++)
		ro(f, i, 0xff);
	ro(f, 0x06, 0x10);
	ro(f, 0x0e, 0xff);
	ro(f, 0x34, 0xff);

	/* The capabilities present (bit 0: MSI, 3: MSI-X, 4: PCIe, 5: PM; order bit 15: vendor). */
	uint32_t kinds[KINDS], n = 0;
	if (caps & 0x01)
		kinds[n++] = K_MSI;
	if (caps & 0x08)
		kinds[n++] = K_MSIX;
	if (caps & 0x10)
		kinds[n++] = K_PCIE;
	if (caps & 0x20)
		kinds[n++] = K_PM;
	if (order & 0x8000)
		kinds[n++] = K_VNDR;
	/* List order and slots: permutations drawn from `order` and `fill`. */
	uint32_t e = order & 0x7fff, slots[SLOTS] = { 0, 1, 2, 3, 4, 5 };
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = e % i, t = kinds[i - 1];
		e /= i;
		kinds[i - 1] = kinds[j];
		kinds[j] = t;
	}
	uint32_t s = fill;
	for (uint32_t i = SLOTS; i > 1; i--) {
		uint32_t j = s % i, t = slots[i - 1];
		s /= i;
		slots[i - 1] = slots[j];
		slots[j] = t;
	}
	uint8_t low = (caps & 0x80) ? (fill >> 6) : 0; /* reserved pointer bits, ignored */
	f->ncaps = n;
	if (n)
		put16(d, 0x06, 0x0010);
	d[0x34] = n ? (uint8_t)((0x40 + 0x20 * slots[0]) | low) : (fill & 0x3c);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t at = 0x40 + 0x20 * slots[i];
		f->cap[i] = at;
		d[at] = kind_id[kinds[i]];
		if (i + 1 < n)
			d[at + 1] = (uint8_t)((0x40 + 0x20 * slots[i + 1]) | low);
		else if (caps & 0x40) /* loops back */
			d[at + 1] = (uint8_t)((0x40 + 0x20 * slots[e % n]) | low);
		else /* the end, or a pointer into the header: the end too */
			d[at + 1] = fill & 0x3c;
		ro(f, at, 0xff);
		ro(f, at + 1, 0xff);
		switch (kinds[i]) {
		case K_MSI: {
			bool b64 = caps & 0x02, mask = caps & 0x04;
			uint16_t control = (uint16_t)((b64 ? 0x80 : 0) | (mask ? 0x100 : 0) | (fill & 0x0e));
			put16(d, at + 2, control);
			ro(f, at + 2, 0x8e);
			ro(f, at + 3, 0xff);
			/* What firmware left there: MSI is off. */
			put32(d, at + 4, 0xfee00000u | fill);
			if (b64)
				put32(d, at + 8, fill);
			f->msi = at;
			f->msi_addr_size = b64 ? 8 : 4;
			break;
		}
		case K_MSIX:
			put16(d, at + 2, (uint16_t)((fill & 0x7f) | (caps & 0x04 ? 0x4000 : 0)));
			put32(d, at + 4, 0x2000u | (fill & 7u));
			put32(d, at + 8, 0x3000u | (fill & 7u));
			ro(f, at + 2, 0xff);
			ro(f, at + 3, 0x3f);
			for (uint32_t b = 4; b < 12; b++)
				ro(f, at + b, 0xff);
			f->msix = at;
			f->msix_link = i ? f->cap[i - 1] + 1 : 0x34;
			break;
		case K_PCIE:
			put16(d, at + 2, 0x0002);
			put32(d, at + 4, 0x00008000u | fill);
			ro(f, at + 2, 0xff);
			ro(f, at + 3, 0xff);
			break;
		case K_PM:
			put16(d, at + 2, 0x0003);
			ro(f, at + 2, 0xff);
			ro(f, at + 3, 0xff);
			break;
		default:
			d[at + 2] = 8;
			ro(f, at + 2, 0xff);
			break;
		}
	}
	for (uint32_t i = 0; i < 256; i++)
		f->ro_val[i] = d[i] & f->ro_mask[i];
	writable(off, FN_SIZE, true);
	memcpy(fake_ecam + off, d, FN_SIZE);
	TRACE("fn %02x:%02x.%x%s%s caps", bus, dev, fnum, f->multi ? " multi" : "", f->owned ? "" : " unowned");
	for (uint32_t i = 0; i < n; i++)
		TRACE(" %s@%02x%s", kind_name[kinds[i]], f->cap[i],
		      kinds[i] == K_MSI ? (f->msi_addr_size == 8 ? "/64" : "/32") : "");
	TRACE(" -> %02x\n", n ? d[f->cap[n - 1] + 1] : d[0x34]);
}

/* The owner's doorbell at `guest`, as the board addresses it: arch_msi_target on the fake. */
ORACLE static bool translate(uint64_t guest, uint64_t *host)
{
	const struct tern_config_partition *c = partitions[OWNER].cfg;

	for (uint32_t i = 0; i < c->num_vcpus; i++) {
		uint64_t o = guest - (FAKE_MSI_GUEST + i * 0x1000ull);
		if (o < 0x1000) {
			*host = FAKE_MSI_HOST + c->cpus[i] * 0x1000ull + o;
			return true;
		}
	}
	return false;
}

ORACLE static bool owner_doorbell(uint64_t host)
{
	const struct tern_config_partition *c = partitions[OWNER].cfg;

	for (uint32_t i = 0; i < c->num_vcpus; i++) {
		if (host - (FAKE_MSI_HOST + c->cpus[i] * 0x1000ull) < 0x1000)
			return true;
	}
	return false;
}

static bool in_msi_address(const struct fn *f, uint32_t at)
{
	return f && f->msi && at >= f->msi + 4 && at < f->msi + 4 + f->msi_addr_size;
}

/* What the guest should read. */
ORACLE static uint32_t model_read(const struct fn *f, uint32_t reg, unsigned size)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < size; i++) {
		uint32_t at = reg + i, byte;
		if (!f)
			byte = 0xff;
		else if (f->msix && at == f->msix_link)
			byte = f->dev[f->msix + 1];
		else if (in_msi_address(f, at))
			byte = f->shadowed ? (uint8_t)(f->guest_addr >> (8 * (at - f->msi - 4))) : 0;
		else
			byte = f->dev[at];
		v |= byte << (8 * i);
	}
	return v;
}

/* The result a write by the owner should have, and the model updated if it is MMIO_DONE. */
ORACLE static enum mmio_result model_write(struct fn *f, uint32_t reg, unsigned size, uint32_t value)
{
	if (f && f->msix && reg < f->msix + 12 && reg + size > f->msix)
		return MMIO_UNHANDLED;
	if (in_msi_address(f, reg)) {
		if (!f->shadowed && nshadowed == VPCI_MAX_MSI)
			return MMIO_UNHANDLED;
		uint32_t shift = 8 * (reg - f->msi - 4);
		uint64_t mask = (size == 4 ? 0xffffffffull : (1ull << (8 * size)) - 1) << shift;
		uint64_t addr = ((f->shadowed ? f->guest_addr : 0) & ~mask) | (((uint64_t)value << shift) & mask);
		uint64_t host = 0;
		bool steered = translate(addr, &host);
		if (!steered && (get16(f->dev, f->msi + 2) & MSI_ENABLE))
			return MMIO_UNHANDLED;
		nshadowed += !f->shadowed;
		f->shadowed = true;
		f->guest_addr = addr;
		for (uint32_t i = 0; i < f->msi_addr_size; i++)
			f->dev[f->msi + 4 + i] = (uint8_t)(host >> (8 * i));
		return MMIO_DONE;
	}
	if (f && f->msi && reg <= f->msi + 2 && reg + size > f->msi + 2 &&
	    ((value >> (8 * (f->msi + 2 - reg))) & MSI_ENABLE)) {
		uint64_t host;
		if (!translate(f->shadowed ? f->guest_addr : 0, &host))
			return MMIO_UNHANDLED;
	}
	return MMIO_DONE;
}

/* Every built function holds what the model says. */
ORACLE static void check_devices(void)
{
	for (uint32_t i = 0; i < nfns; i++)
		FUZZ_ASSERT(same_bytes(fake_ecam + fns[i].off, fns[i].dev, FN_SIZE));
}

/* What hardware would not have let change, back as built (in the device and the model). */
ORACLE static void restore_read_only(void)
{
	for (uint32_t i = 0; i < nfns; i++) {
		struct fn *f = &fns[i];
		uint8_t *d = fake_ecam + f->off;
		for (uint32_t at = 0; at < 256; at++) {
			uint8_t m = f->ro_mask[at];
			if (m) {
				d[at] = (uint8_t)((d[at] & ~m) | f->ro_val[at]);
				f->dev[at] = (uint8_t)((f->dev[at] & ~m) | f->ro_val[at]);
			}
		}
	}
}

/* MSI only ever aimed at the owner's doorbells; MSI-X never on. */
ORACLE static void check_msi(void)
{
	for (uint32_t i = 0; i < nfns; i++) {
		const struct fn *f = &fns[i];
		const uint8_t *d = fake_ecam + f->off;
		if (f->msi && (get16(d, f->msi + 2) & MSI_ENABLE))
			FUZZ_ASSERT(owner_doorbell(get_le(d, f->msi + 4, f->msi_addr_size)));
		if (f->msix)
			FUZZ_ASSERT(!(get16(d, f->msix + 2) & MSIX_ENABLE));
	}
	FUZZ_ASSERT(atomic_load(&partitions[OWNER].vpci.lock.next) ==
		    atomic_load(&partitions[OWNER].vpci.lock.serving));
}

/* What a walk of one slot's functions silences (command, MSI and MSI-X enables). */
static void model_quiesce_slot(uint32_t slot)
{
	for (uint32_t fnum = 0; fnum < 8; fnum++) {
		struct fn *f = fn_at(slot | (fnum << 12));
		if (!f) {
			if (fnum == 0)
				break;
			continue;
		}
		uint8_t *d = f->dev;
		put16(d, 0x04, (uint16_t)((get16(d, 0x04) & ~7u) | 0x400));
		if (f->msi)
			put16(d, f->msi + 2, get16(d, f->msi + 2) & (uint16_t)~MSI_ENABLE);
		if (f->msix)
			put16(d, f->msix + 2, get16(d, f->msix + 2) & (uint16_t)~MSIX_ENABLE);
		if (fnum == 0 && !f->multi)
			break;
	}
}

/* pci_quiesce_range of the owner's region: the whole ECAM, bus by bus. */
ORACLE static void model_quiesce(void)
{
	for (uint32_t bus = 0; bus < FAKE_ECAM_SIZE / BUS_SIZE; bus++) {
		for (uint32_t dev = 0; dev < 32; dev++)
			model_quiesce_slot(bus * BUS_SIZE + (dev << 15));
	}
}

static void restart(uint32_t pi)
{
	struct partition *p = &partitions[pi];

	TRACE("restart %s\n", p->name);
	partition_request(p, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(64);
	FUZZ_ASSERT(atomic_load(&p->state) == PARTITION_RUNNING);
	if (pi == OWNER) {
		model_quiesce();
		for (uint32_t i = 0; i < nfns; i++)
			fns[i].shadowed = false;
		nshadowed = 0;
	}
	std_repair(STARTED);
	check_devices();
	check_msi();
}

/* The access's offset in its function: biased towards the capabilities. */
static uint32_t pick_reg(struct input *in, const struct fn *f, uint32_t where, uint32_t *fn_off)
{
	uint8_t b = (uint8_t)take(in, 1);

	switch (where) {
	case 0: case 1: case 2:
		return (f && f->msi ? f->msi : 0x40) + b % 0x18u;
	case 3:
		if (f && f->msix && (b & 0x80))
			return f->msix_link;
		return (f && f->msix ? f->msix : 0x50) + b % 0x10u;
	case 4:
		return b;
	case 5: {
		uint32_t n = f ? f->ncaps : 0, k = b % (n + 1);
		return k == n ? 0x34 : f->cap[k] + ((b >> 4) & 3);
	}
	case 6:
		return (b | (uint32_t)take(in, 1) << 8) & (FN_SIZE - 1);
	default:
		/* Anywhere in the ECAM: absent functions, devices nobody owns. */
		*fn_off = (uint32_t)(b | take(in, 1) << 8) % (FAKE_ECAM_SIZE / FN_SIZE) * FN_SIZE;
		return (uint32_t)take(in, 1);
	}
}

/* The value a write carries: doorbells come shifted to the byte the access starts at. */
static uint32_t pick_value(struct input *in, const struct fn *f, uint32_t reg, unsigned size, uint32_t kind)
{
	uint32_t shift = in_msi_address(f, reg) ? 8 * (reg - f->msi - 4) : 8 * (reg & 3);
	uint32_t cur = (uint32_t)(f ? get_le(f->dev, reg, size < 4 ? size : 4) : 0xffffffffu);
	uint64_t addr;

	switch (kind) {
	case 0:
		return (uint32_t)take(in, 4);
	case 1:
		return (uint32_t)take(in, 1);
	case 2: { /* a vCPU's doorbell (vCPU 2: the owner has none), maybe beyond its page */
		uint8_t v = (uint8_t)take(in, 1);
		addr = FAKE_MSI_GUEST + (v % 3u) * 0x1000ull + (take(in, 2) & 0x1fff);
		return (uint32_t)(addr >> shift);
	}
	case 3: { /* the board's doorbell of a core, as the device would need it */
		uint8_t v = (uint8_t)take(in, 1);
		addr = FAKE_MSI_HOST + (v % 6u) * 0x1000ull + ((v >> 3) << 4);
		return (uint32_t)(addr >> shift);
	}
	case 4: /* read, modified: MSI's enable bit set */
		if (f && f->msi && reg <= f->msi + 2 && reg + size > f->msi + 2 && f->msi + 2 - reg < 4)
			return cur | MSI_ENABLE << (8 * (f->msi + 2 - reg));
		return cur | 1u;
	case 5:
		return 0;
	case 6: { /* read, modified: a byte flipped */
		uint8_t v = (uint8_t)take(in, 1);
		return cur ^ ((uint32_t)v << (8 * (v & 3)));
	}
	default:
		return 0xffffffffu;
	}
}

static const char *result_name(enum mmio_result r)
{
	switch (r) {
	case MMIO_DONE: return "done";
	case MMIO_UNHANDLED: return "unhandled";
	case MMIO_ABORT: return "abort";
	case MMIO_MISALIGNED: return "misaligned";
	default: return "?";
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };
	static bool cleared;
	unsigned restarts = 0;

	if (!cleared) {
		memset(ones, 0xff, sizeof(ones));
		memset(fake_ecam, 0xff, FAKE_ECAM_SIZE); /* no device answers: all ones */
		writable(0, FAKE_ECAM_SIZE, false);
		cleared = true;
	}
	std_config_hook = give_ecam;
	std_boot(STARTED);
	fake_uart_clear();
	vpci_reset(&partitions[OWNER].vpci);
	vpci_reset(&partitions[OTHER].vpci);
	nfns = nshadowed = 0;
	uint32_t want = 1 + (uint32_t)take(&in, 1) % MAX_FNS;
	for (uint32_t i = 0; i < want; i++)
		build_fn(&in);

	while (input_left(&in)) {
		uint8_t how = (uint8_t)take(&in, 1), sel = (uint8_t)take(&in, 1);
		unsigned sz = 1u << (how & 3);
		bool write = how & 4;
		uint32_t actor = (how >> 3) & 3, where = how >> 5;

		if (actor == 3) {
			/* At most two per input: a restart costs a hundred accesses. */
			if (restarts++ < 2)
				restart(where < 4 ? OWNER : OTHER);
			continue;
		}
		struct fn *f = &fns[(sel & 15) % nfns];
		uint32_t fn_off = f->off;
		uint32_t reg = pick_reg(&in, f, where, &fn_off);
		if (fn_off != f->off)
			f = fn_at(fn_off);
		if (!(sel & 0x10))
			reg &= ~(sz - 1);
		if (reg > FN_SIZE - sz)
			reg = FN_SIZE - sz;
		uint32_t wvalue = write ? pick_value(&in, f, reg, sz, sel >> 5) : 0;
		uint64_t value = write ? wvalue : 0x5a5a5a5a5a5a5a5aull;
		struct vcpu *v = std_vcpu(actor == 2 ? OTHER : OWNER, actor == 2 ? 0 : actor);
		uint32_t at = fn_off + reg;
		enum mmio_result r = MMIO_DONE, expect = MMIO_DONE;

		/* The rules, from the harness's own model, before the access. */
		if (actor == 2)
			expect = MMIO_UNHANDLED; /* the emulated ECAM is its owner's device only */
		else if (at & (sz - 1))
			expect = MMIO_MISALIGNED;
		else if (at >= OWNED_END)
			expect = MMIO_UNHANDLED;
		else if (sz > 4)
			expect = MMIO_ABORT;
		uint32_t expect_read = expect == MMIO_DONE && !write ? model_read(f, reg, sz) : 0;
		if (expect == MMIO_DONE && write)
			expect = model_write(f, reg, sz, wvalue);

		if (!f)
			writable(fn_off, FN_SIZE, true);
		FUZZ_ASSERT(FAKE_ON(v->pcpu, r = mmio_emulate(v, (uintptr_t)fake_ecam + at, sz, write, &value)) ==
			    FAKE_RETURNED);
		TRACE("%s vcpu %u %s %02x:%02x.%x+0x%03x/%u 0x%llx: %s (expected %s)\n", v->partition->name,
		      v->index, write ? "write" : "read", at >> 20, (at >> 15) & 31, (at >> 12) & 7, reg, sz,
		      (unsigned long long)(write ? wvalue : value), result_name(r), result_name(expect));
		FUZZ_ASSERT(r == expect);
		if (r != MMIO_DONE)
			FUZZ_ASSERT(value == (write ? wvalue : 0x5a5a5a5a5a5a5a5aull));
		else if (!write)
			FUZZ_ASSERT(value == expect_read);
		/* A write that went through reaches the device as written (the MSI address aside). */
		if (r == MMIO_DONE && write && !in_msi_address(f, reg) && f) {
			for (unsigned i = 0; i < sz; i++)
				f->dev[reg + i] = (uint8_t)(wvalue >> (8 * i));
		}
		check_devices();
		if (!f) {
			/* An absent function: what reached it, then all ones again (nothing answers). */
			uint8_t *d = fake_ecam + fn_off;
			if (r == MMIO_DONE && write) {
				for (unsigned i = 0; i < sz; i++)
					FUZZ_ASSERT(d[reg + i] == (uint8_t)(wvalue >> (8 * i)));
				memset(d + reg, 0xff, sz);
			}
			FUZZ_ASSERT(same_bytes(d, ones, FN_SIZE));
			writable(fn_off, FN_SIZE, false);
		}
		restore_read_only();
		check_msi();
	}

	for (uint32_t i = 0; i < nfns; i++) {
		memset(fake_ecam + fns[i].off, 0xff, FN_SIZE);
		writable(fns[i].off, FN_SIZE, false);
	}
	return 0;
}
