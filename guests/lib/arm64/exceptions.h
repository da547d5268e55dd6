/* EL1 exception frames and the C side of the vector table in start.S. */
#ifndef GUEST_EXCEPTIONS_H
#define GUEST_EXCEPTIONS_H

/* Layout shared with start.S: x0-x30, then the exception registers. */
#define FRAME_ELR       248
#define FRAME_SPSR      256
#define FRAME_ESR       264
#define FRAME_FAR       272
#define FRAME_SIZE      288

#ifndef __ASSEMBLER__

#include <stdint.h>

struct exc_frame {
	uint64_t x[31];
	uint64_t elr;
	uint64_t spsr;
	uint64_t esr;
	uint64_t far;
	uint64_t pad;   /* keeps sp 16-byte aligned */
};

_Static_assert(sizeof(struct exc_frame) == FRAME_SIZE, "frame layout");

/* Vector slots (offset / 0x80) that reach C. */
enum exc_kind {
	EXC_SYNC = 4,   /* current EL with SP_ELx: synchronous */
	EXC_IRQ = 5,    /* current EL with SP_ELx: IRQ */
};

typedef void (*exc_handler)(struct exc_frame *frame);

/* Handlers start out reporting the exception as fatal and powering off. */
void exceptions_set_sync_handler(exc_handler handler);
void exceptions_set_irq_handler(exc_handler handler);

extern char lib_vectors[];

#endif
#endif
