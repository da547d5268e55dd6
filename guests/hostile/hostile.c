/*
 * A hostile partition for the containment tests (tests/system/test_hostile.py): one misdeed
 * per boot, chosen with hostile.action=NAME.
 *
 * What the hypervisor must do with each:
 *  - ram-read, ram-write, mmio-foreign: an access outside the partition's RAM and devices.
 *    With on_fault = "stop" the partition is stopped with a `tern: fault` line; the access
 *    never completes.
 *  - gic-foreign, sgi-foreign, psci-foreign: interrupt-controller writes, SGIs and PSCI calls
 *    aimed at what the partition does not own. Ignored (or refused with an error code) and
 *    counted; the guest carries on.
 *  - call-malformed: unknown or malformed HVC/SMC calls. An error code (or an injected
 *    undefined-instruction exception), never a crash.
 *  - irq-storm: a level-triggered device interrupt the guest never silences. It burns only
 *    this partition's core.
 *  - uart-flood: its console's data register stored to in a tight loop. Never a neighbour's
 *    stall: what the console cannot hold is dropped and counted.
 *  - doorbell-storm: the doorbells of channel hostile.chan rung in a tight loop, every other
 *    member's and one the channel does not have. Counted on this side (refused or rung);
 *    a rung member finds its doorbell interrupt pending, once, only if it enabled it.
 *  - reset-loop, fault-loop: SYSTEM_RESET, or a fault with on_fault = "restart", first thing
 *    on every boot. Counted, and stopped at max_restarts.
 *  - gic-misaligned (MMU on, GIC pages Normal Non-cacheable): misaligned accesses to emulated
 *    GIC registers. An alignment fault injected into the guest, nothing changed.
 *  - sibling-frame: a sibling vCPU's redistributor written before that vCPU ever ran. Kept,
 *    no crash.
 *  - power-race: PSCI power calls of several vCPUs racing each other. PSCI answers, a clean
 *    end, no hang. on-vs-reset resets until hostile.until_us after its first life began, which
 *    it keeps in channel hostile.chan's memory (the only memory a reset leaves); without one,
 *    until the counter passes hostile.until_us.
 *  - access-outside: a load, a store and a branch to an address where the board has nothing
 *    (hostile.addr, default 0x0b000000), each taken by its own handler. With on_fault =
 *    "inject" the guest's synchronous external abort, exactly as on the bare board (which the
 *    test compares): it carries on.
 *  - virtio-garbage, virtio-storm, virtio-busy, virtio-backend-garbage, virtio-backend-silent:
 *    a VirtIO device's frontend or backend that breaks the rules, or the busy frontend of a
 *    pair (virtio/actions.c, both ports).
 * and one that is not a misdeed: busy, the control neighbour for the tests (it only computes).
 * hostile.cpus=N has an action use N vCPUs, hostile.mmu=on turns the MMU on (lib/mmu.c).
 *
 * Each action prints PROBE-JSON lines with "test":"hostile-<action>" (the probe guest's format,
 * so tools/tern/results.py parses them). A faulting action prints "phase":"trying", then waits
 * for hostile.at_us and makes the access with nothing else on its core; the others print
 * "phase":"acting" before their first misdeed and "phase":"done" with
 * what they saw, then PROBE-DONE and PSCI SYSTEM_OFF. hostile.at_us delays the start, and the
 * non-faulting actions repeat (hostile.rounds, hostile.until_us, hostile.gap_us), so that a
 * test can place them inside a neighbour's measurement.
 */
#include "bootargs.h"
#include "channel.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "mmu.h"
#include "pci.h"
#include "psci.h"
#include "runtime.h"
#include "timer.h"
#include "virtio/actions.h"

const char guest_name[] = "hostile";

/* Distributor and redistributor registers the library does not name. */
#define GICD_SETSPI_NSR         0x0040
#define GICD_CLRSPI_NSR         0x0048
#define GICD_ISPENDR            0x0200
#define GICD_ICPENDR            0x0280
#define GICD_ISACTIVER          0x0300
#define GICD_ICACTIVER          0x0380
#define GICD_IGRPMODR           0x0d00
#define GICD_NSACR              0x0e00
#define GICD_SGIR               0x0f00
#define GICR_ICENABLER0         (GICR_SGI_OFFSET + 0x0180)
#define GICR_ISPENDR0           (GICR_SGI_OFFSET + 0x0200)
#define GICR_ICPENDR0           (GICR_SGI_OFFSET + 0x0280)
#define GICR_ICACTIVER0         (GICR_SGI_OFFSET + 0x0380)

/* PPIs of the hypervisor on every core: the GIC maintenance interrupt, the EL2 physical timer. */
#define PPI_MAINTENANCE         25
#define PPI_HYP_TIMER           26
#define HYP_PPIS                ((1u << PPI_MAINTENANCE) | (1u << PPI_HYP_TIMER))
#define SGI_HYP                 15      /* Tern's control SGI, reserved in direct mode */

/* QEMU's edu device (docs/specs/edu.txt), as lat drives it. */
#define EDU_VENDOR              0x1234
#define EDU_DEVICE              0x11e8
#define EDU_ID                  0x00
#define EDU_INT_STATUS          0x24
#define EDU_INT_RAISE           0x60
#define EDU_INT_ACK             0x64
#define EDU_INT_BIT             1

/*
 * Under Tern, the first partition's RAM starts here on the board (`tern check` shows the
 * layout): in the tests that is the real-time neighbour's, image at + 0x80000.
 */
#define FIRST_PARTITION_HPA     0x44000000UL

#define SETTLE_US               2000    /* long enough for a stray SGI to show up */
/*
 * After a flood, before the result line: the partition's console share has to come back for
 * a line that long, at the rate the board's UART carries (11520 bytes/s: 17 ms for 200 bytes).
 * Waited in WFI: a spinning core shows in a neighbour's latency under icount, an idle one not.
 */
#define FLOOD_SETTLE_US         30000
#define WAIT_US                 1000000

/*
 * Each written by one CPU only (with the MMU off every access is to Device memory: no
 * atomics); the actions that use one vCPU run on CPU 0.
 */
static struct {
	volatile uint32_t count;        /* synchronous exceptions taken and stepped over */
	volatile uint64_t esr, far, elr;        /* of the last one */
} excs[MAX_CPUS];
static volatile uint32_t sgi_seen[16];          /* SGIs taken, by INTID */
static volatile uint32_t stray_irqs;
static volatile uint32_t storm_intid = GIC_SPURIOUS;
static volatile uint32_t storm_count;
static volatile uint32_t storm_target;
static volatile uint64_t storm_deadline;
static volatile uint32_t storm_done;
static volatile bool storm_ack_at_end;
static uintptr_t edu_regs;

static void wait_for_start(void);

/* `PROBE-JSON {"test":"hostile-ACTION"` — the caller adds fields and the closing brace. */
static void json_begin(const char *action)
{
	printf("PROBE-JSON {\"test\":\"hostile-%s\"", action);
}

/* Count and step over a synchronous exception (an injected UNDEF, say) so the action goes on. */
static void hostile_sync(struct exc_frame *frame)
{
	unsigned cpu = cpu_index();

	excs[cpu].esr = frame->esr;
	excs[cpu].far = frame->far;
	excs[cpu].elr = frame->elr;
	excs[cpu].count++;
	frame->elr += 4;
}

static uint32_t exc_count(void)
{
	return excs[cpu_index()].count;
}

static void hostile_irq(struct exc_frame *frame)
{
	uint32_t intid = gic_ack();

	if (intid == storm_intid) {
		/*
		 * The storm: EOI at the GIC but leave the device asserting its level-triggered
		 * line, so the interrupt is taken again straight away. At the end either
		 * acknowledge the device (the line drops) or, for a partition that dies mid-storm,
		 * mask IRQs in the interrupted context and leave the line up for the hypervisor
		 * to clean after.
		 */
		uint32_t n = ++storm_count;
		if (!storm_done && (n >= storm_target || deadline_passed(storm_deadline))) {
			if (storm_ack_at_end) {
				mmio_write32(edu_regs + EDU_INT_ACK, EDU_INT_BIT);
				dsb_sy();
			} else {
				frame->spsr |= 1u << 7;     /* PSTATE.I on return */
			}
			storm_done = 1;
		}
	} else if (intid == INTID_VTIMER) {
		vtimer_stop();  /* the wake-up of wait_for_start; level-triggered */
	} else if (intid < 16) {
		sgi_seen[intid]++;
	} else if (intid < 1020) {
		stray_irqs++;
	}
	if (intid < 1020)
		gic_eoi(intid);
}

static void spin_us(uint64_t us)
{
	uint64_t deadline = deadline_after_us(us);

	while (!deadline_passed(deadline))
		cpu_relax();
}

/*
 * Printed just before the first misdeed of a non-faulting action (a faulting one prints
 * "trying"): a test can tell from the order of the console lines whether it overlapped a
 * neighbour's measurement.
 */
static void print_acting(const char *action)
{
	json_begin(action);
	printf(",\"phase\":\"acting\",\"counter\":%lu}\n", (unsigned long)counter_virt());
}

/*
 * Non-faulting actions repeat their misdeeds: hostile.rounds=N times, or, with
 * hostile.until_us=U, until the counter passes U us; hostile.gap_us apart.
 */
struct repeat {
	unsigned rounds;
	unsigned long gap_us;
	uint64_t until;
	unsigned done;
};

static struct repeat repeat_args(void)
{
	struct repeat r = {
		.rounds = (unsigned)bootarg_ulong("hostile.rounds", 1, 1, 100000),
		.gap_us = bootarg_ulong("hostile.gap_us", 0, 0, 10000000),
		.until = us_to_ticks(bootarg_ulong("hostile.until_us", 0, 0, 100000000)),
		.done = 0,
	};
	return r;
}

/* Whether to do another round (the first always), after the gap. */
static bool repeat_next(struct repeat *r)
{
	if (r->done) {
		if (r->until ? deadline_passed(r->until) : r->done >= r->rounds)
			return false;
		if (r->gap_us)
			spin_us(r->gap_us);
	}
	r->done++;
	return true;
}

/* ---- faulting actions: the partition must be stopped at the access ---- */

struct target {
	const char *name;
	uintptr_t addr;
	uint32_t value;         /* what a write stores */
	const char *what;
};

/* Outside its RAM: the IPA space has RAM at ram_base() for ram_size() and nothing above. */
static bool ram_target(struct strview name, struct target *t)
{
	static const struct target fixed[] = {
		{ "other-ram", FIRST_PARTITION_HPA + 0x80000, 0,
		  "the board address of the first partition's image (another partition's RAM)" },
		{ "above-4g", 0x100000000UL, 0, "past the 32-bit IPA space" },
	};

	if (strview_eq(name, "past-ram")) {
		t->name = "past-ram";
		t->addr = ram_base() + ram_size() + 0x1000;
		t->what = "4 KiB past the end of its RAM";
		return true;
	}
	for (unsigned i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (strview_eq(name, fixed[i].name)) {
			*t = fixed[i];
			return true;
		}
	}
	return false;
}

