#include "runtime.h"

#include "bootargs.h"
#include "console.h"
#include "exceptions.h"
#include "fdt.h"
#include "gic.h"
#include "psci.h"
#include "timer.h"

/* Entered from start.S. */
void lib_primary_entry(const void *dtb, unsigned el, uint64_t counter);
void lib_secondary_entry(uint64_t context_id, unsigned el);
extern char secondary_entry[];

static unsigned cpu_entry_el[MAX_CPUS];
static uint64_t memory_base, memory_size;
static uint64_t entry_counter;
static volatile secondary_fn secondary_main[MAX_CPUS];
static volatile bool secondary_bare[MAX_CPUS];

unsigned entry_el(void)
{
	return cpu_entry_el[cpu_index()];
}

uint64_t entry_time(void)
{
	return entry_counter;
}

uint64_t ram_base(void)
{
	return memory_base;
}

uint64_t ram_size(void)
{
	return memory_size;
}

void guest_exit(void)
{
	psci_system_off();
}

void lib_primary_entry(const void *dtb, unsigned el, uint64_t counter)
{
	cpu_entry_el[cpu_index()] = el;
	entry_counter = counter;

	bool have_dtb = fdt_init(dtb);
	bootargs_init();
	psci_init();
	if (!fdt_memory(&memory_base, &memory_size))
		memory_base = memory_size = 0;

	gic_init_distributor();
	bool gic_ok = gic_init_cpu();

	if (!guest_banner || guest_banner()) {
		struct strview args = bootargs_all();
		printf("%s: entered at EL%u on cpu %u, running at EL1; dtb %p%s, ram 0x%lx+0x%lx, "
		       "psci %s, timer %lu Hz\n",
		       guest_name, el, cpu_index(), dtb, have_dtb ? "" : " (invalid)", memory_base,
		       memory_size, psci_uses_hvc() ? "hvc" : "smc", timer_freq());
		printf("%s: bootargs \"", guest_name);
		for (size_t i = 0; i < args.len; i++)
			console_putc(args.p[i]);
		printf("\"\n");
	}
	if (!gic_ok)
		printf("%s: warning: redistributor not found or not awake\n", guest_name);

	guest_main();
	guest_exit();
}

void lib_secondary_entry(uint64_t context_id, unsigned el)
{
	unsigned cpu = cpu_index();

	cpu_entry_el[cpu] = el;
	if (!secondary_bare[cpu])
		gic_init_cpu();
	if (secondary_main[cpu])
		secondary_main[cpu](context_id);
	psci_cpu_off();
}

static int32_t start(unsigned cpu, secondary_fn fn, uint64_t context_id, bool bare)
{
	if (cpu >= MAX_CPUS)
		return PSCI_INVALID_PARAMS;
	secondary_main[cpu] = fn;
	secondary_bare[cpu] = bare;
	dsb_sy();
	/* MMU off, or on with an identity map: the link address is the physical address. */
	return psci_cpu_on(cpu, (uintptr_t)secondary_entry, context_id);
}

int32_t cpu_start(unsigned cpu, secondary_fn fn, uint64_t context_id)
{
	return start(cpu, fn, context_id, false);
}

int32_t cpu_start_bare(unsigned cpu, secondary_fn fn, uint64_t context_id)
{
	return start(cpu, fn, context_id, true);
}
