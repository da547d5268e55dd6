/*
 * Functional probes for system tests, chosen with probe.tests=a,b,c. Each prints one
 * PROBE-JSON line; the expectations are those a Tern partition must meet.
 */
#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "pci.h"
#include "psci.h"
#include "runtime.h"
#include "timer.h"

const char guest_name[] = "probe";

#define SGI_PING        3       /* CPU 0 -> CPU 1 */
#define SGI_PONG        4       /* CPU 1 -> CPU 0 */
#define SGI_FOREIGN     12      /* CPU 0 -> CPUs that do not exist */
#define SMP_CONTEXT_ID  0x7e4e0c0de5ULL
#define WAIT_US         1000000
#define FOREIGN_PRIO    0x40
#define FOREIGN_ROUTE   1
#define SGI_GROUP       5       /* CPU 0 -> itself after asking for Group 0 */
#define GICD_ISPENDR    0x0200

#define PRIO_SGIS       10      /* SGIs 1..10: more than the 4 list registers of QEMU's GIC */
#define PRIO_RECORD     16      /* acknowledgements kept per run; more means duplicates */
/*
 * SGI delivery is not synchronous with the ICC_SGI1R_EL1 write: wait this long before
 * unmasking, so the order seen is the GIC's priority choice and not the arrival order.
 * Also how long an SGI that should not arrive (or arrive twice) is waited for.
 */
#define SETTLE_US       2000

/* Each written by one CPU only: no locks, which Device memory (MMU off) cannot back. */
static volatile uint32_t cpu1_ready;            /* CPU 1 */
static volatile uint64_t cpu1_context;          /* CPU 1 */
static volatile uint32_t cpu1_pings;            /* CPU 1's IRQ handler */
static volatile uint32_t cpu0_pongs;            /* CPU 0's IRQ handler */
static volatile uint32_t stray_irqs[MAX_CPUS];  /* each CPU its own slot */
static volatile uint32_t sync_excs[MAX_CPUS];   /* each CPU its own slot */
static volatile uint64_t last_esr[MAX_CPUS];    /* each CPU its own slot */
static volatile uint32_t prio_recording;        /* CPU 0 */
static volatile uint32_t prio_count;            /* CPU 0's IRQ handler */
static volatile uint32_t prio_order[PRIO_RECORD]; /* CPU 0's IRQ handler */
static volatile uint32_t cpu0_foreign;          /* CPU 0's IRQ handler */
static volatile uint32_t cpu0_group_sgis;       /* CPU 0's IRQ handler */
static volatile uint32_t cpu0_spis;             /* CPU 0's IRQ handler */
static volatile uint32_t cpu1_spis;             /* CPU 1's IRQ handler */
static unsigned probe_spi;                      /* the SPI spi-owned raises, 0: none */

/* Report and step over the faulting instruction, so injected exceptions are observable. */
static void probe_sync(struct exc_frame *frame)
{
	printf("PROBE-EXC esr=0x%lx elr=0x%lx far=0x%lx\n", frame->esr, frame->elr, frame->far);
	if (cpu_index() < MAX_CPUS) {
		sync_excs[cpu_index()]++;
		last_esr[cpu_index()] = frame->esr;
	}
	frame->elr += 4;
}

static void probe_irq(struct exc_frame *frame)
{
	(void)frame;
	uint32_t intid = gic_ack();
	unsigned cpu = cpu_index();

	if (prio_recording && cpu == 0 && intid >= 1 && intid <= PRIO_SGIS) {
		if (prio_count < PRIO_RECORD)
			prio_order[prio_count] = intid;
		prio_count++;
	} else if (intid == SGI_PING && cpu == 1) {
		cpu1_pings++;
		gic_send_sgi(SGI_PONG, 0);
	} else if (intid == SGI_PONG && cpu == 0) {
		cpu0_pongs++;
	} else if (intid == SGI_FOREIGN && cpu == 0) {
		cpu0_foreign++;
	} else if (intid == SGI_GROUP && cpu == 0) {
		cpu0_group_sgis++;
	} else if (probe_spi && intid == probe_spi && cpu == 0) {
		cpu0_spis++;
	} else if (probe_spi && intid == probe_spi && cpu == 1) {
		cpu1_spis++;
	} else if (intid < 1020 && cpu < MAX_CPUS) {
		stray_irqs[cpu]++;
	}
	if (intid < 1020)
		gic_eoi(intid);
}

static bool wait_for(volatile uint32_t *flag)
{
	return wait_count(flag, 1, WAIT_US);
}

static void spin_us(uint64_t us)
{
	uint64_t deadline = deadline_after_us(us);

	while (!deadline_passed(deadline))
		cpu_relax();
}

static void print_int_list(const volatile uint32_t *vals, unsigned n)
{
	console_putc('[');
	for (unsigned i = 0; i < n; i++)
		printf(i ? ",%u" : "%u", vals[i]);
	console_putc(']');
}

static void cpu1_main(uint64_t context_id)
{
	printf("probe: smp: cpu %u up, entered at EL%u, context 0x%lx\n", cpu_index(),
	       entry_el(), context_id);
	cpu1_context = context_id;
	gic_enable_private(SGI_PING);
	gic_enable_private(SGI_PONG);
	irq_enable();
	dsb_sy();
	cpu1_ready = 1;

	wait_for(&cpu1_pings);  /* the handler answers; nothing more to do here */
	irq_disable();
	/* Returning makes the library call CPU_OFF. */
}

static bool test_smp(void)
{
	bool started = false, ping = false, pong = false;
	int32_t aff_after = -100;

	cpu1_ready = 0;
	cpu1_context = 0;
	cpu1_pings = 0;
	cpu0_pongs = 0;
	dsb_sy();

	int32_t aff_before = psci_affinity_info(1);
	gic_enable_private(SGI_PONG);
	int32_t cpu_on_ret = cpu_start(1, cpu1_main, SMP_CONTEXT_ID);

	if (cpu_on_ret == PSCI_SUCCESS) {
		started = wait_for(&cpu1_ready);
		irq_enable();
		if (started) {
			gic_send_sgi(SGI_PING, 1);
			pong = wait_for(&cpu0_pongs);
			ping = cpu1_pings != 0;
		}
		irq_disable();

		uint64_t deadline = deadline_after_us(WAIT_US);
		do
			aff_after = psci_affinity_info(1);
		while (aff_after != PSCI_AFFINITY_OFF && !deadline_passed(deadline));
	}

	bool context_ok = cpu1_context == SMP_CONTEXT_ID;
	bool pass = aff_before == PSCI_AFFINITY_OFF && cpu_on_ret == PSCI_SUCCESS && started &&
		    context_ok && ping && pong && aff_after == PSCI_AFFINITY_OFF;
	printf("PROBE-JSON {\"test\":\"smp\",\"aff_before\":%d,\"cpu_on_ret\":%d,"
	       "\"cpu1_started\":%s,\"context_ok\":%s,\"sgi_to_1\":%s,\"sgi_back\":%s,"
	       "\"aff_after\":%d,\"pass\":%s}\n",
	       aff_before, cpu_on_ret, json_bool(started), json_bool(context_ok), json_bool(ping),
	       json_bool(pong), aff_after, json_bool(pass));
	return pass;
}

