/* SPDX-License-Identifier: MIT */
/*
 * riscv64: core bring-up through SBI HSM, idling, kicks, the board's power.  Partitions
 * (G-stage, VS-mode entry, the SBI the guests call) come next (issue 13, docs/design.md).
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/csr.h>
#include <arch/entry.h>
#include <arch/partition.h>
#include <tern/arch.h>
#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

#define SBI_EXT_HSM  0x48534du
#define SBI_EXT_SRST 0x53525354u
#define SBI_HSM_HART_START  0
#define SBI_SRST_RESET      0
#define SBI_SRST_SHUTDOWN   0

struct sbiret {
	long error;
	long value;
};

struct riscv_cpu cpus[MAX_CPUS];
/* Page-aligned: the guard pages are left out of HS-mode's map (mmu.c). */
struct core_stack cpu_stacks[MAX_CPUS] __attribute__((aligned(4096), section(".noinit")));
uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE] __attribute__((aligned(16), section(".noinit")));

/* A call into the SBI firmware (OpenSBI) below the hypervisor. */
static struct sbiret sbi_call(uint32_t ext, uint32_t fn, uint64_t a0, uint64_t a1, uint64_t a2)
{
	register uint64_t r0 __asm__("a0") = a0;
	register uint64_t r1 __asm__("a1") = a1;
	register uint64_t r2 __asm__("a2") = a2;
	register uint64_t r6 __asm__("a6") = fn;
	register uint64_t r7 __asm__("a7") = ext;

	__asm__ volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
	return (struct sbiret){ (long)r0, (long)r1 };
}

static void cpu_early(unsigned id)
{
	struct riscv_cpu *c = &cpus[id];

	c->id = id;
	c->stack_top = (uintptr_t)cpu_stacks[id].stack + STACK_SIZE;
	c->panic_top = (uintptr_t)panic_stacks[id] + PANIC_STACK_SIZE;
	__asm__ volatile("mv tp, %0" : : "r"(c));
	csr_write(stvec, (uintptr_t)trap_entry);
	csr_write(sscratch, 0);
	/* The same for every vCPU this core will run. */
	csr_write(hedeleg, HEDELEG_GUEST);
	csr_write(hideleg, HIDELEG_GUEST);
	csr_write(hcounteren, HCOUNTEREN_CY_TM_IR);
}

/*
 * Kicks are MSIs: a store of KICK_ID into the core's S-level IMSIC file (one store, where an
 * SBI IPI is an ecall into OpenSBI and its M-mode IPI to the target).
 */
#define KICK_ID 1u

/* cppcheck-suppress misra-c2012-2.7 ; both are read by csr_write's asm operands, which the addon does not see */
static void imsic_write(unsigned reg, uint64_t value)
{
	csr_write(CSR_SISELECT, reg);
	csr_write(CSR_SIREG, value);
}

/*
 * This core's S-level file: interrupts delivered; the kick's, the console's and the wired
 * sources' identities enabled (only what the APLIC is told to send here arrives).
 */
static void kicks_init(void)
{
	uint64_t wired_last = EIID_WIRED_BASE + APLIC_MAX_SOURCES - 1u;

	_Static_assert(EIID_WIRED_BASE >= 32u && EIID_WIRED_BASE + APLIC_MAX_SOURCES <= 192u,
		       "the wired identities are eie0's upper half, eie2 and part of eie4");
	imsic_write(IMSIC_EITHRESHOLD, 0);
	imsic_write(IMSIC_EIE0, BIT(KICK_ID) | BIT(EIID_CONSOLE) | (~0ULL << EIID_WIRED_BASE));
	imsic_write(IMSIC_EIE0 + 2u, ~0ULL);
	imsic_write(IMSIC_EIE0 + 4u, BIT(wired_last - 128u + 1u) - 1u);
	imsic_write(IMSIC_EIDELIVERY, 1);
}

