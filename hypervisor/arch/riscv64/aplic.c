/* SPDX-License-Identifier: MIT */
/*
 * The board's APLIC: its supervisor-level domain delivers by MSI, and only the hypervisor
 * writes its target registers (the console's input here; the partitions' wired sources
 * through their virtual APLICs, vaplic.c).
 */
#include <arch/aplic.h>
#include <arch/imsic.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/platform.h>

static uint32_t console_source;

/* Off while its configuration and target change, as the APLIC specification advises. */
void aplic_route(uint32_t s, uint32_t sm, uint32_t target, bool enable)
{
	aplic_write(CLRIENUM, s);
	aplic_write(aplic_source_reg(SOURCECFG, s), sm);
	aplic_write(aplic_source_reg(TARGET, s), target);
	if (enable && sm != 0u)
		aplic_write(SETIENUM, s);
}

uint32_t aplic_target(uint32_t pcpu, uint32_t guest_file, uint32_t eiid)
{
	return (pcpu << TARGET_HART_SHIFT) | (guest_file << TARGET_GUEST_SHIFT) | eiid;
}

void aplic_init(void)
{
	aplic_write(DOMAINCFG, DOMAINCFG_IE);
}

/* The console's input: the UART's level-high line into the console core's own file. */
void arch_hyp_irq_route(uint32_t intid, unsigned pcpu)
{
	console_source = intid;
	aplic_route(intid, SM_LEVEL_HIGH, aplic_target(pcpu, 0, EIID_CONSOLE), true);
}

static bool source_input(uint32_t s)
{
	return (aplic_read(IN_CLRIP + 4u * (s / 32u)) >> (s % 32u)) & 1u;
}

/*
 * Make source s pending on the board.  A level source can be pending only while its input is
 * high, as the APLIC specification has it: QEMU 7.2's APLIC does not check, so it is done here.
 */
void aplic_set_pending(uint32_t s, bool level)
{
	if (!level || source_input(s))
		aplic_write(SETIPNUM, s);
}

/*
 * A doorbell: the source pending, as its device's edge would make it; the domain sends it
 * wherever its owner's settings route it.  The ringing guest's stores to the shared memory
 * come first for whoever takes the interrupt.
 */
void arch_irq_raise(uint32_t irq)
{
	fence_rw_rw();
	aplic_write(SETIPNUM, irq);
}

/*
 * A trap-and-inject partition's sources reach it through the hypervisor too, but that path has
 * no hook for a VirtIO slot yet: its completions come with a kick (virtio_backend_rang).
 */
bool arch_irq_hypervisor_first(struct partition *p, uint32_t irq)
{
	(void)p;
	(void)irq;
	return false;
}

/* A level source is sent once per rising edge: a line still high after draining goes again. */
void aplic_console_retrigger(void)
{
	aplic_set_pending(console_source, true);
}