static bool test_psci(void)
{
	uint32_t version = psci_version();
	unsigned major = version >> 16, minor = version & 0xffff;
	int32_t cpu_on = psci_features(PSCI_CPU_ON);
	int32_t bogus = psci_features(0x840000FF);
	int32_t unknown = psci_call(0xC2000000, 0, 0, 0);
	/* What PSCI 1.1 adds: SYSTEM_RESET2 and MEM_PROTECT_CHECK_RANGE (SMC64), MEM_PROTECT. */
	int32_t reset2 = psci_features(0xC4000012);
	int32_t mem_protect = psci_features(0x84000013);
	int32_t check_range = psci_features(0xC4000014);
	bool pass = (major > 0 || minor >= 2) && cpu_on == PSCI_SUCCESS &&
		    bogus == PSCI_NOT_SUPPORTED && unknown == PSCI_NOT_SUPPORTED;

	printf("PROBE-JSON {\"test\":\"psci\",\"conduit\":\"%s\",\"version\":\"%u.%u\","
	       "\"major\":%u,\"minor\":%u,\"features_cpu_on\":%d,\"features_bogus\":%d,"
	       "\"unknown_call\":%d,\"features_system_reset2\":%d,\"features_mem_protect\":%d,"
	       "\"features_mem_protect_check_range\":%d,\"pass\":%s}\n",
	       psci_uses_hvc() ? "hvc" : "smc", major, minor, major, minor, cpu_on, bogus,
	       unknown, reset2, mem_protect, check_range, json_bool(pass));
	return pass;
}

/* GICR SGI-frame registers a guest sees as on the board. */
#define GICR_ICENABLER0 (GICR_SGI_OFFSET + 0x0180)
#define GICR_ISPENDR0   (GICR_SGI_OFFSET + 0x0200)
#define GICR_ICPENDR0   (GICR_SGI_OFFSET + 0x0280)
#define GICR_ISACTIVER0 (GICR_SGI_OFFSET + 0x0300)
#define PPI_VTIMER      27
#define PPI_PTIMER      30

struct timer_pending {
	bool fired, pending, pending_after_clear, pending_after_stop, active;
};

static uint64_t timer_ctl(bool virt)
{
	return virt ? read_sysreg(cntv_ctl_el0) : read_sysreg(cntp_ctl_el0);
}

/*
 * A level PPI whose line is high reads pending even while disabled; clearing it changes
 * nothing while the line stays high; stopping the timer drops it.
 */
static struct timer_pending timer_pending_run(bool virt, unsigned ppi)
{
	uintptr_t rd = gic_redistributor();
	struct timer_pending r;

	mmio_write32(rd + GICR_ICENABLER0, 1u << ppi);
	if (virt)
		vtimer_arm(counter_virt());
	else
		ptimer_arm(counter_phys());
	uint64_t deadline = deadline_after_us(WAIT_US);
	while (!(timer_ctl(virt) & CNT_CTL_ISTATUS) && !deadline_passed(deadline))
		cpu_relax();
	r.fired = timer_ctl(virt) & CNT_CTL_ISTATUS;
	/* The line reaches the redistributor after the timer's condition: bounded, not timed. */
	deadline = deadline_after_us(WAIT_US);
	while (!(mmio_read32(rd + GICR_ISPENDR0) & (1u << ppi)) && !deadline_passed(deadline))
		cpu_relax();
	r.pending = mmio_read32(rd + GICR_ISPENDR0) & (1u << ppi);
	r.active = mmio_read32(rd + GICR_ISACTIVER0) & (1u << ppi);
	mmio_write32(rd + GICR_ICPENDR0, 1u << ppi);
	r.pending_after_clear = mmio_read32(rd + GICR_ISPENDR0) & (1u << ppi);
	if (virt)
		vtimer_stop();
	else
		ptimer_stop();
	deadline = deadline_after_us(WAIT_US);
	while ((mmio_read32(rd + GICR_ISPENDR0) & (1u << ppi)) && !deadline_passed(deadline))
		cpu_relax();
	r.pending_after_stop = mmio_read32(rd + GICR_ISPENDR0) & (1u << ppi);
	return r;
}

static void print_timer_pending(const char *name, const struct timer_pending *r)
{
	printf("\"%s\":{\"fired\":%s,\"pending\":%s,\"pending_after_clear\":%s,"
	       "\"pending_after_stop\":%s,\"active\":%s}", name, json_bool(r->fired),
	       json_bool(r->pending), json_bool(r->pending_after_clear),
	       json_bool(r->pending_after_stop), json_bool(r->active));
}

/* GICR_ISPENDR0 for a disabled timer PPI that fired (the conformance suite's check). */
static bool test_timer_pending(void)
{
	irq_disable();
	struct timer_pending v = timer_pending_run(true, PPI_VTIMER);
	struct timer_pending p = timer_pending_run(false, PPI_PTIMER);
	bool pass = true;

	for (unsigned i = 0; i < 2; i++) {
		const struct timer_pending *r = i ? &p : &v;
		pass = pass && r->fired && r->pending && r->pending_after_clear &&
		       !r->pending_after_stop && !r->active;
	}
	printf("PROBE-JSON {\"test\":\"timer-pending\",");
	print_timer_pending("vtimer", &v);
	console_putc(',');
	print_timer_pending("ptimer", &p);
	printf(",\"pass\":%s}\n", json_bool(pass));
	return pass;
}

static void test_fault(void)
{
	uintptr_t addr = ram_base() + ram_size() + 0x1000;

	printf("probe: fault: reading 0x%lx, past RAM 0x%lx+0x%lx\n", addr, ram_base(),
	       ram_size());
	printf("PROBE-JSON {\"test\":\"fault\",\"phase\":\"before\"}\n");
	(void)mmio_read32(addr);
	printf("PROBE-JSON {\"test\":\"fault\",\"phase\":\"after\",\"pass\":false}\n");
}

