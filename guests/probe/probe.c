/*
 * Functional probes for system tests, chosen with probe.tests=a,b,c. Each prints one
 * PROBE-JSON line; the expectations are those a Tern partition must meet.
 */
#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "gic.h"
#include "psci.h"
#include "runtime.h"
#include "timer.h"

const char guest_name[] = "probe";

#define SGI_PING        3       /* CPU 0 -> CPU 1 */
#define SGI_PONG        4       /* CPU 1 -> CPU 0 */
#define SMP_CONTEXT_ID  0x7e4e0c0de5ULL
#define WAIT_US         1000000
#define FOREIGN_PRIO    0x40

/* Each written by one CPU only: no locks, which Device memory (MMU off) cannot back. */
static volatile uint32_t cpu1_ready;            /* CPU 1 */
static volatile uint64_t cpu1_context;          /* CPU 1 */
static volatile uint32_t cpu1_pings;            /* CPU 1's IRQ handler */
static volatile uint32_t cpu0_pongs;            /* CPU 0's IRQ handler */
static volatile uint32_t stray_irqs[MAX_CPUS];  /* each CPU its own slot */

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

static void print_strview(struct strview s)
{
	for (size_t i = 0; i < s.len; i++)
		console_putc(s.p[i]);
}

/* Report and step over the faulting instruction, so injected exceptions are observable. */
static void probe_sync(struct exc_frame *frame)
{
	printf("PROBE-EXC esr=0x%lx elr=0x%lx far=0x%lx\n", frame->esr, frame->elr, frame->far);
	frame->elr += 4;
}

static void probe_irq(struct exc_frame *frame)
{
	(void)frame;
	uint32_t intid = gic_ack();
	unsigned cpu = cpu_index();

	if (intid == SGI_PING && cpu == 1) {
		cpu1_pings++;
		gic_send_sgi(SGI_PONG, 0);
	} else if (intid == SGI_PONG && cpu == 0) {
		cpu0_pongs++;
	} else if (intid < 1020 && cpu < MAX_CPUS) {
		stray_irqs[cpu]++;
	}
	if (intid < 1020)
		gic_eoi(intid);
}

/* Spin, not WFI: a wake-up between the test and the WFI would otherwise be lost. */
static bool wait_for(volatile uint32_t *flag)
{
	uint64_t deadline = deadline_after_us(WAIT_US);

	while (!*flag)
		if (deadline_passed(deadline))
			return false;
	return true;
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
	bool pass = (major > 0 || minor >= 2) && cpu_on == PSCI_SUCCESS &&
		    bogus == PSCI_NOT_SUPPORTED && unknown == PSCI_NOT_SUPPORTED;

	printf("PROBE-JSON {\"test\":\"psci\",\"conduit\":\"%s\",\"version\":\"%u.%u\","
	       "\"major\":%u,\"minor\":%u,\"features_cpu_on\":%d,\"features_bogus\":%d,"
	       "\"unknown_call\":%d,\"pass\":%s}\n",
	       psci_uses_hvc() ? "hvc" : "smc", major, minor, major, minor, cpu_on, bogus,
	       unknown, json_bool(pass));
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

	uint64_t router_before = mmio_read64(router_reg);
	mmio_write64(router_reg, 0);
	uint64_t router_after = mmio_read64(router_reg);

	/* A write "took" if it changed the value to the one written. */
	bool enable_stuck = !enable_before && enable_after;
	bool priority_stuck = prio_before != FOREIGN_PRIO && prio_after == FOREIGN_PRIO;
	bool router_stuck = router_before != 0 && router_after == 0;
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

static void test_spin(void)
{
	printf("PROBE-JSON {\"test\":\"spin\",\"phase\":\"spinning\"}\n");
	for (;;)
		__asm__ volatile("" : : : "memory");
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
		} else if (strview_eq(item, "spin")) {
			test_spin();
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
