#include "timer.h"

#include "fdt.h"
#include "sbi.h"

#define TIMEBASE_DEFAULT 10000000       /* the board's, if the device tree says nothing */

static uint64_t timebase = TIMEBASE_DEFAULT;
static bool sstc;

/* Is `ext` one of the multi-letter extensions of the cpu node's riscv,isa string? */
static bool isa_has(int cpu, const char *ext)
{
	uint32_t len;
	const char *isa = fdt_node_prop(cpu, "riscv,isa", &len);

	if (!isa)
		return false;
	/* "rv64imafdch_zicsr_..._sstc": the extensions after the first '_', '_'-separated. */
	for (uint32_t i = 0; i < len && isa[i];) {
		uint32_t end = i;
		while (end < len && isa[end] && isa[end] != '_')
			end++;
		uint32_t n = 0;
		while (ext[n] && i + n < end && isa[i + n] == ext[n])
			n++;
		if (i > 0 && !ext[n] && i + n == end)
			return true;
		i = end + (end < len && isa[end] == '_');
	}
	return false;
}

/* This hart's node under /cpus (reg = hart id), FDT_NONE if there is none. */
static int cpu_node(unsigned hart)
{
	for (int node = fdt_find_compatible(FDT_NONE, "riscv"); node != FDT_NONE;
	     node = fdt_find_compatible(node, "riscv")) {
		uint32_t len;
		const void *reg = fdt_node_prop(node, "reg", &len);
		if (reg && len == 4 && fdt_be32(reg) == hart)
			return node;
	}
	return FDT_NONE;
}

void timer_init(void)
{
	uint32_t len;
	const void *freq = fdt_getprop("/cpus", "timebase-frequency", &len);

	if (freq && len == 4 && fdt_be32(freq))
		timebase = fdt_be32(freq);
	sstc = isa_has(cpu_node(cpu_index()), "sstc");
	timer_stop();
}

uint64_t timer_freq(void)
{
	return timebase;
}

bool timer_has_sstc(void)
{
	return sstc;
}

void timer_arm(uint64_t deadline)
{
	if (sstc)
		csr_write(CSR_STIMECMP, deadline);
	else
		sbi_set_timer(deadline);
}

void timer_stop(void)
{
	timer_arm(~0UL);
}

void timer_sleep_until(uint64_t deadline)
{
	/* Only the timer may end the WFI: any other pending interrupt would make this a spin. */
	uint64_t sie = csr_swap(CSR_SIE, SIP_STIP);

	timer_arm(deadline);
	while (counter_time() < deadline)
		wfi();
	timer_stop();
	csr_write(CSR_SIE, sie);
}
