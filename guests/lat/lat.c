/*
 * Interrupt latency, tbm-style: arm an EL1 timer `delta` ahead, wait, and in the IRQ vector
 * take the counter first thing; a sample is (counter at vector entry) - (deadline), in ticks.
 * The IPI tests do the same with an SGI that CPU 1 sends: (counter at vector) - (counter
 * just before the ICC_SGI1R_EL1 write); the device tests with the INTx interrupt of QEMU's
 * edu PCI device: (counter at vector) - (counter just before the write that raises it).
 */
#include "bootargs.h"
#include "channel.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "pci.h"
#include "psci.h"
#include "runtime.h"
#include "stats.h"
#include "timer.h"

const char guest_name[] = "lat";

/* What raises the measured interrupt (struct lat_test's source). */
enum lat_source { SRC_VTIMER, SRC_PTIMER, SRC_SGI, SRC_EDU, SRC_CHAN };

static const struct lat_test all_tests[] = {
	{ "vtimer-wfi",  "virt", "wfi",  SRC_VTIMER, true,  true },
	{ "vtimer-busy", "virt", "busy", SRC_VTIMER, false, true },
	{ "ptimer-wfi",  "phys", "wfi",  SRC_PTIMER, true,  true },
	{ "ptimer-busy", "phys", "busy", SRC_PTIMER, false, true },
	/* Need a second CPU, so only on request. */
	{ "sgi-wfi",     "sgi",  "wfi",  SRC_SGI,    true,  false },
	{ "sgi-busy",    "sgi",  "busy", SRC_SGI,    false, false },
	/* Need QEMU's edu device (-device edu). */
	{ "edu-wfi",     "edu",  "wfi",  SRC_EDU,    true,  false },
	{ "edu-busy",    "edu",  "busy", SRC_EDU,    false, false },
	/* Needs a channel (lat.chan) shared with another partition running it too. */
	{ "chan",        "chan", "wfi",  SRC_CHAN,   true,  false },
};
#define NUM_TESTS (sizeof(all_tests) / sizeof(all_tests[0]))

/* The IPI tests: CPU 1 sends SGI_LAT to CPU 0, which measures. */
#define SGI_LAT         1
#define SGI_RECEIVER    0
#define SGI_SENDER      1
/* Bound on every step of the handshake, and the receiver's watchdog beyond the delay. */
#define SGI_WAIT_US     1000000

/* QEMU's edu device (docs/specs/edu.txt): PCI 1234:11e8, registers in BAR0, 32-bit access. */
#define EDU_VENDOR      0x1234
#define EDU_DEVICE      0x11e8
#define EDU_BAR         0
#define EDU_ID          0x00    /* 0xRRrr00ed: version RR.rr */
#define EDU_INT_STATUS  0x24
#define EDU_INT_RAISE   0x60    /* ORed into the status; the interrupt is raised */
#define EDU_INT_ACK     0x64    /* cleared from the status; the line drops at 0 */
#define EDU_INT_BIT     1
/* The device tests' watchdog (EL1 physical timer) per sample. */
#define EDU_WAIT_US     1000000

extern char lat_vectors_virt[], lat_vectors_phys[];
void lat_wait_wfi(volatile uint32_t *fired);
void lat_wait_busy(volatile uint32_t *fired);
void lat_wait_busy_yield(volatile uint32_t *fired);
void lat_irq(uint64_t now);

/* Shared with lat_irq: which interrupt the current test expects, and what it saw. */
enum { FIRED_NONE, FIRED_SAMPLE, FIRED_WATCHDOG };
static uint32_t active_intid;
static enum lat_source active_source;
static volatile uint32_t fired;
static volatile uint64_t irq_counter;
static uintptr_t edu_regs;      /* the edu device's BAR0 during a device test */

void lat_irq(uint64_t now)
{
	uint32_t intid = gic_ack();
	bool ours = intid == active_intid;
	/* The IPI and device tests bound each wait with the physical timer: WFI cannot time out. */
	bool watchdog = (active_source == SRC_SGI || active_source == SRC_EDU) &&
			intid == INTID_PTIMER;

	/* Stop a timer before EOI: it is level-triggered and would fire again at once. */
	if (ours && active_source == SRC_VTIMER)
		vtimer_stop();
	if ((ours && active_source == SRC_PTIMER) || watchdog)
		ptimer_stop();
	/* So does the device's INTx line: acknowledge in the device, and let the write land. */
	if (ours && active_source == SRC_EDU) {
		mmio_write32(edu_regs + EDU_INT_ACK, EDU_INT_BIT);
		dsb_sy();
	}
	if (intid < 1020)
		gic_eoi(intid);
	if (ours) {
		irq_counter = now;
		fired = FIRED_SAMPLE;
	} else if (watchdog) {
		fired = FIRED_WATCHDOG;
	}
}