static bool test_gicd_foreign(void)
{
	unsigned spi = (unsigned)bootarg_ulong("probe.spi", 72, 32, 1019);
	uintptr_t enable_reg = GICD_BASE + GICD_ISENABLER + 4 * (spi / 32);
	uint32_t enable_bit = 1u << (spi % 32);
	uintptr_t prio_reg = GICD_BASE + GICD_IPRIORITYR + (spi & ~3u);
	unsigned prio_shift = 8 * (spi & 3);
	uintptr_t router_reg = GICD_BASE + GICD_IROUTER + 8 * spi;

	bool enable_before = mmio_read32(enable_reg) & enable_bit;
	mmio_write32(enable_reg, enable_bit);
	bool enable_after = mmio_read32(enable_reg) & enable_bit;

	uint32_t prio_word = mmio_read32(prio_reg);
	unsigned prio_before = (prio_word >> prio_shift) & 0xff;
	prio_word &= ~(0xffu << prio_shift);
	mmio_write32(prio_reg, prio_word | (uint32_t)FOREIGN_PRIO << prio_shift);
	unsigned prio_after = (mmio_read32(prio_reg) >> prio_shift) & 0xff;

	/* Aff0 = 1: a route that differs from both the reset value and the read-as-zero view. */
	uint64_t router_before = mmio_read64(router_reg);
	mmio_write64(router_reg, FOREIGN_ROUTE);
	uint64_t router_after = mmio_read64(router_reg);

	/* A write "took" if it changed the value to the one written. */
	bool enable_stuck = !enable_before && enable_after;
	bool priority_stuck = prio_before != FOREIGN_PRIO && prio_after == FOREIGN_PRIO;
	bool router_stuck = router_before != FOREIGN_ROUTE && router_after == FOREIGN_ROUTE;
	bool pass = !enable_stuck && !priority_stuck && !router_stuck;

	printf("PROBE-JSON {\"test\":\"gicd-foreign\",\"spi\":%u,\"enable_before\":%s,"
	       "\"enable_after\":%s,\"enable_stuck\":%s,\"priority_before\":%u,"
	       "\"priority_after\":%u,\"priority_stuck\":%s,\"router_before\":%lu,"
	       "\"router_after\":%lu,\"router_stuck\":%s,\"pass\":%s}\n",
	       spi, json_bool(enable_before), json_bool(enable_after), json_bool(enable_stuck),
	       prio_before, prio_after, json_bool(priority_stuck), router_before, router_after,
	       json_bool(router_stuck), json_bool(pass));
	return pass;
}

/*
 * An SPI passed to this partition (probe.spi): priority 0x00 (a direct partition's is clamped
 * below the hypervisor's control interrupt), routes outside the partition (1-of-N, a vCPU that
 * does not exist, another cluster: all refused, the SPI stays on vCPU 0), then made pending
 * through GICD_ISPENDR and taken once on CPU 0.
 */
static bool test_spi_owned(void)
{
	unsigned spi = (unsigned)bootarg_ulong("probe.spi", 37, 32, 1019);
	uintptr_t prio_reg = GICD_BASE + GICD_IPRIORITYR + (spi & ~3u);
	unsigned prio_shift = 8 * (spi & 3);
	uintptr_t router_reg = GICD_BASE + GICD_IROUTER + 8 * spi;
	static const uint64_t foreign_routes[] = { 1ull << 31, 7, 1ull << 8 };

	irq_disable();
	gic_spi_set_group1(spi);
	gic_spi_set_priority(spi, GIC_DEFAULT_PRIORITY);
	gic_spi_set_priority(spi, 0x00);
	unsigned prio_after = (mmio_read32(prio_reg) >> prio_shift) & 0xff;
	gic_spi_route_to_self(spi);
	uint64_t router_before = mmio_read64(router_reg);
	for (unsigned i = 0; i < sizeof(foreign_routes) / sizeof(foreign_routes[0]); i++)
		mmio_write64(router_reg, foreign_routes[i]);
	uint64_t router_after = mmio_read64(router_reg);
	gic_spi_set_trigger(spi, true);

	probe_spi = spi;
	cpu0_spis = 0;
	gic_spi_enable(spi);
	mmio_write32(GICD_BASE + GICD_ISPENDR + 4 * (spi / 32), 1u << (spi % 32));
	irq_enable();
	wait_count(&cpu0_spis, 1, WAIT_US);
	spin_us(SETTLE_US);     /* a second delivery would show up here */
	irq_disable();
	uint32_t received = cpu0_spis;
	gic_spi_disable(spi);
	gic_spi_set_trigger(spi, false);
	gic_spi_set_priority(spi, GIC_DEFAULT_PRIORITY);
	probe_spi = 0;

	bool pass = received == 1 && router_after == router_before;
	printf("PROBE-JSON {\"test\":\"spi-owned\",\"spi\":%u,\"priority_after\":%u,"
	       "\"router_before\":%lu,\"router_after\":%lu,\"received\":%u,\"pass\":%s}\n",
	       spi, prio_after, router_before, router_after, received, json_bool(pass));
	return pass;
}

/* CPU 1 of spi-offline: takes what was pending for it, then reports and turns off. */
static void cpu1_spi_main(uint64_t context_id)
{
	(void)context_id;
	cpu1_ready = 1;
	irq_enable();
	wait_count(&cpu1_spis, 1, WAIT_US);
	spin_us(SETTLE_US);     /* a second delivery would show up here */
	irq_disable();
}

/*
 * An SPI routed to CPU 1 while CPU 1 is off, made pending there: it must wait in the GIC and
 * arrive once CPU 1 is started, not be lost (or taken by whoever runs that core meanwhile).
 */
