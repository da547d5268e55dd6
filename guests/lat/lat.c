/*
 * Interrupt latency, tbm-style: arm an EL1 timer `delta` ahead, wait, and in the IRQ vector
 * take the counter first thing; a sample is (counter at vector entry) - (deadline), in ticks.
 */
#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "runtime.h"
#include "timer.h"

const char guest_name[] = "lat";

#define MAX_SAMPLES     10000
#define HIST_BUCKETS    12
#define HIST_BAR        40
#define MAX_SELECTED    16

struct lat_test {
	const char *name;
	const char *timer;      /* "virt" or "phys" */
	const char *wait;       /* "wfi" or "busy" */
	bool phys;
	bool wfi;
};

static const struct lat_test all_tests[] = {
	{ "vtimer-wfi",  "virt", "wfi",  false, true },
	{ "vtimer-busy", "virt", "busy", false, false },
	{ "ptimer-wfi",  "phys", "wfi",  true,  true },
	{ "ptimer-busy", "phys", "busy", true,  false },
};
#define NUM_TESTS (sizeof(all_tests) / sizeof(all_tests[0]))

struct lat_config {
	unsigned samples;
	unsigned warmup;
	unsigned long delta_us;
	uint64_t delta_ticks;
};

struct lat_stats {
	int32_t min, max, warm_max, p50, p99;
	int64_t avg_x100, ema_x100;
	int32_t hist_lo, hist_width;
	unsigned hist_buckets;
	unsigned hist[HIST_BUCKETS];
};

extern char lat_vectors_virt[], lat_vectors_phys[];
void lat_wait_wfi(volatile uint32_t *fired);
void lat_wait_busy(volatile uint32_t *fired);
void lat_irq(uint64_t now);

static int32_t samples[MAX_SAMPLES];
static int32_t sorted[MAX_SAMPLES];

/* Shared with lat_irq: which interrupt the current test expects, and what it saw. */
static uint32_t active_intid;
static bool active_phys;
static volatile uint32_t fired;
static volatile uint64_t irq_counter;

void lat_irq(uint64_t now)
{
	uint32_t intid = gic_ack();
	bool ours = intid == active_intid;

	/* Stop the timer before EOI: it is level-triggered and would fire again at once. */
	if (ours) {
		if (active_phys)
			ptimer_stop();
		else
			vtimer_stop();
	}
	if (intid < 1020)
		gic_eoi(intid);
	if (ours) {
		irq_counter = now;
		fired = 1;
	}
}

static int32_t clamp32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static void run_samples(const struct lat_test *t, const struct lat_config *cfg)
{
	active_intid = t->phys ? INTID_PTIMER : INTID_VTIMER;
	active_phys = t->phys;
	gic_enable_private(active_intid);
	write_sysreg(vbar_el1, (uintptr_t)(t->phys ? lat_vectors_phys : lat_vectors_virt));
	isb();

	for (unsigned i = 0; i < cfg->samples; i++) {
		uint64_t deadline;

		fired = 0;
		if (t->phys) {
			deadline = counter_phys() + cfg->delta_ticks;
			ptimer_arm(deadline);
		} else {
			deadline = counter_virt() + cfg->delta_ticks;
			vtimer_arm(deadline);
		}
		if (t->wfi)
			lat_wait_wfi(&fired);
		else
			lat_wait_busy(&fired);
		samples[i] = clamp32((int64_t)(irq_counter - deadline));
	}

	write_sysreg(vbar_el1, (uintptr_t)lib_vectors);
	isb();
}

static void sift_down(int32_t *a, unsigned root, unsigned n)
{
	for (;;) {
		unsigned child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		int32_t tmp = a[root];
		a[root] = a[child];
		a[child] = tmp;
		root = child;
	}
}