static void lat_wait(const struct lat_test *t)
{
	if (t->wfi)
		lat_wait_wfi(&fired);
	else if (t->source == SRC_SGI)
		lat_wait_busy_yield(&fired);    /* the sender needs its turn under icount */
	else
		lat_wait_busy(&fired);
}

static void run_samples(const struct lat_test *t, const struct lat_config *cfg)
{
	bool phys = t->source == SRC_PTIMER;

	active_intid = phys ? INTID_PTIMER : INTID_VTIMER;
	active_source = t->source;
	gic_enable_private(active_intid);
	write_sysreg(vbar_el1, (uintptr_t)(phys ? lat_vectors_phys : lat_vectors_virt));
	isb();

	for (unsigned i = 0; i < cfg->samples; i++) {
		uint64_t deadline;

		fired = FIRED_NONE;
		if (phys) {
			deadline = counter_phys() + cfg->delta_ticks;
			ptimer_arm(deadline);
		} else {
			deadline = counter_virt() + cfg->delta_ticks;
			vtimer_arm(deadline);
		}
		lat_wait(t);
		samples[i] = clamp32((int64_t)(irq_counter - deadline));
	}

	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();
}

static void sleep_until(uint64_t deadline)
{
	active_intid = INTID_VTIMER;
	active_source = SRC_VTIMER;
	gic_enable_private(INTID_VTIMER);
	write_sysreg(vbar_el1, (uintptr_t)lat_vectors_virt);
	isb();
	fired = FIRED_NONE;
	vtimer_arm(deadline);
	lat_wait_wfi(&fired);
	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();
}

/*
 * lat.start_delay_us: sleep (WFI, virtual timer) before the first test, e.g. until a neighbour
 * partition is up and busy. The counter when measuring starts is printed as LAT-START.
 * lat.notice_us: print LAT-SOON that long before measuring starts, so that a tool watching the
 * console can switch on instruction tracing in time (the sleep is split, its end unchanged).
 */
static void start_delay(unsigned long us, unsigned long notice_us)
{
	uint64_t end = counter_virt() + us_to_ticks(us);

	if (notice_us && notice_us < us) {
		sleep_until(end - us_to_ticks(notice_us));
		printf("LAT-SOON {\"counter\":%lu,\"notice_us\":%lu}\n",
		       (unsigned long)counter_virt(), notice_us);
	}
	sleep_until(end);
	printf("LAT-START {\"counter\":%lu,\"start_delay_us\":%lu}\n",
	       (unsigned long)counter_virt(), us);
}

/*
 * The IPI tests' handshake. Every variable has one writer: with the MMU off there are no
 * exclusives to build a lock on. Each side stores its data, then (after a barrier) the flag
 * that covers it. Sample `seq` (from 1): CPU 0 arms its watchdog, sets rx_seq = seq and waits;
 * CPU 1 sees it, sleeps the delay so that CPU 0 has settled in its wait, takes t_send, sends,
 * takes t_after, stores both and then tx_seq = seq.
 */
static volatile uint32_t rx_seq, rx_stop;       /* CPU 0 */
static volatile uint64_t sgi_delay_ticks;       /* CPU 0, before CPU 1 starts */
static volatile uint32_t tx_run;                /* CPU 1: the run (context id) it serves */
static volatile uint32_t tx_seq;                /* CPU 1 */
static volatile uint64_t tx_send, tx_after;     /* CPU 1 */

/* CPU 1's interrupts come through the library's vectors: only its own wake-up timer. */
static void sender_irq(struct exc_frame *frame)
{
	(void)frame;
	uint32_t intid = gic_ack();

	/*
	 * Only a timer that fired: an interrupt of the deadline it already saw pass can still
	 * come after it armed the next (a hypervisor's list register keeps it pending when the
	 * line drops), and stopping the timer then left it asleep for ever.
	 */
	if (intid == INTID_VTIMER && (read_sysreg(cntv_ctl_el0) & CNT_CTL_ISTATUS))
		vtimer_stop();
	if (intid < 1020)
		gic_eoi(intid);
}

