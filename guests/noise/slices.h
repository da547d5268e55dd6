/*
 * noise.mode=slices, the same on both ports: spin reading the board's physical counter and
 * record every jump in it, the times this vCPU did not run (guests/README.md, "noise").
 */
#ifndef GUEST_NOISE_SLICES_H
#define GUEST_NOISE_SLICES_H

#include <stdint.h>

#define SLICES_NAME_MAX 15      /* a partition's name at most */

struct slices_config {
	uint64_t end;                   /* board counter value to stop at; UINT64_MAX: none */
	uint64_t gap_ticks;             /* a difference above this is a gap */
	unsigned long max_gaps;         /* gaps kept (the rest counted) */
	unsigned long slices;           /* stop after this many gaps; 0: no limit */
	char name[SLICES_NAME_MAX + 1];
};

/*
 * The whole mode: the bootargs, the start line, the spin until the end, then the noise-gap
 * and noise-slices lines.  `end` is in the board counter's ticks (the caller converts),
 * UINT64_MAX for none; `counter` names that counter in the start line as the port's users
 * know it.  The caller masks interrupts first: a handler's time would read as a gap.
 */
void slices_start(uint64_t end, const char *counter);
/*
 * A start line's end, then its newline: "until COUNTER END", "COUNT WHAT" (`count` of them),
 * both with " or " between, or "no end".  `end`: UINT64_MAX for none; `count`: 0 for none.
 */
void print_end(const char *counter, uint64_t end, unsigned long count, const char *what);

#endif
