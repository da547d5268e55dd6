/*
 * The slices measurement (slices.h): architecture-free but for counter_board(), which each
 * port's timer.h gives as its board's physical counter, the one time every vCPU of a core
 * shares whatever its virtual offset.
 */
#include "slices.h"

#include "bootargs.h"
#include "console.h"
#include "runtime.h"
#include "timer.h"

#define SLICES_DEFAULT_GAP_TICKS        50
#define SLICES_DEFAULT_MAX_GAPS         256
/* A fixed buffer: the loop must not allocate, and a few ms of a shared core fit many times. */
#define SLICES_BUFFER                   1024

struct gap {
	uint64_t from, to;
};

static struct gap gaps[SLICES_BUFFER];

/* Only characters a JSON string holds as they are: the name is printed unescaped. */
static bool name_char(char c)
{
	return c > ' ' && c < 0x7f && c != '"' && c != '\\';
}

static void set_name(char *out, const char *text, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < SLICES_NAME_MAX; i++)
		if (name_char(text[i]))
			out[n++] = text[i];
	out[n] = '\0';
}

/* The slices bootargs. */
static void slices_read_config(struct slices_config *cfg, uint64_t end)
{
	struct strview name;

	cfg->end = end;
	cfg->gap_ticks = bootarg_ulong("noise.gap_ticks", SLICES_DEFAULT_GAP_TICKS, 1, ~0UL);
	cfg->max_gaps = bootarg_ulong("noise.max_gaps", SLICES_DEFAULT_MAX_GAPS, 0, SLICES_BUFFER);
	cfg->slices = bootarg_ulong("noise.slices", 0, 0, ~0UL);
	if (bootarg("noise.name", &name)) {
		set_name(cfg->name, name.p, name.len);
	} else {
		size_t len = 0;

		while (guest_name[len])
			len++;
		set_name(cfg->name, guest_name, len);
	}
}

/* Spin until the end, then print the noise-gap and noise-slices lines. */
static void slices_run(const struct slices_config *cfg)
{
	/* In locals: the stores to gaps[] would otherwise make the loop reload them. */
	const uint64_t end = cfg->end, gap_ticks = cfg->gap_ticks;
	const uint64_t max_gaps = cfg->max_gaps, slices = cfg->slices;
	uint64_t start = counter_board();
	uint64_t prev = start;
	uint64_t count = 0, kept = 0, gap_sum = 0;

	/*
	 * Nothing but the read, the compare and the end test in the loop, so that the step
	 * between two reads stays far below gap_ticks and every gap is time not run.
	 */
	while (prev < end) {
		uint64_t now = counter_board();

		if (now - prev > gap_ticks) {
			if (kept < max_gaps) {
				gaps[kept].from = prev;
				gaps[kept].to = now;
				gap_sum += now - prev;
				kept++;
			}
			count++;
			if (slices && count >= slices) {
				prev = now;
				break;
			}
		}
		prev = now;
	}
	for (uint64_t i = 0; i < kept; i++)
		printf("noise-gap {\"name\":\"%s\",\"i\":%lu,\"from\":%lu,\"to\":%lu}\n", cfg->name,
		       (unsigned long)i, (unsigned long)gaps[i].from, (unsigned long)gaps[i].to);
	printf("noise-slices {\"name\":\"%s\",\"start\":%lu,\"end\":%lu,\"gaps\":%lu,\"kept\":%lu,"
	       "\"ran\":%lu,\"gap_ticks\":%lu}\n", cfg->name, (unsigned long)start,
	       (unsigned long)prev, (unsigned long)count, (unsigned long)kept,
	       (unsigned long)(prev - start - gap_sum), (unsigned long)cfg->gap_ticks);
}

void slices_start(uint64_t end, const char *counter)
{
	struct slices_config sc;

	slices_read_config(&sc, end);
	printf("noise: mode slices, name %s, gaps above %lu ticks, %lu kept, ", sc.name,
	       (unsigned long)sc.gap_ticks, sc.max_gaps);
	print_end(counter, sc.end, sc.slices, "gaps");
	slices_run(&sc);
}

void print_end(const char *counter, uint64_t end, unsigned long count, const char *what)
{
	if (end != UINT64_MAX)
		printf("until %s %lu", counter, (unsigned long)end);
	if (end != UINT64_MAX && count)
		printf(" or ");
	if (count)
		printf("%lu %s", count, what);
	if (end == UINT64_MAX && !count)
		printf("no end");
	console_putc('\n');
}