/*
 * The sender waits in WFI on its own timer rather than spinning. Under icount QEMU runs the
 * emulated cores in turns that each last until the next timer deadline: a spinning sender
 * would hold up the receiver for all of it, a sleeping one keeps the turns short.
 */
static void sender_sleep(uint64_t ticks)
{
	vtimer_sleep_until(counter_virt() + ticks);
}

static void sgi_sender(uint64_t run)
{
	const uint64_t sgi1r = SGI1R_INTID(SGI_LAT) | SGI1R_TARGET(SGI_RECEIVER);

	gic_enable_private(INTID_VTIMER);
	tx_seq = 0;
	dsb_sy();
	tx_run = (uint32_t)run;
	for (uint32_t seq = 1;; seq++) {
		while (rx_seq < seq && !rx_stop)
			sender_sleep(sgi_delay_ticks);
		if (rx_stop)
			return;         /* the library calls CPU_OFF */
		sender_sleep(sgi_delay_ticks);

		uint64_t t_send = counter_virt();
		write_sysreg(icc_sgi1r_el1, sgi1r);
		uint64_t t_after = counter_virt();

		tx_send = t_send;
		tx_after = t_after;
		dsb_sy();
		tx_seq = seq;
	}
}

/* Spin with yield (it hands the turn to the other core under icount) until *flag >= want. */
static bool wait_flag(const volatile uint32_t *flag, uint32_t want, uint64_t deadline)
{
	while (*flag < want) {
		if (deadline_passed(deadline))
			return false;
		cpu_relax();
	}
	return true;
}

struct sgi_result {
	const char *error;      /* 0 if every sample arrived */
	int32_t cpu_on;         /* what PSCI CPU_ON returned */
	unsigned done;          /* samples taken */
	struct sender_stats sender;
};

/* Let CPU 1 finish (it calls CPU_OFF) so the next IPI test can start it again. */
static bool stop_sender(void)
{
	uint64_t deadline = deadline_after_us(SGI_WAIT_US);

	dsb_sy();
	rx_stop = 1;
	while (psci_affinity_info(SGI_SENDER) != PSCI_AFFINITY_OFF) {
		if (deadline_passed(deadline))
			return false;
		cpu_relax();
	}
	return true;
}

static void run_sgi_samples(const struct lat_test *t, const struct lat_config *cfg,
			    struct sgi_result *r)
{
	static uint32_t run;
	uint64_t watchdog = us_to_ticks(cfg->delta_us * 2 + SGI_WAIT_US);
	int64_t cost_sum = 0;

	r->error = 0;
	r->done = 0;
	rx_seq = 0;
	rx_stop = 0;
	sgi_delay_ticks = cfg->delta_ticks;
	active_intid = SGI_LAT;
	active_source = SRC_SGI;
	gic_enable_private(SGI_LAT);
	gic_enable_private(INTID_PTIMER);
	exceptions_set_irq_handler(sender_irq);

	r->cpu_on = cpu_start(SGI_SENDER, sgi_sender, ++run);
	if (r->cpu_on != PSCI_SUCCESS) {
		r->error = "cpu 1 not started: CPU_ON failed";
		return;
	}
	if (!wait_flag(&tx_run, run, deadline_after_us(SGI_WAIT_US))) {
		r->error = "cpu 1 not started: it did not report in";
		stop_sender();
		return;
	}

	write_sysreg(vbar_el1, (uintptr_t)lat_vectors_virt);
	isb();
	for (unsigned i = 0; i < cfg->samples; i++) {
		fired = FIRED_NONE;
		ptimer_arm(counter_phys() + watchdog);
		rx_seq = i + 1;
		lat_wait(t);
		ptimer_stop();
		if (fired != FIRED_SAMPLE) {
			r->error = "sgi not received";
			break;
		}
		if (!wait_flag(&tx_seq, i + 1, deadline_after_us(SGI_WAIT_US))) {
			r->error = "cpu 1 did not report its send time";
			break;
		}
		samples[i] = clamp32((int64_t)(irq_counter - tx_send));

		sender_add(&r->sender, &cost_sum, i, (int64_t)(tx_after - tx_send));
		r->done++;
	}
	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();

