/*
 * The initial ramdisk the device tree's /chosen names (linux,initrd-start and -end, one or two
 * cells each): where tern loads a bare-metal VirtIO backend's disk.  Linked by the guests that
 * serve a disk only (vback, the hostile guest's backends), so the others' layout stays.
 */
#ifndef GUEST_INITRD_H
#define GUEST_INITRD_H

#include <stdbool.h>
#include <stdint.h>

/* [*start, *end) of the initrd (fdt_init first); false if /chosen names none. */
bool chosen_initrd(uint64_t *start, uint64_t *end);

#endif
