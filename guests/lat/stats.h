/*
 * The latency guest's statistics and result lines, shared by every architecture's lat so
 * that their LAT-JSON records are the same: what each measures is its own (lat.c for arm64,
 * riscv64/lat.c), what it prints of the samples is this.
 *
 * Definitions, not just declarations, included once by each lat.c: arm64's device tests
 * count the guest's own instructions from the raise to the wait, and with these functions in
 * a translation unit of their own the compiler allocates lat.c's registers differently there
 * (one instruction fewer, the recorded figures move).
 */
#ifndef LAT_STATS_H
#define LAT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootargs.h"
#include "console.h"

#define MAX_SAMPLES     10000
#define HIST_BUCKETS    12
#define MAX_SELECTED    16
#define HIST_BAR        40

struct lat_test {
	const char *name;
	const char *timer;      /* the record's "timer": what raises the interrupt */
	const char *wait;       /* "wfi" or "busy" */
	int source;             /* the same, as the architecture's own enum */
	bool wfi;
	bool by_default;        /* run when lat.tests is absent */
};

struct lat_config {
	unsigned samples;
	unsigned warmup;
	unsigned long delta_us;
	uint64_t delta_ticks;
};

struct lat_stats {
	int32_t min, max, warm_max, p50, p99, p999;
	int64_t avg_x100, ema_x100;
	int32_t hist_lo, hist_width;
	unsigned hist_buckets;
	unsigned hist[HIST_BUCKETS];
};

/* The sender's cost, t_after - t_send, over the samples of an IPI or device test. */
struct sender_stats {
	int64_t avg_x100;
	int64_t min, max;
};

/* The current test's samples, filled by the architecture's code. */
static int32_t samples[MAX_SAMPLES];
static int32_t sorted[MAX_SAMPLES];

/* Sample `n` (from 0) of a sender's cost: min and max, and the sum for the average. */
static void sender_add(struct sender_stats *s, int64_t *sum, unsigned n, int64_t cost)
{
	*sum += cost;
	if (n == 0 || cost < s->min)
		s->min = cost;
	if (n == 0 || cost > s->max)
		s->max = cost;
}

static int32_t clamp32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static int64_t div_round(int64_t num, int64_t den)
{
	return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
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

/* Nearest-rank percentile of a sorted array, in tenths of a percent (999 = p99.9). */
static int32_t percentile(const int32_t *sorted_samples, unsigned n, unsigned permille)
{
	unsigned rank = (permille * n + 999) / 1000;
	return sorted_samples[rank ? rank - 1 : 0];
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
	s->p50 = percentile(sorted, n, 500);
	s->p99 = percentile(sorted, n, 990);
	s->p999 = percentile(sorted, n, 999);

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

/* v / 100 with two decimals. */
static void print_x100(int64_t v)
{
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	printf("%s%lu.%02lu", v < 0 ? "-" : "", mag / 100, mag % 100);
}

/* "lat: NAME: AVG .. EMA .. MIN .. MAX .. WARM_MAX .. p50 .. p99 .. p99.9 .. (ticks of F Hz)" */
static void print_summary(const char *name, const struct lat_stats *s, uint64_t freq_hz)
{
	printf("lat: %s: AVG ", name);
	print_x100(s->avg_x100);
	printf(" EMA ");
	print_x100(s->ema_x100);
	printf(" MIN %d MAX %d WARM_MAX %d p50 %d p99 %d p99.9 %d (ticks of %lu Hz)\n", s->min,
	       s->max, s->warm_max, s->p50, s->p99, s->p999, (unsigned long)freq_hz);
}

/* "lat: NAME: LO..HI COUNT ####", one line per bucket. */
static void print_histogram(const char *name, const struct lat_stats *s)
{
	unsigned peak = 1;

	for (unsigned b = 0; b < s->hist_buckets; b++)
		if (s->hist[b] > peak)
			peak = s->hist[b];
	for (unsigned b = 0; b < s->hist_buckets; b++) {
		int32_t lo = s->hist_lo + (int32_t)b * s->hist_width;
		unsigned bar = (s->hist[b] * HIST_BAR + peak - 1) / peak;
		printf("lat: %s: %8d..%-8d %6u ", name, lo, lo + s->hist_width - 1, s->hist[b]);
		for (unsigned i = 0; i < bar; i++)
			console_putc('#');
		console_putc('\n');
	}
}

/*
 * `LAT-JSON {"test":...,"hist":{...}` without the closing brace: the caller adds its own keys
 * (print_json_sender, the device) and ends the line with "}\n".
 */
static void print_json_stats(const struct lat_test *t, const struct lat_config *cfg,
		      const struct lat_stats *s, uint64_t freq_hz)
{
	printf("LAT-JSON {\"test\":\"%s\",\"timer\":\"%s\",\"wait\":\"%s\",\"samples\":%u,"
	       "\"warmup\":%u,\"freq_hz\":%lu,\"unit\":\"ticks\",\"avg\":",
	       t->name, t->timer, t->wait, cfg->samples, cfg->warmup, (unsigned long)freq_hz);
	print_x100(s->avg_x100);
	printf(",\"ema\":");
	print_x100(s->ema_x100);
	printf(",\"min\":%d,\"max\":%d,\"warm_max\":%d,\"p50\":%d,\"p99\":%d,\"p999\":%d,"
	       "\"hist\":{\"lo\":%d,\"width\":%d,\"counts\":[",
	       s->min, s->max, s->warm_max, s->p50, s->p99, s->p999, s->hist_lo, s->hist_width);
	for (unsigned b = 0; b < s->hist_buckets; b++)
		printf("%s%u", b ? "," : "", s->hist[b]);
	printf("]}");
}

static void print_json_sender(const struct sender_stats *sender)
{
	printf(",\"sender\":{\"avg\":");
	print_x100(sender->avg_x100);
	printf(",\"min\":%ld,\"max\":%ld}", sender->min, sender->max);
}

static const struct lat_test *find_test(const struct lat_test *all, unsigned count,
					struct strview name)
{
	for (unsigned i = 0; i < count; i++)
		if (strview_eq(name, all[i].name))
			return &all[i];
	return 0;
}

/* The tests named by lat.tests, in the order given; those `by_default` if it is absent. */
static unsigned select_tests(const struct lat_test *all, unsigned count,
		      const struct lat_test **selected)
{
	struct strview list, item;
	unsigned n = 0;

	if (!bootarg("lat.tests", &list)) {
		for (unsigned i = 0; i < count; i++)
			if (all[i].by_default)
				selected[n++] = &all[i];
		return n;
	}
	while (strview_next_item(&list, &item)) {
		const struct lat_test *t = find_test(all, count, item);
		if (!t) {
			printf("lat: unknown test \"");
			for (size_t i = 0; i < item.len; i++)
				console_putc(item.p[i]);
			printf("\" ignored\n");
		} else if (n < MAX_SELECTED) {
			selected[n++] = t;
		}
	}
	return n;
}

#endif
