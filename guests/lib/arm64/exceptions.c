#include "exceptions.h"

#include "console.h"
#include "gic.h"
#include "psci.h"

void exception_dispatch(struct exc_frame *frame, unsigned kind);

static void fatal(struct exc_frame *frame, const char *what)
{
	printf("GUEST-PANIC %s cpu=%u esr=0x%lx elr=0x%lx far=0x%lx\n", what, cpu_index(),
	       frame->esr, frame->elr, frame->far);
	psci_system_off();
}

static void default_sync(struct exc_frame *frame)
{
	fatal(frame, "unexpected synchronous exception");
}

static void default_irq(struct exc_frame *frame)
{
	(void)frame;
	uint32_t intid = gic_ack();
	if (intid < 1020) {
		gic_eoi(intid);
		printf("guest: unexpected interrupt %u on cpu %u\n", intid, cpu_index());
	}
}

static exc_handler sync_handler = default_sync;
static exc_handler irq_handler = default_irq;

void exceptions_set_sync_handler(exc_handler handler)
{
	sync_handler = handler ? handler : default_sync;
}

void exceptions_set_irq_handler(exc_handler handler)
{
	irq_handler = handler ? handler : default_irq;
}

void exception_dispatch(struct exc_frame *frame, unsigned kind)
{
	static const char *const names[16] = {
		"sync from EL1t", "irq from EL1t", "fiq from EL1t", "serror from EL1t",
		"sync", "irq", "fiq", "serror",
		"sync from EL0 (64)", "irq from EL0 (64)", "fiq from EL0 (64)", "serror from EL0 (64)",
		"sync from EL0 (32)", "irq from EL0 (32)", "fiq from EL0 (32)", "serror from EL0 (32)",
	};

	if (kind == EXC_SYNC)
		sync_handler(frame);
	else if (kind == EXC_IRQ)
		irq_handler(frame);
	else
		fatal(frame, names[kind & 15]);
}