	if (!stop_sender() && !r->error)
		r->error = "cpu 1 did not turn off";
	exceptions_set_irq_handler(0);
	if (r->done)
		r->sender.avg_x100 = div_round(cost_sum * 100, r->done);
}

/*
 * The device tests. Set up once per test: the host bridge and the device from the device
 * tree and configuration space, BAR0 from the 32-bit window, INTx through the interrupt-map
 * to an SPI routed to this CPU. Per sample: arm the watchdog, take t_send, write the raise
 * register, take t_after, wait; the handler acknowledges in the device before EOI.
 */
struct edu_result {
	const char *error;      /* 0 if every sample arrived */
	unsigned done;          /* samples taken */
	bool found;             /* bdf is valid */
	uint32_t bdf;
	uint32_t id;            /* identification register */
	uint64_t bar, bar_size; /* BAR0, as the CPU sees it */
	unsigned pin;
	int intid;              /* -1 until resolved */
	int64_t status;         /* interrupt status when the watchdog fired, else -1 */
	struct sender_stats sender;
};

static const char *edu_setup(struct edu_result *r)
{
	struct pci_host host;

	if (!pci_host_init(&host))
		return "no PCI host bridge in the device tree";
	if (!pci_find(&host, EDU_VENDOR, EDU_DEVICE, &r->bdf))
		return "edu device not found";
	r->found = true;
	if (!pci_assign_bar(&host, r->bdf, EDU_BAR, &r->bar, &r->bar_size) || r->bar_size < 0x80)
		return "edu BAR0 not assigned";
	r->id = mmio_read32((uintptr_t)r->bar + EDU_ID);
	if ((r->id & 0xff) != 0xed)
		return "edu identification register wrong";
	r->pin = pci_intx_pin(&host, r->bdf);
	r->intid = r->pin ? pci_intx_intid(&host, r->bdf, r->pin) : -1;
	if (r->intid < 0)
		return "edu interrupt not in interrupt-map";

	/* Nothing left raised from before; then the SPI, level-triggered as INTx is. */
	edu_regs = (uintptr_t)r->bar;
	mmio_write32(edu_regs + EDU_INT_ACK, ~0u);
	gic_spi_set_group1((unsigned)r->intid);
	gic_spi_set_priority((unsigned)r->intid, GIC_DEFAULT_PRIORITY);
	gic_spi_set_trigger((unsigned)r->intid, false);
	gic_spi_route_to_self((unsigned)r->intid);
	gic_spi_enable((unsigned)r->intid);
	return 0;
}

/*
 * t_send, the 32-bit write of `bit` to the raise register (plain base register, so that a
 * trapped write has a valid syndrome), t_after: nothing else between the counter reads.
 */
static inline void edu_raise(uintptr_t raise, uint32_t bit, uint64_t *t_send,
			     uint64_t *t_after)
{
	uint64_t send, after;

	__asm__ volatile("isb\n\t"
			 "mrs %0, cntvct_el0\n\t"
			 "str %w3, [%2]\n\t"
			 "isb\n\t"
			 "mrs %1, cntvct_el0"
			 : "=&r"(send), "=&r"(after) : "r"(raise), "r"(bit) : "memory");
	*t_send = send;
	*t_after = after;
}

static void run_edu_samples(const struct lat_test *t, const struct lat_config *cfg,
			    struct edu_result *r)
{
	uint64_t watchdog = us_to_ticks(EDU_WAIT_US);
	int64_t cost_sum = 0;
	uintptr_t raise;

	r->done = 0;
	r->found = false;
	r->intid = -1;
	r->status = -1;
	r->error = edu_setup(r);
	if (r->error)
		return;

	raise = edu_regs + EDU_INT_RAISE;
	active_intid = (uint32_t)r->intid;
	active_source = SRC_EDU;
	gic_enable_private(INTID_PTIMER);
	write_sysreg(vbar_el1, (uintptr_t)lat_vectors_virt);
	isb();
	for (unsigned i = 0; i < cfg->samples; i++) {
		fired = FIRED_NONE;
		ptimer_arm(counter_phys() + watchdog);
		uint64_t t_send, t_after;
		edu_raise(raise, EDU_INT_BIT, &t_send, &t_after);
		lat_wait(t);
		ptimer_stop();
		if (fired != FIRED_SAMPLE) {
			/* Raised in the device (1) but not delivered, or not even raised (0)? */
			r->status = mmio_read32(edu_regs + EDU_INT_STATUS);
			r->error = "device interrupt not received";
			break;
		}
		samples[i] = clamp32((int64_t)(irq_counter - t_send));

		sender_add(&r->sender, &cost_sum, i, (int64_t)(t_after - t_send));
		r->done++;
	}
	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();

