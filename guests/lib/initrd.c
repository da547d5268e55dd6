/* SPDX-License-Identifier: MIT */
/* The initrd /chosen names (tern places a VirtIO backend's disk there): guests/lib/initrd.h. */
#include "fdt.h"
#include "initrd.h"

bool chosen_initrd(uint64_t *start, uint64_t *end)
{
	uint32_t slen, elen;
	const void *s = fdt_getprop("/chosen", "linux,initrd-start", &slen);
	const void *e = fdt_getprop("/chosen", "linux,initrd-end", &elen);

	if (!s || !e || (slen != 4 && slen != 8) || (elen != 4 && elen != 8))
		return false;
	*start = fdt_read_cells(s, slen / 4);
	*end = fdt_read_cells(e, elen / 4);
	return *end > *start;
}
