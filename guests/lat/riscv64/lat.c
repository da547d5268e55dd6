/*
 * Interrupt latency on riscv64, tbm-style, as lat.c measures it on arm64: raise an
 * interrupt, wait, and read `cycle` in the trap vector's second instruction. Under QEMU's
 * icount `cycle` reads virtual nanoseconds, so at shift 0 one cycle is one instruction.
 *
 * Timer tests: the supervisor timer is programmed `delta` ahead by a write of stimecmp
 * (Sstc) or by SBI set_timer; a sample is (cycle at the vector) - (the deadline in cycles).
 * QEMU counts a deadline down from the write that programs it instead of comparing it with
 * `time`: written in the middle of a tick, it fires up to one tick (100 cycles) late. So
 * the write is made at one phase of the tick, the one found (per test, by trying each) to put
 * it on the tick's edge, where the two agree.
 *
 * IPI tests: this hart sends to another, by storing an identity into that hart's IMSIC file or
 * by SBI send_ipi: (cycle at its vector) - (cycle just before the store or the ecall).
 * Device tests: QEMU's edu PCI device with its MSI pointed at this hart's IMSIC file (edu-*),
 * or its INTx line through the APLIC (intx-*: in MSI mode into that file, in direct mode as
 * the hart's external interrupt, claimed from the APLIC): (cycle at the vector) - (cycle just
 * before the write that raises it).
 */
#include "aplic.h"
#include "bootargs.h"
#include "channel.h"
#include "console.h"
#include "imsic.h"
#include "lat_arm.h"
#include "pci.h"
#include "runtime.h"
#include "sbi.h"
#include "../stats.h"
#include "timer.h"
#include "trap.h"

const char guest_name[] = "lat";

/* What raises the measured interrupt (struct lat_test's source). */
enum lat_source { SRC_SSTC, SRC_SBI_TIMER, SRC_IPI, SRC_SBI_IPI, SRC_EDU, SRC_INTX, SRC_CHAN };

static const struct lat_test all_tests[] = {
	{ "sstc-wfi",       "sstc",    "wfi",  SRC_SSTC,      true,  true },
	{ "sstc-busy",      "sstc",    "busy", SRC_SSTC,      false, true },
	{ "sbi-timer-wfi",  "sbi",     "wfi",  SRC_SBI_TIMER, true,  true },
	{ "sbi-timer-busy", "sbi",     "busy", SRC_SBI_TIMER, false, true },
	/* Need a second hart, so only on request. */
	{ "ipi-wfi",        "imsic",   "wfi",  SRC_IPI,       true,  false },
	{ "ipi-busy",       "imsic",   "busy", SRC_IPI,       false, false },
	{ "sbi-ipi-wfi",    "sbi-ipi", "wfi",  SRC_SBI_IPI,   true,  false },
	{ "sbi-ipi-busy",   "sbi-ipi", "busy", SRC_SBI_IPI,   false, false },
	/* Need QEMU's edu device (-device edu). */
	{ "edu-wfi",        "edu",     "wfi",  SRC_EDU,       true,  false },
	{ "edu-busy",       "edu",     "busy", SRC_EDU,       false, false },
	{ "intx-wfi",       "intx",    "wfi",  SRC_INTX,      true,  false },
	{ "intx-busy",      "intx",    "busy", SRC_INTX,      false, false },
	/* Needs a channel (lat.chan) shared with another partition running it too. */
	{ "chan",           "chan",    "wfi",  SRC_CHAN,      true,  false },
};
#define NUM_TESTS (sizeof(all_tests) / sizeof(all_tests[0]))

/* The IMSIC identities this guest uses. */
#define ID_IPI          1
#define ID_EDU          2
#define ID_INTX         3       /* edu's INTx, sent by an APLIC in MSI mode */
#define ID_CHAN         4       /* the channel's doorbell, sent by an APLIC in MSI mode */

/* Bound on every step of the IPI handshake, and the watchdog (the timer) of a sample. */
#define WAIT_US         1000000
/*
 * Waits for the other hart sleep between looks, at least this long and this many
 * instructions' time: under icount QEMU runs the harts in turns that each last until the next
 * timer deadline, so a hart spinning with no timer armed anywhere would hold the one it waits
 * for off for all of that; and one whose deadline passes before it reaches its WFI ends each
 * turn with the next one's budget at 0 (at icount shift 7 two microseconds are 16
 * instructions).
 */
#define POLL_US         2
#define POLL_INSNS      4096
/* The timer tests' phase search arms this far ahead at most (the phase does not depend on it). */
#define SEARCH_US       20

/* QEMU's edu device (docs/specs/edu.txt): PCI 1234:11e8, registers in BAR0, 32-bit access. */
#define EDU_VENDOR      0x1234
#define EDU_DEVICE      0x11e8
#define EDU_BAR         0
#define EDU_ID          0x00    /* 0xRRrr00ed: version RR.rr */
#define EDU_INT_STATUS  0x24
#define EDU_INT_RAISE   0x60    /* ORed into the status; with MSI on, one MSI per write */
#define EDU_INT_ACK     0x64    /* cleared from the status */
#define EDU_INT_BIT     1

/* lat_vectors.S */
extern char lat_vector[];
uint64_t lat_arm(uint64_t delta, uint64_t phase, uint64_t period, uint64_t sbi, uint64_t step);
void lat_wait_wfi(volatile uint32_t *fired);
void lat_wait_busy(volatile uint32_t *fired);
void lat_irq(uint64_t now);

/*
 * `cycle` against `time`: cycles per tick (period), and the whole ticks by which `cycle` /
 * period runs ahead of `time` (0 natively: both count QEMU's virtual clock).
 */
static uint64_t period = 1;
static int64_t offset_ticks;
static uint64_t cycle_hz;
static uint64_t insn_cycles = 1; /* one instruction: 2^shift under icount */
static uint64_t poll_ticks;     /* POLL_US or POLL_INSNS, the longer */