static void heapsort(int32_t *a, unsigned n)
{
	for (unsigned i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (unsigned end = n; end-- > 1;) {
		int32_t tmp = a[0];
		a[0] = a[end];
		a[end] = tmp;
		sift_down(a, 0, end);
	}
}

/* Nearest-rank percentile of a sorted array. */
static int32_t percentile(const int32_t *sorted_samples, unsigned n, unsigned pct)
{
	unsigned rank = (pct * n + 99) / 100;
	return sorted_samples[rank ? rank - 1 : 0];
}

static int64_t div_round(int64_t num, int64_t den)
{
	return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
}

static void compute_stats(const struct lat_config *cfg, struct lat_stats *s)
{
	unsigned n = cfg->samples;
	int64_t sum = 0;
	/* The exponential average in 16.16 fixed point: no FP with -mgeneral-regs-only. */
	int64_t ema = (int64_t)samples[0] * 65536;

	s->min = s->max = samples[0];
	s->warm_max = INT32_MIN;
	for (unsigned i = 0; i < n; i++) {
		int32_t v = samples[i];
		sum += v;
		if (i > 0)
			ema += ((int64_t)v * 65536 - ema) / 8;
		if (v < s->min)
			s->min = v;
		if (v > s->max)
			s->max = v;
		if (i >= cfg->warmup && v > s->warm_max)
			s->warm_max = v;
	}
	if (n <= cfg->warmup)
		s->warm_max = s->max;   /* nothing after the warm-up: fall back to the whole run */
	s->avg_x100 = div_round(sum * 100, n);
	s->ema_x100 = div_round(ema * 100, 65536);

	for (unsigned i = 0; i < n; i++)
		sorted[i] = samples[i];
	heapsort(sorted, n);
	s->p50 = percentile(sorted, n, 50);
	s->p99 = percentile(sorted, n, 99);

	/* Width = ceil(range / buckets) so the last bucket still holds max. */
	int64_t span = (int64_t)s->max - s->min + 1;
	s->hist_lo = s->min;
	s->hist_width = (int32_t)((span + HIST_BUCKETS - 1) / HIST_BUCKETS);
	s->hist_buckets = (unsigned)((span - 1) / s->hist_width + 1);
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		s->hist[b] = 0;
	for (unsigned i = 0; i < n; i++)
		s->hist[((int64_t)samples[i] - s->min) / s->hist_width]++;
}

static void print_x100(int64_t v)
{
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	printf("%s%lu.%02lu", v < 0 ? "-" : "", mag / 100, mag % 100);
}

static void print_human(const struct lat_test *t, const struct lat_config *cfg,
			const struct lat_stats *s)
{
	unsigned peak = 1;

	printf("lat: %s: %s timer, %s wait, %u samples, delta %lu us = %lu ticks, "
	       "warm-up %u\n", t->name, t->timer, t->wait, cfg->samples, cfg->delta_us,
	       cfg->delta_ticks, cfg->warmup);
	printf("lat: %s: AVG ", t->name);
	print_x100(s->avg_x100);
	printf(" EMA ");
	print_x100(s->ema_x100);
	printf(" MIN %d MAX %d WARM_MAX %d p50 %d p99 %d (ticks of %lu Hz)\n", s->min, s->max,
	       s->warm_max, s->p50, s->p99, timer_freq());

	for (unsigned b = 0; b < s->hist_buckets; b++)
		if (s->hist[b] > peak)
			peak = s->hist[b];
	for (unsigned b = 0; b < s->hist_buckets; b++) {
		int32_t lo = s->hist_lo + (int32_t)b * s->hist_width;
		unsigned bar = (s->hist[b] * HIST_BAR + peak - 1) / peak;
		printf("lat: %s: %8d..%-8d %6u ", t->name, lo, lo + s->hist_width - 1, s->hist[b]);
		for (unsigned i = 0; i < bar; i++)
			console_putc('#');
		console_putc('\n');
	}
}

static void print_json(const struct lat_test *t, const struct lat_config *cfg,
		       const struct lat_stats *s)
{
	printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
	       "\"warmup\":%u,\"freq_hz\":%lu,\"unit\":\"ticks\",\"avg\":",
	       t->name, t->timer, t->wait, cfg->samples, cfg->warmup, timer_freq());
	print_x100(s->avg_x100);
	printf(",\"ema\":");
	print_x100(s->ema_x100);
	printf(",\"min\":%d,\"max\":%d,\"warm_max\":%d,\"p50\":%d,\"p99\":%d,"
	       "\"hist\":{\"lo\":%d,\"width\":%d,\"counts\":[",
	       s->min, s->max, s->warm_max, s->p50, s->p99, s->hist_lo, s->hist_width);
	for (unsigned b = 0; b < s->hist_buckets; b++)
		printf("%s%u", b ? "," : "", s->hist[b]);
	printf("]}}\n");
}

static const struct lat_test *find_test(struct strview name)
{
	for (unsigned i = 0; i < NUM_TESTS; i++)
		if (strview_eq(name, all_tests[i].name))
			return &all_tests[i];
	return 0;
}

/* The tests named by lat.tests, in the order given; all four if it is absent. */
static unsigned select_tests(const struct lat_test **selected)
{
	struct strview list, item;
	unsigned count = 0;

	if (!bootarg("lat.tests", &list)) {
		for (unsigned i = 0; i < NUM_TESTS; i++)
			selected[count++] = &all_tests[i];
		return count;
	}
	while (strview_next_item(&list, &item)) {
		const struct lat_test *t = find_test(item);
		if (!t) {
			printf("lat: unknown test \"");
			for (size_t i = 0; i < item.len; i++)
				console_putc(item.p[i]);
			printf("\" ignored\n");
		} else if (count < MAX_SELECTED) {
			selected[count++] = t;
		}
	}
	return count;
}

void guest_main(void)
{
	const struct lat_test *selected[MAX_SELECTED];
	struct lat_config cfg;
	struct lat_stats stats;

	cfg.samples = (unsigned)bootarg_ulong("lat.samples", 100, 1, MAX_SAMPLES);
	cfg.warmup = (unsigned)bootarg_ulong("lat.warmup", 8, 0, MAX_SAMPLES);
	cfg.delta_us = bootarg_ulong("lat.delta_us", 20, 1, 1000000);
	cfg.delta_ticks = us_to_ticks(cfg.delta_us);
	if (!cfg.delta_ticks)
		cfg.delta_ticks = 1;

	unsigned count = select_tests(selected);
	for (unsigned i = 0; i < count; i++) {
		run_samples(selected[i], &cfg);
		compute_stats(&cfg, &stats);
		print_human(selected[i], &cfg, &stats);
		print_json(selected[i], &cfg, &stats);
	}
	printf("LAT-DONE\n");
}
