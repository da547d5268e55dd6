/*
 * Interference for a neighbouring partition: streams memory (a load and a store per word
 * over a buffer) while its own virtual timer interrupts it every irq_us, in bursts separated
 * by WFI gaps (burst), without gaps (spin), or only the gaps (idle). Or, with no load at all,
 * the times it does not run (slices: slices.c).
 */
#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "fdt.h"
#include "gic.h"
#include "runtime.h"
#include "slices.h"
#include "timer.h"

const char guest_name[] = "noise";

#define REPORT_BURSTS   100             /* at most one progress line per this many bursts */
#define REPORT_US       1000000         /* ... and per this much counter time */
#define CHUNK_WORDS     32              /* words streamed between two looks at the counter */
#define NO_END          UINT64_MAX

enum noise_mode { MODE_BURST, MODE_SPIN, MODE_IDLE, MODE_SLICES };
static const char *const mode_names[] = { "burst", "spin", "idle", "slices" };

struct noise_config {
	enum noise_mode mode;
	unsigned long irq_us, burst_us, gap_us, mem_kib;
	uint64_t irq_ticks;             /* 0: no periodic interrupt */
	uint64_t burst_ticks, gap_ticks;
	uint64_t end;                   /* counter value to stop at, or NO_END */
	unsigned long max_bursts;       /* 0: no limit */
	volatile uint64_t *buf;
	size_t words;
};

struct noise_counts {
	uint64_t bursts, bytes;
};

extern char _end[];

/* Written by the IRQ handler, read by the main loop: one CPU, so volatile is enough. */
static volatile uint64_t irqs;
static volatile uint64_t period;        /* ticks between timer interrupts; 0: one-shot */

static void noise_irq(struct exc_frame *frame)
{
	(void)frame;
	uint32_t intid = gic_ack();

	/*
	 * Under a hypervisor an interrupt injected just before the timer was
	 * stopped or re-armed can still arrive: act only if the timer really
	 * fired (ISTATUS), as Linux does.
	 */
	if (intid == INTID_VTIMER && (read_sysreg(cntv_ctl_el0) & CNT_CTL_ISTATUS)) {
		irqs++;
		if (period) {
			/* A fixed rate, but never a deadline already past: no interrupt storm. */
			uint64_t next = read_sysreg(cntv_cval_el0) + period;
			uint64_t now = counter_virt();
			write_sysreg(cntv_cval_el0, next > now ? next : now + period);
			isb();  /* the level drops before the EOI below */
		} else {
			vtimer_stop();
		}
	}
	if (intid < 1020)
		gic_eoi(intid);
}