	/* Leave nothing behind for the next test: the SPI off, the line low. */
	gic_spi_disable((unsigned)r->intid);
	mmio_write32(edu_regs + EDU_INT_ACK, ~0u);
	active_intid = GIC_SPURIOUS;
	if (r->done)
		r->sender.avg_x100 = div_round(cost_sum * 100, r->done);
}

/*
 * The channel test: a ping-pong over channel lat.chan between two partitions that both run
 * it. Member 0, the pinger, writes a message holding its counter (t_send), rings member 1 and
 * waits in WFI for member 1's answer: a sample of `chan-rtt` is (counter at its vector) -
 * t_send. Member 1, the ponger, answers in its doorbell handler: a sample of `doorbell` is
 * (counter at its vector) - the t_send in the message, the one-way latency; it replies with
 * the same message and rings member 0. The virtual counter is the same on every core (Tern
 * keeps CNTVOFF_EL2 at 0), so the two partitions' readings compare.
 */
#define CHAN_WAIT_US    1000000         /* the watchdog's allowance per sample */
#define CHAN_START_US   20000000        /* for the peer to boot and open the channel */
#define CHAN_POLL_US    100             /* the sleep between looks at the peer */
#define CHAN_PINGER     0
#define CHAN_PONGER     1

extern char lat_vectors_chan[];
void lat_chan_irq(uint64_t now);

static struct channel chan;
static struct channel_queue chan_tx, chan_rx;
static volatile uint32_t chan_answered;         /* the ponger's samples */
static uint32_t chan_samples;

struct chan_result {
	const char *error;      /* 0 if every sample arrived */
	unsigned done;
	bool found;             /* chan is valid */
	struct sender_stats sender;     /* the pinger's ring: its one trapped store */
};

/* The ponger's answer to every message waiting, `now` being its vector's counter. */
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

/* The doorbell is edge-triggered: EOI first, so that a ring while answering is not lost. */
void lat_chan_irq(uint64_t now)
{
	uint32_t intid = gic_ack();

	if (intid == INTID_PTIMER)
		ptimer_stop();
	else if (intid == INTID_VTIMER)
		vtimer_stop();
	if (intid < 1020)
		gic_eoi(intid);
	if (intid == chan.irq) {
		if (chan.self == CHAN_PONGER)
			chan_answer(now);
		irq_counter = now;
		fired = FIRED_SAMPLE;
	} else if (intid == INTID_PTIMER) {
		fired = FIRED_WATCHDOG;
	}
}

/* The channel from the device tree, its doorbell as an edge-triggered SPI to this CPU. */
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
	if (chan.irq < 32 || chan.irq >= 1020)
		return "doorbell interrupt is not an SPI";
	/* The doorbell on before the peer may ring it, that is before the channel opens. */
	gic_spi_set_group1(chan.irq);
	gic_spi_set_priority(chan.irq, GIC_DEFAULT_PRIORITY);
	gic_spi_set_trigger(chan.irq, true);
	gic_spi_route_to_self(chan.irq);
	gic_spi_enable(chan.irq);
	if (!channel_open(&chan, &chan_tx, &chan_rx))
		return "channel cannot carry queues (read-only or too small)";
	return 0;
}