/* Shared with lat_irq: which interrupt the current test expects, and what it saw. */
enum { FIRED_NONE, FIRED_SAMPLE, FIRED_WATCHDOG };
static enum lat_source active_source;
static volatile uint32_t fired;
static volatile uint64_t irq_cycle;
static uintptr_t edu_regs;      /* the edu device's BAR0 during a device test */
static unsigned intx_source;    /* its APLIC source during an INTx test */

void lat_irq(uint64_t now)
{
	uint64_t cause = csr_read(CSR_SCAUSE) & ~SCAUSE_IRQ;
	bool ours = false;

	if (cause == IRQ_S_TIMER) {
		/* Level: it stays pending until the deadline moves. */
		if (active_source == SRC_SBI_TIMER)
			sbi_set_timer(~0UL);
		else
			timer_stop();
		ours = active_source == SRC_SSTC || active_source == SRC_SBI_TIMER;
		if (!ours)
			fired = FIRED_WATCHDOG;
	} else if (cause == IRQ_S_EXT && active_source == SRC_INTX && !aplic_msi_mode()) {
		/* Direct mode: the line is level, pending while high, so claim until none is. */
		for (unsigned s = aplic_claim(cpu_index()); s; s = aplic_claim(cpu_index())) {
			mmio_write32(edu_regs + EDU_INT_ACK, EDU_INT_BIT);
			ours = ours || s == intx_source;
		}
	} else if (cause == IRQ_S_EXT) {
		uint32_t id = imsic_claim();
		ours = (id == ID_IPI && active_source == SRC_IPI) ||
		       (id == ID_EDU && active_source == SRC_EDU) ||
		       (id == ID_INTX && active_source == SRC_INTX);
		if (ours && (active_source == SRC_EDU || active_source == SRC_INTX))
			mmio_write32(edu_regs + EDU_INT_ACK, EDU_INT_BIT);
	} else if (cause == IRQ_S_SOFT) {
		csr_clear(CSR_SIP, SIP_SSIP);
		ours = active_source == SRC_SBI_IPI;
	}
	if (ours) {
		irq_cycle = now;
		fired = FIRED_SAMPLE;
	}
}

/* The first cycle read after `time` moves on, and that time. */
static uint64_t tick_edge(uint64_t *cycle)
{
	uint64_t t0 = counter_time(), t;

	while ((t = counter_time()) == t0)
		;
	*cycle = counter_cycle();
	return t;
}

/*
 * Cycles per tick between two tick edges 10000 ticks apart, rounded: exactly 100 under
 * icount (1 GHz of virtual nanoseconds over the 10 MHz timebase), wherever the edges were
 * caught within a few instructions.
 */
static void clock_init(void)
{
	uint64_t c0, c1;
	uint64_t t0 = tick_edge(&c0);

	timer_sleep_until(t0 + 10000);
	uint64_t t1 = tick_edge(&c1);
	period = ((c1 - c0) + (t1 - t0) / 2) / (t1 - t0);
	if (!period)
		period = 1;
	offset_ticks = (int64_t)(c1 / period) - (int64_t)t1;
	cycle_hz = period * timer_freq();

	/* One instruction's cycles: 2^shift under icount, where every CSR read is exact. */
	insn_cycles = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a, b;
		__asm__ volatile("csrr %0, 0xc00\n\tcsrr %1, 0xc00" : "=r"(a), "=r"(b));
		if (b - a < insn_cycles)
			insn_cycles = b - a;
	}
	if (!insn_cycles)
		insn_cycles = 1;
	poll_ticks = (POLL_INSNS * insn_cycles + period - 1) / period;
	if (poll_ticks < us_to_ticks(POLL_US))
		poll_ticks = us_to_ticks(POLL_US);
}

/* A `time` deadline as a cycle count. */
static uint64_t deadline_cycles(uint64_t deadline)
{
	return (uint64_t)((int64_t)deadline + offset_ticks) * period;
}

static void lat_wait(const struct lat_test *t)
{
	if (t->wfi)
		lat_wait_wfi(&fired);
	else
		lat_wait_busy(&fired);
}

static void vector_on(uint64_t sie)
{
	csr_write(CSR_STVEC, (uintptr_t)lat_vector);
	csr_write(CSR_SIE, sie);
}

static void vector_off(void)
{
	csr_write(CSR_SIE, 0);
	csr_write(CSR_STVEC, (uintptr_t)lib_trap_vector);
}

/* Sample = cycle at the vector - the deadline in cycles, with the write at `phase`. */
static int64_t timer_sample(const struct lat_test *t, uint64_t delta, uint64_t phase)
{
	uint64_t lock = period <= LAT_ARM_MAX_PERIOD ? period : 1;

	fired = FIRED_NONE;
	uint64_t deadline = lat_arm(delta, phase, lock, t->source == SRC_SBI_TIMER, insn_cycles);
	lat_wait(t);
	return (int64_t)(irq_cycle - deadline_cycles(deadline));
}

/*
 * The phase of the tick (cycle modulo period) at which lat_arm starts for its write to land
 * on a tick edge: a sample grows by one cycle per step of phase until the write crosses the
 * edge, where it drops by period - 1 to the latency alone. Every phase is tried once. Where an
 * instruction is more than one cycle (icount shift above 0) the write lands up to an
 * instruction after the phase asked for, and the lowest sample may have been one that just
 * made it past the edge: the phase is moved on by an instruction, so that every write does.
 */
static uint64_t find_phase(const struct lat_test *t, uint64_t delta)
{
	uint64_t best_phase = 0;
	int64_t best = INT64_MAX;

	if (period > LAT_ARM_MAX_PERIOD)
		return 0;
	for (uint64_t phase = 0; phase < period; phase++) {
		int64_t s = timer_sample(t, delta, phase);
		if (s < best) {
			best = s;
			best_phase = phase;
		}
	}
	return (best_phase + insn_cycles - 1) % period;
}

struct timer_result {
	const char *error;      /* 0 if it ran */
	uint64_t phase;
};

static void run_timer_samples(const struct lat_test *t, const struct lat_config *cfg,
			      struct timer_result *r)
{
	uint64_t search = us_to_ticks(SEARCH_US);

