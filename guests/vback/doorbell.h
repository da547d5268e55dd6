/*
 * The backend's wait for its doorbells (member 0's interrupt of each virtio channel), per
 * port: arm64/doorbell.c (a GIC SPI), riscv64/doorbell.c (an APLIC source). Interrupts stay
 * masked: the backend never takes one through its vectors; WFI returns once one is pending,
 * and doorbell_ack acknowledges what is.
 */
#ifndef VBACK_DOORBELL_H
#define VBACK_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>

/* Doorbell `irq` (GIC INTID / APLIC source) on, edge-triggered, to this CPU; `index` < 8
 * tells the devices apart. 0, or why not. */
const char *doorbell_setup(uint32_t irq, unsigned index);

/* Sleep until an interrupt is pending (at once if one already is). */
void doorbell_wait(void);

/* Acknowledge every pending doorbell: a ring after this raises the interrupt again. */
void doorbell_ack(void);

#endif