/* How many guest interrupt files each hart has (GEILEN: the hgeie bits that stick). */
unsigned riscv_guest_files(void)
{
	csr_write(CSR_HGEIE, ~0ULL);
	uint64_t files = csr_read(CSR_HGEIE);
	csr_write(CSR_HGEIE, 0);
	return (unsigned)__builtin_popcountll(files);
}

/*
 * QEMU virt gives each hart its S-level file and its guest files in a power-of-two number of
 * pages (aia-guests=1: 2 pages, 2 or 3: 4, 4 to 7: 8).  The base is copied next to the stride so
 * that a kick reads both from one address: the base from `platform` and the stride from a
 * variable of its own took two more instructions a kick.  Not static for the same reason: clang
 * gives each field of a static object its own address computation.
 */
struct riscv_imsic_harts riscv_imsic_harts;

paddr_t riscv_imsic_hart_file(unsigned hart)
{
	return riscv_imsic_harts.base + (uint64_t)hart * riscv_imsic_harts.stride;
}

#define INSN_RET 0x00008067u
#define EXC_INST_PAGE_FAULT  12u
#define EXC_LOAD_PAGE_FAULT  13u
#define EXC_STORE_PAGE_FAULT 15u

/* A `ret` in read-only data and one in writable data: calling either must fault. */
static const uint32_t ret_ro = INSN_RET;
static uint32_t ret_rw = INSN_RET;

/*
 * The map as the hardware enforces it, on this core: its text and read-only data take no
 * store, its data no fetch, its stack's guard page and the firmware's memory below it not
 * even a load (a page that cannot be read cannot be written: W without R is reserved); its
 * own tables take stores (W^X: they are data).
 */
static bool hs_map_checked(unsigned id)
{
	return riscv_probe_store((uintptr_t)&hyp_image_start) == EXC_STORE_PAGE_FAULT &&
	       riscv_probe_store((uintptr_t)trap_entry) == EXC_STORE_PAGE_FAULT &&
	       riscv_probe_store((uintptr_t)&ret_ro) == EXC_STORE_PAGE_FAULT &&
	       riscv_probe_exec((uintptr_t)&ret_ro) == EXC_INST_PAGE_FAULT &&
	       riscv_probe_exec((uintptr_t)&ret_rw) == EXC_INST_PAGE_FAULT &&
	       riscv_probe_load((uintptr_t)cpu_stacks[id].guard) == EXC_LOAD_PAGE_FAULT &&
	       riscv_probe_load(platform.ram_base) == EXC_LOAD_PAGE_FAULT &&
	       riscv_probe_store(riscv_mmu_root()) == 0u &&
	       csr_read(satp) == riscv_hyp_satp;
}

void riscv_boot_primary(unsigned id, uint64_t entry_time, paddr_t fdt)
{
	unsigned guest_files;

	boot_times.entry = entry_time;
	cpu_early(id);
	/* Kicks need the AIA's IMSIC, trap-less partitions its guest files. */
	guest_files = riscv_guest_files();
	if (guest_files == 0u) {
		tern_log("error: this board has no IMSIC guest interrupt files "
			 "(QEMU: -M virt,aia=aplic-imsic,aia-guests=1 or more)");
		arch_board_off();
	}
	riscv_imsic_harts.base = platform.arch.imsic_s_base;
	riscv_imsic_harts.stride = IMSIC_FILE_SIZE;
	while (riscv_imsic_harts.stride < ((uint64_t)guest_files + 1u) * IMSIC_FILE_SIZE)
		riscv_imsic_harts.stride <<= 1;
	/* The map takes every hart's IMSIC files at the board's stride. */
	if (!riscv_mmu_init(fdt)) {
		console_panic_line("error: out of table pages for HS-mode's own map");
		arch_board_off();
	}
#ifdef TERN_TEST_HOOK_WX_BROKEN
	/* Test builds only (tests/system/test_hyp_map.py): the check below must refuse this. */
	riscv_hyp_satp = 0;
#endif
	riscv_mmu_enable();
	boot_times.mmu_on = arch_counter();
	if (!hs_map_checked(id)) {
		console_panic_line("error: HS-mode's map is not W^X, or a stack's guard page is mapped");
		arch_board_off();
	}
#ifdef TERN_TEST_HOOK_STACK_OVERFLOW
	/* Test builds only (tests/system/test_hyp_map.py): a push past the end of this core's stack. */
	__asm__ volatile("li t0, %0\n\tsub sp, sp, t0\n\tsd zero, 0(sp)" : : "i"(STACK_SIZE) : "t0", "memory");
#endif
	kicks_init();
	aplic_init();
	tern_main(fdt);
}