	r->error = 0;
	r->phase = 0;
	if (t->source == SRC_SSTC && !timer_has_sstc()) {
		r->error = "no sstc";
		return;
	}
	if (t->source == SRC_SBI_TIMER && !sbi_has_time()) {
		r->error = "no SBI TIME extension";
		return;
	}
	active_source = (enum lat_source)t->source;
	vector_on(SIP_STIP);
	r->phase = find_phase(t, cfg->delta_ticks < search ? cfg->delta_ticks : search);
	for (unsigned i = 0; i < cfg->samples; i++)
		samples[i] = clamp32(timer_sample(t, cfg->delta_ticks, r->phase));
	vector_off();
}

/*
 * lat.start_delay_us: sleep (WFI) before the first test, e.g. until a neighbour partition is
 * up; LAT-SOON notice_us before the end (the sleep is split, its end unchanged), LAT-START at it.
 */
static void start_delay(unsigned long us, unsigned long notice_us)
{
	uint64_t end = counter_time() + us_to_ticks(us);

	if (notice_us && notice_us < us) {
		timer_sleep_until(end - us_to_ticks(notice_us));
		printf("LAT-SOON {\"counter\":%lu,\"notice_us\":%lu}\n",
		       (unsigned long)counter_time(), notice_us);
	}
	timer_sleep_until(end);
	printf("LAT-START {\"counter\":%lu,\"start_delay_us\":%lu}\n",
	       (unsigned long)counter_time(), us);
}

/*
 * The IPI tests: this (the boot) hart sends, the other one receives and measures. That way
 * round, QEMU's icount scheduler gives the sender its turn as soon as its delay is up: it
 * runs the harts in turns that each last until the next timer deadline, starting over with
 * hart 0 after the timers have run, so a receiver on hart 0 spinning in the busy test would
 * keep a sender on hart 1 from ever running (arm64's lat ends its turn with YIELD instead;
 * RISC-V has no such hint in QEMU).
 *
 * The handshake, as on arm64: every variable has one writer, which stores its data, then
 * (after a fence) the flag that covers it. Sample `seq` (from 1): the receiver arms its
 * watchdog, sets rx_seq = seq and waits; the sender sees it, sleeps the delay so that the
 * receiver has settled in its wait, takes t_send, sends, takes t_after, stores both and then
 * tx_seq = seq; the receiver takes the interrupt, waits for tx_seq and keeps the sample.
 */
static volatile uint32_t rx_run;                /* receiver: the run (context) it serves */
static volatile uint32_t rx_seq;                /* receiver */
static volatile uint32_t rx_done;               /* receiver: samples taken, when it ends */
static const char *volatile rx_error;           /* receiver: 0, or why it ended early */
static volatile uint32_t tx_seq;                /* sender */
static volatile uint64_t tx_send, tx_after;     /* sender */
/* Written by the sender before the receiver starts. */
static struct {
	const struct lat_test *test;
	const struct lat_config *cfg;
	uint64_t watchdog;
} ipi_run;

/*
 * t_send, the store of `id` into the file, t_after, and (`halt`) WFI at once: see
 * send_ipi. The device tests raise edu's interrupt the same way, without the WFI.
 */
static inline void imsic_raise(uintptr_t file, uint32_t id, bool halt, uint64_t *t_send,
			       uint64_t *t_after)
{
	uint64_t send, after;

	if (halt)
		__asm__ volatile(".option push\n\t.option norvc\n\t"
				 "csrr %0, 0xc00\n\t"
				 "sw %3, 0(%2)\n\t"
				 "csrr %1, 0xc00\n\t"
				 "wfi\n\t"
				 ".option pop"
				 : "=&r"(send), "=&r"(after) : "r"(file), "r"(id) : "memory");
	else
		__asm__ volatile(".option push\n\t.option norvc\n\t"
				 "csrr %0, 0xc00\n\t"
				 "sw %3, 0(%2)\n\t"
				 "csrr %1, 0xc00\n\t"
				 ".option pop"
				 : "=&r"(send), "=&r"(after) : "r"(file), "r"(id) : "memory");
	*t_send = send;
	*t_after = after;
}

/* t_send, SBI send_ipi to `hart`, t_after, WFI. */
static inline void sbi_ipi_raise(unsigned hart, uint64_t *t_send, uint64_t *t_after)
{
	register unsigned long a0 __asm__("a0") = 1;            /* hart_mask */
	register unsigned long a1 __asm__("a1") = hart;         /* hart_mask_base */
	register unsigned long a6 __asm__("a6") = 0;
	register unsigned long a7 __asm__("a7") = SBI_EXT_IPI;
	uint64_t send, after;

	__asm__ volatile("csrr %0, 0xc00\n\t"
			 "ecall\n\t"
			 "csrr %1, 0xc00\n\t"
			 "wfi"
			 : "=&r"(send), "=&r"(after), "+r"(a0), "+r"(a1)
			 : "r"(a6), "r"(a7) : "memory");
	*t_send = send;
	*t_after = after;
}

/*
 * Send, and stop at once. Under icount QEMU runs one hart at a time and does not switch when
 * one sends another an interrupt: the receiver runs once the sender halts. So the sender
 * halts right after its send, in a WFI with interrupts masked and only its wake-up timer
 * (armed before t_send) enabled: every sample counts the same two instructions of it after
 * the send, not whatever it would do next.
 */
static void send_ipi(bool sbi, unsigned hart, uintptr_t file, uint64_t *t_send,
		     uint64_t *t_after)
{
	uint64_t sie = csr_swap(CSR_SIE, SIP_STIP);

	timer_arm(counter_time() + poll_ticks);
	if (sbi)
		sbi_ipi_raise(hart, t_send, t_after);
	else
		imsic_raise(file, ID_IPI, true, t_send, t_after);
	timer_stop();
	csr_write(CSR_SIE, sie);
}

static void sleep_ticks(uint64_t ticks)
{
	timer_sleep_until(counter_time() + ticks);
}

