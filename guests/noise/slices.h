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

/* The slices bootargs; `end` is in the board counter's ticks (the caller converts). */
void slices_read_config(struct slices_config *cfg, uint64_t end);

/* Spin until the end, then print the noise-gap and noise-slices lines. */
void slices_run(const struct slices_config *cfg);

#endif
