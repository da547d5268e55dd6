#include "gic.h"

#include "timer.h"

#define WAIT_US 100000

static uintptr_t redistributor[MAX_CPUS];

/* Bounded so a broken (or emulated) GIC cannot hang boot; the caller reports failure. */
static bool wait_clear(uintptr_t reg, uint32_t bits)
{
	uint64_t deadline = deadline_after_us(WAIT_US);

	while (mmio_read32(reg) & bits)
		if (deadline_passed(deadline))
			return false;
	return true;
}

void gic_init_distributor(void)
{
	uint32_t ctlr = mmio_read32(GICD_BASE + GICD_CTLR);

	/* Changing ARE with a group enabled is UNPREDICTABLE, so disable first. */
	if (!(ctlr & GICD_CTLR_ARE)) {
		mmio_write32(GICD_BASE + GICD_CTLR, 0);
		wait_clear(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP);
		mmio_write32(GICD_BASE + GICD_CTLR, GICD_CTLR_ARE);
		wait_clear(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP);
	}
	mmio_write32(GICD_BASE + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENABLE_GRP1);
	wait_clear(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP);
}

static uintptr_t find_redistributor(void)
{
	uint64_t mpidr = read_sysreg(mpidr_el1);
	/* GICR_TYPER[63:32] holds Aff3.Aff2.Aff1.Aff0. */
	uint64_t want = ((mpidr >> 32) & 0xff) << 24 | (mpidr & 0xffffff);

	for (unsigned i = 0; i < 4 * MAX_CPUS; i++) {
		uintptr_t rd = GICR_BASE + i * GICR_STRIDE;
		uint64_t typer = mmio_read64(rd + GICR_TYPER);
		if ((typer >> 32) == want)
			return rd;
		/* Stop at the last frame: past it there may be nothing mapped at all. */
		if (typer & GICR_TYPER_LAST)
			break;
	}
	return 0;
}

bool gic_init_cpu(void)
{
	uintptr_t rd = find_redistributor();
	bool ok = rd != 0;

	if (rd) {
		uint32_t waker = mmio_read32(rd + GICR_WAKER);
		mmio_write32(rd + GICR_WAKER, waker & ~GICR_WAKER_SLEEP);
		ok = wait_clear(rd + GICR_WAKER, GICR_WAKER_ASLEEP);

		mmio_write32(rd + GICR_IGROUPR0, 0xffffffff);
		uint32_t prio4 = GIC_DEFAULT_PRIORITY * 0x01010101u;
		for (unsigned intid = 0; intid < 32; intid += 4)
			mmio_write32(rd + GICR_IPRIORITYR + intid, prio4);
		redistributor[cpu_index()] = rd;
	}

	/* System register interface; QEMU and Tern both force SRE on, but say what we need. */
	write_sysreg(icc_sre_el1, read_sysreg(icc_sre_el1) | 1);
	isb();
	write_sysreg(icc_pmr_el1, 0xff);
	write_sysreg(icc_bpr1_el1, 0);
	write_sysreg(icc_ctlr_el1, read_sysreg(icc_ctlr_el1) & ~(uint64_t)(1u << 1)); /* EOImode 0 */
	write_sysreg(icc_igrpen1_el1, 1);
	isb();
	return ok;
}

uintptr_t gic_redistributor(void)
{
	return redistributor[cpu_index()];
}

void gic_enable_private(unsigned intid)
{
	uintptr_t rd = gic_redistributor();

	if (rd && intid < 32)
		mmio_write32(rd + GICR_ISENABLER0, 1u << intid);
}

void gic_set_priority_private(unsigned intid, uint8_t priority)
{
	uintptr_t rd = gic_redistributor();

	if (!rd || intid >= 32)
		return;
	/* Word access only (see gic.h): read-modify-write this INTID's byte. */
	uintptr_t reg = rd + GICR_IPRIORITYR + (intid & ~3u);
	unsigned shift = 8 * (intid & 3);
	uint32_t word = mmio_read32(reg) & ~(0xffu << shift);
	mmio_write32(reg, word | (uint32_t)priority << shift);
}

void gic_send_sgi1r(uint64_t sgi1r)
{
	dsb_sy();       /* make data the target will read visible before it is interrupted */
	write_sysreg(icc_sgi1r_el1, sgi1r);
	isb();
}

void gic_send_sgi(unsigned intid, unsigned cpu)
{
	gic_send_sgi1r(SGI1R_INTID(intid) | SGI1R_TARGET(cpu));
}

static bool is_spi(unsigned intid)
{
	return intid >= 32 && intid < 1020;
}

/* One bit per INTID in a bank of 32-bit registers. */
static uintptr_t bit_reg(unsigned offset, unsigned intid)
{
	return GICD_BASE + offset + 4 * (intid / 32);
}

/* Word access only (see gic.h): the `mask` bits of the register become `bits`. */
static void gicd_update(uintptr_t reg, uint32_t mask, uint32_t bits)
{
	mmio_write32(reg, (mmio_read32(reg) & ~mask) | bits);
}

void gic_spi_set_group1(unsigned intid)
{
	uint32_t bit = 1u << (intid % 32);

	if (is_spi(intid))
		gicd_update(bit_reg(GICD_IGROUPR, intid), bit, bit);
}

void gic_spi_set_priority(unsigned intid, uint8_t priority)
{
	unsigned shift = 8 * (intid & 3);

	if (is_spi(intid))
		gicd_update(GICD_BASE + GICD_IPRIORITYR + (intid & ~3u), 0xffu << shift,
			    (uint32_t)priority << shift);
}

void gic_spi_set_trigger(unsigned intid, bool edge)
{
	/* Two bits per INTID; the upper one is edge (1) or level (0), the lower is reserved. */
	uint32_t bit = 2u << (2 * (intid % 16));

	if (is_spi(intid))
		gicd_update(GICD_BASE + GICD_ICFGR + 4 * (intid / 16), bit, edge ? bit : 0);
}

void gic_spi_route_to_self(unsigned intid)
{
	/* MPIDR's Aff3 (39:32) and Aff2.Aff1.Aff0 (23:0) sit where IROUTER has them. */
	if (is_spi(intid))
		mmio_write64(GICD_BASE + GICD_IROUTER + 8 * intid, mpidr_affinity());
}

void gic_spi_enable(unsigned intid)
{
	if (is_spi(intid))
		mmio_write32(bit_reg(GICD_ISENABLER, intid), 1u << (intid % 32));
}

bool gic_spi_disable(unsigned intid)
{
	if (!is_spi(intid))
		return false;
	mmio_write32(bit_reg(GICD_ICENABLER, intid), 1u << (intid % 32));
	return wait_clear(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP);
}