/* Until *flag >= want, sleeping poll_ticks between looks; false at `deadline` (`time`). */
static bool wait_flag(const volatile uint32_t *flag, uint32_t want, uint64_t deadline)
{
	while (*flag < want) {
		if (deadline_passed(deadline))
			return false;
		sleep_ticks(poll_ticks);
	}
	return true;
}

/* The receiving hart (cpu_start's fn): `run` is the number of this test's run. */
static void ipi_receiver(uint64_t run)
{
	const struct lat_test *t = ipi_run.test;
	bool sbi = t->source == SRC_SBI_IPI;
	const char *error = 0;
	unsigned i;

	if (!sbi)
		imsic_enable(ID_IPI);
	csr_clear(CSR_SIP, SIP_SSIP);
	vector_on(SIP_STIP | (sbi ? SIP_SSIP : SIP_SEIP));
	mb();
	rx_run = (uint32_t)run;
	for (i = 0; i < ipi_run.cfg->samples; i++) {
		fired = FIRED_NONE;
		timer_arm(counter_time() + ipi_run.watchdog);
		mb();
		rx_seq = i + 1;
		lat_wait(t);
		timer_stop();
		if (fired != FIRED_SAMPLE) {
			error = "ipi not received";
			break;
		}
		if (!wait_flag(&tx_seq, i + 1, deadline_after_us(WAIT_US))) {
			error = "sender did not report its send time";
			break;
		}
		samples[i] = clamp32((int64_t)(irq_cycle - tx_send));
	}
	vector_off();
	if (!sbi)
		imsic_disable(ID_IPI);
	rx_error = error;
	mb();
	rx_done = i;
	rx_seq = UINT32_MAX;    /* the sender stops waiting */
}

struct ipi_result {
	const char *error;      /* 0 if every sample arrived */
	long cpu_on;            /* what cpu_start (SBI HSM hart_start or the wake-up) returned */
	unsigned done;          /* samples taken */
	unsigned receiver;
	struct sender_stats sender;
};

/* The first hart of the device tree other than this one; -1 if there is none. */
static int other_hart(void)
{
	unsigned harts[MAX_CPUS];
	unsigned count = cpu_harts(harts, MAX_CPUS);

	for (unsigned i = 0; i < count; i++)
		if (harts[i] != cpu_index() && harts[i] < MAX_CPUS)
			return (int)harts[i];
	return -1;
}

/*
 * Once the receiver is back in its idle loop: what it measured, or why it stopped. Then one
 * more sleep, for it to reach its WFI: under icount what it still runs would otherwise be
 * counted in the next test's first sample.
 */
static bool receiver_finished(unsigned hart)
{
	uint64_t deadline = deadline_after_us(WAIT_US);

	while (!cpu_idle(hart)) {
		if (deadline_passed(deadline))
			return false;
		sleep_ticks(poll_ticks);
	}
	sleep_ticks(poll_ticks);
	return true;
}

static void run_ipi_samples(const struct lat_test *t, const struct lat_config *cfg,
			    struct ipi_result *r)
{
	static uint32_t run;
	bool sbi = t->source == SRC_SBI_IPI;
	int64_t cost_sum = 0;
	int hart = other_hart();
	unsigned seq;

	r->error = 0;
	r->done = 0;
	r->cpu_on = 0;
	r->receiver = hart < 0 ? 0 : (unsigned)hart;
	if (hart < 0) {
		r->error = "no second hart";
		return;
	}
	uintptr_t file = imsic_file((unsigned)hart);
	if (sbi ? !sbi_has_ipi() : !file) {
		r->error = sbi ? "no SBI IPI extension" : "no IMSIC file for the receiving hart";
		return;
	}
	ipi_run.test = t;
	ipi_run.cfg = cfg;
	ipi_run.watchdog = us_to_ticks(cfg->delta_us * 2 + WAIT_US);
	active_source = (enum lat_source)t->source;
	rx_seq = 0;
	rx_done = 0;
	rx_error = 0;
	tx_seq = 0;
	mb();

	r->cpu_on = cpu_start((unsigned)hart, ipi_receiver, ++run);
	if (r->cpu_on != SBI_SUCCESS) {
		r->error = "receiving hart not started";
		return;
	}
	if (!wait_flag(&rx_run, run, deadline_after_us(WAIT_US))) {
		r->error = "receiving hart did not report in";
		return;
	}
	for (seq = 1; seq <= cfg->samples; seq++) {
		/* The receiver's watchdog bounds its wait; this one only guards against a hang. */
		uint64_t deadline = deadline_after_us(WAIT_US + 2 * cfg->delta_us);
		while (rx_seq < seq)
			if (deadline_passed(deadline))
				break;
			else
				sleep_ticks(cfg->delta_ticks);
		if (rx_seq != seq)
			break;          /* it ended early (rx_error) or went silent */
		sleep_ticks(cfg->delta_ticks);

		uint64_t t_send, t_after;
		send_ipi(sbi, (unsigned)hart, file, &t_send, &t_after);
		tx_send = t_send;
		tx_after = t_after;
		mb();
		tx_seq = seq;
		sender_add(&r->sender, &cost_sum, seq - 1, (int64_t)(t_after - t_send));
	}
	if (!receiver_finished((unsigned)hart)) {
		r->error = "receiving hart did not finish";
		return;
	}
	mb();
	r->done = rx_done;
	r->error = rx_error;
	if (!r->error && r->done != cfg->samples)
		r->error = "receiving hart stopped early";
	if (seq > 1)
		r->sender.avg_x100 = div_round(cost_sum * 100, seq - 1);
}

/*
 * The device tests. Set up once per test: the host bridge and the device from the device
 * tree and configuration space, BAR0 from the 32-bit window, its MSI to this hart's IMSIC
 * file with identity ID_EDU. Per sample: arm the watchdog, take t_send, write the raise
 * register, take t_after, wait; the handler claims the identity and acknowledges in the
 * device.
 */
