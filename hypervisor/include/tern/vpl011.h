/* SPDX-License-Identifier: MIT */
/*
 * The PL011 each partition sees at the board UART address.  Output is
 * collected per line and written to the board UART tagged `[name] `.
 */
#ifndef TERN_VPL011_H
#define TERN_VPL011_H

#include <tern/spinlock.h>
#include <tern/types.h>

#define VPL011_SIZE 0x1000u
#define VPL011_LINE_MAX 512u /* LAT-JSON lines are ~350 characters */

struct vpl011 {
	struct spinlock lock; /* vCPUs of one partition print concurrently */
	uint32_t ibrd, fbrd, lcr_h, cr, ifls, imsc, dmacr;
	uint32_t line_len;
	char line[VPL011_LINE_MAX];
};

struct partition;

uint32_t vpl011_read(struct vpl011 *u, uint32_t offset);
void vpl011_write(struct vpl011 *u, const char *name, uint32_t offset, uint32_t value);
void vpl011_flush(struct vpl011 *u, const char *name);

#endif
