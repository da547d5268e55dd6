/*
 * An in-guest fuzzer of what the hypervisor traps or emulates: from fuzz.seed a deterministic
 * PRNG (xorshift64*) picks, per iteration, one access to the distributor, one of the
 * partition's redistributor frames, the PL011, an SMCCC/PSCI call through HVC or SMC, or a
 * trapped system register, and makes it. Synchronous exceptions it gets (injected undefined
 * instructions, data aborts, its own alignment faults) are counted by class and stepped over;
 * interrupts its writes enabled are acknowledged and counted (and silenced if they storm).
 *
 * It never asks for anything that would end the run (SYSTEM_OFF, SYSTEM_RESET, SYSTEM_RESET2,
 * CPU_OFF, the suspend calls) and starts siblings only at park_entry. Its verdict does not
 * depend on what the hypervisor answers: the oracle is that the hypervisor does not panic,
 * the neighbour is unaffected, and the fuzzer completes (tests/system/test_fuzz.py).
 */
#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "mmu.h"
#include "psci.h"
#include "runtime.h"
#include "timer.h"

const char guest_name[] = "fuzz";

#define WAIT_US                 2000000
#define PROGRESS_EVERY          1000
#define STORM_LIMIT             1000    /* interrupts of one INTID before it is disabled */
#define UNMAPPED_IPA            0x0c000000UL    /* nothing there on the board or in Tern */

/* What an iteration aims at. */
enum target { T_GICD, T_GICR, T_PL011, T_CALL, T_SYSREG, TARGETS };
static const char *const target_names[TARGETS] = { "gicd", "gicr", "pl011", "call", "sysreg" };

/* Each written by its own CPU only: with the MMU off all of this is Device memory. */
struct cpu_state {
	uint64_t rng;
	volatile unsigned target;       /* of the access in flight, for the exception handler */
	volatile uint64_t accesses[TARGETS];
	volatile uint64_t exceptions[TARGETS];
	volatile uint64_t by_class[64];
	volatile uint64_t irqs, sgis, ppis, spis, spurious;
	volatile uint64_t calls_by_ret[11];     /* 0 .. -9, then anything else */
	volatile uint16_t per_intid[1020];
	volatile uint32_t silenced[8];
	volatile uint32_t silenced_count;
	volatile uint64_t done;                 /* iterations */
	volatile uint32_t finished;
};

static struct cpu_state cpu_states[MAX_CPUS];
static unsigned n_cpus = 1;
static unsigned n_frames = 1;   /* redistributor frames: the partition's vCPUs */
static uint64_t iterations;
static uint64_t seed;
static bool use_mmu;

static struct cpu_state *me(void)
{
	return &cpu_states[cpu_index()];
}