struct edu_result {
	const char *error;      /* 0 if every sample arrived */
	unsigned done;          /* samples taken */
	bool found;             /* bdf is valid */
	uint32_t bdf;
	uint32_t id;            /* identification register */
	uint64_t bar, bar_size; /* BAR0, as the CPU sees it */
	uintptr_t file;         /* where its MSIs go (0: INTx in direct mode) */
	unsigned pin;           /* INTx tests: its pin (1 = INTA) and APLIC source */
	unsigned source;
	int64_t status;         /* interrupt status when the watchdog fired, else -1 */
	struct sender_stats sender;
};

static struct pci_host edu_host;

static const char *edu_setup(struct edu_result *r, bool intx)
{
	if (!pci_host_init(&edu_host))
		return "no PCI host bridge in the device tree";
	if (!pci_find(&edu_host, EDU_VENDOR, EDU_DEVICE, &r->bdf))
		return "edu device not found";
	r->found = true;
	if (!pci_assign_bar(&edu_host, r->bdf, EDU_BAR, &r->bar, &r->bar_size) ||
	    r->bar_size < 0x80)
		return "edu BAR0 not assigned";
	r->id = mmio_read32((uintptr_t)r->bar + EDU_ID);
	if ((r->id & 0xff) != 0xed)
		return "edu identification register wrong";
	edu_regs = (uintptr_t)r->bar;
	mmio_write32(edu_regs + EDU_INT_ACK, ~0u);
	if (intx) {
		int source;
		r->pin = pci_intx_pin(&edu_host, r->bdf);
		if (!r->pin || (source = pci_intx_intid(&edu_host, r->bdf, r->pin)) < 0)
			return "edu interrupt not in interrupt-map";
		r->source = (unsigned)source;
		if (!aplic_init())
			return "no APLIC in the device tree";
		if (aplic_msi_mode()) {
			r->file = imsic_file(cpu_index());
			if (!r->file)
				return "no IMSIC file for this hart";
			imsic_enable(ID_INTX);
		}
		intx_source = r->source;
		aplic_route(r->source, cpu_index(), ID_INTX);
		return 0;
	}
	r->file = imsic_file(cpu_index());
	if (!r->file)
		return "no IMSIC file for this hart";
	imsic_enable(ID_EDU);
	if (!pci_msi_enable(&edu_host, r->bdf, r->file, ID_EDU))
		return "edu has no MSI capability";
	return 0;
}

/* t_send, the 32-bit write of `bit` to the raise register, t_after. */
static inline void edu_raise(uintptr_t raise, uint32_t bit, uint64_t *t_send, uint64_t *t_after)
{
	imsic_raise(raise, bit, false, t_send, t_after);
}

static void run_edu_samples(const struct lat_test *t, const struct lat_config *cfg,
			    struct edu_result *r)
{
	uint64_t watchdog = us_to_ticks(WAIT_US);
	int64_t cost_sum = 0;

	r->done = 0;
	r->found = false;
	r->file = 0;
	r->status = -1;
	r->source = 0;
	r->error = edu_setup(r, t->source == SRC_INTX);
	if (r->error) {
		imsic_disable(ID_EDU);
		imsic_disable(ID_INTX);
		return;
	}

	uintptr_t raise = edu_regs + EDU_INT_RAISE;
	active_source = t->source;
	vector_on(SIP_STIP | SIP_SEIP);
	for (unsigned i = 0; i < cfg->samples; i++) {
		fired = FIRED_NONE;
		timer_arm(counter_time() + watchdog);
		uint64_t t_send, t_after;
		edu_raise(raise, EDU_INT_BIT, &t_send, &t_after);
		lat_wait(t);
		timer_stop();
		if (fired != FIRED_SAMPLE) {
			/* Raised in the device (1) but not delivered, or not even raised (0)? */
			r->status = mmio_read32(edu_regs + EDU_INT_STATUS);
			r->error = "device interrupt not received";
			break;
		}
		samples[i] = clamp32((int64_t)(irq_cycle - t_send));
		sender_add(&r->sender, &cost_sum, i, (int64_t)(t_after - t_send));
		r->done++;
	}
	vector_off();

	/* Leave nothing behind for the next test: MSI or the INTx source off, the status clear. */
	if (r->source)
		aplic_unroute(r->source);
	else
		pci_msi_disable(&edu_host, r->bdf);
	mmio_write32(edu_regs + EDU_INT_ACK, ~0u);
	imsic_disable(ID_EDU);
	imsic_disable(ID_INTX);
	if (r->done)
		r->sender.avg_x100 = div_round(cost_sum * 100, r->done);
}

static void print_bdf(uint32_t bdf)
{
	printf("%02x:%02x.%x", PCI_BDF_BUS(bdf), PCI_BDF_DEV(bdf), PCI_BDF_FN(bdf));
}

/* `timer`: the timer tests; `ipi`: the IPI tests; `edu`: the device tests. */
static void print_human(const struct lat_test *t, const struct lat_config *cfg,
			const struct lat_stats *s, const struct timer_result *timer,
			const struct ipi_result *ipi, const struct edu_result *edu)
{
	const struct sender_stats *sender = ipi ? &ipi->sender : edu ? &edu->sender : 0;

	if (edu) {
		printf("lat: %s: edu ", t->name);
		print_bdf(edu->bdf);
		printf(" (%04x:%04x, id 0x%08x), BAR0 0x%lx + 0x%lx, ", EDU_VENDOR, EDU_DEVICE,
		       edu->id, edu->bar, edu->bar_size);
		if (edu->source)
			printf("INT%c = APLIC source %u, ", 'A' + edu->pin - 1, edu->source);
		if (edu->file)
			printf("%s = identity %u of the IMSIC file at 0x%lx, ",
			       edu->source ? "by MSI" : "MSI", edu->source ? ID_INTX : ID_EDU,
			       edu->file);
		else
			printf("APLIC direct mode, ");
		printf("%s wait, %u samples, warm-up %u\n", t->wait, cfg->samples, cfg->warmup);
	} else if (ipi) {
		printf("lat: %s: IPI (%s) from hart %u to hart %u, %s wait, %u samples, delay %lu "
		       "us = %lu ticks, warm-up %u\n", t->name,
		       t->source == SRC_SBI_IPI ? "SBI send_ipi" : "IMSIC file store",
		       cpu_index(), ipi->receiver, t->wait, cfg->samples, cfg->delta_us,
		       cfg->delta_ticks, cfg->warmup);
	} else {
		printf("lat: %s: %s timer, %s wait, %u samples, delta %lu us = %lu ticks of %lu Hz, "
		       "written at phase %lu of %lu cycles per tick, warm-up %u\n", t->name,
		       t->source == SRC_SBI_TIMER ? "SBI set_timer" : "Sstc stimecmp", t->wait,
		       cfg->samples, cfg->delta_us, cfg->delta_ticks, timer_freq(), timer->phase,
		       period, cfg->warmup);
	}
	print_summary(t->name, s, cycle_hz);
	if (sender) {
		printf("lat: %s: sender AVG ", t->name);
		print_x100(sender->avg_x100);
		printf(" MIN %ld MAX %ld (cycles from before to after %s)\n", sender->min,
		       sender->max, edu ? "the write to edu's raise register"
			       : t->source == SRC_SBI_IPI ? "its send_ipi" : "its store");
	}
	print_histogram(t->name, s);
}