/*
 * One watchdog (EL1 physical timer) for the whole run rather than one per sample: the
 * pinger arms nothing while it measures, and neither side has timer work between samples.
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
		vtimer_sleep_until(counter_virt() + us_to_ticks(CHAN_POLL_US));
	}
	for (unsigned i = 0; i < cfg->samples; i++) {
		struct channel_msg msg = { { 0 } };
		uint64_t t_send;

		fired = FIRED_NONE;
		msg.word[0] = i + 1;
		t_send = counter_virt();
		msg.word[1] = t_send;
		if (!channel_send(&chan_tx, &msg))
			return "queue to member 1 full";
		uint64_t t_ring = counter_virt();
		channel_ring(&chan, CHAN_PONGER);
		uint64_t t_rung = counter_virt();
		lat_wait_wfi(&fired);
		if (fired != FIRED_SAMPLE)
			return "no answer from member 1";
		if (!channel_recv(&chan_rx, &msg) || msg.word[0] != i + 1)
			return "answer from member 1 missing or out of order";
		samples[i] = clamp32((int64_t)(irq_counter - t_send));
		sender_add(&r->sender, &cost_sum, i, (int64_t)(t_rung - t_ring));
		r->done++;
	}
	if (r->done)
		r->sender.avg_x100 = div_round(cost_sum * 100, r->done);
	return 0;
}

static const char *chan_pong(const struct lat_config *cfg, struct chan_result *r)
{

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
		vtimer_sleep_until(counter_virt() + us_to_ticks(CHAN_POLL_US));
}

static void run_chan_samples(const struct lat_config *cfg, struct chan_result *r)
{
	r->done = 0;
	r->found = false;
	r->sender = (struct sender_stats){ 0, 0, 0 };
	chan_answered = 0;
	chan_samples = cfg->samples;
	chan.irq = GIC_SPURIOUS;
	active_source = SRC_CHAN;
	active_intid = GIC_SPURIOUS;
	gic_enable_private(INTID_VTIMER);
	gic_enable_private(INTID_PTIMER);
	write_sysreg(vbar_el1, (uintptr_t)lat_vectors_chan);
	isb();
	r->error = chan_setup(r);
	if (!r->error) {
		ptimer_arm(counter_phys() + chan_watchdog(cfg));
		r->error = chan.self == CHAN_PINGER ? chan_ping(cfg, r) : chan_pong(cfg, r);
		ptimer_stop();
		if (!r->error && chan.self == CHAN_PONGER)
			chan_pong_finish();
	}
	if (r->found && chan.irq != GIC_SPURIOUS)
		gic_spi_disable(chan.irq);
	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();
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
		printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
		       "\"done\":%u,\"error\":\"%s\"}\n", shown.name, t->timer, t->wait,
		       cfg->samples, r->done, r->error);
		return;
	}
	compute_stats(cfg, &s);
	printf("lat: %s: channel %s, member %u of %u, doorbell INTID %u (edge), %s, %s wait, "
	       "%u samples, warm-up %u\n", shown.name, chan.name, chan.self, chan.members,
	       chan.irq, chan.self == CHAN_PINGER ? "round trip to member 1 and back"
						 : "one way from member 0",
	       t->wait, cfg->samples, cfg->warmup);
	print_summary(shown.name, &s, timer_freq());
	print_histogram(shown.name, &s);
	if (chan.self == CHAN_PINGER) {
		printf("lat: %s: sender AVG ", shown.name);
		print_x100(r->sender.avg_x100);
		printf(" MIN %ld MAX %ld (ticks from before to after its doorbell store)\n",
		       r->sender.min, r->sender.max);
	}
	print_json_stats(&shown, cfg, &s, timer_freq());
	if (chan.self == CHAN_PINGER)
		print_json_sender(&r->sender);
	printf(",\"channel\":\"%s\",\"member\":%u,\"intid\":%u}\n", chan.name, chan.self, chan.irq);
}

static void print_bdf(uint32_t bdf)
{
	printf("%02x:%02x.%x", PCI_BDF_BUS(bdf), PCI_BDF_DEV(bdf), PCI_BDF_FN(bdf));
}

/* `sender`: the IPI and device tests; `edu`: the device tests. */
static void print_human(const struct lat_test *t, const struct lat_config *cfg,
			const struct lat_stats *s, const struct sender_stats *sender,
			const struct edu_result *edu)
{
	if (edu) {
		printf("lat: %s: edu ", t->name);
		print_bdf(edu->bdf);
		printf(" (%04x:%04x, id 0x%08x), BAR0 0x%lx + 0x%lx, INT%c = INTID %d (level), "
		       "%s wait, %u samples, warm-up %u\n", EDU_VENDOR, EDU_DEVICE, edu->id,
		       edu->bar, edu->bar_size, 'A' + edu->pin - 1, edu->intid, t->wait,
		       cfg->samples, cfg->warmup);
	} else if (sender)
		printf("lat: %s: SGI from cpu %u to cpu %u, %s wait, %u samples, delay %lu us = "
		       "%lu ticks, warm-up %u\n", t->name, SGI_SENDER, SGI_RECEIVER, t->wait,
		       cfg->samples, cfg->delta_us, cfg->delta_ticks, cfg->warmup);
	else
		printf("lat: %s: %s timer, %s wait, %u samples, delta %lu us = %lu ticks, "
		       "warm-up %u\n", t->name, t->timer, t->wait, cfg->samples, cfg->delta_us,
		       cfg->delta_ticks, cfg->warmup);
	print_summary(t->name, s, timer_freq());
	if (sender) {
		printf("lat: %s: sender AVG ", t->name);
		print_x100(sender->avg_x100);
		printf(" MIN %ld MAX %ld (ticks from before to after %s)\n", sender->min,
		       sender->max, edu ? "the write to edu's raise register"
					: "its ICC_SGI1R_EL1 write");
	}
	print_histogram(t->name, s);
}

