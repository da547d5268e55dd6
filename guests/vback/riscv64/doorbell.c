#include "../doorbell.h"

#include "aplic.h"
#include "imsic.h"
#include "riscv.h"

/* The IMSIC identities the APLIC sends the doorbells as (MSI mode): 1 + the device's index. */
#define ID_DOORBELL     1u

const char *doorbell_setup(uint32_t irq, unsigned index)
{
	static bool have_aplic;

	if (!have_aplic && !aplic_init())
		return "no APLIC in the device tree";
	have_aplic = true;
	irq_disable();
	/* The external interrupt alone wakes the hart from WFI. */
	csr_write(CSR_SIE, SIP_SEIP);
	if (aplic_msi_mode()) {
		if (!imsic_file(cpu_index()))
			return "no IMSIC file for this hart";
		imsic_enable(ID_DOORBELL + index);
	}
	aplic_route_edge(irq, cpu_index(), ID_DOORBELL + index);
	return 0;
}

void doorbell_wait(void)
{
	wfi();
}

void doorbell_ack(void)
{
	if (aplic_msi_mode()) {
		while (imsic_claim())
			;
	} else {
		while (aplic_claim(cpu_index()))
			;
	}
}