/* What every riscv64 record ends with: what the samples count, and where. */
static void print_json_end(void)
{
	printf(",\"counter\":\"cycle\",\"arch\":\"riscv64\"}\n");
}

static void print_json(const struct lat_test *t, const struct lat_config *cfg,
		       const struct lat_stats *s, const struct ipi_result *ipi,
		       const struct edu_result *edu)
{
	print_json_stats(t, cfg, s, cycle_hz);
	if (ipi)
		print_json_sender(&ipi->sender);
	if (edu) {
		print_json_sender(&edu->sender);
		if (edu->source)
			printf(",\"aplic_source\":%u,\"aplic_mode\":\"%s\"", edu->source,
			       edu->file ? "msi" : "direct");
		printf(",\"intid\":%d,\"bdf\":\"", edu->source ? ID_INTX : ID_EDU);
		print_bdf(edu->bdf);
		printf("\"");
	}
	print_json_end();
}

static void print_error_head(const struct lat_test *t, const struct lat_config *cfg,
			     unsigned done)
{
	printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
	       "\"done\":%u", t->name, t->timer, t->wait, cfg->samples, done);
}

static void print_timer_error(const struct lat_test *t, const struct lat_config *cfg,
			      const struct timer_result *r)
{
	printf("lat: %s: %s\n", t->name, r->error);
	print_error_head(t, cfg, 0);
	printf(",\"error\":\"%s\"", r->error);
	print_json_end();
}

static void print_ipi_error(const struct lat_test *t, const struct lat_config *cfg,
			    const struct ipi_result *r)
{
	printf("lat: %s: %s (cpu_start returned %ld, %u of %u samples taken)\n", t->name,
	       r->error, r->cpu_on, r->done, cfg->samples);
	print_error_head(t, cfg, r->done);
	printf(",\"cpu_on\":%ld,\"error\":\"%s\"", r->cpu_on, r->error);
	print_json_end();
}

static void print_edu_error(const struct lat_test *t, const struct lat_config *cfg,
			    const struct edu_result *r)
{
	printf("lat: %s: %s (%u of %u samples taken", t->name, r->error, r->done, cfg->samples);
	if (r->status >= 0)
		printf("; edu interrupt status %ld", r->status);
	printf(")\n");
	print_error_head(t, cfg, r->done);
	if (r->found) {
		printf(",\"bdf\":\"");
		print_bdf(r->bdf);
		printf("\"");
	}
	if (r->status >= 0)
		printf(",\"int_status\":%ld", r->status);
	printf(",\"error\":\"%s\"", r->error);
	print_json_end();
}

/*
 * The channel test: a ping-pong over channel lat.chan between two partitions that both run
 * it, as on arm64 (lat.c there). Member 0, the pinger, writes a message holding its `cycle`
 * (t_send), rings member 1 and waits in WFI for member 1's answer: a sample of `chan-rtt` is
 * (cycle at its vector) - t_send. Member 1, the ponger, answers in its doorbell handler: a
 * sample of `doorbell` is (cycle at its vector) - the t_send in the message; it replies with
 * the same message and rings member 0. The doorbell is an APLIC source, edge rising: in MSI
 * mode sent as ID_CHAN into this hart's file, in direct mode claimed from the APLIC. Under
 * icount `cycle` counts the one virtual clock every hart shares, so the partitions' readings
 * compare.
 */
#define CHAN_WAIT_US    1000000         /* the watchdog's allowance per sample */
#define CHAN_START_US   20000000        /* for the peer to boot and open the channel */
#define CHAN_PINGER     0
#define CHAN_PONGER     1

extern char lat_chan_vector[];
void lat_chan_irq(uint64_t now);

static struct channel chan;
static struct channel_queue chan_tx, chan_rx;
static volatile uint32_t chan_answered;         /* the ponger's samples */
static uint32_t chan_samples;

struct chan_result {
	const char *error;      /* 0 if every sample arrived */
	unsigned done;
	bool found;             /* chan is valid */
	bool routed;            /* its doorbell is routed to this hart */
	struct sender_stats sender;     /* the pinger's ring: its one trapped store */
};

/* The channel test's vector on, with the doorbell and the watchdog (vector_off ends it). */
static void chan_vector_on(void)
{
	csr_write(CSR_STVEC, (uintptr_t)lat_chan_vector);
	csr_write(CSR_SIE, SIP_STIP | SIP_SEIP);
}

/* The ponger's answer to every message waiting, `now` being its vector's cycle. */
static void chan_answer(uint64_t now)
{
	struct channel_msg msg;

	while (channel_recv(&chan_rx, &msg)) {
		if (chan_answered < chan_samples)
			samples[chan_answered] = clamp32((int64_t)(now - msg.word[1]));
		chan_answered++;
		channel_send(&chan_tx, &msg);
		channel_ring(&chan, CHAN_PINGER);
	}
}

