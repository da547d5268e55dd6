#include "trap.h"

#include "console.h"
#include "riscv.h"
#include "sbi.h"

void trap_dispatch(struct trap_frame *frame);

static void fatal(struct trap_frame *frame, const char *what)
{
	printf("GUEST-PANIC %s hart=%u scause=0x%lx sepc=0x%lx stval=0x%lx\n", what, cpu_index(),
	       frame->scause, frame->sepc, frame->stval);
	sbi_shutdown();
}

static void default_sync(struct trap_frame *frame)
{
	fatal(frame, "unexpected exception");
}

/* Mask what came so that it cannot come again, and say so. */
static void default_irq(struct trap_frame *frame)
{
	uint64_t cause = frame->scause & ~SCAUSE_IRQ;

	if (cause < 64)
		csr_clear(CSR_SIE, 1UL << cause);
	printf("guest: unexpected interrupt %lu on hart %u, disabled\n", cause, cpu_index());
}

static trap_handler sync_handler = default_sync;
static trap_handler irq_handler = default_irq;

void trap_set_sync_handler(trap_handler handler)
{
	sync_handler = handler ? handler : default_sync;
}

void trap_set_irq_handler(trap_handler handler)
{
	irq_handler = handler ? handler : default_irq;
}

void trap_dispatch(struct trap_frame *frame)
{
	if (frame->scause & SCAUSE_IRQ)
		irq_handler(frame);
	else
		sync_handler(frame);
}