/* Board devices a partition without `devices` does not get, at QEMU virt's addresses. */
static const struct target mmio_targets[] = {
	{ "ecam", 0x3f010004, 0x6, "PCIe ECAM, 00:02.0 Command: memory and bus master on" },
	{ "pcie-mmio", 0x10000000, 0x1, "PCIe 32-bit memory window, where a BAR goes" },
	{ "pcie-io", 0x3eff0000, 0x0, "PCIe I/O window" },
	{ "virtio", 0x0a000070, 0x0, "virtio-mmio transport 0, Status: reset" },
	{ "rtc", 0x09010008, 0x0, "PL031 RTC, load register" },
	{ "gpio", 0x09030400, 0xff, "PL061 GPIO (power button), direction" },
	{ "its", 0x08080000, 0x1, "GIC ITS, GITS_CTLR: enable" },
	{ "smmu", 0x09050020, 0x0, "SMMUv3 CR0: translation off" },
	{ "flash", 0x00000000, 0x00ff00ff, "flash 0, read-array command" },
	/* Filled in at run time: the frame after its own vCPUs' (the next core's, on the board). */
	{ "gicr", 0, 0xffffffff, "GICR frame past its own vCPUs, ISENABLER0: every SGI and PPI" },
	/*
	 * An emulated register through a store pair: no syndrome (ESR.ISV = 0), so the
	 * hypervisor cannot emulate it and must stop the partition rather than guess.
	 */
	{ "gicd-pair", GICD_BASE + GICD_ISENABLER, 0xffffffff,
	  "GICD ISENABLER0-1 with a store pair (no syndrome to emulate)" },
};

/* The redistributor frame after the last of this partition's (GICR_TYPER.Last). */
static uintptr_t gicr_past_own(void)
{
	uintptr_t rd = GICR_BASE;

	for (unsigned i = 0; i < MAX_CPUS; i++, rd += GICR_STRIDE)
		if (mmio_read64(rd + GICR_TYPER) & GICR_TYPER_LAST)
			return rd + GICR_STRIDE;
	return rd;
}

static bool mmio_target(struct strview name, struct target *t)
{
	for (unsigned i = 0; i < sizeof(mmio_targets) / sizeof(mmio_targets[0]); i++) {
		if (!strview_eq(name, mmio_targets[i].name))
			continue;
		*t = mmio_targets[i];
		if (strview_eq(name, "gicr"))
			t->addr = gicr_past_own() + GICR_ISENABLER0;
		return true;
	}
	return false;
}

static bool inside_ram(uintptr_t addr)
{
	return addr >= ram_base() && addr - ram_base() < ram_size();
}

enum access { READ64, WRITE64, WRITE32, WRITE_PAIR };

static void fault_action(const char *action, enum access access, bool (*lookup)(struct strview,
			 struct target *), const char *fallback)
{
	static const char *const access_names[] = { "read64", "write64", "write32", "write-pair" };
	struct strview name;
	struct target t;

	if (!bootarg("hostile.target", &name)) {
		name.p = fallback;
		name.len = 0;
		while (fallback[name.len])
			name.len++;
	}
	if (!lookup(name, &t)) {
		json_begin(action);
		printf(",\"target\":\"");
		print_strview(name);
		printf("\",\"error\":\"unknown target\",\"pass\":false}\n");
		return;
	}
	if (strview_eq(name, "gicd-pair"))
		access = WRITE_PAIR;
	if (inside_ram(t.addr)) {
		/* Its own RAM would prove nothing (a partition with a lot of memory). */
		json_begin(action);
		printf(",\"target\":\"%s\",\"addr\":\"0x%lx\",\"error\":\"target inside own RAM\","
		       "\"pass\":false}\n", t.name, (unsigned long)t.addr);
		return;
	}

	printf("hostile: %s: %s 0x%lx: %s\n", action, access_names[access], (unsigned long)t.addr,
	       t.what);
	json_begin(action);
	printf(",\"phase\":\"trying\",\"target\":\"%s\",\"addr\":\"0x%lx\",\"access\":\"%s\"}\n",
	       t.name, (unsigned long)t.addr, access_names[access]);
	/* Said before the wait: at hostile.at_us the core does the access and nothing else. */
	wait_for_start();

	uint64_t value = 0;
	uint32_t before = exc_count();
	switch (access) {
	case READ64:
		value = mmio_read64(t.addr);
		break;
	case WRITE64:
		mmio_write64(t.addr, 0x48414b4544ULL);  /* "HAKED": visible if it ever lands */
		break;
	case WRITE32:
		mmio_write32(t.addr, t.value);
		break;
	case WRITE_PAIR:
		__asm__ volatile("stp %w0, %w0, [%1]" : : "r"(t.value), "r"(t.addr) : "memory");
		break;
	}
	/* Only reached if the hypervisor let the access through (or the guest took it itself). */
	json_begin(action);
	printf(",\"phase\":\"after\",\"target\":\"%s\",\"value\":\"0x%lx\",\"exceptions\":%u,"
	       "\"esr\":\"0x%lx\",\"pass\":false}\n", t.name, (unsigned long)value,
	       exc_count() - before, (unsigned long)excs[cpu_index()].esr);
}

static void ram_read(void)
{
	fault_action("ram-read", READ64, ram_target, "past-ram");
}

static void ram_write(void)
{
	fault_action("ram-write", WRITE64, ram_target, "past-ram");
}

static void mmio_foreign(void)
{
	fault_action("mmio-foreign", WRITE32, mmio_target, "ecam");
}

/* ---- gic-foreign ---- */

/* The hypervisor's console UART (33), one more low SPI, the PCIe INTx lines (35-38), a high one. */
static const unsigned foreign_spis[] = { 33, 34, 35, 36, 37, 38, 72 };
#define FOREIGN_SPIS    (sizeof(foreign_spis) / sizeof(foreign_spis[0]))

/* What the distributor shows of one SPI. */
struct spi_view {
	bool enabled, pending, active, group1;
	uint8_t priority;
	uint8_t config;
	uint64_t route;
};

static bool bit_of(unsigned reg, unsigned intid)
{
	return mmio_read32(GICD_BASE + reg + 4 * (intid / 32)) & (1u << (intid % 32));
}

static void spi_view(unsigned intid, struct spi_view *s)
{
	s->enabled = bit_of(GICD_ISENABLER, intid);
	s->pending = bit_of(GICD_ISPENDR, intid);
	s->active = bit_of(GICD_ISACTIVER, intid);
	s->group1 = bit_of(GICD_IGROUPR, intid);
	s->priority = (uint8_t)(mmio_read32(GICD_BASE + GICD_IPRIORITYR + (intid & ~3u)) >>
				(8 * (intid & 3)));
	s->config = (uint8_t)((mmio_read32(GICD_BASE + GICD_ICFGR + 4 * (intid / 16)) >>
			       (2 * (intid % 16))) & 3);
	s->route = mmio_read64(GICD_BASE + GICD_IROUTER + 8 * intid);
}

/* The fields that differ, as a JSON list of names; returns how many. */
static unsigned print_spi_changes(unsigned intid, const struct spi_view *a,
				  const struct spi_view *b, unsigned printed)
{
	const char *names[7];
	unsigned n = 0;

	if (a->enabled != b->enabled)
		names[n++] = "enable";
	if (a->pending != b->pending)
		names[n++] = "pending";
	if (a->active != b->active)
		names[n++] = "active";
	if (a->group1 != b->group1)
		names[n++] = "group";
	if (a->priority != b->priority)
		names[n++] = "priority";
	if (a->config != b->config)
		names[n++] = "config";
	if (a->route != b->route)
		names[n++] = "route";
	for (unsigned i = 0; i < n; i++)
		printf("%s\"%u:%s\"", printed + i ? "," : "", intid, names[i]);
	return n;
}

/* Write counters, by what the hypervisor should make of them. */
struct gic_writes {
	unsigned counted;       /* aimed at foreign state, differing from its read-as-zero view */
	unsigned silent;        /* aimed at foreign state with the read-as-zero value itself */
	unsigned noop;          /* registers that are RAZ/WI for any guest */
};

static void gicd_write(uintptr_t off, uint32_t value, unsigned *counter)
{
	mmio_write32(GICD_BASE + off, value);
	(*counter)++;
}

/*
 * One round against the foreign SPIs: every per-interrupt register of the distributor, with
 * the values that would hurt most (enable, disable, pend, clear, activate, Group 1 for the
 * hypervisor's Group 0 console interrupt, priority 0x10, edge-triggered, routed to core 1 or
 * 1-of-N), then the redistributor's hypervisor PPIs.
 */
static void gic_round(struct gic_writes *w, uintptr_t rd)
{
	static const unsigned set_clear[] = {
		GICD_ISENABLER, GICD_ICENABLER, GICD_ISPENDR, GICD_ICPENDR, GICD_ISACTIVER,
		GICD_ICACTIVER, GICD_IGROUPR,
	};
	uint32_t words[32] = { 0 };

	for (unsigned i = 0; i < FOREIGN_SPIS; i++)
		words[foreign_spis[i] / 32] |= 1u << (foreign_spis[i] % 32);
	for (unsigned word = 1; word < 32; word++) {
		if (!words[word])
			continue;
		for (unsigned r = 0; r < sizeof(set_clear) / sizeof(set_clear[0]); r++)
			gicd_write(set_clear[r] + 4 * word, words[word], &w->counted);
		gicd_write(GICD_IGROUPR + 4 * word, 0, &w->silent);             /* Group 0 */
		gicd_write(GICD_IGRPMODR + 4 * word, words[word], &w->noop);
	}
	for (unsigned i = 0; i < FOREIGN_SPIS; i++) {
		unsigned intid = foreign_spis[i];
		uintptr_t prio = GICD_IPRIORITYR + (intid & ~3u);
		uintptr_t cfg = GICD_ICFGR + 4 * (intid / 16);
		uintptr_t route = GICD_BASE + GICD_IROUTER + 8 * intid;

		/* Read-modify-write, as a driver would: a neighbour in the word is not touched. */
		gicd_write(prio, mmio_read32(GICD_BASE + prio) | 0x10u << (8 * (intid & 3)),
			   &w->counted);
		gicd_write(cfg, mmio_read32(GICD_BASE + cfg) | 2u << (2 * (intid % 16)),
			   &w->counted);
		mmio_write64(route, 1);                 /* Aff0 1: core 1 on the board */
		w->counted++;
		mmio_write64(route, 1ULL << 31);        /* IRM: any core */
		w->counted++;
		mmio_write64(route, 0);                 /* core 0, the hypervisor's */
		w->silent++;
		gicd_write(GICD_NSACR + 4 * (intid / 16), ~0u, &w->noop);
		gicd_write(GICD_SETSPI_NSR, intid, &w->noop);
		gicd_write(GICD_CLRSPI_NSR, intid, &w->noop);
	}
	/* GICv2 SGIs (ignored with affinity routing): SGI 15 to every other core. */
	gicd_write(GICD_SGIR, 1u << 24 | SGI_HYP, &w->noop);

	/* Its own redistributor: the PPIs the hypervisor itself uses on this core. */
	mmio_write32(rd + GICR_ISENABLER0, HYP_PPIS);
	mmio_write32(rd + GICR_ICENABLER0, HYP_PPIS);
	mmio_write32(rd + GICR_ISPENDR0, HYP_PPIS);
	w->counted += 3;
	mmio_write32(rd + GICR_ICPENDR0, HYP_PPIS);
	mmio_write32(rd + GICR_ICACTIVER0, HYP_PPIS);
	w->silent += 2;
}

/*
 * After the rounds, the hypervisor's own interrupts on this core must still work: ten SGIs
 * pending at once are more than the GIC's four list registers, so with trap-and-inject the
 * last ones arrive only through the maintenance interrupt (PPI 25) the rounds aimed at.
 */
