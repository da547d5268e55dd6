/* SPDX-License-Identifier: MIT */
/*
 * The PL011 each partition sees at the board UART address.  Output is collected per line and
 * put, tagged `[name] `, into the partition's console ring: a write never waits for the board
 * UART or for another partition (tern/console.h).
 */
#ifndef TERN_VPL011_H
#define TERN_VPL011_H

#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/spinlock.h>
#include <tern/types.h>

#define VPL011_SIZE 0x1000u
#define VPL011_LINE_MAX 512u /* LAT-JSON lines are ~350 characters */

struct vpl011 {
	struct spinlock lock;          /* the partition's vCPUs print concurrently */
	struct console_ring *out;
	char prefix[TERN_NAME_LEN + 4]; /* "[name] " */
	uint32_t ibrd;                 /* registers the guest sets up and reads back */
	uint32_t fbrd;
	uint32_t lcr_h;
	uint32_t cr;
	uint32_t ifls;
	uint32_t imsc;
	uint32_t dmacr;
	uint32_t line_len;
	char line[VPL011_LINE_MAX];
};

/* A UART whose lines go to `out` as `[name] text`. */
void vpl011_init(struct vpl011 *u, const char *name, struct console_ring *out);
/* Back to its state at power-on (a restart), a half-written line dropped. */
void vpl011_reset(struct vpl011 *u);
uint32_t vpl011_read(struct vpl011 *u, uint32_t offset);
void vpl011_write(struct vpl011 *u, uint32_t offset, uint32_t value);
/* Put a half-written line out (the partition ends). */
void vpl011_flush(struct vpl011 *u);

#endif
