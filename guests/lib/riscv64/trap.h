/* S-mode trap frames and the C side of the trap vector in start.S. */
#ifndef GUEST_RISCV_TRAP_H
#define GUEST_RISCV_TRAP_H

/* Layout shared with start.S: x0-x31 (x0's slot unused), then the trap CSRs. */
#define FRAME_SEPC      256
#define FRAME_SSTATUS   264
#define FRAME_SCAUSE    272
#define FRAME_STVAL     280
#define FRAME_SIZE      288

#ifndef __ASSEMBLER__

#include <stdint.h>

struct trap_frame {
	uint64_t x[32];
	uint64_t sepc;
	uint64_t sstatus;
	uint64_t scause;
	uint64_t stval;
};

_Static_assert(sizeof(struct trap_frame) == FRAME_SIZE, "frame layout");

typedef void (*trap_handler)(struct trap_frame *frame);

/* Handlers start out reporting the trap as fatal and shutting down. */
void trap_set_sync_handler(trap_handler handler);
void trap_set_irq_handler(trap_handler handler);

extern char lib_trap_vector[];

#endif
#endif