void riscv_boot_secondary(unsigned id)
{
	cpu_early(id);
	kicks_init();
	cpu_idle(id);
}

unsigned arch_cpu_id(void)
{
	return (unsigned)this_cpu()->id;
}

bool arch_cpu_start(unsigned pcpu)
{
	if (pcpu >= MAX_CPUS)
		return false;
	return sbi_call(SBI_EXT_HSM, SBI_HSM_HART_START, pcpu, (uintptr_t)secondary_entry, pcpu).error == 0;
}

/*
 * A spin-wait's pause: WFI until an interrupt is pending or for a microsecond at most.  A
 * core that only spins would keep QEMU's single-threaded TCG (icount) on itself until its
 * time slice ends, and the core it waits for would not run: WFI is where QEMU moves on to the
 * next hart.  Nothing is claimed (a kick stays pending for its taker) and the core's timer,
 * which may be a trap-and-emulate guest's, gets its deadline back.
 */
#define RELAX_TICKS 10u

void arch_cpu_relax(void)
{
	uint64_t deadline = csr_read(CSR_STIMECMP);
	uint64_t enabled = csr_read(sie);
	uint64_t now = arch_counter();
	uint64_t soon = now + RELAX_TICKS;

	/*
	 * Written even when the deadline is earlier: QEMU raises STIP on a write, not at reset.
	 * A deadline already passed (a trap-less vCPU's nudge, a trap-and-emulate guest's timer
	 * due when it returns) would make this no pause at all.
	 */
	csr_write(CSR_STIMECMP, (deadline > now && deadline < soon) ? deadline : soon);
	csr_set(sie, SIE_STIE);
	__asm__ volatile("wfi" ::: "memory");
	csr_write(sie, enabled);
	csr_write(CSR_STIMECMP, deadline);
}

void arch_cpu_kick(unsigned pcpu)
{
	volatile uint32_t *seteipnum = (volatile uint32_t *)(uintptr_t)riscv_imsic_hart_file(pcpu);

	__asm__ volatile("fence w, o" ::: "memory"); /* what the kick is about is visible first */
	*seteipnum = KICK_ID;
}

bool riscv_take_kicks(void)
{
	bool kicked = false;

	for (;;) {
		/* identity << 16 | priority, or 0 */
		uint32_t id = (uint32_t)(csr_swap(CSR_STOPEI, 0) >> 16);
		if (id == 0u)
			break;
		if (id == KICK_ID) {
			kicked = true;
		} else if (id == EIID_CONSOLE) {
			console_rx();
			aplic_console_retrigger();
		} else {
			vaplic_host_interrupt(id);
		}
	}
	return kicked;
}

/*
 * Interrupts stay off (sstatus.SIE = 0): WFI still returns when an enabled one is pending,
 * and the core then clears what woke it instead of taking a trap.  A deadline arms the
 * core's own stimecmp (Sstc).
 */
void arch_cpu_idle_wait(uint64_t deadline)
{
	uint64_t enable = SIE_SEIE;

	if (deadline) {
		csr_write(CSR_STIMECMP, deadline);
		enable |= SIE_STIE;
	}
	csr_set(sie, enable);
	__asm__ volatile("wfi" ::: "memory");
	csr_clear(sie, enable);
	(void)riscv_take_kicks();
	csr_write(CSR_STIMECMP, ~0ULL); /* its level drops: nothing stays pending */
}