static unsigned sgi_burst(void)
{
	unsigned self = cpu_index(), received = 0;

	irq_disable();
	for (unsigned intid = 1; intid <= 10; intid++) {
		gic_enable_private(intid);
		sgi_seen[intid] = 0;
	}
	for (unsigned intid = 1; intid <= 10; intid++)
		gic_send_sgi(intid, self);
	irq_enable();
	spin_us(SETTLE_US);
	irq_disable();
	for (unsigned intid = 1; intid <= 10; intid++)
		received += sgi_seen[intid] == 1;
	return received;
}

static void gic_foreign(void)
{
	struct repeat rep = repeat_args();
	struct spi_view before[FOREIGN_SPIS], after[FOREIGN_SPIS];
	struct gic_writes w = { 0, 0, 0 };
	uintptr_t rd = gic_redistributor();

	for (unsigned i = 0; i < FOREIGN_SPIS; i++)
		spi_view(foreign_spis[i], &before[i]);
	uint32_t ppi_before = mmio_read32(rd + GICR_ISENABLER0) & HYP_PPIS;

	print_acting("gic-foreign");
	while (repeat_next(&rep))
		gic_round(&w, rd);

	for (unsigned i = 0; i < FOREIGN_SPIS; i++)
		spi_view(foreign_spis[i], &after[i]);
	uint32_t ppi_after = mmio_read32(rd + GICR_ISENABLER0) & HYP_PPIS;
	unsigned burst = sgi_burst();

	json_begin("gic-foreign");
	printf(",\"phase\":\"done\",\"rounds\":%u,\"spis\":[", rep.done);
	for (unsigned i = 0; i < FOREIGN_SPIS; i++)
		printf(i ? ",%u" : "%u", foreign_spis[i]);
	printf("],\"counted_writes\":%u,\"silent_writes\":%u,\"noop_writes\":%u,\"changed\":[",
	       w.counted, w.silent, w.noop);
	unsigned changed = 0;
	for (unsigned i = 0; i < FOREIGN_SPIS; i++)
		changed += print_spi_changes(foreign_spis[i], &before[i], &after[i], changed);
	bool ppi_changed = ppi_before != ppi_after;
	printf("],\"hyp_ppis_enabled\":\"0x%x\",\"sgi_burst\":%u,\"stray_irqs\":%u,\"pass\":%s}\n",
	       ppi_after, burst, stray_irqs,
	       json_bool(changed == 0 && !ppi_changed && burst == 10));
}

/* ---- sgi-foreign ---- */

/* ICC_SGI1R_EL1 fields the library has no macro for. */
#define SGI1R_AFF2(aff)         ((uint64_t)((aff) & 0xff) << 32)
#define SGI1R_IRM               (1ULL << 40)
#define SGI1R_RS(rs)            ((uint64_t)((rs) & 0xf) << 44)
#define SGI1R_AFF3(aff)         ((uint64_t)((aff) & 0xff) << 48)

/* SGIs for cores and vCPUs the partition does not have (it has one vCPU, Aff0 0). */
static const struct {
	const char *name;
	uint64_t value;
} foreign_sgis[] = {
	{ "aff0-1-15", SGI1R_INTID(1) | 0xfffe },       /* every other Aff0 of cluster 0 */
	{ "aff1-1", SGI1R_INTID(2) | SGI1R_AFF1(1) | SGI1R_TARGET(0) },
	{ "aff2-1", SGI1R_INTID(3) | SGI1R_AFF2(1) | SGI1R_TARGET(0) },
	{ "aff3-1", SGI1R_INTID(4) | SGI1R_AFF3(1) | SGI1R_TARGET(0) },
	{ "rs-1", SGI1R_INTID(5) | SGI1R_RS(1) | SGI1R_TARGET(0) },    /* Aff0 16 */
	{ "sgi15-aff0-1", SGI1R_INTID(SGI_HYP) | SGI1R_TARGET(1) },
};
#define FOREIGN_SGIS    (sizeof(foreign_sgis) / sizeof(foreign_sgis[0]))
#define SGI_GROUP0      6       /* through ICC_SGI0R_EL1: Group 0 is the hypervisor's */
#define SGI_ALIAS       7       /* through ICC_ASGI1R_EL1 */
#define SGI_BROADCAST   8       /* IRM = 1: every other vCPU of the partition (none) */
#define SGI_CONTROL     9       /* to itself: shows a stray delivery would have been seen */

static void sgi_foreign(void)
{
	struct repeat rep = repeat_args();
	uintptr_t rd = gic_redistributor();
	unsigned self = cpu_index();

	for (unsigned i = 0; i < 16; i++)
		sgi_seen[i] = 0;
	mmio_write32(rd + GICR_ISENABLER0, 0xffff);     /* every SGI, SGI 15 included */
	irq_enable();
	print_acting("sgi-foreign");
	while (repeat_next(&rep)) {
		for (unsigned i = 0; i < FOREIGN_SGIS; i++)
			gic_send_sgi1r(foreign_sgis[i].value);
		write_sysreg(s3_0_c12_c11_7, SGI1R_INTID(SGI_GROUP0) | SGI1R_TARGET(self));
		write_sysreg(s3_0_c12_c11_6, SGI1R_INTID(SGI_ALIAS) | SGI1R_TARGET(self));
		isb();
		gic_send_sgi1r(SGI1R_INTID(SGI_BROADCAST) | SGI1R_IRM);
		/*
		 * SGI 15 to itself, by ICC_SGI1R_EL1 and by GICR_ISPENDR0: a trap-and-inject
		 * guest's SGIs are all virtual, so it gets its own SGI 15 twice; a direct guest's
		 * SGI 15 is the hypervisor's physical control SGI and must be refused both ways.
		 */
		gic_send_sgi1r(SGI1R_INTID(SGI_HYP) | SGI1R_TARGET(self));
		mmio_write32(rd + GICR_ISPENDR0, 1u << SGI_HYP);
		spin_us(SETTLE_US);
	}
	uint32_t control_before = sgi_seen[SGI_CONTROL];
	gic_send_sgi(SGI_CONTROL, self);
	bool control = wait_count(&sgi_seen[SGI_CONTROL], control_before + 1, WAIT_US);
	spin_us(SETTLE_US);
	irq_disable();

	uint32_t leaked = 0;
	for (unsigned i = 0; i < 15; i++)
		if (i != SGI_CONTROL)
			leaked += sgi_seen[i];

	json_begin("sgi-foreign");
	printf(",\"phase\":\"done\",\"rounds\":%u,\"targets\":[", rep.done);
	for (unsigned i = 0; i < FOREIGN_SGIS; i++)
		printf(i ? ",\"%s\"" : "\"%s\"", foreign_sgis[i].name);
	printf(",\"sgi0r-self\",\"asgi1r-self\"],\"foreign_writes\":%u,\"broadcast_writes\":%u,"
	       "\"received\":[", (unsigned)(FOREIGN_SGIS + 2) * rep.done, rep.done);
	for (unsigned i = 0; i < 16; i++)
		printf(i ? ",%u" : "%u", sgi_seen[i]);
	printf("],\"leaked\":%u,\"sgi15_self\":%u,\"control_seen\":%s,\"stray_irqs\":%u,"
	       "\"pass\":%s}\n", leaked, sgi_seen[SGI_HYP], json_bool(control), stray_irqs,
	       json_bool(leaked == 0 && control));
}

/* ---- psci-foreign ---- */

/* MPIDRs of cores it does not have: other Aff0s (core 1 is the neighbour's), other clusters. */
static const uint64_t foreign_mpidrs[] = {
	1, 2, 3, 7, 0xff, 0x100, 0x10000, 0x100000000ULL, 0x80000001ULL,
};
#define FOREIGN_MPIDRS  (sizeof(foreign_mpidrs) / sizeof(foreign_mpidrs[0]))
#define PSCI_CPU_ON_32          0x84000003u
#define PSCI_AFFINITY_INFO_32   0x84000004u