/* us * freq / 1e6 without overflowing for long runs. */
static uint64_t ticks_from_us(uint64_t us)
{
	uint64_t freq = timer_freq();
	return us / 1000000 * freq + us % 1000000 * freq / 1000000;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void periodic_start(uint64_t ticks)
{
	period = ticks;
	if (ticks)
		vtimer_arm(counter_virt() + ticks);
}

static void periodic_stop(void)
{
	vtimer_stop();
	period = 0;
}

/* Load and store every word from *pos on, wrapping around, until the counter reaches `until`. */
static uint64_t stream_until(const struct noise_config *cfg, size_t *pos, uint64_t until)
{
	uint64_t bytes = 0;
	size_t i = *pos;

	while (counter_virt() < until) {
		for (unsigned n = 0; n < CHUNK_WORDS; n++) {
			cfg->buf[i] += 1;       /* volatile: one load, one store */
			if (++i == cfg->words)
				i = 0;
		}
		bytes += CHUNK_WORDS * sizeof(uint64_t);
	}
	*pos = i;
	return bytes;
}

/* WFI until `deadline`; with period 0 the handler stops the one-shot timer. */
static void sleep_until(uint64_t deadline)
{
	period = 0;
	vtimer_sleep_until(deadline);
}

static bool finished(const struct noise_config *cfg, const struct noise_counts *c)
{
	return (cfg->max_bursts && c->bursts >= cfg->max_bursts) || counter_virt() >= cfg->end;
}

static void report(const struct noise_config *cfg, const struct noise_counts *c)
{
	printf("NOISE-JSON {\"mode\":\"%s\",\"bursts\":%lu,\"irqs\":%lu,\"bytes\":%lu}\n",
	       mode_names[cfg->mode], c->bursts, irqs, c->bytes);
}

/*
 * Spin mode is a run of back-to-back bursts with the timer left running; idle is the gaps
 * alone (no streaming, no periodic timer: see read_config).
 */
static void run(const struct noise_config *cfg, struct noise_counts *c)
{
	bool gaps = cfg->mode != MODE_SPIN;
	uint64_t reported_bursts = 0, reported_at = counter_virt();
	size_t pos = 0;

	irq_disable();
	if (!gaps)
		periodic_start(cfg->irq_ticks);
	while (!finished(cfg, c)) {
		uint64_t burst_end = min_u64(counter_virt() + cfg->burst_ticks, cfg->end);

		if (gaps)
			periodic_start(cfg->irq_ticks);
		irq_enable();
		c->bytes += stream_until(cfg, &pos, burst_end);
		irq_disable();
		if (gaps)
			periodic_stop();
		c->bursts++;
		if (finished(cfg, c))
			break;          /* no gap after the last burst */

		if (gaps)
			sleep_until(min_u64(counter_virt() + cfg->gap_ticks, cfg->end));
		if (c->bursts - reported_bursts >= REPORT_BURSTS &&
		    counter_virt() - reported_at >= ticks_from_us(REPORT_US)) {
			report(cfg, c);
			reported_bursts = c->bursts;
			reported_at = counter_virt();
		}
	}
	periodic_stop();
}

/* The buffer goes after the image, or after the device tree if that is in the way. */
static bool place_buffer(struct noise_config *cfg)
{
	uintptr_t dtb;
	uint32_t dtb_size;
	uint64_t ram_end = ram_base() + ram_size();
	uint64_t want = (uint64_t)cfg->mem_kib * 1024;
	uint64_t start = ((uintptr_t)_end + 4095) & ~(uint64_t)4095;

	fdt_extent(&dtb, &dtb_size);
	if (dtb_size && start < dtb + dtb_size && dtb < start + want)
		start = (dtb + dtb_size + 4095) & ~(uint64_t)4095;
	if (start >= ram_end || ram_end - start < 1024) {
		printf("noise: no RAM for a buffer after 0x%lx (ram 0x%lx+0x%lx)\n",
		       (unsigned long)start, ram_base(), ram_size());
		return false;
	}
	if (ram_end - start < want) {
		unsigned long fits = (unsigned long)((ram_end - start) / 1024);
		printf("noise: noise.mem_kib=%lu does not fit in RAM 0x%lx+0x%lx: using %lu KiB\n",
		       cfg->mem_kib, ram_base(), ram_size(), fits);
		cfg->mem_kib = fits;
	}
	cfg->buf = (volatile uint64_t *)(uintptr_t)start;
	cfg->words = cfg->mem_kib * 1024 / sizeof(uint64_t);
	return true;
}

static void read_config(struct noise_config *cfg)
{
	struct strview mode;
	uint64_t start = counter_virt();

	cfg->mode = MODE_BURST;
	if (bootarg("noise.mode", &mode)) {
		if (strview_eq(mode, "spin"))
			cfg->mode = MODE_SPIN;
		else if (strview_eq(mode, "idle"))
			cfg->mode = MODE_IDLE;
		else if (strview_eq(mode, "slices"))
			cfg->mode = MODE_SLICES;
		else if (!strview_eq(mode, "burst"))
			printf("noise: unknown noise.mode, using burst\n");
	}
	cfg->irq_us = bootarg_ulong("noise.irq_us", 5, 0, 1000000);
	cfg->burst_us = bootarg_ulong("noise.burst_us", 50, 0, 1000000000);
	cfg->gap_us = bootarg_ulong("noise.gap_us", 200, 0, 1000000000);
	cfg->mem_kib = bootarg_ulong("noise.mem_kib", 1024, 1, 4UL << 20);
	if (cfg->mode == MODE_IDLE)
		cfg->irq_us = cfg->burst_us = 0;
	cfg->irq_ticks = ticks_from_us(cfg->irq_us);
	if (cfg->irq_us && !cfg->irq_ticks)
		cfg->irq_ticks = 1;
	cfg->burst_ticks = ticks_from_us(cfg->burst_us);
	cfg->gap_ticks = ticks_from_us(cfg->gap_us);

	/* Any end given applies; with none the load runs until the board is switched off. */
	cfg->end = NO_END;
	unsigned long seconds = bootarg_ulong("noise.seconds", 0, 0, 10000000);
	if (seconds)
		cfg->end = start + seconds * timer_freq();
	unsigned long until_us = bootarg_ulong("noise.until_us", 0, 0, 1000000000000UL);
	if (until_us)
		cfg->end = min_u64(cfg->end, ticks_from_us(until_us));
	cfg->max_bursts = bootarg_ulong("noise.bursts", 0, 0, ~0UL);
}

/*
 * The end is the virtual counter's, as the other modes'; slices reads the physical one, a
 * constant offset (CNTVOFF) away.
 */
static void run_slices(const struct noise_config *cfg)
{
	uint64_t end = cfg->end;

	irq_disable();
	if (end != NO_END)
		end += counter_phys() - counter_virt();
	slices_start(end, "physical counter");
}

void guest_main(void)
{
	struct noise_config cfg;
	struct noise_counts counts = { 0, 0 };

	read_config(&cfg);
	if (cfg.mode == MODE_SLICES) {
		run_slices(&cfg);
		printf("NOISE-DONE\n");
		return;
	}
	if (!place_buffer(&cfg)) {
		printf("NOISE-JSON {\"mode\":\"%s\",\"error\":\"no RAM for the buffer\"}\n",
		       mode_names[cfg.mode]);
		printf("NOISE-DONE\n");
		return;
	}
	printf("noise: mode %s, ", mode_names[cfg.mode]);
	if (cfg.irq_us)
		printf("timer every %lu us, ", cfg.irq_us);
	else
		printf("no periodic timer, ");
	printf("bursts of %lu us, gaps of %lu us, buffer 0x%lx + %lu KiB, ", cfg.burst_us,
	       cfg.gap_us, (unsigned long)(uintptr_t)cfg.buf, cfg.mem_kib);
	print_end("counter", cfg.end, cfg.max_bursts, "bursts"); /* NO_END is UINT64_MAX */

	exceptions_set_irq_handler(noise_irq);
	gic_enable_private(INTID_VTIMER);
	run(&cfg, &counts);
	report(&cfg, &counts);
	printf("NOISE-DONE\n");
}
