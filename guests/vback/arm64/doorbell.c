#include "../doorbell.h"

#include "arm64.h"
#include "gic.h"

const char *doorbell_setup(uint32_t irq, unsigned index)
{
	(void)index;
	if (irq < 32 || irq >= 1020)
		return "doorbell interrupt is not an SPI";
	irq_disable();
	gic_spi_set_group1(irq);
	gic_spi_set_priority(irq, GIC_DEFAULT_PRIORITY);
	gic_spi_set_trigger(irq, true);
	gic_spi_route_to_self(irq);
	gic_spi_enable(irq);
	return 0;
}

void doorbell_wait(void)
{
	wfi();
}

void doorbell_ack(void)
{
	for (uint32_t intid = gic_ack(); intid < 1020; intid = gic_ack())
		gic_eoi(intid);
}