/* xorshift64* (Vigna): 64 bits of state, never 0. */
static uint64_t rnd(void)
{
	struct cpu_state *s = me();
	uint64_t x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

static void fuzz_sync(struct exc_frame *frame)
{
	struct cpu_state *s = me();

	s->exceptions[s->target]++;
	s->by_class[(frame->esr >> 26) & 0x3f]++;
	frame->elr += 4;
}

static uintptr_t frame_of(unsigned cpu)
{
	return GICR_BASE + cpu * GICR_STRIDE;
}

static void fuzz_irq(struct exc_frame *frame)
{
	struct cpu_state *s = me();
	uint32_t intid = gic_ack();

	(void)frame;
	if (intid >= 1020) {
		s->spurious++;
		return;
	}
	s->irqs++;
	if (intid < 16)
		s->sgis++;
	else if (intid < 32)
		s->ppis++;
	else
		s->spis++;
	/* A level-triggered source nobody silences would fire for ever: disable it. */
	if (++s->per_intid[intid] == STORM_LIMIT) {
		if (intid < 32)
			mmio_write32(frame_of(cpu_index()) + GICR_SGI_OFFSET + 0x180, 1u << intid);
		else
			mmio_write32(GICD_BASE + GICD_ICENABLER + 4 * (intid / 32),
				     1u << (intid % 32));
		if (s->silenced_count < 8)
			s->silenced[s->silenced_count] = intid;
		s->silenced_count++;
	}
	gic_eoi(intid);
}

/* ---- MMIO ---- */

static uint64_t mmio_access(uintptr_t addr, unsigned size, bool write, uint64_t value)
{
	uint64_t v = 0;

	switch (size) {
	case 1:
		if (write)
			mmio_write8(addr, (uint8_t)value);
		else
			v = mmio_read8(addr);
		break;
	case 2:
		if (write)
			mmio_write16(addr, (uint16_t)value);
		else
			v = mmio_read16(addr);
		break;
	case 4:
		if (write)
			mmio_write32(addr, (uint32_t)value);
		else
			v = mmio_read32(addr);
		break;
	default:
		if (write)
			mmio_write64(addr, value);
		else
			v = mmio_read64(addr);
		break;
	}
	return v;
}

static uint64_t size_mask(unsigned size)
{
	return size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

/* A value worth writing: 0, all-ones, one bit, the current value with a bit flipped, noise. */
static uint64_t interesting(uintptr_t addr, unsigned size, bool aligned)
{
	unsigned bit = (unsigned)below(8 * size);

	switch (below(6)) {
	case 0: return 0;
	case 1: return ~0ULL;
	case 2: return 1ULL << bit;
	case 3:
		if (aligned)
			return mmio_access(addr, size, false, 0) ^ (1ULL << bit);
		return rnd();
	default: return rnd();
	}
}

/* Where registers are, as (offset, length) within a block: most accesses aim there. */
struct span {
	uint32_t off, len;
};

/* Access sizes to pick from (fuzz.sizes; 4 twice as likely by default) and how often misaligned. */
static unsigned sizes[8] = { 1, 2, 4, 4, 4, 8 };
static unsigned n_sizes = 6;
static unsigned misaligned_one_in = 8;          /* fuzz.misaligned: 1 in N, 0 never */

/* One access in a register block: one of the sizes, now and then misaligned. */
static void fuzz_block(uintptr_t base, uint32_t span, const struct span *hot, unsigned n_hot,
		       uint32_t hot_stride, bool (*refuse)(uint32_t, bool, uint64_t *))
{
	unsigned size = sizes[below(n_sizes)];
	uint32_t off = (uint32_t)below(span);
	bool aligned = size == 1 || !misaligned_one_in || below(misaligned_one_in) != 0;
	bool write = below(2);

	if (below(4)) {         /* three in four in a register area (of a random frame) */
		const struct span *h = &hot[below(n_hot)];
		off = (uint32_t)below(span / hot_stride) * hot_stride + h->off +
		      (uint32_t)below(h->len);
	}
	if (aligned)
		off &= ~(size - 1);
	else if (!(off & (size - 1)))
		off |= 1;
	if (off + size > span)
		off = span - size;
	uint64_t value = write ? interesting(base + off, size, aligned) & size_mask(size) : 0;
	if (refuse && refuse(off, write, &value))
		return;
	mmio_access(base + off, size, write, value);
}

/* Natively LPIs are real: never enable them (the GIC would use tables at random addresses). */
static bool gicr_refuse(uint32_t off, bool write, uint64_t *value)
{
	if (write && (off & (GICR_STRIDE - 1)) == 0)
		*value &= ~1ULL;        /* GICR_CTLR.EnableLPIs */
	return false;
}

/* Distributor: control and per-interrupt registers, IROUTER, identification. */
static const struct span gicd_hot[] = { { 0x0000, 0x1000 }, { 0x6000, 0x2000 }, { 0xffd0, 0x30 } };
/* Redistributor frame: RD_base registers and identification, the SGI/PPI registers. */
static const struct span gicr_hot[] = {
	{ 0x0000, 0x100 }, { 0xffd0, 0x30 }, { 0x10000, 0x1000 },
};

static void fuzz_gicd(void)
{
	fuzz_block(GICD_BASE, 0x10000, gicd_hot, 3, 0x10000, 0);
}

static void fuzz_gicr(void)
{
	fuzz_block(GICR_BASE, n_frames * (uint32_t)GICR_STRIDE, gicr_hot, 3, (uint32_t)GICR_STRIDE,
		   gicr_refuse);
}

/* ---- PL011 ---- */

#define UARTDR          0x000
#define UARTIBRD        0x024
#define UARTFBRD        0x028
#define UARTLCR_H       0x02c
#define UARTCR          0x030
#define UARTIMSC        0x038

static uint32_t pl011_saved[4];
static const uint32_t pl011_kept[4] = { UARTIBRD, UARTFBRD, UARTLCR_H, UARTCR };

/* Before the fuzzer prints: the registers it may have scrambled, as they were. */
static void pl011_restore(void)
{
	for (unsigned i = 0; i < 4; i++)
		mmio_write32(PL011_BASE + pl011_kept[i], pl011_saved[i]);
	mmio_write32(PL011_BASE + UARTIMSC, 0);
}

static void fuzz_pl011(void)
{
	/* Console output: a few printable characters and a line end, from CPU 0 only. */
	if (cpu_index() == 0 && below(16) == 0) {
		unsigned n = 1 + (unsigned)below(4);
		for (unsigned i = 0; i < n; i++)
			mmio_write32(PL011_BASE + UARTDR, (uint32_t)('!' + below(94)));
		mmio_write32(PL011_BASE + UARTDR, '\n');
		return;
	}
	uint32_t off = 4 + (uint32_t)below(0x1000 - 4);
	bool write = below(2);

	off &= ~3u;
	if (off == UARTDR)
		off = UARTIMSC;
	if (write)
		mmio_write32(PL011_BASE + off, (uint32_t)rnd());
	else
		(void)mmio_read32(PL011_BASE + off);
}

/* ---- SMCCC and PSCI ---- */

/* SMCCC ranges (owning entity in bits 29:24, fast call), 32- and 64-bit. */
static const uint32_t call_bases[] = {
	0x80000000, 0x81000000, 0x82000000, 0x83000000, 0x84000000, 0x85000000, 0x86000000,
	0xb0000000, 0xb2000000, 0xbf000000, 0xc2000000, 0xc3000000, 0xc4000000, 0xc5000000,
	0xc6000000, 0xf0000000,
};

/* Calls that would end the run or put the calling CPU to sleep: never made. */
static bool call_forbidden(uint32_t fn)
{
	switch (fn & ~0x40000000u) {
	case 0x84000001:        /* CPU_SUSPEND */
	case 0x84000002:        /* CPU_OFF */
	case 0x84000008:        /* SYSTEM_OFF */
	case 0x84000009:        /* SYSTEM_RESET */
	case 0x8400000b:        /* CPU_FREEZE */
	case 0x8400000c:        /* CPU_DEFAULT_SUSPEND */
	case 0x8400000e:        /* SYSTEM_SUSPEND */
	case 0x84000012:        /* SYSTEM_RESET2 */
		return true;
	default:
		return false;
	}
}

static void fuzz_call(void)
{
	uint32_t base = call_bases[below(sizeof(call_bases) / sizeof(call_bases[0]))];
	uint32_t fn = below(8) == 0 ? (uint32_t)rnd()
		      : base | (uint32_t)((base & 0x0f000000) == 0x04000000 ? below(0x20)
									   : below(0x10000));
	uint64_t a1 = rnd(), a2 = rnd(), a3 = rnd();

	if (call_forbidden(fn))
		fn = PSCI_VERSION;
	if ((fn & ~0x40000000u) == (PSCI_CPU_ON & ~0x40000000u)) {
		a1 = below(4) ? below(MAX_CPUS) : a1;   /* mostly a sibling, or no such CPU */
		a2 = (uintptr_t)park_entry;
	}
	uint64_t x0 = below(8) == 0 ? (rnd() << 32 | fn) : fn;
	/* Entered at EL2 on the bare board, HVC would land in our own EL2, which has no vectors. */
	bool hvc = entry_el() == 1 && below(2);
	if (call_forbidden((uint32_t)x0))
		return;
	int64_t ret = (int64_t)(hvc ? smccc_hvc((uint32_t)x0, a1, a2, a3)
				    : smccc_smc((uint32_t)x0, a1, a2, a3));
	struct cpu_state *s = me();
	s->calls_by_ret[ret <= 0 && ret >= -9 ? -ret : 10]++;
}

/* ---- trapped system registers ---- */

#define SYSREG_WRITE(reg, v)    __asm__ volatile("msr " #reg ", %0" : : "r"(v) : "memory")
#define SYSREG_READ(reg)        ({ uint64_t v_; __asm__ volatile("mrs %0, " #reg : "=r"(v_)); v_; })

static void fuzz_sysreg(void)
{
	uint64_t v = rnd();

	switch (below(12)) {
	case 0: SYSREG_WRITE(icc_sgi1r_el1, v); break;
	case 1: SYSREG_WRITE(s3_0_c12_c11_6, v); break;  /* ICC_ASGI1R_EL1 */
	case 2: SYSREG_WRITE(s3_0_c12_c11_7, v); break;  /* ICC_SGI0R_EL1 */
	/* IMPLEMENTATION DEFINED (Cortex-A53's CPUACTLR, CPUECTLR, L2CTLR, L2ECTLR, L2ACTLR). */
	case 3: (void)SYSREG_READ(s3_1_c15_c2_0); break;
	case 4: SYSREG_WRITE(s3_1_c15_c2_0, v); break;
	case 5: (void)SYSREG_READ(s3_1_c15_c2_1); break;
	case 6: (void)SYSREG_READ(s3_1_c11_c0_2); break;
	case 7: SYSREG_WRITE(s3_1_c11_c0_3, v); break;
	case 8: (void)SYSREG_READ(s3_1_c15_c0_0); break;
	/* Cache maintenance by set/way, random set and way. */
	case 9: __asm__ volatile("dc isw, %0" : : "r"(v) : "memory"); break;
	case 10: __asm__ volatile("dc csw, %0" : : "r"(v) : "memory"); break;
	default: __asm__ volatile("dc cisw, %0" : : "r"(v) : "memory"); break;
	}
	isb();
}

/* ---- the loop ---- */

static void progress(uint64_t i)
{
	const struct cpu_state *s = &cpu_states[0];
	uint64_t excs = 0;

	for (unsigned t = 0; t < TARGETS; t++)
		excs += s->exceptions[t];
	pl011_restore();
	printf("fuzz: cpu 0: %lu/%lu iterations, %lu exceptions, %lu interrupts\n",
	       (unsigned long)i, (unsigned long)iterations, (unsigned long)excs,
	       (unsigned long)s->irqs);
}

static void fuzz_loop(void)
{
	struct cpu_state *s = me();

	irq_enable();
	for (uint64_t i = 0; i < iterations; i++) {
		uint64_t pick = below(100);
		unsigned t = pick < 35 ? T_GICD : pick < 60 ? T_GICR : pick < 68 ? T_PL011
			   : pick < 85 ? T_CALL : T_SYSREG;

		s->target = t;
		s->accesses[t]++;
		switch (t) {
		case T_GICD: fuzz_gicd(); break;
		case T_GICR: fuzz_gicr(); break;
		case T_PL011: fuzz_pl011(); break;
		case T_CALL: fuzz_call(); break;
		default: fuzz_sysreg(); break;
		}
		s->done = i + 1;
		if (cpu_index() == 0 && (i + 1) % PROGRESS_EVERY == 0)
			progress(i + 1);
	}
	irq_disable();
}

static void seed_cpu(unsigned cpu)
{
	/* xorshift must not start from 0; the seed itself stays what the record says. */
	uint64_t x = (seed + cpu) ^ 0x9e3779b97f4a7c15ULL;
	cpu_states[cpu].rng = x ? x : 1;
}

static void fuzz_secondary(uint64_t cpu)
{
	fuzz_loop();
	dsb_sy();
	cpu_states[cpu].finished = 1;
	dsb_sy();
}

/* Redistributor frames up to the one marked Last: the partition's vCPUs. */
static unsigned count_frames(void)
{
	for (unsigned i = 0; i < MAX_CPUS; i++)
		if (mmio_read64(frame_of(i) + GICR_TYPER) & GICR_TYPER_LAST)
			return i + 1;
	return 1;
}

static void print_per_target(const char *key, uint64_t (*get)(const struct cpu_state *, unsigned))
{
	uint64_t total = 0;

	printf(",\"%s\":{", key);
	for (unsigned t = 0; t < TARGETS; t++) {
		uint64_t n = 0;
		for (unsigned cpu = 0; cpu < n_cpus; cpu++)
			n += get(&cpu_states[cpu], t);
		total += n;
		printf("\"%s\":%lu,", target_names[t], (unsigned long)n);
	}
	printf("\"total\":%lu}", (unsigned long)total);
}

static uint64_t get_access(const struct cpu_state *s, unsigned t)
{
	return s->accesses[t];
}

static uint64_t get_exception(const struct cpu_state *s, unsigned t)
{
	return s->exceptions[t];
}

static uint64_t sum(size_t offset)
{
	uint64_t n = 0;

	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		n += *(const volatile uint64_t *)((const char *)&cpu_states[cpu] + offset);
	return n;
}

#define SUM(field)      sum(__builtin_offsetof(struct cpu_state, field))

static void report(unsigned started, bool finished)
{
	unsigned n = 0;

	pl011_restore();
	printf("PROBE-JSON {\"test\":\"fuzz\",\"seed\":%lu,\"iterations\":%lu,\"cpus\":%u,"
	       "\"started\":%u,\"mmu\":%s,\"frames\":%u", (unsigned long)seed,
	       (unsigned long)iterations, n_cpus, started, json_bool(use_mmu), n_frames);
	print_per_target("accesses", get_access);
	print_per_target("exceptions", get_exception);
	printf(",\"by_class\":{");
	for (unsigned ec = 0; ec < 64; ec++) {
		uint64_t c = 0;
		for (unsigned cpu = 0; cpu < n_cpus; cpu++)
			c += cpu_states[cpu].by_class[ec];
		if (c)
			printf("%s\"0x%02x\":%lu", n++ ? "," : "", ec, (unsigned long)c);
	}
	printf("},\"irqs\":{\"total\":%lu,\"sgi\":%lu,\"ppi\":%lu,\"spi\":%lu,\"spurious\":%lu},"
	       "\"silenced\":[", (unsigned long)SUM(irqs), (unsigned long)SUM(sgis),
	       (unsigned long)SUM(ppis), (unsigned long)SUM(spis), (unsigned long)SUM(spurious));
	n = 0;
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		for (unsigned i = 0; i < cpu_states[cpu].silenced_count && i < 8; i++)
			printf("%s%u", n++ ? "," : "", cpu_states[cpu].silenced[i]);
	printf("],\"calls_by_ret\":{");
	n = 0;
	for (unsigned r = 0; r < 11; r++) {
		uint64_t c = 0;
		for (unsigned cpu = 0; cpu < n_cpus; cpu++)
			c += cpu_states[cpu].calls_by_ret[r];
		if (!c)
			continue;
		if (r < 10)
			printf("%s\"%d\":%lu", n++ ? "," : "", -(int)r, (unsigned long)c);
		else
			printf("%s\"other\":%lu", n++ ? "," : "", (unsigned long)c);
	}
	uint64_t done = SUM(done);
	printf("},\"done\":%lu,\"pass\":%s}\n", (unsigned long)done,
	       json_bool(finished && started == n_cpus && done == iterations * n_cpus));
}

void guest_main(void)
{
	struct strview v;

	exceptions_set_sync_handler(fuzz_sync);
	exceptions_set_irq_handler(fuzz_irq);
	seed = bootarg_ulong("fuzz.seed", 1, 0, ~0UL);
	iterations = bootarg_ulong("fuzz.iterations", 10000, 0, 100000000);
	n_cpus = (unsigned)bootarg_ulong("fuzz.cpus", 1, 1, MAX_CPUS);
	use_mmu = bootarg("fuzz.mmu", &v) && strview_eq(v, "on");
	bool unmapped = bootarg("fuzz.unmapped", &v) && strview_eq(v, "on");
	misaligned_one_in = (unsigned)bootarg_ulong("fuzz.misaligned", 8, 0, 1000000);
	if (bootarg("fuzz.sizes", &v)) {
		struct strview item;
		unsigned long size;
		n_sizes = 0;
		while (n_sizes < 8 && strview_next_item(&v, &item))
			if (strview_to_ulong(item, &size) && (size == 1 || size == 2 || size == 4 ||
							      size == 8))
				sizes[n_sizes++] = (unsigned)size;
		if (!n_sizes)
			sizes[n_sizes++] = 4;
	}
	n_frames = count_frames();
	for (unsigned i = 0; i < 4; i++)
		pl011_saved[i] = mmio_read32(PL011_BASE + pl011_kept[i]);

	if (use_mmu) {
		/* The GIC's pages Normal Non-cacheable: misaligned accesses reach the hypervisor. */
		use_mmu = mmu_init() && mmu_map_normal_nc(GICD_BASE, 0x10000) &&
			  mmu_map_normal_nc(GICR_BASE, n_frames * GICR_STRIDE);
		if (use_mmu)
			mmu_enable();
		use_mmu = use_mmu && mmu_is_on();
	}
	printf("fuzz: seed %lu, %lu iterations on %u CPU(s), %u redistributor frame(s), MMU %s, "
	       "sizes", (unsigned long)seed, (unsigned long)iterations, n_cpus, n_frames,
	       use_mmu ? "on (GIC pages Normal Non-cacheable)" : "off");
	for (unsigned i = 0; i < n_sizes; i++)
		printf("%s%u", i ? "," : " ", sizes[i]);
	if (misaligned_one_in)
		printf(", 1 in %u misaligned", misaligned_one_in);
	printf("%s\n", unmapped ? ", then an unmapped IPA" : "");

	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		seed_cpu(cpu);
	unsigned started = 1;
	for (unsigned cpu = 1; cpu < n_cpus; cpu++)
		started += cpu_start(cpu, fuzz_secondary, cpu) == PSCI_SUCCESS;
	fuzz_loop();

	bool finished = true;
	uint64_t deadline = deadline_after_us(WAIT_US);
	for (unsigned cpu = 1; cpu < n_cpus; cpu++)
		while (!cpu_states[cpu].finished && finished)
			finished = !deadline_passed(deadline);
	report(started, finished);

	if (unmapped) {
		printf("PROBE-JSON {\"test\":\"fuzz-unmapped\",\"phase\":\"trying\","
		       "\"addr\":\"0x%lx\"}\n", UNMAPPED_IPA);
		uint64_t before = me()->exceptions[T_GICD];
		me()->target = T_GICD;
		uint64_t value = mmio_read64(UNMAPPED_IPA);
		printf("PROBE-JSON {\"test\":\"fuzz-unmapped\",\"phase\":\"after\",\"value\":\"0x%lx\","
		       "\"exceptions\":%lu,\"pass\":false}\n", (unsigned long)value,
		       (unsigned long)(me()->exceptions[T_GICD] - before));
	}
	printf("PROBE-DONE\n");
}