static void print_json(const struct lat_test *t, const struct lat_config *cfg,
		       const struct lat_stats *s, const struct sender_stats *sender,
		       const struct edu_result *edu)
{
	print_json_stats(t, cfg, s, timer_freq());
	if (sender)
		print_json_sender(sender);
	if (edu) {
		printf(",\"intid\":%d,\"bdf\":\"", edu->intid);
		print_bdf(edu->bdf);
		printf("\"");
	}
	printf("}\n");
}

static void print_sgi_error(const struct lat_test *t, const struct lat_config *cfg,
			    const struct sgi_result *r)
{
	printf("lat: %s: %s (CPU_ON returned %d, %u of %u samples taken)\n", t->name, r->error,
	       r->cpu_on, r->done, cfg->samples);
	printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
	       "\"done\":%u,\"cpu_on\":%d,\"error\":\"%s\"}\n", t->name, t->timer, t->wait,
	       cfg->samples, r->done, r->cpu_on, r->error);
}

/* As the IPI tests' error record; what is known of the device so far is added. */
static void print_edu_error(const struct lat_test *t, const struct lat_config *cfg,
			    const struct edu_result *r)
{
	printf("lat: %s: %s (%u of %u samples taken", t->name, r->error, r->done, cfg->samples);
	if (r->status >= 0)
		printf("; edu interrupt status %ld", r->status);
	printf(")\n");
	printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
	       "\"done\":%u", t->name, t->timer, t->wait, cfg->samples, r->done);
	if (r->found) {
		printf(",\"bdf\":\"");
		print_bdf(r->bdf);
		printf("\"");
	}
	if (r->intid >= 0)
		printf(",\"intid\":%d", r->intid);
	if (r->status >= 0)
		printf(",\"int_status\":%ld", r->status);
	printf(",\"error\":\"%s\"}\n", r->error);
}

void guest_main(void)
{
	const struct lat_test *selected[MAX_SELECTED];
	struct lat_config cfg;
	struct lat_stats stats;

	/* Boot time as the guest sees it: how long after the board's reset it started. */
	printf("LAT-BOOT {\"entry_counter\":%lu,\"freq_hz\":%lu,\"entry_el\":%u}\n",
	       (unsigned long)entry_time(), (unsigned long)read_sysreg(cntfrq_el0), entry_el());
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

	unsigned count = select_tests(all_tests, NUM_TESTS, selected);
	for (unsigned i = 0; i < count; i++) {
		const struct lat_test *t = selected[i];
		const struct sender_stats *sender = 0;
		const struct edu_result *edu = 0;
		struct sgi_result sgi;
		struct edu_result dev;

		if (t->source == SRC_CHAN) {
			struct chan_result ch;

			run_chan_samples(&cfg, &ch);
			print_chan(t, &cfg, &ch);
			continue;
		}
		if (t->source == SRC_SGI) {
			run_sgi_samples(t, &cfg, &sgi);
			if (sgi.error) {
				print_sgi_error(t, &cfg, &sgi);
				continue;
			}
			sender = &sgi.sender;
		} else if (t->source == SRC_EDU) {
			run_edu_samples(t, &cfg, &dev);
			if (dev.error) {
				print_edu_error(t, &cfg, &dev);
				continue;
			}
			sender = &dev.sender;
			edu = &dev;
		} else {
			run_samples(t, &cfg);
		}
		compute_stats(&cfg, &stats);
		print_human(t, &cfg, &stats, sender, edu);
		print_json(t, &cfg, &stats, sender, edu);
	}
	printf("LAT-DONE\n");
}