/* The doorbell is edge-triggered: claimed first, so that a ring while answering is not lost. */
void lat_chan_irq(uint64_t now)
{
	uint64_t cause = csr_read(CSR_SCAUSE) & ~SCAUSE_IRQ;
	bool ours = false;

	if (cause == IRQ_S_TIMER) {
		timer_stop();
		fired = FIRED_WATCHDOG;
	} else if (cause == IRQ_S_EXT && !aplic_msi_mode()) {
		for (unsigned s = aplic_claim(cpu_index()); s; s = aplic_claim(cpu_index()))
			ours = ours || s == chan.irq;
	} else if (cause == IRQ_S_EXT) {
		ours = imsic_claim() == ID_CHAN;
	}
	if (ours) {
		if (chan.self == CHAN_PONGER)
			chan_answer(now);
		irq_cycle = now;
		fired = FIRED_SAMPLE;
	}
}

/* The channel from the device tree, its doorbell routed to this hart. */
static const char *chan_setup(struct chan_result *r)
{
	switch (channel_by_bootarg("lat.chan", &chan)) {
	case CHANNEL_UNNAMED:
		return "no channel named: lat.chan=NAME";
	case CHANNEL_ABSENT:
		return "channel not in the device tree";
	case CHANNEL_FOUND:
		break;
	}
	r->found = true;
	if (chan.self != CHAN_PINGER && chan.self != CHAN_PONGER)
		return "this member has no part in the ping-pong (members 0 and 1 have)";
	if (channel_self(&chan) != chan.self || channel_members(&chan) != chan.members)
		return "doorbell page disagrees with the device tree";
	if (!aplic_init())
		return "no APLIC in the device tree";
	if (aplic_msi_mode()) {
		if (!imsic_file(cpu_index()))
			return "no IMSIC file for this hart";
		imsic_enable(ID_CHAN);
	}
	/* The doorbell on before the peer may ring it, that is before the channel opens. */
	aplic_route_edge(chan.irq, cpu_index(), ID_CHAN);
	r->routed = true;
	if (!channel_open(&chan, &chan_tx, &chan_rx))
		return "channel cannot carry queues (read-only or too small)";
	return 0;
}

/*
 * One watchdog (the supervisor timer) for the whole run rather than one per sample: the
 * pinger arms nothing while it measures, and neither side has timer work (an SBI call in a
 * partition without Sstc) between samples. The pinger arms it once the ponger is there.
 */
static uint64_t chan_watchdog(const struct lat_config *cfg)
{
	return us_to_ticks(CHAN_START_US + (uint64_t)cfg->samples * CHAN_WAIT_US);
}

static const char *chan_ping(const struct lat_config *cfg, struct chan_result *r)
{
	uint64_t deadline = deadline_after_us(CHAN_START_US);
	int64_t cost_sum = 0;

	while (!channel_peer_ready(&chan_rx)) {
		if (deadline_passed(deadline))
			return "member 1 did not open the channel";
		sleep_ticks(poll_ticks);
	}
	timer_arm(counter_time() + chan_watchdog(cfg));
	chan_vector_on();
	for (unsigned i = 0; i < cfg->samples; i++) {
		struct channel_msg msg = { { 0 } };
		uint64_t t_send;

		fired = FIRED_NONE;
		msg.word[0] = i + 1;
		t_send = counter_cycle();
		msg.word[1] = t_send;
		if (!channel_send(&chan_tx, &msg))
			return "queue to member 1 full";
		uint64_t t_ring = counter_cycle();
		channel_ring(&chan, CHAN_PONGER);
		uint64_t t_rung = counter_cycle();
		lat_wait_wfi(&fired);
		if (fired != FIRED_SAMPLE)
			return "no answer from member 1";
		if (!channel_recv(&chan_rx, &msg) || msg.word[0] != i + 1)
			return "answer from member 1 missing or out of order";
		samples[i] = clamp32((int64_t)(irq_cycle - t_send));
		sender_add(&r->sender, &cost_sum, i, (int64_t)(t_rung - t_ring));
		r->done++;
	}
	if (r->done)
		r->sender.avg_x100 = div_round(cost_sum * 100, r->done);
	return 0;
}

static const char *chan_pong(const struct lat_config *cfg, struct chan_result *r)
{

	timer_arm(counter_time() + chan_watchdog(cfg));
	chan_vector_on();
	while (chan_answered < cfg->samples) {
		fired = FIRED_NONE;
		lat_wait_wfi(&fired);
		r->done = chan_answered < cfg->samples ? chan_answered : cfg->samples;
		if (fired != FIRED_SAMPLE)
			return "no message from member 0";
	}
	return 0;
}

/*
 * The ponger, done: it returns (and prints) once the pinger has taken the last answer. Under
 * icount the cores run in turns that last until a core waits, so printing at once would hold
 * the pinger's last sample up for all of it.
 */
static void chan_pong_finish(void)
{
	uint64_t deadline = deadline_after_us(CHAN_WAIT_US);

	while (channel_queued(&chan_tx) && !deadline_passed(deadline))
		sleep_ticks(poll_ticks);
}

static void run_chan_samples(const struct lat_config *cfg, struct chan_result *r)
{
	r->done = 0;
	r->found = false;
	r->sender = (struct sender_stats){ 0, 0, 0 };
	r->routed = false;
	chan_answered = 0;
	chan_samples = cfg->samples;
	active_source = SRC_CHAN;
	r->error = chan_setup(r);
	if (!r->error) {
		r->error = chan.self == CHAN_PINGER ? chan_ping(cfg, r) : chan_pong(cfg, r);
		timer_stop();
	}
	vector_off();
	if (!r->error && chan.self == CHAN_PONGER)
		chan_pong_finish();
	if (r->routed)
		aplic_unroute(chan.irq);
	imsic_disable(ID_CHAN);
}

/* What the channel test printed: `chan-rtt` (the pinger), `doorbell` (the ponger). */
static struct lat_test chan_test(const struct lat_test *t, const struct chan_result *r)
{
	struct lat_test shown = *t;

	if (r->found && chan.self == CHAN_PINGER)
		shown.name = "chan-rtt";
	else if (r->found && chan.self == CHAN_PONGER)
		shown.name = "doorbell";
	return shown;
}