static bool test_spi_offline(void)
{
	unsigned spi = (unsigned)bootarg_ulong("probe.spi", 37, 32, 1019);
	uintptr_t router_reg = GICD_BASE + GICD_IROUTER + 8 * spi;
	int32_t aff_before = psci_affinity_info(1);

	gic_spi_set_group1(spi);
	gic_spi_set_priority(spi, GIC_DEFAULT_PRIORITY);
	gic_spi_set_trigger(spi, true);
	mmio_write64(router_reg, 1);    /* Aff0 = 1: CPU 1 */
	probe_spi = spi;
	cpu1_spis = 0;
	cpu1_ready = 0;
	gic_spi_enable(spi);
	mmio_write32(GICD_BASE + GICD_ISPENDR + 4 * (spi / 32), 1u << (spi % 32));
	spin_us(SETTLE_US);             /* time for it to go astray, were it to */
	uint32_t early = cpu1_spis;
	int32_t ret = cpu_start(1, cpu1_spi_main, 0);
	bool started = ret == PSCI_SUCCESS && wait_count_yield(&cpu1_ready, 1, WAIT_US);
	wait_count_yield(&cpu1_spis, 1, WAIT_US);
	uint64_t deadline = deadline_after_us(WAIT_US);
	while (psci_affinity_info(1) != PSCI_AFFINITY_OFF && !deadline_passed(deadline))
		cpu_relax();
	uint32_t received = cpu1_spis;
	gic_spi_disable(spi);
	gic_spi_route_to_self(spi);
	gic_spi_set_trigger(spi, false);
	probe_spi = 0;

	bool pass = aff_before == PSCI_AFFINITY_OFF && started && early == 0 && received == 1;
	printf("PROBE-JSON {\"test\":\"spi-offline\",\"spi\":%u,\"cpu1_off_before\":%s,"
	       "\"taken_while_off\":%u,\"cpu_on_ret\":%d,\"cpu1_started\":%s,\"received\":%u,"
	       "\"pass\":%s}\n", spi, json_bool(aff_before == PSCI_AFFINITY_OFF), early, ret,
	       json_bool(started), received, json_bool(pass));
	return pass;
}

/*
 * Ask for Group 0 for every SGI and PPI and priority 0x00 for SGI 5, then send SGI 5 to this
 * CPU. Group 0 would make it an FIQ (masked here, and with FMO taken by the hypervisor): the
 * test passes when it still arrives once as an IRQ, as a direct partition's must.
 */
static bool test_gicr_group(void)
{
	uintptr_t group_reg = gic_redistributor() + GICR_IGROUPR0;

	irq_disable();
	uint32_t group_before = mmio_read32(group_reg);
	mmio_write32(group_reg, 0);
	uint32_t group_after = mmio_read32(group_reg);
	gic_set_priority_private(SGI_GROUP, 0x00);
	gic_enable_private(SGI_GROUP);
	cpu0_group_sgis = 0;
	gic_send_sgi(SGI_GROUP, cpu_index());
	irq_enable();
	wait_count(&cpu0_group_sgis, 1, SETTLE_US);
	spin_us(SETTLE_US);
	irq_disable();
	uint32_t received = cpu0_group_sgis;
	mmio_write32(group_reg, ~0u);
	gic_set_priority_private(SGI_GROUP, GIC_DEFAULT_PRIORITY);

	bool pass = received == 1;
	printf("PROBE-JSON {\"test\":\"gicr-group\",\"group_before\":\"0x%x\","
	       "\"group_after\":\"0x%x\",\"received\":%u,\"pass\":%s}\n",
	       group_before, group_after, received, json_bool(pass));
	return pass;
}

/* 0x10 * (7i mod 11): ten distinct priorities 0x10..0xa0 for SGIs 1..10, not monotonic in i. */
static uint8_t prio_of(unsigned intid)
{
	return (uint8_t)(0x10 * ((intid * 7) % 11));
}

/*
 * One run: all SGIs made pending while IRQs are masked, then the order of acknowledgement.
 * Sent in INTID order, so delivering in arrival order (or by INTID) shows up as wrong.
 */
static bool prio_run(void)
{
	unsigned self = cpu_index();

	irq_disable();
	prio_count = 0;
	prio_recording = 1;
	for (unsigned intid = 1; intid <= PRIO_SGIS; intid++)
		gic_send_sgi(intid, self);
	spin_us(SETTLE_US);

	irq_enable();
	wait_count(&prio_count, PRIO_SGIS, WAIT_US);
	spin_us(SETTLE_US);     /* a duplicate would come now */
	irq_disable();
	prio_recording = 0;

	if (prio_count != PRIO_SGIS)
		return false;
	for (unsigned i = 1; i < PRIO_SGIS; i++)
		if (prio_of(prio_order[i - 1]) >= prio_of(prio_order[i]))
			return false;
	return true;
}

static bool test_prio(void)
{
	unsigned runs = (unsigned)bootarg_ulong("probe.prio_runs", 20, 1, 100000);
	unsigned in_order = 0, wrong_len = 0;
	bool have_wrong = false;
	uint32_t expected[PRIO_SGIS], first_wrong[PRIO_RECORD];

	for (unsigned intid = 1; intid <= PRIO_SGIS; intid++) {
		expected[prio_of(intid) / 0x10 - 1] = intid;
		gic_set_priority_private(intid, prio_of(intid));
		gic_enable_private(intid);
	}

	for (unsigned run = 0; run < runs; run++) {
		if (prio_run()) {
			in_order++;
		} else if (!have_wrong) {
			have_wrong = true;
			wrong_len = prio_count < PRIO_RECORD ? prio_count : PRIO_RECORD;
			for (unsigned i = 0; i < wrong_len; i++)
				first_wrong[i] = prio_order[i];
		}
	}

	/* Back to the library's defaults; the SGIs stay enabled, the handler counts strays. */
	for (unsigned intid = 1; intid <= PRIO_SGIS; intid++)
		gic_set_priority_private(intid, GIC_DEFAULT_PRIORITY);

	bool pass = in_order == runs;
	printf("PROBE-JSON {\"test\":\"prio\",\"sgis\":%u,\"runs\":%u,\"in_order\":%u,"
	       "\"expected\":", PRIO_SGIS, runs, in_order);
	print_int_list(expected, PRIO_SGIS);
	printf(",\"first_wrong\":");
	if (have_wrong)
		print_int_list(first_wrong, wrong_len);
	else
		printf("null");
	printf(",\"pass\":%s}\n", json_bool(pass));
	return pass;
}

/*
 * SGIs to Aff0 = 7 and to Aff1 = 1 (target list bit 0): neither CPU exists. Only CPU 0 watches:
 * a target check that ignored Aff1 would land there (where else an SGI to Aff0 = 7 might go
 * is for the hypervisor's sgi_denied count). A final SGI to CPU 0 itself shows that a wrong
 * delivery would have been seen.
 */
