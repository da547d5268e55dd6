/* SPDX-License-Identifier: MIT */
/*
 * The physical core: bring-up through SBI HSM, its HS-mode map checked, idling and spin-waits,
 * the board's power and counter, and the hypervisor's own panic.
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/entry.h>
#include <arch/firmware.h>
#include <arch/imsic.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

struct riscv_cpu cpus[MAX_CPUS];
/* Page-aligned: the guard pages are left out of HS-mode's map (mmu.c). */
struct core_stack cpu_stacks[MAX_CPUS] __attribute__((aligned(4096), section(".noinit")));
uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE] __attribute__((aligned(16), section(".noinit")));

static void cpu_early(unsigned id)
{
	struct riscv_cpu *c = &cpus[id];

	c->id = id;
	c->stack_top = (uintptr_t)cpu_stacks[id].stack + STACK_SIZE;
	c->panic_top = (uintptr_t)panic_stacks[id] + PANIC_STACK_SIZE;
	c->fetch_vec = (uintptr_t)doorbell_fetch_fault;
	c->trap_vec = (uintptr_t)trap_entry;
	__asm__ volatile("mv tp, %0" : : "r"(c));
	csr_write(stvec, (uintptr_t)trap_entry);
	csr_write(sscratch, 0);
	/* The same for every vCPU this core will run. */
	csr_write(hedeleg, HEDELEG_GUEST);
	csr_write(hideleg, HIDELEG_GUEST);
	csr_write(hcounteren, HCOUNTEREN_CY_TM_IR);
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
	riscv_imsic_harts_init(guest_files);
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
	riscv_imsic_init();
	aplic_init();
	tern_main(fdt);
}

void riscv_boot_secondary(unsigned id)
{
	cpu_early(id);
	riscv_imsic_init();
	cpu_idle(id);
}

unsigned arch_cpu_id(void)
{
	return (unsigned)this_cpu()->id;
}

/*
 * The word first, then the firmware's start: the hart may come in through _start instead of
 * secondary_entry (boot.S, await_start), and there takes the word as its start.  A refused
 * start is a hart the firmware counts as running already, in await_start; any other refusal
 * (the hart absent) is the caller's error.
 */
bool arch_cpu_start(unsigned pcpu)
{
	if (pcpu >= MAX_CPUS)
		return false;
	__atomic_store_n(&riscv_cpu_released[pcpu], 1, __ATOMIC_RELEASE);
	if (sbi_call(SBI_EXT_HSM, SBI_HSM_HART_START, pcpu, (uintptr_t)secondary_entry, pcpu).error == 0)
		return true;
	struct sbiret status = sbi_call(SBI_EXT_HSM, SBI_HSM_HART_GET_STATUS, pcpu, 0, 0);

	return status.error == 0 &&
	       (status.value == SBI_HSM_STARTED || status.value == SBI_HSM_START_PENDING);
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

/*
 * Interrupts stay off (sstatus.SIE = 0): WFI still returns when an enabled one is pending,
 * and the core then clears what woke it instead of taking a trap.  A deadline arms the
 * core's own stimecmp (Sstc).
 */
void arch_cpu_idle_wait(uint64_t deadline)
{
	/* SGEI: a saved trap-less vCPU's guest file (only a shared core sets hgeie bits). */
	uint64_t enable = SIE_SEIE | SIE_SGEIE;

	/*
	 * QEMU 7.2's riscv64 board under icount does not wake a board whose every hart sleeps
	 * with no timer armed for an interrupt from the host (the console's input: `tern ctl`
	 * went unanswered once a shared core's last runnable vCPU was paused; `stop` of a VirtIO
	 * backend once its frontend had ended).  The console core and a shared core idle with
	 * their next 10 ms armed at the latest.
	 */
	if (!deadline && (cpu_is_shared(this_cpu()->id) || this_cpu()->id == console_core()))
		deadline = arch_counter() + platform.arch.timebase_hz / 100u;
	if (deadline) {
		csr_write(CSR_STIMECMP, deadline);
		enable |= SIE_STIE;
	}
	csr_set(sie, enable);
	__asm__ volatile("wfi" ::: "memory");
	csr_clear(sie, enable);
	riscv_guest_files_raised(); /* the loop looks at them next (arch_vcpu_wake_pending) */
	(void)riscv_take_kicks();
	csr_write(CSR_STIMECMP, ~0ULL); /* its level drops: nothing stays pending */
}

/*
 * Not arch_cpu_idle_wait: a trap-and-emulate guest's SBI timer is the core's stimecmp, which
 * must keep its deadline.  Only the core's own external interrupt (kicks, the console's input,
 * a trap-and-emulate guest's devices into its virtual APLIC) wakes it; the guest's VS
 * interrupts (hie) and its SBI timer stay pending, taken when it returns.  What a kick posted
 * for the vCPU (riscv_post) is applied here, as riscv_core_interrupts would.
 */
void arch_vcpu_wait(struct vcpu *v)
{
	uint64_t enabled = csr_read(sie);
	uint64_t guest = csr_read(hie);

	csr_write(hie, 0);
	csr_write(sie, SIE_SEIE);
	__asm__ volatile("wfi" ::: "memory");
	csr_write(sie, enabled);
	csr_write(hie, guest);
	if (riscv_take_kicks())
		riscv_take_posted(v);
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

uint64_t arch_ipa_limit(void)
{
	return BIT(41); /* Sv39x4 */
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