static __attribute__((noreturn)) void board_shutdown(void)
{
	(void)sbi_call(SBI_EXT_SRST, SBI_SRST_RESET, SBI_SRST_SHUTDOWN, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

/*
 * boot.S's `cycle` at the hypervisor's first instruction.  `time` (tern-boot) ticks at
 * 10 MHz; under QEMU's icount `cycle` counts virtual nanoseconds from the board's reset, one
 * per instruction at shift 0: the boot benchmark's count up to the hypervisor, said at the
 * end (a line at boot would cost boot time).
 */
extern uint64_t riscv_entry_cycle;

void arch_board_off(void)
{
	console_printf("tern-boot-cycle {\"entry\":%llu}", (unsigned long long)riscv_entry_cycle);
	console_flush();
	board_shutdown();
}

uint64_t arch_counter(void)
{
	uint64_t t;

	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}

uint64_t arch_counter_freq(void)
{
	return platform.arch.timebase_hz;
}

bool arch_iommu_init(const struct tern_config *cfg, char *err, size_t errlen)
{
	if (cfg->flags & TERN_CF_IOMMU) {
		(void)snprintf(err, errlen, "this board has no IOMMU");
		return false;
	}
	return true;
}

bool arch_iommu_present(void)
{
	return false;
}

void arch_iommu_poll(void)
{
}

void arch_iommu_poll_partition(struct partition *p)
{
	(void)p;
}

uint64_t arch_ipa_limit(void)
{
	return BIT(41); /* Sv39x4 */
}

/*
 * The SBI timer's stand-in (the core's stimecmp) and what the vCPU had pending, dropped; its
 * enables too (hie's VS bits are its vsie), or its timer or interrupt file would keep waking
 * the idle core's WFI.
 */
void arch_vcpu_quiesce(struct vcpu *v)
{
	(void)v;
	csr_write(CSR_STIMECMP, ~0ULL);
	csr_write(hvip, 0);
	csr_write(hie, 0);
}

/* The fast paths' counts (boot.S: the SBI timer handed to the guest, trapped WFIs). */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id)
{
	const struct riscv_cpu *c = &cpus[v->pcpu];

	if (id == STAT_EXIT_IRQ || id == STAT_IRQ_INJECTED)
		return c->fast_timer;
	if (id == STAT_EXIT_WFI)
		return c->fast_wfi;
	return 0;
}

/* A trapped WFI waits with the vCPU's guest file still selected (vcpu.c: guest_wfi). */
bool arch_direct_wfi_trap(void)
{
	return true;
}

uint32_t arch_irq_max_intid(void)
{
	return 1023;
}

void arch_sync_guest_memory(paddr_t pa, uint64_t size)
{
	(void)pa;
	(void)size;
	__asm__ volatile("fence rw, rw\n\tfence.i" ::: "memory");
}

void riscv_hyp_panic(const uint64_t *regs)
{
	struct riscv_cpu *c = this_cpu();
	uint64_t stval = csr_read(stval);
	uintptr_t guard = (uintptr_t)cpu_stacks[c->id].guard;

	if (c->panicking)
		board_shutdown(); /* the report itself faulted */
	c->panicking = true;
	console_panic_line("PANIC cpu=%u %s scause=0x%llx stval=0x%llx sepc=0x%llx", (unsigned)c->id,
			   stval - guard < STACK_GUARD ? "stack overflow in HS-mode (its guard page)"
						       : "exception in HS-mode",
			   (unsigned long long)csr_read(scause), (unsigned long long)stval,
			   (unsigned long long)csr_read(sepc));
	for (int i = 1; i < 31; i += 3)
		console_panic_line("PANIC x%02d=0x%016llx x%02d=0x%016llx x%02d=0x%016llx", i,
				   (unsigned long long)regs[i], i + 1, (unsigned long long)regs[i + 1],
				   i + 2, (unsigned long long)regs[i + 2]);
	console_panic_line("PANIC x31=0x%016llx", (unsigned long long)regs[31]);
	board_shutdown(); /* not through the console's lock: it may be held */
}
