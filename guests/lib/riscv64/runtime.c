#include "runtime.h"

#include "bootargs.h"
#include "console.h"
#include "fdt.h"
#include "imsic.h"
#include "sbi.h"
#include "timer.h"

/* Entered from start.S. */
void lib_primary_entry(const void *dtb, unsigned hart, uint64_t time, uint64_t cycle);
void lib_secondary_entry(uint64_t opaque);
extern char secondary_entry[];

static unsigned primary_hart;
static uint64_t entry_counter;
static uint64_t entry_cycles;
static uint64_t memory_base, memory_size;

/*
 * What cpu_start hands a hart. work_* are written by the starting hart only, done_seq by the
 * hart itself: the hart runs work_fn when work_seq moves past done_seq, then catches up.
 */
static volatile secondary_fn work_fn[MAX_CPUS];
static volatile uint64_t work_ctx[MAX_CPUS];
static volatile uint32_t work_seq[MAX_CPUS];
static volatile uint32_t done_seq[MAX_CPUS];

uint64_t entry_time(void)
{
	return entry_counter;
}

uint64_t entry_cycle(void)
{
	return entry_cycles;
}

uint64_t ram_base(void)
{
	return memory_base;
}

uint64_t ram_size(void)
{
	return memory_size;
}

__attribute__((weak)) bool guest_banner(void)
{
	return true;
}

void guest_exit(void)
{
	sbi_shutdown();
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

unsigned cpu_harts(unsigned *harts, unsigned max)
{
	unsigned count = 0;

	for (int node = fdt_find_compatible(FDT_NONE, "riscv"); node != FDT_NONE && count < max;
	     node = fdt_find_compatible(node, "riscv")) {
		uint32_t len;
		const char *type = fdt_node_prop(node, "device_type", 0);
		const char *status = fdt_node_prop(node, "status", 0);
		const void *reg = fdt_node_prop(node, "reg", &len);

		if (!type || !str_eq(type, "cpu") || (status && !str_eq(status, "okay")) || !reg ||
		    len != 4)
			continue;
		harts[count++] = fdt_be32(reg);
	}
	return count;
}

/*
 * Every other hart into the idle loop now: left stopped, a hart waits in the firmware, which
 * may spin (OpenSBI 1.1 does under QEMU's icount) and so slow down the harts being measured.
 * Returns how many were started; *failed says the first hart_start error.
 */
static unsigned start_idle_harts(long *failed)
{
	unsigned harts[MAX_CPUS], started = 0;
	unsigned count = cpu_harts(harts, MAX_CPUS);

	*failed = 0;
	for (unsigned i = 0; i < count; i++) {
		if (harts[i] == primary_hart || harts[i] >= MAX_CPUS ||
		    sbi_hart_status(harts[i]) != SBI_HSM_STOPPED)
			continue;
		long err = sbi_hart_start(harts[i], (uintptr_t)secondary_entry, 0);
		if (err == SBI_SUCCESS)
			started++;
		else if (!*failed)
			*failed = err;
	}
	return started;
}

void lib_primary_entry(const void *dtb, unsigned hart, uint64_t time, uint64_t cycle)
{
	long start_error;

	primary_hart = hart;
	entry_counter = time;
	entry_cycles = cycle;
	bool have_dtb = fdt_init(dtb);
	uart_init();
	sbi_init();
	timer_init();
	bool have_imsic = imsic_init();
	imsic_local_init();
	/* What the other harts read of the device tree is in place before they start. */
	mb();
	unsigned idle = start_idle_harts(&start_error);
	bootargs_init();
	if (!fdt_memory(&memory_base, &memory_size))
		memory_base = memory_size = 0;

	if (guest_banner()) {
		struct strview args = bootargs_all();
		unsigned long v = sbi_spec_version();
		printf("%s: entered in S-mode on hart %u; dtb %p%s, ram 0x%lx+0x%lx, sbi %lu.%lu "
		       "(impl %ld 0x%lx), timer %lu Hz%s, uart 0x%lx, imsic 0x%lx, %u idle harts\n",
		       guest_name, hart, dtb, have_dtb ? "" : " (invalid)", memory_base, memory_size,
		       (v >> 24) & 0x7f, v & 0xffffff, sbi_impl_id(), sbi_impl_version(),
		       timer_freq(), timer_has_sstc() ? " (sstc)" : "", uart_address(),
		       imsic_file(hart), idle);
		printf("%s: bootargs \"", guest_name);
		print_strview(args);
		printf("\"\n");
	}
	if (start_error)
		printf("%s: warning: hart_start failed (%ld)\n", guest_name, start_error);
	if (!have_imsic)
		printf("%s: warning: no supervisor-level IMSIC in the device tree\n", guest_name);

	guest_main();
	guest_exit();
}

/*
 * The idle loop: WFI with interrupts masked and only the wake-up enabled, which is an IMSIC
 * identity of the library's own where the hart has a file, else the SBI IPI. The IMSIC keeps
 * the wake-up apart from the supervisor software interrupt and the identities the work itself
 * may wait for (lat's IPI tests wait for both).
 */
void lib_secondary_entry(uint64_t opaque)
{
	unsigned hart = cpu_index();
	bool file = imsic_file(hart) != 0;

	(void)opaque;
	timer_stop();
	imsic_local_init();
	for (;;) {
		irq_disable();
		csr_write(CSR_SIE, file ? SIP_SEIP : SIP_SSIP);
		if (file)
			imsic_enable(IMSIC_ID_WAKE);
		uint32_t seq = work_seq[hart];
		if (seq == done_seq[hart]) {
			/* The work is published before its wake-up: look again after each. */
			wfi();
			if (file)
				imsic_claim();
			else
				csr_clear(CSR_SIP, SIP_SSIP);
			continue;
		}
		if (file)
			imsic_disable(IMSIC_ID_WAKE);
		csr_write(CSR_SIE, 0);
		mb();
		secondary_fn fn = work_fn[hart];
		if (fn)
			fn(work_ctx[hart]);
		irq_disable();
		mb();
		done_seq[hart] = seq;
	}
}

long cpu_start(unsigned hart, secondary_fn fn, uint64_t context)
{
	if (hart >= MAX_CPUS || hart == cpu_index())
		return SBI_ERR_INVALID_PARAM;
	if (!cpu_idle(hart))
		return SBI_ERR_ALREADY_STARTED;
	uint32_t seq = work_seq[hart];

	work_fn[hart] = fn;
	work_ctx[hart] = context;
	mb();
	work_seq[hart] = seq + 1;
	mb();

	long err = SBI_SUCCESS;
	if (sbi_hart_status(hart) == SBI_HSM_STOPPED)
		err = sbi_hart_start(hart, (uintptr_t)secondary_entry, 0);
	else if (imsic_file(hart))
		imsic_send(imsic_file(hart), IMSIC_ID_WAKE);
	else
		err = sbi_send_ipi_one(hart);
	if (err != SBI_SUCCESS)
		work_seq[hart] = seq;   /* it will not run: nothing to wait for */
	return err;
}

bool cpu_idle(unsigned hart)
{
	return hart < MAX_CPUS && work_seq[hart] == done_seq[hart];
}