static void print_rets(const char *key, const int32_t *rets, unsigned n)
{
	printf(",\"%s\":[", key);
	for (unsigned i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", rets[i]);
	console_putc(']');
}

static void psci_foreign(void)
{
	struct repeat rep = repeat_args();
	int32_t on[FOREIGN_MPIDRS], info[FOREIGN_MPIDRS], on32 = 0, info32 = 0, self = 0;
	unsigned calls = 0;
	bool all_refused = true;

	print_acting("psci-foreign");
	while (repeat_next(&rep)) {
		/* The entry parks a core without touching memory, should one start after all. */
		for (unsigned i = 0; i < FOREIGN_MPIDRS; i++) {
			on[i] = psci_cpu_on(foreign_mpidrs[i], (uintptr_t)park_entry, 0);
			info[i] = psci_affinity_info(foreign_mpidrs[i]);
			all_refused &= on[i] == PSCI_INVALID_PARAMS &&
				       info[i] == PSCI_INVALID_PARAMS;
		}
		/* SMC32 calls take W registers: x1 = 0xffffffff00000001 means MPIDR 1. */
		on32 = psci_call(PSCI_CPU_ON_32, 0xffffffff00000001ULL, (uintptr_t)park_entry, 0);
		info32 = psci_call(PSCI_AFFINITY_INFO_32, 0xffffffff00000002ULL, 0, 0);
		all_refused &= on32 == PSCI_INVALID_PARAMS && info32 == PSCI_INVALID_PARAMS;
		calls += 2 * FOREIGN_MPIDRS + 2;
		self = psci_affinity_info(0);   /* itself: on */
	}

	json_begin("psci-foreign");
	printf(",\"phase\":\"done\",\"rounds\":%u,\"mpidrs\":[", rep.done);
	for (unsigned i = 0; i < FOREIGN_MPIDRS; i++)
		printf(i ? ",\"0x%lx\"" : "\"0x%lx\"", (unsigned long)foreign_mpidrs[i]);
	console_putc(']');
	print_rets("cpu_on", on, FOREIGN_MPIDRS);
	print_rets("affinity_info", info, FOREIGN_MPIDRS);
	printf(",\"cpu_on_smc32\":%d,\"affinity_info_smc32\":%d,\"foreign_calls\":%u,"
	       "\"affinity_info_self\":%d,\"pass\":%s}\n", on32, info32, calls, self,
	       json_bool(all_refused && self == PSCI_AFFINITY_ON));
}

/* ---- call-malformed ---- */

/*
 * SMCCC through a given instruction and immediate; x16/x17 as Xen's hypercall ABI uses them
 * (x16 = hypercall number). Returns all of x0.
 */
#define CALL_INSN(insn, x0v, x1v, x2v, x3v, x16v) ({                                 \
	register uint64_t x0 __asm__("x0") = (x0v);                                  \
	register uint64_t x1 __asm__("x1") = (x1v);                                  \
	register uint64_t x2 __asm__("x2") = (x2v);                                  \
	register uint64_t x3 __asm__("x3") = (x3v);                                  \
	register uint64_t x16 __asm__("x16") = (x16v);                               \
	__asm__ volatile(insn                                                        \
			 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x16)         \
			 :                                                           \
			 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",  \
			   "x13", "x14", "x15", "x17", "memory");                    \
	x0;                                                                          \
})

enum conduit { HVC0, SMC0, HVC1, HVC_FFFF, SMC1, HVC_XEN };
static const char *const conduit_names[] = { "hvc#0", "smc#0", "hvc#1", "hvc#0xffff", "smc#1",
					     "hvc#0xea1" };

static uint64_t call(enum conduit c, uint64_t fn, uint64_t arg1, uint64_t arg2, uint64_t arg3)
{
	switch (c) {
	case HVC0: return CALL_INSN("hvc #0", fn, arg1, arg2, arg3, 0);
	case SMC0: return CALL_INSN("smc #0", fn, arg1, arg2, arg3, 0);
	case HVC1: return CALL_INSN("hvc #1", fn, arg1, arg2, arg3, 0);
	case HVC_FFFF: return CALL_INSN("hvc #0xffff", fn, arg1, arg2, arg3, 0);
	case SMC1: return CALL_INSN("smc #1", fn, arg1, arg2, arg3, 0);
	/* Xen's console_io (hypercall 18 in x16): CONSOLEIO_write (0) of arg2 bytes at arg1. */
	case HVC_XEN: return CALL_INSN("hvc #0xea1", 0, arg2, arg1, 0, 18);
	}
	return 0;
}

enum expect { NOT_SUPPORTED, PSCI_ERROR, VERSION_1_1 };

/* Arguments only known at run time. */
enum fixup { FIX_NONE, FIX_A2_RAM_END, FIX_XEN_MESSAGE };

struct malformed {
	const char *name;
	enum conduit conduit;   /* PSCI calls: replaced by the /psci conduit */
	bool psci;
	uint64_t x0, a1, a2, a3;
	enum expect expect;
	enum fixup fixup;
};

static const char xen_message[] = "hostile: hello from a Xen console_io hypercall\n";

static const struct malformed malformed_calls[] = {
	/* Function IDs nobody implements here, in every SMCCC range, through HVC and SMC. */
	{ "smccc-arch-features", HVC0, false, 0x80000001, 0x80008000, 0, 0, NOT_SUPPORTED,
	  FIX_NONE },
	{ "sip-32", HVC0, false, 0x82000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "sip-64", SMC0, false, 0xc2000001, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "oem-32", SMC0, false, 0x83000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "std-hyp-pv-time", HVC0, false, 0xc5000020, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "vendor-hyp-uid", HVC0, false, 0x8600ff01, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "vendor-hyp-64", SMC0, false, 0xc6001234, ~0ULL, ~0ULL, ~0ULL, NOT_SUPPORTED, FIX_NONE },
	{ "trusted-app-32", SMC0, false, 0xb0000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "trusted-os-uid", SMC0, false, 0xbf00ff01, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "yielding-32", HVC0, false, 0x00000001, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "yielding-64", SMC0, false, 0x40000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "psci-range-unknown", HVC0, false, 0x8400ffff, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "all-ones", SMC0, false, 0xffffffff, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	/* SMCCC takes the function ID from W0: junk above it does not matter. */
	{ "version-junk-high", HVC0, false, 0xdeadbeef84000000ULL, 0, 0, 0, VERSION_1_1, FIX_NONE },
	/* Immediates SMCCC does not use, and Xen's. */
	{ "hvc-imm-1", HVC1, false, 0x86000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "hvc-imm-ffff", HVC_FFFF, false, 0x86000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "smc-imm-1", SMC1, false, 0x86000000, 0, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "xen-console-io", HVC_XEN, false, 0, 0, sizeof(xen_message) - 1, 0, NOT_SUPPORTED,
	  FIX_XEN_MESSAGE },
	/* PSCI with garbage arguments. */
	{ "cpu-on-entry-past-ram", HVC0, true, 0xc4000003, 0, 0, 0, PSCI_ERROR, FIX_A2_RAM_END },
	{ "cpu-on-entry-all-ones", HVC0, true, 0xc4000003, 0, ~0ULL - 15, 0, PSCI_ERROR, FIX_NONE },
	{ "cpu-on-entry-neighbour", HVC0, true, 0xc4000003, 0, FIRST_PARTITION_HPA + 0x80000, 0,
	  PSCI_ERROR, FIX_NONE },
	{ "cpu-suspend-bad-state", HVC0, true, 0xc4000001, 0xdeadbeef, 0, 0, PSCI_ERROR, FIX_NONE },
	{ "cpu-suspend-32", HVC0, true, 0x84000001, 0xffffffff, 0, 0, PSCI_ERROR, FIX_NONE },
	{ "system-reset2-junk", HVC0, true, 0xc4000012, 0x80000001, 0xdeadbeefdeadbeefULL, 0,
	  PSCI_ERROR, FIX_NONE },
	{ "system-reset2-32-junk", HVC0, true, 0x84000012, 0x7fffffff, 0, 0, PSCI_ERROR, FIX_NONE },
	{ "affinity-info-level-7", HVC0, true, 0xc4000004, 0, 7, 0, PSCI_ERROR, FIX_NONE },
	{ "features-all-ones", HVC0, true, 0x8400000a, 0xffffffff, 0, 0, NOT_SUPPORTED, FIX_NONE },
	{ "features-system-reset2", HVC0, true, 0x8400000a, 0x84000012, 0, 0, NOT_SUPPORTED,
	  FIX_NONE },
	{ "migrate", HVC0, true, 0xc4000005, 1, 0, 0, PSCI_ERROR, FIX_NONE },
	{ "system-suspend-junk", HVC0, true, 0xc400000e, ~0ULL, 0, 0, PSCI_ERROR, FIX_NONE },
	{ "mem-protect-check-range", HVC0, true, 0xc4000014, 0, ~0ULL, 0, PSCI_ERROR, FIX_NONE },
};
#define MALFORMED_CALLS (sizeof(malformed_calls) / sizeof(malformed_calls[0]))

static bool ret_ok(enum expect e, int64_t ret)
{
	switch (e) {
	case NOT_SUPPORTED: return ret == PSCI_NOT_SUPPORTED;
	/* Any PSCI error code (-1 .. -9), in all of x0. */
	case PSCI_ERROR: return ret < 0 && ret >= -9;
	case VERSION_1_1: return ret == 0x10001;
	}
	return false;
}

/*
 * IMPLEMENTATION DEFINED registers (CPUACTLR_EL1 on Cortex-A53/A57): the hypervisor traps
 * them (HCR_EL2.TIDCP) and injects an undefined-instruction exception where the core
 * implements the trap (QEMU 7.2 does not: then they just read as the core defines).
 */
static unsigned impdef_access(void)
{
	uint32_t before = exc_count();

	(void)read_sysreg(s3_1_c15_c2_0);
	write_sysreg(s3_1_c15_c2_0, ~0ULL);
	isb();
	return exc_count() - before;
}

static void call_malformed(void)
{
	struct repeat rep = repeat_args();
	int64_t rets[MALFORMED_CALLS];
	bool ok[MALFORMED_CALLS];
	unsigned bad = 0, undef = 0;
	uint32_t excs_before = exc_count();

	print_acting("call-malformed");
	while (repeat_next(&rep)) {
		for (unsigned i = 0; i < MALFORMED_CALLS; i++) {
			const struct malformed *m = &malformed_calls[i];
			enum conduit c = m->psci ? (psci_uses_hvc() ? HVC0 : SMC0) : m->conduit;
			uint64_t a1 = m->a1, a2 = m->a2;

			if (m->fixup == FIX_A2_RAM_END)
				a2 = ram_base() + ram_size();
			else if (m->fixup == FIX_XEN_MESSAGE)
				a1 = (uintptr_t)xen_message;
			rets[i] = (int64_t)call(c, m->x0, a1, a2, m->a3);
			ok[i] = ret_ok(m->expect, rets[i]);
		}
		undef += impdef_access();
	}
	uint32_t exceptions = exc_count() - excs_before;

	/* Calls first, then the line: nothing may split it. */
	json_begin("call-malformed");
	printf(",\"phase\":\"done\",\"rounds\":%u,\"calls\":{", rep.done);
	for (unsigned i = 0; i < MALFORMED_CALLS; i++) {
		const struct malformed *m = &malformed_calls[i];
		printf("%s\"%s\":{\"via\":\"%s\",\"x0\":\"0x%lx\",\"ret\":%ld}", i ? "," : "",
		       m->name, m->psci ? "psci" : conduit_names[m->conduit],
		       (unsigned long)m->x0, (long)rets[i]);
		bad += !ok[i];
	}
	printf("},\"unexpected\":[");
	for (unsigned i = 0, n = 0; i < MALFORMED_CALLS; i++)
		if (!ok[i])
			printf(n++ ? ",\"%s\"" : "\"%s\"", malformed_calls[i].name);
	printf("],\"impdef_undef\":%u,\"exceptions\":%u,\"pass\":%s}\n", undef, exceptions,
	       json_bool(bad == 0 && exceptions == undef));
}

/* ---- irq-storm ---- */

struct edu {
	uint32_t bdf;
	int intid;
};

/* The first edu on the host bridge: BAR0 placed, INTx resolved; as lat's device tests do. */
static const char *edu_setup(struct edu *e)
{
	struct pci_host host;
	uint64_t bar, size;

	e->intid = -1;
	if (!pci_host_init(&host))
		return "no PCI host bridge in the device tree";
	if (!pci_find(&host, EDU_VENDOR, EDU_DEVICE, &e->bdf))
		return "edu device not found";
	if (!pci_assign_bar(&host, e->bdf, 0, &bar, &size) || size < 0x80)
		return "edu BAR0 not assigned";
	edu_regs = (uintptr_t)bar;
	if ((mmio_read32(edu_regs + EDU_ID) & 0xff) != 0xed)
		return "edu identification register wrong";
	unsigned pin = pci_intx_pin(&host, e->bdf);
	e->intid = pin ? pci_intx_intid(&host, e->bdf, pin) : -1;
	if (e->intid < 0)
		return "edu interrupt not in interrupt-map";
	return 0;
}

static void irq_storm(void)
{
	unsigned long target = bootarg_ulong("hostile.storm", 20000, 1, 10000000);
	unsigned long limit_us = bootarg_ulong("hostile.storm_us", 1000000, 1, 100000000);
	struct strview end;
	struct edu e;
	const char *error = edu_setup(&e);

	storm_ack_at_end = !(bootarg("hostile.storm_end", &end) && strview_eq(end, "unacked"));
	if (error) {
		json_begin("irq-storm");
		printf(",\"error\":\"%s\",\"pass\":false}\n", error);
		return;
	}

	unsigned spi = (unsigned)e.intid;
	mmio_write32(edu_regs + EDU_INT_ACK, ~0u);
	gic_spi_set_group1(spi);
	gic_spi_set_priority(spi, GIC_DEFAULT_PRIORITY);
	gic_spi_set_trigger(spi, false);        /* level, as INTx is: it re-fires until acked */
	gic_spi_route_to_self(spi);
	storm_target = (uint32_t)target;
	storm_count = 0;
	storm_done = 0;
	storm_intid = spi;
	gic_spi_enable(spi);

	printf("hostile: irq-storm: edu %02x:%02x.%u INTID %u, %lu interrupts or %lu us, "
	       "then %s\n", PCI_BDF_BUS(e.bdf), PCI_BDF_DEV(e.bdf), PCI_BDF_FN(e.bdf), spi,
	       target, limit_us, storm_ack_at_end ? "acknowledged" : "power off with the line up");
	/*
	 * The storm starts at irq_enable, and only the wait below runs during it: when the line
	 * is to stay up, the handler masks IRQs in the context it interrupted, and nothing may
	 * unmask them again.
	 */
	print_acting("irq-storm");
	uint64_t start = counter_virt();
	storm_deadline = start + us_to_ticks(limit_us);
	mmio_write32(edu_regs + EDU_INT_RAISE, EDU_INT_BIT);
	irq_enable();
	wait_count(&storm_done, 1, limit_us + WAIT_US);
	irq_disable();
	uint64_t ticks = counter_virt() - start;
	uint32_t status = mmio_read32(edu_regs + EDU_INT_STATUS);

	json_begin("irq-storm");
	printf(",\"phase\":\"done\",\"intid\":%u,\"bdf\":\"%02x:%02x.%u\",\"target\":%lu,"
	       "\"interrupts\":%u,\"ticks\":%lu,\"end\":\"%s\",\"int_status\":%u,\"pass\":%s}\n",
	       spi, PCI_BDF_BUS(e.bdf), PCI_BDF_DEV(e.bdf), PCI_BDF_FN(e.bdf), target, storm_count,
	       (unsigned long)ticks, storm_ack_at_end ? "ack" : "unacked", status,
	       json_bool(storm_done && storm_count >= 2 &&
			 (storm_ack_at_end ? status == 0 : status != 0)));
	if (storm_ack_at_end) {
		gic_spi_disable(spi);
		storm_intid = GIC_SPURIOUS;
	}
	/* Unacked: power off with the interrupt enabled and the line up, for the hypervisor. */
}

/* ---- several vCPUs and the MMU (hostile.cpus, hostile.mmu) ---- */

static unsigned n_cpus = 1;     /* hostile.cpus: vCPUs the action uses */
static bool use_mmu;            /* hostile.mmu=on: every CPU it uses runs with its MMU on */

/* Per-CPU hand-shakes, each written by its own CPU only (CPU 0 writes race_at). */
static volatile uint32_t cpu_ready[MAX_CPUS];
static volatile uint32_t cpu_finished[MAX_CPUS];
static volatile uint64_t cpu_result[MAX_CPUS];
static volatile uint64_t shared_until;  /* counter value a flood or race runs to */
static volatile uint64_t race_at;       /* 0 until CPU 0 sets when the race goes */

/* Whether each CPU ran the action with its MMU on (written by that CPU). */
static volatile uint32_t cpu_mmu[MAX_CPUS];

static void note_mmu(void)
{
	cpu_mmu[cpu_index()] = mmu_is_on();
}

/* `,"mmu_cpus":[true,...]`: what each CPU the action used said of its MMU. */
static void print_mmu_cpus(void)
{
	printf(",\"mmu_cpus\":[");
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		printf("%s%s", cpu ? "," : "", json_bool(cpu_mmu[cpu]));
	console_putc(']');
}

/* Publish this CPU's results before its flag: the reader may be another CPU. */
static void set_flag(volatile uint32_t *flag)
{
	dsb_sy();
	*flag = 1;
	dsb_sy();
}

/* Start CPUs 1 .. n_cpus-1 on fn; returns the number PSCI started. */
static unsigned start_secondaries(secondary_fn fn)
{
	unsigned started = 0;

	for (unsigned cpu = 1; cpu < n_cpus; cpu++) {
		cpu_ready[cpu] = cpu_finished[cpu] = 0;
		cpu_result[cpu] = 0;
		started += cpu_start(cpu, fn, cpu) == PSCI_SUCCESS;
	}
	return started;
}

/* Until flags[1 .. n_cpus-1] are all set, at most us; false on timeout. */
static bool wait_secondaries(volatile uint32_t *flags, uint64_t us)
{
	uint64_t deadline = deadline_after_us(us);

	for (unsigned cpu = 1; cpu < n_cpus; cpu++) {
		while (!flags[cpu]) {
			if (deadline_passed(deadline))
				return false;
			cpu_relax();
		}
	}
	return true;
}

/* ---- uart-flood ---- */

#define UARTDR                  0x00

/* 'x' and '\n' by plain stores to the data register, never looking at the FIFO flags. */
static uint64_t flood(uint64_t until)
{
	uint64_t bytes = 0;

	while (!deadline_passed(until)) {
		for (unsigned i = 0; i < 32; i++) {
			mmio_write32(PL011_BASE + UARTDR, 'x');
			mmio_write32(PL011_BASE + UARTDR, '\n');
		}
		bytes += 64;
	}
	return bytes;
}

static void flood_secondary(uint64_t cpu)
{
	note_mmu();
	cpu_result[cpu] = flood(shared_until);
	set_flag(&cpu_finished[cpu]);
}

static void uart_flood(void)
{
	uint64_t until = us_to_ticks(bootarg_ulong("hostile.until_us", 20000, 0, 100000000));

	shared_until = until;
	note_mmu();
	print_acting("uart-flood");
	unsigned started = start_secondaries(flood_secondary);
	cpu_result[0] = flood(until);
	bool finished = wait_secondaries(cpu_finished, WAIT_US);
	/*
	 * The flood may have filled whatever buffers the console has and used up its share of
	 * the UART: give them time to drain and it time to come back before the result, which
	 * is written through the library's polled console.
	 */
	spin_us(SETTLE_US);
	gic_enable_private(INTID_VTIMER);
	vtimer_sleep_until(counter_virt() + us_to_ticks(FLOOD_SETTLE_US));

	uint64_t total = 0;
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		total += cpu_result[cpu];
	json_begin("uart-flood");
	printf(",\"phase\":\"done\",\"cpus\":%u,\"started\":%u,\"mmu\":%s,\"bytes\":%lu,"
	       "\"bytes_per_cpu\":[", n_cpus, started + 1, json_bool(use_mmu),
	       (unsigned long)total);
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		printf(cpu ? ",%lu" : "%lu", (unsigned long)cpu_result[cpu]);
	console_putc(']');
	print_mmu_cpus();
	printf(",\"pass\":%s}\n", json_bool(started + 1 == n_cpus && finished));
}

/* ---- doorbell-storm ---- */

#define STORM_BURST     64      /* rings to each other member and refused rings, a round */

/*
 * Rings every other member of channel hostile.chan (a channel it shares with rt) as fast as
 * a core can, and a member index the channel does not have: each ring is one trapped store,
 * the hypervisor's work on this core; the rung members only find their doorbell interrupt
 * pending, one interrupt however many rings (and rt, which never enabled its, nothing at all).
 */
static void doorbell_storm(void)
{
	struct repeat rep = repeat_args();
	struct channel ch;
	uint64_t rings = 0, refused = 0;
	enum channel_lookup found = channel_by_bootarg("hostile.chan", &ch);

	if (found != CHANNEL_FOUND) {
		json_begin("doorbell-storm");
		printf(",\"error\":\"%s\",\"pass\":false}\n", found == CHANNEL_UNNAMED ?
		       "no channel named: hostile.chan=NAME" : "channel not in the device tree");
		return;
	}
	print_acting("doorbell-storm");
	while (repeat_next(&rep)) {
		for (unsigned i = 0; i < STORM_BURST; i++) {
			for (uint32_t k = 0; k < ch.members; k++) {
				if (k != ch.self) {
					channel_ring(&ch, k);
					rings++;
				}
			}
			channel_ring(&ch, ch.members);
			refused++;
		}
	}
	json_begin("doorbell-storm");
	printf(",\"phase\":\"done\",\"rounds\":%u,\"members\":%u,\"rings\":%lu,"
	       "\"refused\":%lu,\"pass\":true}\n", rep.done, ch.members, (unsigned long)rings,
	       (unsigned long)refused);
}

/* ---- reset-loop, fault-loop: the misdeed first, on every boot ---- */

/*
 * A reset or restart reloads RAM from the pristine image, so nothing in memory survives:
 * the counter (not reset with the partition) says when to stop.
 */
static uint64_t loop_until(void)
{
	return us_to_ticks(bootarg_ulong("hostile.until_us", 20000, 0, 100000000));
}

static void reset_loop(void)
{
	uint64_t now = counter_virt();

	if (now < loop_until()) {
		json_begin("reset-loop");
		printf(",\"phase\":\"resetting\",\"counter\":%lu}\n", (unsigned long)now);
		int32_t ret = psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
		json_begin("reset-loop");
		printf(",\"phase\":\"after\",\"ret\":%d,\"pass\":false}\n", ret);
		return;
	}
	json_begin("reset-loop");
	printf(",\"phase\":\"done\",\"counter\":%lu,\"pass\":true}\n", (unsigned long)now);
}

static void fault_loop(void)
{
	uint64_t now = counter_virt();
	uintptr_t addr = ram_base() + ram_size() + 0x1000;

	if (now < loop_until()) {
		json_begin("fault-loop");
		printf(",\"phase\":\"trying\",\"counter\":%lu,\"addr\":\"0x%lx\"}\n",
		       (unsigned long)now, (unsigned long)addr);
		uint32_t before = exc_count();
		mmio_write64(addr, 0x48414b4544ULL);
		json_begin("fault-loop");
		printf(",\"phase\":\"after\",\"exceptions\":%u,\"esr\":\"0x%lx\",\"pass\":false}\n",
		       exc_count() - before, (unsigned long)excs[cpu_index()].esr);
		return;
	}
	json_begin("fault-loop");
	printf(",\"phase\":\"done\",\"counter\":%lu,\"pass\":true}\n", (unsigned long)now);
}

/* ---- gic-misaligned ---- */

/* Redistributor registers the library does not name (offsets in the SGI frame or RD_base). */
#define GICR_ICFGR1             (GICR_SGI_OFFSET + 0x0c04)

/*
 * Misaligned accesses to emulated registers. With the MMU on and these pages Normal
 * Non-cacheable, stage 1 lets them through (no alignment check for Normal memory), so they
 * reach the hypervisor's stage-2 trap, which must refuse them as the hardware refuses a
 * misaligned Device access: an alignment fault injected into the guest.
 */
struct misaligned {
	const char *name;
	bool gicr;              /* offset in the CPU's own redistributor frame, else in GICD */
	uint32_t off;
	unsigned size;
	bool write;
	uint64_t value;
};

static const struct misaligned misaligned_accesses[] = {
	{ "isenabler+0x5", false, GICD_ISENABLER + 0x5, 4, true, 0xffffffff },
	{ "icenabler+0x9", false, GICD_ICENABLER + 0x9, 4, true, 0xffffffff },
	{ "ispendr+0x7", false, GICD_ISPENDR + 0x7, 4, true, 0xffffffff },
	{ "icfgr+0x9", false, GICD_ICFGR + 0x9, 4, true, 0xffffffff },
	{ "igroupr+0x6", false, GICD_IGROUPR + 0x6, 4, true, 0 },
	{ "ipriorityr+0x1", false, GICD_IPRIORITYR + 0x1, 2, true, 0x1010 },
	{ "ipriorityr+0x23", false, GICD_IPRIORITYR + 0x23, 4, true, 0x10101010 },
	{ "irouter32+0x4", false, GICD_IROUTER + 8 * 32 + 0x4, 8, true, 0x0000000100000001ULL },
	{ "irouter40+0x2", false, GICD_IROUTER + 8 * 40 + 0x2, 4, true, 0x1 },
	{ "isenabler+0x5", false, GICD_ISENABLER + 0x5, 4, false, 0 },
	{ "ipriorityr+0x1", false, GICD_IPRIORITYR + 0x1, 2, false, 0 },
	{ "icfgr+0x9", false, GICD_ICFGR + 0x9, 4, false, 0 },
	{ "irouter32+0x4", false, GICD_IROUTER + 8 * 32 + 0x4, 8, false, 0 },
	{ "gicr-isenabler0+0x1", true, GICR_ISENABLER0 + 0x1, 4, true, 0xffffffff },
	{ "gicr-igroupr0+0x2", true, GICR_IGROUPR0 + 0x2, 4, true, 0 },
	{ "gicr-ipriorityr+0x3", true, GICR_IPRIORITYR + 0x3, 2, true, 0x1010 },
	{ "gicr-icfgr1+0x1", true, GICR_ICFGR1 + 0x1, 4, true, 0 },
	{ "gicr-isenabler0+0x1", true, GICR_ISENABLER0 + 0x1, 4, false, 0 },
	{ "gicr-typer+0x4", true, GICR_TYPER + 0x4, 8, false, 0 },
};
#define MISALIGNED_ACCESSES     (sizeof(misaligned_accesses) / sizeof(misaligned_accesses[0]))
#define GICR_ACCESSES_FROM      13      /* the redistributor ones, which every CPU makes */

#define ESR_EC_SHIFT            26
#define ESR_EC_DABT_CUR         0x25    /* data abort taken without a change of EL */
#define ESR_WNR                 (1u << 6)
#define ESR_DFSC_MASK           0x3fu
#define DFSC_ALIGNMENT          0x21

struct access_outcome {
	uintptr_t addr;
	bool aborted;
	uint64_t esr, far, value;
};

/* Accesses [first, MISALIGNED_ACCESSES) made by one CPU; outcome per access. */
static volatile struct access_outcome outcomes[MAX_CPUS][MISALIGNED_ACCESSES];

static void misaligned_run(unsigned first)
{
	unsigned cpu = cpu_index();
	uintptr_t rd = gic_redistributor();

	for (unsigned i = first; i < MISALIGNED_ACCESSES; i++) {
		const struct misaligned *m = &misaligned_accesses[i];
		uintptr_t addr = (m->gicr ? rd : GICD_BASE) + m->off;
		uint32_t before = exc_count();
		uint64_t value = 0;

		if (m->write) {
			if (m->size == 2)
				mmio_write16(addr, (uint16_t)m->value);
			else if (m->size == 4)
				mmio_write32(addr, (uint32_t)m->value);
			else
				mmio_write64(addr, m->value);
		} else {
			if (m->size == 2)
				value = mmio_read16(addr);
			else if (m->size == 4)
				value = mmio_read32(addr);
			else
				value = mmio_read64(addr);
		}
		volatile struct access_outcome *o = &outcomes[cpu][i];
		o->addr = addr;
		o->aborted = exc_count() != before;
		o->esr = o->aborted ? excs[cpu].esr : 0;
		o->far = o->aborted ? excs[cpu].far : 0;
		o->value = value;
	}
}

static bool outcome_ok(const struct misaligned *m, const volatile struct access_outcome *o)
{
	uint64_t esr = o->esr;

	return o->aborted && (esr >> ESR_EC_SHIFT & 0x3f) == ESR_EC_DABT_CUR &&
	       (esr & ESR_DFSC_MASK) == DFSC_ALIGNMENT && !!(esr & ESR_WNR) == m->write &&
	       o->far == o->addr;
}

/* SGIs and PPIs as a CPU's own redistributor frame shows them. */
struct private_view {
	uint32_t enabled, group, icfgr1;
	uint32_t prio[8];
};

static void private_view(uintptr_t rd, struct private_view *v)
{
	v->enabled = mmio_read32(rd + GICR_ISENABLER0);
	v->group = mmio_read32(rd + GICR_IGROUPR0);
	v->icfgr1 = mmio_read32(rd + GICR_ICFGR1);
	for (unsigned i = 0; i < 8; i++)
		v->prio[i] = mmio_read32(rd + GICR_IPRIORITYR + 4 * i);
}

static unsigned print_private_changes(unsigned cpu, const struct private_view *a,
				      const struct private_view *b, unsigned printed)
{
	unsigned n = 0;

	if (a->enabled != b->enabled)
		printf("%s\"cpu%u:enable\"", printed + n++ ? "," : "", cpu);
	if (a->group != b->group)
		printf("%s\"cpu%u:group\"", printed + n++ ? "," : "", cpu);
	if (a->icfgr1 != b->icfgr1)
		printf("%s\"cpu%u:config\"", printed + n++ ? "," : "", cpu);
	for (unsigned i = 0; i < 8; i++)
		if (a->prio[i] != b->prio[i])
			printf("%s\"cpu%u:priority%u\"", printed + n++ ? "," : "", cpu, i);
	return n;
}

#define MISALIGNED_SPI_FIRST    32
#define MISALIGNED_SPIS         64      /* INTIDs 32..95: every register the accesses touch */

static struct spi_view spis_before[MISALIGNED_SPIS], spis_after[MISALIGNED_SPIS];
static volatile struct private_view private_before[MAX_CPUS], private_after[MAX_CPUS];

static void private_snapshot(volatile struct private_view *out)
{
	struct private_view v;

	private_view(gic_redistributor(), &v);
	*out = v;
}

static void misaligned_secondary(uint64_t cpu)
{
	note_mmu();
	private_snapshot(&private_before[cpu]);
	misaligned_run(GICR_ACCESSES_FROM);
	private_snapshot(&private_after[cpu]);
	set_flag(&cpu_finished[cpu]);
}

static void gic_misaligned(void)
{
	bool mapped = use_mmu && mmu_map_normal_nc(GICD_BASE, 0x10000) &&
		      mmu_map_normal_nc(GICR_BASE, n_cpus * GICR_STRIDE);

	note_mmu();
	for (unsigned i = 0; i < MISALIGNED_SPIS; i++)
		spi_view(MISALIGNED_SPI_FIRST + i, &spis_before[i]);
	private_snapshot(&private_before[0]);
	print_acting("gic-misaligned");
	misaligned_run(0);
	private_snapshot(&private_after[0]);
	unsigned started = start_secondaries(misaligned_secondary);
	bool finished = wait_secondaries(cpu_finished, WAIT_US);
	for (unsigned i = 0; i < MISALIGNED_SPIS; i++)
		spi_view(MISALIGNED_SPI_FIRST + i, &spis_after[i]);

	unsigned bad = 0, aborted = 0;
	json_begin("gic-misaligned");
	printf(",\"phase\":\"done\",\"cpus\":%u,\"mmu\":%s,\"normal_nc\":%s,\"accesses\":[",
	       n_cpus, json_bool(use_mmu), json_bool(mapped));
	for (unsigned cpu = 0, n = 0; cpu < n_cpus; cpu++) {
		for (unsigned i = cpu ? GICR_ACCESSES_FROM : 0; i < MISALIGNED_ACCESSES; i++, n++) {
			const struct misaligned *m = &misaligned_accesses[i];
			const volatile struct access_outcome *o = &outcomes[cpu][i];
			bool ok = outcome_ok(m, o);
			bad += !ok;
			aborted += o->aborted;
			printf("%s{\"cpu\":%u,\"name\":\"%s\",\"addr\":\"0x%lx\",\"size\":%u,"
			       "\"write\":%s,\"aborted\":%s,\"esr\":\"0x%lx\",\"far\":\"0x%lx\"",
			       n ? "," : "", cpu, m->name, (unsigned long)o->addr, m->size,
			       json_bool(m->write), json_bool(o->aborted), (unsigned long)o->esr,
			       (unsigned long)o->far);
			if (!m->write)
				printf(",\"value\":\"0x%lx\"", (unsigned long)o->value);
			printf(",\"ok\":%s}", json_bool(ok));
		}
	}
	printf("],\"aborted\":%u,\"wrong\":%u,\"changed\":[", aborted, bad);
	unsigned changed = 0;
	for (unsigned i = 0; i < MISALIGNED_SPIS; i++)
		changed += print_spi_changes(MISALIGNED_SPI_FIRST + i, &spis_before[i],
					     &spis_after[i], changed);
	for (unsigned cpu = 0; cpu < n_cpus; cpu++) {
		struct private_view a = private_before[cpu], b = private_after[cpu];
		changed += print_private_changes(cpu, &a, &b, changed);
	}
	printf("],\"started\":%u", started + 1);
	print_mmu_cpus();
	printf(",\"pass\":%s}\n",
	       json_bool(bad == 0 && changed == 0 && started + 1 == n_cpus && finished));
}

/* ---- sibling-frame ---- */

/*
 * What vCPU 0 writes to vCPU 1's redistributor frame before vCPU 1 has ever run: priorities
 * by word and by byte (SGI 3's byte after word 0: 0x40203040 must read back), SGI 1 in
 * Group 0, SGIs 1-3 enabled.
 */
#define SIB_PRIO_WORD0          0x10203040u
#define SIB_PRIO_WORD1          0x80706050u
#define SIB_PRIO_SGI3           0x40u
#define SIB_PRIO_WORD0_AFTER    0x40203040u
#define SIB_GROUP               0xfffffffdu
#define SIB_ENABLE              0x0000000eu
#define SIB_SGI                 1       /* vCPU 1 to vCPU 0 afterwards */

struct sibling_view {
	uint32_t prio0, prio1, group, enabled;
	uint8_t prio_sgi3;              /* by a byte read */
};

static void sibling_read(uintptr_t rd, struct sibling_view *v)
{
	v->prio0 = mmio_read32(rd + GICR_IPRIORITYR);
	v->prio1 = mmio_read32(rd + GICR_IPRIORITYR + 4);
	v->prio_sgi3 = mmio_read8(rd + GICR_IPRIORITYR + 3);
	v->group = mmio_read32(rd + GICR_IGROUPR0);
	v->enabled = mmio_read32(rd + GICR_ISENABLER0);
}

static void print_sibling_view(const char *key, const struct sibling_view *v)
{
	printf(",\"%s\":{\"priority0\":\"0x%x\",\"priority1\":\"0x%x\",\"priority_sgi3\":\"0x%x\","
	       "\"group\":\"0x%x\",\"enable\":\"0x%x\"}", key, v->prio0, v->prio1, v->prio_sgi3,
	       v->group, v->enabled);
}

static volatile struct sibling_view sibling_own;        /* written by vCPU 1 */

static void sibling_secondary(uint64_t cpu)
{
	struct sibling_view own;

	/* Started bare: its frame as vCPU 0 left it, before the library's GIC set-up. */
	note_mmu();
	sibling_read(GICR_BASE + cpu * GICR_STRIDE, &own);
	sibling_own = own;
	set_flag(&cpu_ready[cpu]);
	gic_init_cpu();
	gic_send_sgi(SIB_SGI, 0);
	set_flag(&cpu_finished[cpu]);
}

static bool view_as_written(const struct sibling_view *v, uint32_t group)
{
	return v->prio0 == SIB_PRIO_WORD0_AFTER && v->prio1 == SIB_PRIO_WORD1 &&
	       v->prio_sgi3 == SIB_PRIO_SGI3 && v->group == group &&
	       (v->enabled & SIB_ENABLE) == SIB_ENABLE;
}

static void sibling_frame(void)
{
	struct strview irq;
	bool direct = bootarg("hostile.irq", &irq) && strview_eq(irq, "direct");
	uintptr_t rd1 = GICR_BASE + GICR_STRIDE;
	struct sibling_view before, readback, own, after_off;

	if (n_cpus < 2) {
		json_begin("sibling-frame");
		printf(",\"error\":\"needs hostile.cpus=2 or more\",\"pass\":false}\n");
		return;
	}
	note_mmu();
	sibling_read(rd1, &before);
	print_acting("sibling-frame");
	mmio_write32(rd1 + GICR_IPRIORITYR, SIB_PRIO_WORD0);
	mmio_write32(rd1 + GICR_IPRIORITYR + 4, SIB_PRIO_WORD1);
	mmio_write8(rd1 + GICR_IPRIORITYR + 3, SIB_PRIO_SGI3);
	mmio_write32(rd1 + GICR_IGROUPR0, SIB_GROUP);
	mmio_write32(rd1 + GICR_ISENABLER0, SIB_ENABLE);
	sibling_read(rd1, &readback);

	sgi_seen[SIB_SGI] = 0;
	gic_enable_private(SIB_SGI);
	irq_enable();
	cpu_ready[1] = cpu_finished[1] = 0;
	int32_t on = cpu_start_bare(1, sibling_secondary, 1);
	bool reported = on == PSCI_SUCCESS && wait_count_yield(&cpu_ready[1], 1, WAIT_US);
	own = sibling_own;
	bool received = on == PSCI_SUCCESS && wait_count_yield(&sgi_seen[SIB_SGI], 1, WAIT_US);
	irq_disable();
	uint64_t deadline = deadline_after_us(WAIT_US);
	int32_t aff;
	while ((aff = psci_affinity_info(1)) != PSCI_AFFINITY_OFF && !deadline_passed(deadline))
		cpu_relax();
	sibling_read(rd1, &after_off);

	/* Direct: a write asking for Group 0 is ignored, Group 1 stays. */
	uint32_t group = direct ? before.group : SIB_GROUP;
	bool readback_ok = view_as_written(&readback, group);
	bool own_ok = reported && view_as_written(&own, group);
	/* After CPU_OFF: what vCPU 1 itself set up (the library: priority 0xa0, Group 1). */
	bool kept = after_off.prio0 == 0xa0a0a0a0u && after_off.prio1 == 0xa0a0a0a0u &&
		    after_off.group == (direct ? before.group : 0xffffffffu) &&
		    (after_off.enabled & SIB_ENABLE) == SIB_ENABLE;

	json_begin("sibling-frame");
	printf(",\"phase\":\"done\",\"cpus\":%u,\"mmu\":%s,\"irq\":\"%s\",\"cpu_on\":%d",
	       n_cpus, json_bool(use_mmu), direct ? "direct" : "trap", on);
	print_sibling_view("before", &before);
	print_sibling_view("readback", &readback);
	print_sibling_view("own", &own);
	print_sibling_view("after_off", &after_off);
	print_mmu_cpus();
	printf(",\"readback_ok\":%s,\"own_ok\":%s,\"kept_after_off\":%s,\"sgi_received\":%s,"
	       "\"affinity_after\":%d,\"pass\":%s}\n", json_bool(readback_ok), json_bool(own_ok),
	       json_bool(kept), json_bool(received), aff,
	       json_bool(readback_ok && own_ok && kept && received && aff == PSCI_AFFINITY_OFF));
}

/* ---- power-race ---- */

extern char off_entry_hvc[], off_entry_smc[];

/* A CPU_ON entry that calls CPU_OFF at once, through the conduit PSCI uses. */
static uintptr_t off_entry(void)
{
	return (uintptr_t)(psci_uses_hvc() ? off_entry_hvc : off_entry_smc);
}

/* Return codes by value: index -ret for PSCI errors 0 .. -9, the rest in `other`. */
struct ret_counts {
	uint64_t by_code[10];
	uint64_t other;
};

static void count_ret(struct ret_counts *c, int32_t ret)
{
	if (ret <= 0 && ret > -10)
		c->by_code[-ret]++;
	else
		c->other++;
}

static void print_counts(const char *key, const volatile struct ret_counts *c)
{
	unsigned n = 0;

	printf(",\"%s\":{", key);
	for (int code = 0; code < 10; code++)
		if (c->by_code[code])
			printf("%s\"%d\":%lu", n++ ? "," : "", -code,
			       (unsigned long)c->by_code[code]);
	if (c->other)
		printf("%s\"other\":%lu", n ? "," : "", (unsigned long)c->other);
	console_putc('}');
}

/* CPU_ON for the others by vCPU 1 (on-vs-end, on-vs-reset), published as it goes. */
static volatile struct ret_counts loop_on_counts;

static void cpu_on_loop(uint64_t cpu)
{
	struct ret_counts c = { { 0 }, 0 };
	uintptr_t entry = off_entry();

	set_flag(&cpu_ready[cpu]);
	for (uint64_t i = 0;; i++) {
		for (unsigned t = 2; t < n_cpus; t++)
			count_ret(&c, psci_cpu_on(t, entry, 0));
		if (i % 16 == 0)
			loop_on_counts = c;
	}
}

static void race_off_secondary(uint64_t cpu)
{
	set_flag(&cpu_ready[cpu]);
	while (!race_at || counter_virt() < race_at)
		;
	cpu_result[cpu] = (uint64_t)(int64_t)psci_cpu_off();
	set_flag(&cpu_finished[cpu]);     /* CPU_OFF returned: wrong */
}

static void race_error(const char *race, const char *error)
{
	json_begin("power-race");
	printf(",\"race\":\"%s\",\"error\":\"%s\",\"pass\":false}\n", race, error);
}

/* Every vCPU calls CPU_OFF at the same counter value: the last one off ends the partition. */
static void race_off_off(void)
{
	json_begin("power-race");
	printf(",\"race\":\"off-off\",\"phase\":\"acting\",\"cpus\":%u,\"counter\":%lu}\n", n_cpus,
	       (unsigned long)counter_virt());
	race_at = 0;
	unsigned started = start_secondaries(race_off_secondary);
	if (started + 1 != n_cpus || !wait_secondaries(cpu_ready, WAIT_US)) {
		race_error("off-off", "a vCPU did not start");
		return;
	}
	uint64_t at = counter_virt() + us_to_ticks(100);
	race_at = at;
	dsb_sy();
	while (counter_virt() < at)
		;
	int32_t ret = psci_cpu_off();
	json_begin("power-race");
	printf(",\"race\":\"off-off\",\"phase\":\"after\",\"cpu_off\":%d,\"pass\":false}\n", ret);
}

#define FIRST_LIFE_MAGIC 0x4546494c54535246ull     /* "FRSTLIFE" */

/*
 * When the resets stop: hostile.until_us after the counter value the first life read, kept in
 * the channel's first words (the hypervisor never clears a channel), so that a host too busy
 * to start the partition before a board-time deadline still sees it reset.  With no channel,
 * the board-time deadline (loop_until).
 */
static uint64_t resets_until(uint64_t now)
{
	struct channel ch;

	if (channel_by_bootarg("hostile.chan", &ch) != CHANNEL_FOUND || ch.readonly)
		return loop_until();
	volatile uint64_t *kept = (volatile uint64_t *)ch.shm;
	if (kept[0] != FIRST_LIFE_MAGIC) {
		kept[1] = now;
		kept[0] = FIRST_LIFE_MAGIC;
	}
	return kept[1] + loop_until();
}

/* vCPU 1 turns the others on again and again while vCPU 0 ends (or resets) the partition. */
static void race_on_vs_end(bool reset)
{
	const char *race = reset ? "on-vs-reset" : "on-vs-end";
	unsigned long delay_us = bootarg_ulong("hostile.race_delay_us", 500, 0, 10000000);
	uint64_t now = counter_virt();
	bool last = !reset || now >= resets_until(now);

	if (n_cpus < 3) {
		race_error(race, "needs hostile.cpus=3 or more");
		return;
	}
	json_begin("power-race");
	printf(",\"race\":\"%s\",\"phase\":\"acting\",\"cpus\":%u,\"counter\":%lu}\n", race,
	       n_cpus, (unsigned long)now);
	cpu_ready[1] = 0;
	int32_t on = cpu_start(1, cpu_on_loop, 1);
	if (on != PSCI_SUCCESS || !wait_count_yield(&cpu_ready[1], 1, WAIT_US)) {
		json_begin("power-race");
		printf(",\"race\":\"%s\",\"error\":\"vCPU 1 did not start\",\"cpu_on\":%d,"
		       "\"affinity_info\":%d,\"pass\":false}\n", race, on, psci_affinity_info(1));
		return;
	}
	spin_us(delay_us);
	if (!last) {
		json_begin("power-race");
		printf(",\"race\":\"%s\",\"phase\":\"resetting\",\"counter\":%lu}\n", race,
		       (unsigned long)counter_virt());
		int32_t ret = psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
		json_begin("power-race");
		printf(",\"race\":\"%s\",\"phase\":\"after\",\"system_reset\":%d,\"pass\":false}\n",
		       race, ret);
		return;
	}
	struct ret_counts seen = loop_on_counts;
	bool expected = seen.other == 0;
	for (int code = 1; code < 10; code++)
		expected &= !seen.by_code[code] || code == 4; /* never ON_PENDING, as on the board */
	json_begin("power-race");
	printf(",\"race\":\"%s\",\"phase\":\"done\",\"cpus\":%u", race, n_cpus);
	print_counts("cpu_on", &seen);
	printf(",\"pass\":%s}\n", json_bool(expected));
	printf("PROBE-DONE\n");
	psci_system_off();
}

/* CPU_ON of the others (who turn off at once) and AFFINITY_INFO, as fast as it can. */
static void race_on_off(void)
{
	uint64_t until = loop_until();
	struct ret_counts on = { { 0 }, 0 }, info = { { 0 }, 0 };
	uintptr_t entry = off_entry();
	uint64_t rounds = 0;

	if (n_cpus < 2) {
		race_error("on-off", "needs hostile.cpus=2 or more");
		return;
	}
	json_begin("power-race");
	printf(",\"race\":\"on-off\",\"phase\":\"acting\",\"cpus\":%u,\"counter\":%lu}\n", n_cpus,
	       (unsigned long)counter_virt());
	while (!deadline_passed(until)) {
		for (unsigned t = 1; t < n_cpus; t++) {
			count_ret(&on, psci_cpu_on(t, entry, 0));
			int32_t a = psci_affinity_info(t);
			/* AFFINITY_INFO answers 0 (on), 1 (off) or 2 (on pending): by_code[0..2]. */
			if (a >= 0 && a <= 2)
				info.by_code[a]++;
			else
				info.other++;
		}
		rounds++;
	}
	/* Afterwards every other vCPU must come to rest off. */
	uint64_t deadline = deadline_after_us(WAIT_US);
	int32_t last[MAX_CPUS] = { 0 };
	bool all_off = false;
	while (!all_off && !deadline_passed(deadline)) {
		all_off = true;
		for (unsigned t = 1; t < n_cpus; t++) {
			last[t] = psci_affinity_info(t);
			all_off &= last[t] == PSCI_AFFINITY_OFF;
		}
		cpu_relax(); /* under icount, lets a pending vCPU's core have its turn */
	}
	bool expected = on.other == 0 && info.other == 0;
	/* A vCPU still starting is ALREADY_ON, as QEMU's firmware and KVM say: never ON_PENDING. */
	for (int code = 1; code < 10; code++)
		expected &= !on.by_code[code] || code == 4;
	for (int code = 3; code < 10; code++)
		expected &= !info.by_code[code];
	json_begin("power-race");
	printf(",\"race\":\"on-off\",\"phase\":\"done\",\"cpus\":%u,\"rounds\":%lu", n_cpus,
	       (unsigned long)rounds);
	print_counts("cpu_on", &on);
	printf(",\"affinity_info\":{\"0\":%lu,\"1\":%lu,\"2\":%lu,\"other\":%lu}",
	       (unsigned long)info.by_code[0], (unsigned long)info.by_code[1],
	       (unsigned long)info.by_code[2], (unsigned long)info.other);
	print_rets("affinity_at_end", last + 1, n_cpus - 1);
	printf(",\"all_off\":%s,\"pass\":%s}\n", json_bool(all_off), json_bool(expected && all_off));
}

static void power_race(void)
{
	struct strview race = { "", 0 };

	bootarg("hostile.race", &race);
	if (strview_eq(race, "off-off"))
		race_off_off();
	else if (strview_eq(race, "on-vs-end"))
		race_on_vs_end(false);
	else if (strview_eq(race, "on-vs-reset"))
		race_on_vs_end(true);
	else if (strview_eq(race, "on-off"))
		race_on_off();
	else
		race_error("unknown", "unknown hostile.race");
}

/* ---- busy: the control, not a misdeed ---- */

/*
 * Computes until the counter passes hostile.until_us, asking nothing of the hypervisor (no
 * exits): what any neighbour that keeps its core busy costs. Under QEMU's icount the cores take
 * turns on one host thread, which shows in a neighbour's interrupt latency; the containment
 * tests hold the hostile actions to this, not to an empty board.
 */
static void busy(void)
{
	uint64_t until = us_to_ticks(bootarg_ulong("hostile.until_us", 20000, 0, 100000000));
	uint64_t loops = 0;

	print_acting("busy");
	while (!deadline_passed(until))
		loops++;
	json_begin("busy");
	printf(",\"phase\":\"done\",\"loops\":%lu,\"pass\":true}\n", (unsigned long)loops);
}

/*
 * hostile.at_us=N: act once the counter passes N us (counter time since reset, as Tern's
 * CNTVOFF is 0), so that a test can place the misdeed inside a neighbour's measurement.
 */
static void wait_for_start(void)
{
	uint64_t at = us_to_ticks(bootarg_ulong("hostile.at_us", 0, 0, 100000000));

	if (counter_virt() >= at)
		return;
	gic_enable_private(INTID_VTIMER);
	vtimer_sleep_until(at);
}

/* ---- the VirtIO actions (virtio/actions.c): their waits sleep in WFI ---- */

/*
 * WFI until `us` from now, the virtual timer re-armed at every wake-up: a deadline that passed
 * before the last sleep's WFI leaves that sleep's interrupt pending in a list register (the
 * line is down, the virtual interrupt is not), and hostile_irq takes it in this sleep and
 * stops the timer. With vtimer_sleep_until that was a WFI for ever.
 */
static void vio_pause(uint64_t us)
{
	static bool vtimer_on;
	uint64_t deadline = counter_virt() + us_to_ticks(us);

	if (!vtimer_on) {
		gic_enable_private(INTID_VTIMER);
		vtimer_on = true;
	}
	while (counter_virt() < deadline) {
		vtimer_arm(deadline);
		wfi();
		irq_enable();
		irq_disable();
	}
	vtimer_stop();
}

#define VIO_ACTION(fn, text) \
	static void fn(void) { (void)vio_hostile_action((struct strview){ text, sizeof(text) - 1 }, vio_pause); }
VIO_ACTION(virtio_garbage, "virtio-garbage")
VIO_ACTION(virtio_storm, "virtio-storm")
VIO_ACTION(virtio_busy, "virtio-busy")
VIO_ACTION(virtio_backend_garbage, "virtio-backend-garbage")
VIO_ACTION(virtio_backend_silent, "virtio-backend-silent")

/* Action flags. */
#define FAULTS          (1u << 0)       /* never returns under Tern */
#define AT_ONCE         (1u << 1)       /* the misdeed first, every boot: no boot lines, no at_us */

/* ---- access-outside: the board's own abort ---- */

#define OUTSIDE_DEFAULT         0x0b000000UL    /* between virtio-mmio and the platform bus */
#define ESR_EC_OF(esr)          (((esr) >> 26) & 0x3f)
#define EC_IABT_SAME            0x21u
#define EC_DABT_SAME            0x25u
#define FSC_SYNC_EXTERNAL       0x10u

/* A fetch abort returns to the caller of the branch (x30); a data abort steps over its load. */
static void outside_sync(struct exc_frame *frame)
{
	unsigned cpu = cpu_index();

	excs[cpu].esr = frame->esr;
	excs[cpu].far = frame->far;
	excs[cpu].elr = frame->elr;
	excs[cpu].count++;
	frame->elr = ESR_EC_OF(frame->esr) == EC_IABT_SAME ? frame->x[30] : frame->elr + 4;
}

/* What the handler saw of one access (excs[] of its CPU: the last exception, and how many). */
struct outside_seen {
	uint32_t exceptions;
	uint64_t esr, far, elr;
};

static void outside_note(struct outside_seen *seen, uint32_t before)
{
	unsigned cpu = cpu_index();

	seen->exceptions = exc_count() - before;
	seen->esr = excs[cpu].esr;
	seen->far = excs[cpu].far;
	seen->elr = excs[cpu].elr;
}

/* One access's record, and whether it is the abort the board raises there. */
static bool print_outside(const char *name, const struct outside_seen *seen, uintptr_t addr,
			  uint64_t at, unsigned ec, bool write)
{
	bool ok = seen->exceptions == 1 && ESR_EC_OF(seen->esr) == ec &&
		  (seen->esr & 0x3f) == FSC_SYNC_EXTERNAL &&
		  ((seen->esr >> 6) & 1) == (write ? 1u : 0u) && seen->far == addr && seen->elr == at;

	printf(",\"%s\":{\"exceptions\":%u,\"esr\":\"0x%lx\",\"far\":\"0x%lx\",\"elr_ok\":%s,"
	       "\"ok\":%s}", name, seen->exceptions, (unsigned long)seen->esr,
	       (unsigned long)seen->far, seen->elr == at ? "true" : "false", ok ? "true" : "false");
	return ok;
}

static void access_outside(void)
{
	uintptr_t addr = (uintptr_t)bootarg_ulong("hostile.addr", OUTSIDE_DEFAULT, 0, ~0UL);
	uint64_t load_at, store_at, value = 0;
	struct outside_seen load, store, fetch;
	uint32_t before;
	bool ok = true;

	exceptions_set_sync_handler(outside_sync);
	json_begin("access-outside");
	printf(",\"phase\":\"trying\",\"addr\":\"0x%lx\"}\n", (unsigned long)addr);
	before = exc_count();
	__asm__ volatile("adr %0, 1f\n1: ldr %1, [%2]" : "=&r"(load_at), "=r"(value) : "r"(addr)
			 : "memory");
	outside_note(&load, before);
	before = exc_count();
	__asm__ volatile("adr %0, 1f\n1: str %1, [%2]" : "=&r"(store_at) : "r"(value), "r"(addr)
			 : "memory");
	outside_note(&store, before);
	before = exc_count();
	/* The handler returns to the link register, past the branch. */
	__asm__ volatile("blr %0" : : "r"(addr) : "x30", "memory");
	outside_note(&fetch, before);
	json_begin("access-outside");
	printf(",\"phase\":\"done\",\"addr\":\"0x%lx\"", (unsigned long)addr);
	ok &= print_outside("load", &load, addr, load_at, EC_DABT_SAME, false);
	ok &= print_outside("store", &store, addr, store_at, EC_DABT_SAME, true);
	ok &= print_outside("fetch", &fetch, addr, addr, EC_IABT_SAME, false);
	printf(",\"pass\":%s}\n", ok ? "true" : "false");
	exceptions_set_sync_handler(hostile_sync);
}

static const struct {
	const char *name;
	void (*run)(void);
	unsigned flags;
} actions[] = {
	{ "ram-read", ram_read, FAULTS },
	{ "ram-write", ram_write, FAULTS },
	{ "mmio-foreign", mmio_foreign, FAULTS },
	{ "gic-foreign", gic_foreign, 0 },
	{ "sgi-foreign", sgi_foreign, 0 },
	{ "psci-foreign", psci_foreign, 0 },
	{ "call-malformed", call_malformed, 0 },
	{ "irq-storm", irq_storm, 0 },
	{ "uart-flood", uart_flood, 0 },
	{ "doorbell-storm", doorbell_storm, 0 },
	{ "reset-loop", reset_loop, AT_ONCE },
	{ "fault-loop", fault_loop, FAULTS | AT_ONCE },
	{ "gic-misaligned", gic_misaligned, 0 },
	{ "sibling-frame", sibling_frame, 0 },
	{ "power-race", power_race, 0 },
	{ "busy", busy, 0 },
	{ "access-outside", access_outside, 0 },
	{ "virtio-garbage", virtio_garbage, 0 },
	{ "virtio-storm", virtio_storm, 0 },
	{ "virtio-busy", virtio_busy, 0 },
	{ "virtio-backend-garbage", virtio_backend_garbage, 0 },
	{ "virtio-backend-silent", virtio_backend_silent, 0 },
};
#define ACTIONS         (sizeof(actions) / sizeof(actions[0]))

/* The action hostile.action names; ACTIONS if none. */
static unsigned chosen_action(struct strview *name)
{
	unsigned i = 0;

	name->p = "";
	name->len = 0;
	if (!bootarg("hostile.action", name))
		return ACTIONS;
	while (i < ACTIONS && !strview_eq(*name, actions[i].name))
		i++;
	return i;
}

/* The library's boot lines, except for the actions that must come first. */
bool guest_banner(void)
{
	struct strview name;
	unsigned i = chosen_action(&name);

	return i == ACTIONS || !(actions[i].flags & AT_ONCE);
}

void guest_main(void)
{
	struct strview name, mmu;
	unsigned i = chosen_action(&name);

	exceptions_set_sync_handler(hostile_sync);
	exceptions_set_irq_handler(hostile_irq);

	n_cpus = (unsigned)bootarg_ulong("hostile.cpus", 1, 1, MAX_CPUS);
	use_mmu = bootarg("hostile.mmu", &mmu) && strview_eq(mmu, "on");
	if (use_mmu) {
		bool ok = mmu_init();
		if (ok)
			mmu_enable();
		if (!ok || !mmu_is_on()) {
			printf("PROBE-JSON {\"test\":\"hostile-mmu\",\"error\":\"MMU not on\","
			       "\"pass\":false}\n");
			use_mmu = false;
		} else if (i == ACTIONS || !(actions[i].flags & AT_ONCE)) {
			printf("hostile: MMU on: identity map, RAM 0x%lx+0x%lx write-back, "
			       "devices below 1 GiB Device-nGnRE; %u CPU(s)\n",
			       (unsigned long)ram_base(), (unsigned long)ram_size(), n_cpus);
		}
	}
	if (i == ACTIONS) {
		printf("PROBE-JSON {\"test\":\"hostile-");
		print_strview(name);
		printf("\",\"error\":\"unknown action\",\"pass\":false}\n");
	} else {
		/* A faulting action waits itself, after saying what it tries. */
		if (!(actions[i].flags & (AT_ONCE | FAULTS)))
			wait_for_start();
		actions[i].run();
	}
	if (stray_irqs)
		printf("hostile: %u unexpected interrupts\n", stray_irqs);
	printf("PROBE-DONE\n");
}