static void print_chan(const struct lat_test *t, const struct lat_config *cfg,
		       const struct chan_result *r)
{
	struct lat_test shown = chan_test(t, r);
	struct lat_stats s;

	if (r->error) {
		printf("lat: %s: %s (%u of %u samples taken)\n", shown.name, r->error, r->done,
		       cfg->samples);
		print_error_head(&shown, cfg, r->done);
		printf(",\"error\":\"%s\"", r->error);
		print_json_end();
		return;
	}
	compute_stats(cfg, &s);
	printf("lat: %s: channel %s, member %u of %u, doorbell APLIC source %u (edge, %s), %s, "
	       "%s wait, %u samples, warm-up %u\n", shown.name, chan.name, chan.self, chan.members,
	       chan.irq, aplic_msi_mode() ? "MSI mode" : "direct mode",
	       chan.self == CHAN_PINGER ? "round trip to member 1 and back"
					: "one way from member 0",
	       t->wait, cfg->samples, cfg->warmup);
	print_summary(shown.name, &s, cycle_hz);
	if (chan.self == CHAN_PINGER) {
		printf("lat: %s: sender AVG ", shown.name);
		print_x100(r->sender.avg_x100);
		printf(" MIN %ld MAX %ld (cycles from before to after its doorbell store)\n",
		       r->sender.min, r->sender.max);
	}
	print_histogram(shown.name, &s);
	print_json_stats(&shown, cfg, &s, cycle_hz);
	if (chan.self == CHAN_PINGER)
		print_json_sender(&r->sender);
	printf(",\"channel\":\"%s\",\"member\":%u,\"aplic_source\":%u,\"aplic_mode\":\"%s\"",
	       chan.name, chan.self, chan.irq, aplic_msi_mode() ? "msi" : "direct");
	print_json_end();
}

/*
 * lat.sip_check=1: what `sip` shows of the SBI timer, with its interrupt disabled so nothing
 * takes it: STIP pending once a deadline has passed, clear after set_timer(-1).  The bare board
 * (OpenSBI) shows both; see docs/design.md, "QEMU 7.2 and the VS timer", for a partition.
 */
static void sip_check(void)
{
	uint64_t enabled = csr_read(CSR_SIE);
	bool pending = false;

	csr_clear(CSR_SIE, SIP_STIP);
	sbi_set_timer(counter_time());
	for (uint64_t end = deadline_after_us(10000); !pending && !deadline_passed(end);)
		pending = (csr_read(CSR_SIP) & SIP_STIP) != 0;
	sbi_set_timer(~0UL);
	bool cleared = (csr_read(CSR_SIP) & SIP_STIP) == 0;
	csr_write(CSR_SIE, enabled);
	printf("PROBE-JSON {\"test\":\"sbi-timer-sip\",\"pending\":%s,\"cleared\":%s,\"pass\":%s}\n",
	       pending ? "true" : "false", cleared ? "true" : "false",
	       (pending && cleared) ? "true" : "false");
}

void guest_main(void)
{
	const struct lat_test *selected[MAX_SELECTED];
	struct lat_config cfg;
	struct lat_stats stats;

	clock_init();
	/* Boot time as the guest sees it: how long after the board's reset it started. */
	printf("LAT-BOOT {\"entry_counter\":%lu,\"freq_hz\":%lu,\"hart\":%u,\"cycle_hz\":%lu,"
	       "\"entry_cycle\":%lu,\"arch\":\"riscv64\"}\n", (unsigned long)entry_time(),
	       (unsigned long)timer_freq(), cpu_index(), (unsigned long)cycle_hz,
	       (unsigned long)entry_cycle());
	cfg.samples = (unsigned)bootarg_ulong("lat.samples", 100, 1, MAX_SAMPLES);
	cfg.warmup = (unsigned)bootarg_ulong("lat.warmup", 8, 0, MAX_SAMPLES);
	cfg.delta_us = bootarg_ulong("lat.delta_us", 20, 1, 1000000);
	cfg.delta_ticks = us_to_ticks(cfg.delta_us);
	if (!cfg.delta_ticks)
		cfg.delta_ticks = 1;
	unsigned long start_delay_us = bootarg_ulong("lat.start_delay_us", 0, 0, 600000000);
	unsigned long notice_us = bootarg_ulong("lat.notice_us", 0, 0, 600000000);
	if (start_delay_us)
		start_delay(start_delay_us, notice_us);
	if (bootarg_ulong("lat.sip_check", 0, 0, 1))
		sip_check();

	unsigned count = select_tests(all_tests, NUM_TESTS, selected);
	for (unsigned i = 0; i < count; i++) {
		const struct lat_test *t = selected[i];
		struct timer_result timer;
		struct ipi_result ipi;
		struct edu_result dev;

		if (t->source == SRC_CHAN) {
			struct chan_result ch;

			run_chan_samples(&cfg, &ch);
			print_chan(t, &cfg, &ch);
			continue;
		}
		if (t->source == SRC_IPI || t->source == SRC_SBI_IPI) {
			run_ipi_samples(t, &cfg, &ipi);
			if (ipi.error) {
				print_ipi_error(t, &cfg, &ipi);
				continue;
			}
			compute_stats(&cfg, &stats);
			print_human(t, &cfg, &stats, 0, &ipi, 0);
			print_json(t, &cfg, &stats, &ipi, 0);
		} else if (t->source == SRC_EDU || t->source == SRC_INTX) {
			run_edu_samples(t, &cfg, &dev);
			if (dev.error) {
				print_edu_error(t, &cfg, &dev);
				continue;
			}
			compute_stats(&cfg, &stats);
			print_human(t, &cfg, &stats, 0, 0, &dev);
			print_json(t, &cfg, &stats, 0, &dev);
		} else {
			run_timer_samples(t, &cfg, &timer);
			if (timer.error) {
				print_timer_error(t, &cfg, &timer);
				continue;
			}
			compute_stats(&cfg, &stats);
			print_human(t, &cfg, &stats, &timer, 0, 0);
			print_json(t, &cfg, &stats, 0, 0);
		}
	}
	printf("LAT-DONE\n");
}