static bool test_sgi_foreign(void)
{
	static const uint64_t targets[] = {
		SGI1R_TARGET(7),
		SGI1R_AFF1(1) | SGI1R_TARGET(0),
	};

	irq_disable();
	cpu0_foreign = 0;
	gic_enable_private(SGI_FOREIGN);
	irq_enable();
	for (unsigned i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		gic_send_sgi1r(SGI1R_INTID(SGI_FOREIGN) | targets[i]);
	spin_us(SETTLE_US);
	uint32_t foreign = cpu0_foreign;

	gic_send_sgi(SGI_FOREIGN, cpu_index());
	bool control = wait_count(&cpu0_foreign, foreign + 1, WAIT_US);
	irq_disable();

	bool delivered = foreign != 0;
	printf("PROBE-JSON {\"test\":\"sgi-foreign\",\"intid\":%u,"
	       "\"targets\":[\"0.0.0.7\",\"0.0.1.0\"],\"delivered\":%s,\"received\":%u,"
	       "\"control_seen\":%s,\"pass\":%s}\n",
	       SGI_FOREIGN, json_bool(delivered), foreign, json_bool(control),
	       json_bool(!delivered));
	return !delivered;
}

/* PSCI for CPUs outside the system. The entry parks, should a CPU start after all. */
static bool test_psci_foreign(void)
{
	int32_t on_aff0 = psci_cpu_on(6, (uintptr_t)park_entry, 0);
	int32_t on_aff1 = psci_cpu_on(1u << 8, (uintptr_t)park_entry, 0);
	int32_t info_aff0 = psci_affinity_info(6);
	bool pass = on_aff0 < 0 && on_aff1 < 0 && info_aff0 < 0;

	printf("PROBE-JSON {\"test\":\"psci-foreign\",\"cpu_on_aff0_6\":%d,\"cpu_on_aff1_1\":%d,"
	       "\"affinity_info_aff0_6\":%d,\"pass\":%s}\n",
	       on_aff0, on_aff1, info_aff0, json_bool(pass));
	return pass;
}

/* Unknown SMCCC calls: standard hypervisor service (fast SMC32, fast SMC64), a yielding call. */
static const uint32_t unknown_calls[] = { 0x86000000, 0xC6001234, 0x00000001 };
#define UNKNOWN_CALLS   (sizeof(unknown_calls) / sizeof(unknown_calls[0]))

typedef uint64_t (*smccc_fn)(uint32_t function, uint64_t arg1, uint64_t arg2, uint64_t arg3);

/* Every call must return NOT_SUPPORTED in all of x0. */
static bool try_unknown_calls(smccc_fn call, int64_t *rets)
{
	bool ok = true;

	for (unsigned i = 0; i < UNKNOWN_CALLS; i++) {
		rets[i] = (int64_t)call(unknown_calls[i], 0, 0, 0);
		ok = ok && rets[i] == PSCI_NOT_SUPPORTED;
	}
	return ok;
}

static void print_call_results(const int64_t *rets)
{
	for (unsigned i = 0; i < UNKNOWN_CALLS; i++)
		printf(i ? ",%ld" : "[%ld", rets[i]);
	console_putc(']');
}

/*
 * Both conduits explicitly, whatever the device tree says. Entered at EL2 (the bare board),
 * the guest's own EL2 has no vector table for an HVC to land in, so only SMC is tried there.
 * Calls first, then the line: a PROBE-EXC report must not split it.
 */
static bool test_hvc_unknown(void)
{
	int64_t hvc[UNKNOWN_CALLS], smc[UNKNOWN_CALLS];
	bool try_hvc = entry_el() != 2;
	uint32_t excs = sync_excs[cpu_index()];

	bool hvc_ok = !try_hvc || try_unknown_calls(smccc_hvc, hvc);
	bool smc_ok = try_unknown_calls(smccc_smc, smc);
	excs = sync_excs[cpu_index()] - excs;

	printf("PROBE-JSON {\"test\":\"hvc-unknown\",\"entry_el\":%u,\"functions\":[", entry_el());
	for (unsigned i = 0; i < UNKNOWN_CALLS; i++)
		printf(i ? ",\"0x%x\"" : "\"0x%x\"", unknown_calls[i]);
	printf("],\"hvc\":");
	if (try_hvc)
		print_call_results(hvc);
	else
		printf("\"skipped\"");
	printf(",\"smc\":");
	print_call_results(smc);
	printf(",\"exceptions\":%u,\"pass\":%s}\n", excs, json_bool(hvc_ok && smc_ok));
	return hvc_ok && smc_ok;
}

/*
 * SYSTEM_RESET until the counter passes probe.reset_until_us: nothing in the
 * partition survives a reset, but the counter keeps running, so it tells a
 * later boot from the first.
 */
static void test_reset(void)
{
	uint64_t until = us_to_ticks(bootarg_ulong("probe.reset_until_us", 2000, 1, 1000000000));
	uint64_t now = counter_virt();

	if (now < until) {
		printf("PROBE-JSON {\"test\":\"reset\",\"phase\":\"resetting\",\"uptime_ticks\":%lu}\n",
		       (unsigned long)now);
		int32_t ret = psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
		printf("PROBE-JSON {\"test\":\"reset\",\"phase\":\"returned\",\"ret\":%d,\"pass\":false}\n", ret);
		return;
	}
	printf("PROBE-JSON {\"test\":\"reset\",\"phase\":\"after\",\"uptime_ticks\":%lu,\"pass\":true}\n",
	       (unsigned long)now);
}

/*
 * Cache maintenance by set and way, as firmware does before turning caches off: a sweep of
 * level 1 and level 2 (a few sets and ways each). On the board each reaches caches other cores
 * share; a hypervisor must trap them (Tern cleans the partition's own RAM by address instead).
 * The guest sees nothing either way: no exception, and it goes on.
 */
#define SETWAY_OPS 8

static bool test_setway(void)
{
	unsigned cpu = cpu_index();
	uint32_t before = sync_excs[cpu];

	for (uint64_t level = 0; level < 2; level++) {
		for (uint64_t set = 0; set < 2; set++) {
			for (uint64_t way = 0; way < 2; way++) {
				uint64_t sw = way << 30 | set << 6 | level << 1;
				if (way)
					__asm__ volatile("dc isw, %0" : : "r"(sw) : "memory");
				else
					__asm__ volatile("dc cisw, %0" : : "r"(sw) : "memory");
			}
		}
	}
	__asm__ volatile("dsb sy" : : : "memory");
	uint32_t excs = sync_excs[cpu] - before;
	printf("PROBE-JSON {\"test\":\"setway\",\"ops\":%u,\"exceptions\":%u,\"pass\":%s}\n",
	       SETWAY_OPS, excs, json_bool(excs == 0));
	return excs == 0;
}

/*
 * Read an IMPLEMENTATION DEFINED register (CPUACTLR_EL1 on Cortex-A53/A57).
 * Natively it reads as the core defines it; a hypervisor that keeps such
 * registers from its guests (as Tern, Xen and KVM do) makes it undefined.
 */
static bool test_sysreg_impdef(void)
{
	unsigned cpu = cpu_index();
	uint32_t before = sync_excs[cpu];
	uint64_t value = read_sysreg(S3_1_C15_C2_0);
	bool undef = sync_excs[cpu] != before;

	printf("PROBE-JSON {\"test\":\"sysreg-impdef\",\"undef\":%s,\"esr_ec\":%lu,\"value\":\"0x%lx\",\"pass\":true}\n",
	       json_bool(undef), undef ? (unsigned long)(last_esr[cpu] >> 26) : 0ul,
	       undef ? 0ul : (unsigned long)value);
	return true;
}

/*
 * What the core's ID registers advertise beyond FP/SIMD must work as on the board: SVE at the
 * longest vector length the core has, SME's streaming mode, pointer authentication (PACGA with
 * a key the guest sets). And a new life of the partition finds the registers a previous one
 * filled zero: probe.tests=cpu-features,fp-reset does it across a SYSTEM_RESET.
 */
#define CPACR_FPEN      (3ul << 20)
#define CPACR_ZEN       (3ul << 16)
#define CPACR_SMEN      (3ul << 24)
#define ZCR_LEN_MAX     0xful
#define SVE_MAX_VL      256     /* bytes: the architecture's longest vector */
#define FP_DUMP_BYTES   (17 * SVE_MAX_VL / 8 + 32 * SVE_MAX_VL)
#define PAC_KEY_LO      0x0123456789abcdefull
#define PAC_KEY_HI      0xfedcba9876543210ull

void fp_dump(uint8_t *buf, uint64_t sve);
void fp_fill(uint64_t sve, uint64_t sme);
uint64_t sve_vl(void);
uint64_t sve_sum(void);
uint64_t sme_svl(void);
uint64_t pac_ga(uint64_t value, uint64_t modifier);

static uint8_t fp_buf[FP_DUMP_BYTES] __attribute__((aligned(16)));

struct cpu_features {
	bool sve, sme, pauth;
};

static struct cpu_features cpu_features(void)
{
	uint64_t pfr0 = read_sysreg(id_aa64pfr0_el1);
	uint64_t pfr1 = read_sysreg(id_aa64pfr1_el1);
	uint64_t isar1 = read_sysreg(id_aa64isar1_el1);
	struct cpu_features f = {
		.sve = ((pfr0 >> 32) & 0xf) != 0,
		.sme = ((pfr1 >> 24) & 0xf) != 0,
		.pauth = ((isar1 >> 24) & 0xf) != 0 || ((isar1 >> 28) & 0xf) != 0, /* GPA, GPI */
	};
	return f;
}

static void fp_enable(struct cpu_features f)
{
	write_sysreg(cpacr_el1, read_sysreg(cpacr_el1) | CPACR_FPEN | (f.sve ? CPACR_ZEN : 0) |
		     (f.sme ? CPACR_SMEN : 0));
	isb();
	if (f.sve)
		write_sysreg(S3_0_C1_C2_0, ZCR_LEN_MAX); /* ZCR_EL1 */
	if (f.sme)
		write_sysreg(S3_0_C1_C2_6, ZCR_LEN_MAX); /* SMCR_EL1: LEN as ZCR_EL1's */
	isb();
}

/* The pointer authentication keys (APIA, APIB, APDA, APDB, APGA; low and high halves) ORed. */
static uint64_t pac_keys_or(void)
{
	return read_sysreg(S3_0_C2_C1_0) | read_sysreg(S3_0_C2_C1_1) | read_sysreg(S3_0_C2_C1_2) |
	       read_sysreg(S3_0_C2_C1_3) | read_sysreg(S3_0_C2_C2_0) | read_sysreg(S3_0_C2_C2_1) |
	       read_sysreg(S3_0_C2_C2_2) | read_sysreg(S3_0_C2_C2_3) | read_sysreg(S3_0_C2_C3_0) |
	       read_sysreg(S3_0_C2_C3_1);
}

static bool test_cpu_features(void)
{
	unsigned cpu = cpu_index();
	uint32_t before = sync_excs[cpu];
	struct cpu_features f = cpu_features();
	uint64_t keys = f.pauth ? pac_keys_or() : 0;

	fp_enable(f);
	uint64_t svcr = f.sme ? read_sysreg(S3_3_C4_C2_2) : 0;
	uint64_t tpidr2 = f.sme ? read_sysreg(S3_3_C13_C0_5) : 0;
	uint64_t fpcr = read_sysreg(fpcr), fpsr = read_sysreg(fpsr);
	uint64_t vl = f.sve ? sve_vl() : 16;
	unsigned residue = 0;

	fp_dump(fp_buf, f.sve);
	for (uint64_t i = 0; i < (f.sve ? 17 * vl / 8 + 32 * vl : 512); i++)
		residue += fp_buf[i] != 0;
	uint64_t sum = f.sve ? sve_sum() : 0;
	uint64_t svl = f.sme ? sme_svl() : 0;
	uint64_t pac = 0;
	if (f.pauth) {
		write_sysreg(S3_0_C2_C3_0, PAC_KEY_LO); /* APGAKeyLo_EL1 */
		write_sysreg(S3_0_C2_C3_1, PAC_KEY_HI);
		isb();
		pac = pac_ga(0x1234, 0x5678);
	}
	uint32_t excs = sync_excs[cpu] - before;
	bool pass = excs == 0 && residue == 0 && fpcr == 0 && fpsr == 0 && svcr == 0 && tpidr2 == 0 &&
		    keys == 0 && sum == (f.sve ? vl : 0) && (!f.pauth || pac != 0);

	printf("PROBE-JSON {\"test\":\"cpu-features\",\"sve\":%s,\"sve_vl\":%lu,\"sve_sum\":%lu,"
	       "\"sme\":%s,\"sme_svl\":%lu,\"pauth\":%s,\"pac\":\"0x%lx\",\"residue_bytes\":%u,"
	       "\"fpcr\":\"0x%lx\",\"fpsr\":\"0x%lx\",\"svcr\":\"0x%lx\",\"tpidr2\":\"0x%lx\","
	       "\"pac_keys\":\"0x%lx\",\"exceptions\":%u,\"pass\":%s}\n",
	       json_bool(f.sve), (unsigned long)(f.sve ? vl : 0), (unsigned long)sum, json_bool(f.sme),
	       (unsigned long)svl, json_bool(f.pauth), (unsigned long)pac, residue,
	       (unsigned long)fpcr, (unsigned long)fpsr, (unsigned long)svcr, (unsigned long)tpidr2,
	       (unsigned long)keys, excs, json_bool(pass));
	return pass;
}

/*
 * Fill every FP/SIMD, SVE and SME register (ZA left on), TPIDR2_EL0 and the pointer
 * authentication keys, then SYSTEM_RESET while the uptime is under probe.reset_until_us
 * (as the reset test): the next life's cpu-features must find none of it.
 */
static void test_fp_reset(void)
{
	uint64_t until = us_to_ticks(bootarg_ulong("probe.reset_until_us", 2000, 1, 1000000000));
	struct cpu_features f = cpu_features();

	if (counter_virt() >= until) {
		printf("PROBE-JSON {\"test\":\"fp-reset\",\"phase\":\"after\",\"pass\":true}\n");
		return;
	}
	fp_enable(f);
	fp_fill(f.sve, f.sme);
	if (f.sme)
		write_sysreg(S3_3_C13_C0_5, PAC_KEY_LO); /* TPIDR2_EL0 */
	if (f.pauth) {
		write_sysreg(S3_0_C2_C1_0, PAC_KEY_LO);
		write_sysreg(S3_0_C2_C2_3, PAC_KEY_HI);
		write_sysreg(S3_0_C2_C3_1, PAC_KEY_HI);
	}
	printf("PROBE-JSON {\"test\":\"fp-reset\",\"phase\":\"resetting\"}\n");
	int32_t ret = psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
	printf("PROBE-JSON {\"test\":\"fp-reset\",\"phase\":\"returned\",\"ret\":%d,\"pass\":false}\n", ret);
}

/* QEMU's edu (docs/specs/edu.txt): a DMA engine between its 4 KiB buffer and bus addresses. */
#define EDU_VENDOR      0x1234
#define EDU_DEVICE      0x11e8
#define EDU_DMA_SRC     0x80
#define EDU_DMA_DST     0x88
#define EDU_DMA_COUNT   0x90
#define EDU_DMA_CMD     0x98
#define EDU_DMA_RUN     1u      /* set to start; clears when done */
#define EDU_DMA_TO_RAM  2u      /* direction: edu's buffer to the bus address */
#define EDU_BUF         0x40000 /* the buffer, in edu's own address space */
#define EDU_DMA_WAIT_US 2000000 /* edu finishes 100 ms (virtual) after the start */
/*
 * Small transfers: a refused one is refused piecewise, and each piece can be an IOMMU fault
 * event that the hypervisor has to drain.
 */
#define DMA_BYTES       64

static uint8_t dma_pattern[DMA_BYTES] __attribute__((aligned(64)));
static uint8_t dma_marker[DMA_BYTES] __attribute__((aligned(64)));
static uint8_t dma_result[DMA_BYTES] __attribute__((aligned(64)));

static bool edu_dma(uintptr_t regs, uint64_t src, uint64_t dst, uint32_t cmd)
{
	dsb_sy(); /* what the device reads is written first */
	mmio_write64(regs + EDU_DMA_SRC, src);
	mmio_write64(regs + EDU_DMA_DST, dst);
	mmio_write64(regs + EDU_DMA_COUNT, DMA_BYTES);
	mmio_write64(regs + EDU_DMA_CMD, EDU_DMA_RUN | cmd);
	uint64_t deadline = deadline_after_us(EDU_DMA_WAIT_US);
	while (mmio_read64(regs + EDU_DMA_CMD) & EDU_DMA_RUN) {
		if (deadline_passed(deadline))
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * Fill edu's buffer with the marker, have edu read `bus` into it, bring the buffer back to
 * RAM: the read was refused if nothing but the marker or zeros (what QEMU returns for a
 * refused read) came back. The marker differs from the pattern and from zero at every byte.
 */
static bool edu_read_refused(uintptr_t regs, uint64_t bus, bool *done)
{
	for (unsigned i = 0; i < DMA_BYTES; i++)
		dma_result[i] = 0;
	*done = *done && edu_dma(regs, (uintptr_t)dma_marker, EDU_BUF, 0) &&
		edu_dma(regs, bus, EDU_BUF, 0) &&
		edu_dma(regs, EDU_BUF, (uintptr_t)dma_result, EDU_DMA_TO_RAM);
	for (unsigned i = 0; i < DMA_BYTES; i++)
		if (dma_result[i] != 0 && dma_result[i] != dma_marker[i])
			return false;
	return true;
}

/*
 * DMA by a device the partition owns (edu behind the PCIe host bridge), programmed with the
 * partition's own addresses: a pattern from its RAM to edu's buffer and back must round-trip.
 * Then addresses outside its RAM: the pattern written past the end of RAM and read back, and
 * a read of the interrupt controller, must not get through. On the bare board the device
 * reaches the interrupt controller. Its redistributors, as QEMU's GIC answers a device's
 * 8-byte reads only for its 64-bit registers: CPU 1's GICR_TYPER is never zero.
 */
static bool test_edu_dma(void)
{
	struct pci_host host;
	uint32_t bdf = 0;
	uint64_t bar = 0, bar_size = 0;
	const char *error = 0;
	bool done = true, round_trip = true, ram_refused = false, gic_refused = false;
	uint64_t foreign = ram_base() + ram_size() + (2ull << 20);

	if (!pci_host_init(&host))
		error = "no PCI host bridge in the device tree";
	else if (!pci_find(&host, EDU_VENDOR, EDU_DEVICE, &bdf))
		error = "edu device not found";
	else if (!pci_assign_bar(&host, bdf, 0, &bar, &bar_size) || bar_size <= EDU_DMA_CMD)
		error = "edu BAR0 not assigned";
	if (error) {
		printf("PROBE-JSON {\"test\":\"edu-dma\",\"error\":\"%s\",\"pass\":false}\n", error);
		return false;
	}
	pci_write32(&host, bdf, PCI_COMMAND,
		    (pci_read32(&host, bdf, PCI_COMMAND) & 0xffff) | PCI_COMMAND_MASTER);

	for (unsigned i = 0; i < DMA_BYTES; i++) {
		dma_pattern[i] = (uint8_t)(0x80 | i);
		dma_marker[i] = (uint8_t)(0x40 | i);
		dma_result[i] = 0;
	}
	done = edu_dma(bar, (uintptr_t)dma_pattern, EDU_BUF, 0) &&
	       edu_dma(bar, EDU_BUF, (uintptr_t)dma_result, EDU_DMA_TO_RAM);
	for (unsigned i = 0; i < DMA_BYTES; i++)
		round_trip = round_trip && dma_result[i] == dma_pattern[i];
	/* edu's buffer still holds the pattern: out to foreign memory, then back. */
	done = done && edu_dma(bar, EDU_BUF, foreign, EDU_DMA_TO_RAM);
	ram_refused = edu_read_refused(bar, foreign, &done);
	gic_refused = edu_read_refused(bar, GICR_BASE + GICR_STRIDE, &done);

	bool pass = done && round_trip && ram_refused && gic_refused;
	printf("PROBE-JSON {\"test\":\"edu-dma\",\"requester_id\":\"0x%x\",\"bytes\":%u,"
	       "\"buffer\":\"0x%lx\",\"foreign\":\"0x%lx\",\"completed\":%s,\"round_trip\":%s,"
	       "\"foreign_ram_refused\":%s,\"gic_refused\":%s,\"pass\":%s}\n",
	       bdf, DMA_BYTES, (uint64_t)(uintptr_t)dma_pattern, foreign, json_bool(done),
	       json_bool(round_trip), json_bool(ram_refused), json_bool(gic_refused),
	       json_bool(pass));
	return pass;
}

/*
 * A partition's devices after its reset: this boot finds edu's Command register as the last
 * one left it, then turns memory decoding and bus mastering on (a driver would, and then start
 * DMA) and resets the partition, until the counter passes probe.reset_until_us. The
 * hypervisor must silence the device when the partition goes down, so that no DMA lands in
 * the RAM it reloads: every boot after the first finds decoding and mastering off.
 */
static void test_pci_reset(void)
{
	uint64_t until = us_to_ticks(bootarg_ulong("probe.reset_until_us", 2000, 1, 1000000000));
	struct pci_host host;
	uint32_t bdf = 0;
	uint64_t bar = 0, bar_size = 0;

	if (!pci_host_init(&host) || !pci_find(&host, EDU_VENDOR, EDU_DEVICE, &bdf)) {
		printf("PROBE-JSON {\"test\":\"pci-reset\",\"error\":\"edu device not found\","
		       "\"pass\":false}\n");
		return;
	}
	uint32_t found = pci_read32(&host, bdf, PCI_COMMAND) & 0xffff;
	bool quiet = !(found & (PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY | PCI_COMMAND_IO));
	uint64_t now = counter_virt();
	bool again = now < until;

	printf("PROBE-JSON {\"test\":\"pci-reset\",\"phase\":\"%s\",\"command\":\"0x%x\","
	       "\"quiet\":%s,\"uptime_ticks\":%lu}\n", again ? "resetting" : "after", found,
	       json_bool(quiet), (unsigned long)now);
	if (!again)
		return;
	if (!pci_assign_bar(&host, bdf, 0, &bar, &bar_size))
		printf("probe: pci-reset: edu BAR0 not assigned\n");
	pci_write32(&host, bdf, PCI_COMMAND,
		    found | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
}

/* CPU 1 spins for ever with every exception masked: only the hypervisor can stop it. */
static void cpu1_spin_masked(uint64_t context_id)
{
	(void)context_id;
	__asm__ volatile("msr daifset, #0xf" ::: "memory");
	cpu1_ready = 1;
	for (;;)
		__asm__ volatile("" ::: "memory");
}

static bool test_spin_masked(void)
{
	cpu1_ready = 0;
	dsb_sy();
	int32_t ret = cpu_start(1, cpu1_spin_masked, 0);
	bool started = ret == PSCI_SUCCESS && wait_for(&cpu1_ready);

	printf("PROBE-JSON {\"test\":\"spin-masked\",\"cpu_on_ret\":%d,\"cpu1_spinning\":%s,"
	       "\"pass\":%s}\n", ret, json_bool(started), json_bool(started));
	return started;
}

/*
 * Wait for ever, asleep: a partition for the hypervisor console to restart.  `boots` lives in
 * .data (not bss, which start-up code zeroes): it reads 1 only if the image was reloaded.
 */
static volatile uint32_t boots_data = 0x100;

static void test_idle(void)
{
	boots_data++;
	printf("PROBE-JSON {\"test\":\"idle\",\"phase\":\"waiting\",\"boots\":%u}\n",
	       (unsigned)(boots_data - 0x100));
	for (;;)
		__asm__ volatile("wfi" : : : "memory");
}

static void test_spin(void)
{
	printf("PROBE-JSON {\"test\":\"spin\",\"phase\":\"spinning\"}\n");
	for (;;)
		__asm__ volatile("" : : : "memory");
}

/* probe.banner=0: no library boot lines, for tests whose partition boots many times. */
bool guest_banner(void)
{
	return bootarg_ulong("probe.banner", 1, 0, 1) != 0;
}

void guest_main(void)
{
	struct strview list, item;

	exceptions_set_sync_handler(probe_sync);
	exceptions_set_irq_handler(probe_irq);

	if (!bootarg("probe.tests", &list)) {
		list.p = "smp,psci";
		list.len = 8;
	}
	while (strview_next_item(&list, &item)) {
		if (strview_eq(item, "smp")) {
			test_smp();
		} else if (strview_eq(item, "psci")) {
			test_psci();
		} else if (strview_eq(item, "fault")) {
			test_fault();
		} else if (strview_eq(item, "gicd-foreign")) {
			test_gicd_foreign();
		} else if (strview_eq(item, "spi-owned")) {
			test_spi_owned();
		} else if (strview_eq(item, "spi-offline")) {
			test_spi_offline();
		} else if (strview_eq(item, "timer-pending")) {
			test_timer_pending();
		} else if (strview_eq(item, "gicr-group")) {
			test_gicr_group();
		} else if (strview_eq(item, "prio")) {
			test_prio();
		} else if (strview_eq(item, "sgi-foreign")) {
			test_sgi_foreign();
		} else if (strview_eq(item, "psci-foreign")) {
			test_psci_foreign();
		} else if (strview_eq(item, "hvc-unknown")) {
			test_hvc_unknown();
		} else if (strview_eq(item, "sysreg-impdef")) {
			test_sysreg_impdef();
		} else if (strview_eq(item, "setway")) {
			test_setway();
		} else if (strview_eq(item, "edu-dma")) {
			test_edu_dma();
		} else if (strview_eq(item, "spin-masked")) {
			test_spin_masked();
		} else if (strview_eq(item, "reset")) {
			test_reset();
		} else if (strview_eq(item, "cpu-features")) {
			test_cpu_features();
		} else if (strview_eq(item, "fp-reset")) {
			test_fp_reset();
		} else if (strview_eq(item, "pci-reset")) {
			test_pci_reset();
		} else if (strview_eq(item, "spin")) {
			test_spin();
		} else if (strview_eq(item, "idle")) {
			test_idle();
		} else {
			printf("PROBE-JSON {\"test\":\"");
			print_strview(item);
			printf("\",\"error\":\"unknown test\",\"pass\":false}\n");
		}
	}
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (stray_irqs[cpu])
			printf("probe: cpu %u took %u unexpected interrupts\n", cpu, stray_irqs[cpu]);
	printf("PROBE-DONE\n");
}
