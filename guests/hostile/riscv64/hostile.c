/*
 * The riscv64 hostile partition (tests/system/test_riscv64_partitions.py): one misdeed per
 * boot, chosen with hostile.action=NAME, as guests/hostile does on arm64.
 *
 * What the hypervisor must do with each:
 *  - ram-write: a store just past the partition's RAM; foreign-file: a store into the IMSIC
 *    file where a hart the partition does not have would find its own; aplic: a store into
 *    the APLIC's supervisor domain by a partition that owns no wired source (it has no
 *    APLIC). Each is outside the partition's map: with on_fault = "stop" it is stopped with a
 *    `tern: fault` line, the access never completes.
 *  - aplic-foreign: a partition that owns the PCIe bus, and so its INTx sources at its
 *    APLIC, programs source 10 (the board UART's: the hypervisor console's input) to send
 *    to its own hart and makes it pending, and asks genmsi for a hart it does not have. In
 *    its APLIC the sources it does not own are not implemented: the writes are ignored and
 *    counted (aplic_ignored), the registers read zero, the console's input still works.
 *  - sbi-foreign: SBI HSM hart_start and hart_get_status, and an SBI IPI, for harts beyond the
 *    partition's. Refused (SBI_ERR_INVALID_PARAM), counted, the guest carries on.
 *  - uart-flood: its UART's transmit register stored to in a tight loop, for ever. What the
 *    console cannot hold is dropped and counted; nobody else waits.
 *  - reset-loop: SBI SRST cold reboot first thing on every boot: only its own partition.
 *  - trap-storm: hostile.rounds rounds (default 20000) of every trap a guest can make without
 *    misdeed, back to back: an SBI call, an emulated UART register read, its APLIC's (it owns
 *    the PCIe bus) and a source it does not own; then it ends. Each trap costs only its own
 *    core: a neighbour's latency afterwards is as alone.
 *  - doorbell-storm: hostile.rounds rounds of rings to every other member of channel
 *    hostile.chan and to one the channel does not have: counted on this side, a cost of its
 *    own core only.
 *  - doorbell-regs: hostile.rounds rounds of rings of channel hostile.chan's member 1 stored
 *    from every register, with SW and C.SW, every other register holding a member index the
 *    channel does not have (rings.S): every ring rings, none is refused, whichever register
 *    the hypervisor's doorbell path reads.
 *  - doorbell-edge: a ring of member 1 of hostile.chan by a C.SW in the last 2 bytes of its
 *    RAM, run into: the hypervisor's doorbell path, reading 4 bytes there, faults on the 2
 *    past the RAM's end and leaves the ring to C, which rings; the fetch past the end then
 *    ends the partition (on_fault does not matter: its channel's memory is mapped there).
 *  - msi-foreign: QEMU's edu (the partition owns the PCIe bus) with its MSI aimed at the
 *    IMSIC file of a hart the partition does not have, and enabled: the hypervisor refuses
 *    the enable and stops the partition; the device never writes there.
 *  - fence-race: every other hart of the partition calls, in a loop, an SBI call that waits
 *    for (or signals) hart 0 (hostile.race: fence-i, sfence-asid, fence-all or ipi) while hart
 *    0 ends the partition (hostile.end: srst, a reboot, or fault, a store past its RAM), and
 *    again at every restart. A hart waiting for a remote fence must give up when its
 *    partition ends: the partition ends, nothing else waits, the console serves everyone.
 *  - access-outside: a load, a store and a jump to an address where the board has nothing
 *    (hostile.addr, default 0x18000000), each taken by its own handler. With on_fault =
 *    "inject" the access fault the bare board raises (cause 5, 7, 1; stval the address), in
 *    its own handler, as natively (which the test compares): it carries on.
 *  - busy: no misdeed, the control neighbour (it only computes, with a timer armed).
 *  - vu-wfi: a WFI in its own user mode (U, or VU in a partition), a timer armed in case it
 *    waits: on the board (mstatus.TW = 0) an illegal instruction for its own handler at the
 *    WFI, never a wait; a partition's must be the same.
 *  - hsm-suspend: SBI HSM hart_suspend, checked against what the board's OpenSBI does: the
 *    reserved and platform-specific types refused, a retentive and a non-retentive default
 *    suspend each woken by its timer (the non-retentive resumed at its address with a0, a1,
 *    satp and sstatus.SIE as the SBI says), and hart 1 SUSPENDED to hart_get_status until an
 *    SBI IPI wakes it.
 *  - hsm-suspend-forever: hart 1 suspends with nothing enabled, for ever; once hart 0 sees it
 *    SUSPENDED it says so and, with hostile.then=srst, shuts the partition down (SRST), else
 *    suspends for ever too (the console stops or restarts it). The partition must end.
 *  - virtio-garbage, virtio-storm, virtio-busy, virtio-backend-garbage, virtio-backend-silent:
 *    as on arm64 (../virtio/actions.c, the same code).
 * Output: PROBE-JSON lines with "test":"hostile-<action>" (tools/tern/results.py parses them).
 */
#include "aplic.h"
#include "bootargs.h"
#include "channel.h"
#include "console.h"
#include "imsic.h"
#include "pci.h"
#include "riscv.h"
#include "runtime.h"
#include "sbi.h"
#include "timer.h"
#include "trap.h"
#include "../virtio/actions.h"

const char guest_name[] = "hostile";

#define SBI_EXT_SRST  0x53525354
#define APLIC_S_BASE  0x0d000000UL

static void trying(const char *action, uintptr_t addr)
{
	printf("PROBE-JSON {\"test\":\"hostile-%s\",\"phase\":\"trying\",\"addr\":\"0x%lx\"}\n",
	       action, (unsigned long)addr);
}

static void store_outside(const char *action, uintptr_t addr)
{
	trying(action, addr);
	mmio_write32(addr, 1);
	printf("PROBE-JSON {\"test\":\"hostile-%s\",\"phase\":\"after\",\"pass\":false}\n", action);
}

/* Where hart `n` of this partition would find its S-level IMSIC file, past its own harts. */
static uintptr_t foreign_file(void)
{
	unsigned harts[MAX_CPUS];
	unsigned n = cpu_harts(harts, MAX_CPUS);
	uintptr_t first = imsic_file(0), second = imsic_file(1);
	uintptr_t stride = (second > first) ? second - first : 0x8000;

	return (first ? first : 0x28000000UL) + n * stride;
}

static void sbi_foreign(void)
{
	unsigned harts[MAX_CPUS];
	unsigned n = cpu_harts(harts, MAX_CPUS);
	long start = sbi_hart_start(n, (uintptr_t)guest_exit, 0);
	long status = sbi_hart_status(7);
	long ipi = sbi_send_ipi_one(n);

	printf("PROBE-JSON {\"test\":\"hostile-sbi-foreign\",\"phase\":\"done\",\"hart\":%u,"
	       "\"start\":%ld,\"status\":%ld,\"ipi\":%ld,\"pass\":%s}\n", n, start, status, ipi,
	       (start == -3 && status == -3 && ipi == -3) ? "true" : "false");
}

static void uart_flood(void)
{
	uintptr_t thr = uart_address();

	printf("PROBE-JSON {\"test\":\"hostile-uart-flood\",\"phase\":\"acting\"}\n");
	for (;;) {
		mmio_write8(thr, 'x');
		mmio_write8(thr, '\n');
	}
}

static void busy(void)
{
	unsigned long us = bootarg_ulong("hostile.busy_us", 20000, 1, 100000000);
	uint64_t end = deadline_after_us(us);
	uint64_t rounds = 0;

	printf("PROBE-JSON {\"test\":\"hostile-busy\",\"phase\":\"acting\"}\n");
	while (!deadline_passed(end)) {
		timer_arm(deadline_after_us(10)); /* a deadline ahead: icount's round-robin moves on */
		for (volatile unsigned i = 0; i < 1000; i++)
			;
		rounds++;
	}
	timer_stop();
	printf("PROBE-JSON {\"test\":\"hostile-busy\",\"phase\":\"done\",\"rounds\":%lu,"
	       "\"pass\":true}\n", (unsigned long)rounds);
}

#define UART_SOURCE         10

#define SBI_EXT_RFENCE          0x52464e43
#define SBI_RFENCE_FENCE_I      0
#define SBI_RFENCE_SFENCE_ASID  2
#define RACE_WARMUP_CALLS       100

enum race { RACE_FENCE_I, RACE_SFENCE_ASID, RACE_FENCE_ALL, RACE_IPI };

static volatile unsigned long race_calls[MAX_CPUS];

/* remote_sfence_vma_asid takes five arguments: sbi_call passes three. */
static long sfence_asid_hart0(void)
{
	register unsigned long a0 __asm__("a0") = 1;      /* hart_mask: hart 0 */
	register unsigned long a1 __asm__("a1") = 0;      /* hart_mask_base */
	register unsigned long a2 __asm__("a2") = 0;      /* start_addr */
	register unsigned long a3 __asm__("a3") = ~0UL;   /* size: all */
	register unsigned long a4 __asm__("a4") = 1;      /* asid */
	register unsigned long a6 __asm__("a6") = SBI_RFENCE_SFENCE_ASID;
	register unsigned long a7 __asm__("a7") = SBI_EXT_RFENCE;

	__asm__ volatile("ecall" : "+r"(a0), "+r"(a1) : "r"(a2), "r"(a3), "r"(a4), "r"(a6), "r"(a7)
			 : "memory");
	return (long)a0;
}

/* On a sibling hart, for ever: the call `race` names, aimed at hart 0. */
static void race_loop(uint64_t race)
{
	unsigned long hart;

	__asm__ volatile("mv %0, tp" : "=r"(hart)); /* the library keeps the hart id there */
	for (;;) {
		if (race == RACE_FENCE_I)
			(void)sbi_call(SBI_EXT_RFENCE, SBI_RFENCE_FENCE_I, 1, 0, 0);
		else if (race == RACE_SFENCE_ASID)
			(void)sfence_asid_hart0();
		else if (race == RACE_FENCE_ALL)
			(void)sbi_call(SBI_EXT_RFENCE, SBI_RFENCE_FENCE_I, 0, ~0UL, 0);
		else
			(void)sbi_send_ipi_one(0);
		race_calls[hart % MAX_CPUS]++;
	}
}

static void fence_race(void)
{
	static const char *const names[] = { "fence-i", "sfence-asid", "fence-all", "ipi" };
	struct strview race_arg = { "fence-i", 7 }, end = { "srst", 4 };
	unsigned harts[MAX_CPUS];
	unsigned n = cpu_harts(harts, MAX_CPUS);
	uint64_t race = RACE_FENCE_I;

	(void)bootarg("hostile.race", &race_arg);
	(void)bootarg("hostile.end", &end);
	for (uint64_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strview_eq(race_arg, names[i]))
			race = i;
	for (unsigned i = 1; i < n; i++)
		(void)cpu_start(harts[i], race_loop, race);
	/* Each sibling is in its loop: from now on one of them is always in or near the call. */
	for (unsigned i = 1; i < n; i++)
		while (race_calls[harts[i] % MAX_CPUS] < RACE_WARMUP_CALLS)
			;
	printf("PROBE-JSON {\"test\":\"hostile-fence-race\",\"phase\":\"acting\",\"harts\":%u,"
	       "\"race\":\"%s\"}\n", n, names[race]);
	if (strview_eq(end, "fault"))
		store_outside("fence-race", (uintptr_t)(ram_base() + ram_size()));
	else
		(void)sbi_call(SBI_EXT_SRST, 0, 1, 0, 0); /* cold reboot: only its partition */
	printf("PROBE-JSON {\"test\":\"hostile-fence-race\",\"phase\":\"after\",\"pass\":false}\n");
}

/*
 * run_user(fn): fn in user mode, until it makes an ecall, which user_sync turns into a return
 * from run_user in supervisor mode (sp, ra and the saved registers are still the caller's).
 * user_wfi: the WFI under test, then that ecall.
 */
void run_user(void (*fn)(void));
void user_wfi(void);
__asm__(".text\n"
	".balign 4\n"
	".globl run_user\n"
	"run_user:\n"
	"	li	t0, 0x120\n"            /* sstatus.SPP and SPIE: to U, with SIE off after */
	"	csrc	sstatus, t0\n"
	"	csrw	sepc, a0\n"
	"	sret\n"
	".balign 4\n"
	".globl user_wfi\n"
	"user_wfi:\n"
	"	wfi\n"
	"	ecall\n"
	"1:	j	1b\n");

#define SSTATUS_SPP    (1UL << 8)
#define SSTATUS_SPIE   (1UL << 5)
#define EXC_ILLEGAL    2
#define EXC_U_ECALL    8

static volatile uint64_t user_cause = ~0UL, user_sepc, user_stval, user_sstatus;
static volatile unsigned user_timer_irqs;

static void user_sync(struct trap_frame *f)
{
	if (f->scause == EXC_U_ECALL && !(f->sstatus & SSTATUS_SPP)) {
		f->sstatus = (f->sstatus | SSTATUS_SPP) & ~SSTATUS_SPIE;
		f->sepc = f->x[1];      /* run_user's return address */
		return;
	}
	if (user_cause == ~0UL) {
		user_cause = f->scause;
		user_sepc = f->sepc;
		user_stval = f->stval;
		user_sstatus = f->sstatus;
	}
	f->sepc += 4;
}

static void user_irq(struct trap_frame *f)
{
	(void)f;
	timer_stop();
	user_timer_irqs++;
}

static void vu_wfi(void)
{
	trap_set_sync_handler(user_sync);
	trap_set_irq_handler(user_irq);
	timer_arm(deadline_after_us(20000)); /* if the WFI waits, this ends it */
	csr_set(CSR_SIE, SIP_STIP);
	run_user(user_wfi);
	csr_clear(CSR_SIE, SIP_STIP);
	timer_stop();
	trap_set_sync_handler(NULL);
	trap_set_irq_handler(NULL);
	bool pass = user_cause == EXC_ILLEGAL && user_sepc == (uintptr_t)user_wfi &&
		    !(user_sstatus & SSTATUS_SPP) && user_timer_irqs == 0;
	printf("PROBE-JSON {\"test\":\"hostile-vu-wfi\",\"phase\":\"done\",\"cause\":%ld,"
	       "\"at_wfi\":%s,\"from_user\":%s,\"stval\":\"0x%lx\",\"timer_irqs\":%u,"
	       "\"pass\":%s}\n", (long)user_cause, user_sepc == (uintptr_t)user_wfi ? "true" : "false",
	       (user_sstatus & SSTATUS_SPP) ? "false" : "true", (unsigned long)user_stval,
	       user_timer_irqs, pass ? "true" : "false");
}

#define SBI_HSM_SUSPEND        3
#define SBI_HSM_SUSPENDED      4
#define SUSPEND_NON_RETENTIVE  0x80000000UL

static long hart_suspend(unsigned long type, uintptr_t resume, unsigned long opaque)
{
	return sbi_call(SBI_EXT_HSM, SBI_HSM_SUSPEND, type, resume, opaque).error;
}

/*
 * A non-retentive suspend (type in a0) that resumes at suspend_resume: the callee-saved
 * registers, sp, ra, gp, tp and stvec are kept in `ctx` (opaque) and put back there, with
 * what the resume found (a0, a1, satp, sstatus); returns 0, or the call's error.
 */
struct resume_ctx {
	uint64_t regs[16];      /* ra sp gp tp s0-s11 */
	uint64_t stvec;
	uint64_t a0, a1, satp, sstatus;
	uint64_t resumed;
};

long suspend_non_retentive(unsigned long type, struct resume_ctx *ctx);
__asm__(".text\n"
	".balign 4\n"
	".globl suspend_non_retentive\n"
	"suspend_non_retentive:\n"
	"	sd ra, 0(a1)\n	sd sp, 8(a1)\n	sd gp, 16(a1)\n	sd tp, 24(a1)\n"
	"	sd s0, 32(a1)\n	sd s1, 40(a1)\n	sd s2, 48(a1)\n	sd s3, 56(a1)\n"
	"	sd s4, 64(a1)\n	sd s5, 72(a1)\n	sd s6, 80(a1)\n	sd s7, 88(a1)\n"
	"	sd s8, 96(a1)\n	sd s9, 104(a1)\n	sd s10, 112(a1)\n	sd s11, 120(a1)\n"
	"	csrr t0, stvec\n	sd t0, 128(a1)\n"
	"	mv a2, a1\n"
	"	lla a1, suspend_resume\n"
	"	li a7, 0x48534d\n"
	"	li a6, 3\n"
	"	ecall\n"
	"	ret\n"                   /* refused: a0 = its error */
	".balign 4\n"
	"suspend_resume:\n"
	"	sd a0, 136(a1)\n	sd a1, 144(a1)\n"
	"	csrr t0, satp\n	sd t0, 152(a1)\n"
	"	csrr t0, sstatus\n	sd t0, 160(a1)\n"
	"	li t0, 1\n	sd t0, 168(a1)\n"
	"	ld t0, 128(a1)\n	csrw stvec, t0\n"
	"	ld ra, 0(a1)\n	ld sp, 8(a1)\n	ld gp, 16(a1)\n	ld tp, 24(a1)\n"
	"	ld s0, 32(a1)\n	ld s1, 40(a1)\n	ld s2, 48(a1)\n	ld s3, 56(a1)\n"
	"	ld s4, 64(a1)\n	ld s5, 72(a1)\n	ld s6, 80(a1)\n	ld s7, 88(a1)\n"
	"	ld s8, 96(a1)\n	ld s9, 104(a1)\n	ld s10, 112(a1)\n	ld s11, 120(a1)\n"
	"	li a0, 0\n"
	"	ret\n");

_Static_assert(__builtin_offsetof(struct resume_ctx, stvec) == 128, "asm offsets");
_Static_assert(__builtin_offsetof(struct resume_ctx, resumed) == 168, "asm offsets");

/*
 * Woken by its own timer: `time` past the deadline once it returns.  (Not sip.STIP: QEMU 7.2
 * does not show a guest's Sstc timer there, in VS-mode, though it delivers it.)
 */
static bool woken_by_timer(uint64_t deadline)
{
	bool woken = deadline_passed(deadline);

	timer_stop();
	csr_clear(CSR_SIE, SIP_STIP);
	return woken;
}

static volatile long sibling_result = 1;

static void sibling_suspend(uint64_t context)
{
	(void)context;
	csr_write(CSR_SIE, SIP_SSIP);
	sibling_result = hart_suspend(0, 0, 0);
	csr_clear(CSR_SIP, SIP_SSIP);
	csr_write(CSR_SIE, 0);
}

/* Hart `hart`'s HSM status once it is `want` (a timer deadline ahead: icount moves on), or after 1 s. */
static long status_once(unsigned hart, long want)
{
	uint64_t end = deadline_after_us(1000000);
	long status;

	do {
		timer_arm(deadline_after_us(10));
		status = sbi_hart_status(hart);
	} while (status != want && !deadline_passed(end));
	timer_stop();
	return status;
}

static void hsm_suspend(void)
{
	unsigned harts[MAX_CPUS];
	unsigned n = cpu_harts(harts, MAX_CPUS);
	uintptr_t resume = (uintptr_t)guest_exit;  /* a valid address: never reached */
	long reserved = hart_suspend(1, 0, 0);
	long reserved_nr = hart_suspend(SUSPEND_NON_RETENTIVE | 1, resume, 0);
	long platform = hart_suspend(0x10000000, 0, 0);
	long platform_nr = hart_suspend(SUSPEND_NON_RETENTIVE | 0x10000000, resume, 0);

	uint64_t deadline = deadline_after_us(2000);
	csr_write(CSR_SIE, SIP_STIP);
	timer_arm(deadline);
	long retentive = hart_suspend(0, 0, 0);
	bool retentive_timer = woken_by_timer(deadline);

	static struct resume_ctx ctx;
	deadline = deadline_after_us(2000);
	csr_write(CSR_SIE, SIP_STIP);
	timer_arm(deadline);
	long non_retentive = suspend_non_retentive(SUSPEND_NON_RETENTIVE, &ctx);
	bool non_retentive_timer = woken_by_timer(deadline);
	bool resumed_as_spec = ctx.resumed && ctx.a0 == cpu_index() && ctx.a1 == (uintptr_t)&ctx &&
			       ctx.satp == 0 && !(ctx.sstatus & SSTATUS_SIE);

	long status = -100, woken = -100;
	/* A hart other than this one: on the bare board OpenSBI's lottery may boot any. */
	unsigned sibling = n >= 2 && harts[0] == cpu_index() ? harts[1] : harts[0];
	if (n >= 2 && cpu_start(sibling, sibling_suspend, 0) == SBI_SUCCESS) {
		status = status_once(sibling, SBI_HSM_SUSPENDED);
		(void)sbi_send_ipi_one(sibling);
		uint64_t end = deadline_after_us(1000000);
		while (!cpu_idle(sibling) && !deadline_passed(end))
			timer_arm(deadline_after_us(10));
		timer_stop();
		woken = sibling_result;
	}
	bool pass = reserved == SBI_ERR_INVALID_PARAM && reserved_nr == SBI_ERR_INVALID_PARAM &&
		    platform == SBI_ERR_NOT_SUPPORTED && platform_nr == SBI_ERR_NOT_SUPPORTED &&
		    retentive == 0 && retentive_timer && non_retentive == 0 && non_retentive_timer &&
		    resumed_as_spec && status == SBI_HSM_SUSPENDED && woken == 0;
	printf("PROBE-JSON {\"test\":\"hostile-hsm-suspend\",\"phase\":\"done\",\"reserved\":%ld,"
	       "\"reserved_nr\":%ld,\"platform\":%ld,\"platform_nr\":%ld,\"retentive\":%ld,"
	       "\"retentive_timer\":%s,\"non_retentive\":%ld,\"non_retentive_timer\":%s,"
	       "\"resumed_as_spec\":%s,\"sibling_status\":%ld,\"sibling_woken\":%ld,\"pass\":%s}\n",
	       reserved, reserved_nr, platform, platform_nr, retentive,
	       retentive_timer ? "true" : "false", non_retentive,
	       non_retentive_timer ? "true" : "false", resumed_as_spec ? "true" : "false",
	       status, woken, pass ? "true" : "false");
}

static void suspend_for_ever(uint64_t context)
{
	(void)context;
	csr_write(CSR_SIE, 0);
	(void)hart_suspend(0, 0, 0);
	printf("PROBE-JSON {\"test\":\"hostile-hsm-suspend-forever\",\"phase\":\"woken\","
	       "\"pass\":false}\n");
}

static void hsm_suspend_forever(void)
{
	struct strview then = { "wait", 4 };
	long status = -100;

	(void)bootarg("hostile.then", &then);
	if (cpu_start(1, suspend_for_ever, 0) == SBI_SUCCESS)
		status = status_once(1, SBI_HSM_SUSPENDED);
	printf("PROBE-JSON {\"test\":\"hostile-hsm-suspend-forever\",\"phase\":\"suspended\","
	       "\"status\":%ld}\n", status);
	if (strview_eq(then, "srst"))
		(void)sbi_call(SBI_EXT_SRST, 0, 0, 0, 0); /* shutdown */
	suspend_for_ever(0);
}

static void aplic_foreign(void)
{
	uintptr_t aplic = APLIC_S_BASE;

	trying("aplic-foreign", aplic + APLIC_SOURCECFG(UART_SOURCE));
	mmio_write32(aplic + APLIC_DOMAINCFG, APLIC_DOMAINCFG_IE);
	mmio_write32(aplic + APLIC_SOURCECFG(UART_SOURCE), APLIC_SM_LEVEL_HIGH);
	mmio_write32(aplic + APLIC_TARGET(UART_SOURCE), 5);            /* hart 0, identity 5 */
	mmio_write32(aplic + APLIC_SETIENUM, UART_SOURCE);
	mmio_write32(aplic + APLIC_SETIPNUM, UART_SOURCE);
	mmio_write32(aplic + APLIC_GENMSI, 7u << APLIC_TARGET_HART_SHIFT | 5); /* hart 7: not its own */
	uint32_t sourcecfg = mmio_read32(aplic + APLIC_SOURCECFG(UART_SOURCE));
	uint32_t target = mmio_read32(aplic + APLIC_TARGET(UART_SOURCE));
	uint32_t own = mmio_read32(aplic + APLIC_SOURCECFG(32));        /* INTA: its own */
	mmio_write32(aplic + APLIC_SOURCECFG(32), APLIC_SM_LEVEL_HIGH);
	uint32_t own_after = mmio_read32(aplic + APLIC_SOURCECFG(32));
	printf("PROBE-JSON {\"test\":\"hostile-aplic-foreign\",\"phase\":\"after\",\"sourcecfg\":%u,"
	       "\"target\":%u,\"own\":%u,\"own_after\":%u,\"pass\":%s}\n", sourcecfg, target, own,
	       own_after, sourcecfg == 0 && target == 0 && own_after == APLIC_SM_LEVEL_HIGH ? "true" : "false");
	mmio_write32(aplic + APLIC_SOURCECFG(32), 0);
}

static void trap_storm(void)
{
	unsigned long rounds = bootarg_ulong("hostile.rounds", 20000, 1, 100000000);
	uintptr_t lsr = uart_address() + 5;

	printf("PROBE-JSON {\"test\":\"hostile-trap-storm\",\"phase\":\"acting\"}\n");
	for (unsigned long i = 0; i < rounds; i++) {
		(void)sbi_call(0x10, 0, 0, 0, 0);                    /* BASE get_spec_version */
		(void)mmio_read8(lsr);
		(void)mmio_read32(APLIC_S_BASE + APLIC_SOURCECFG(32));
		mmio_write32(APLIC_S_BASE + APLIC_SETIPNUM, UART_SOURCE);
	}
	printf("PROBE-JSON {\"test\":\"hostile-trap-storm\",\"phase\":\"done\",\"rounds\":%lu,"
	       "\"pass\":true}\n", rounds);
}

/*
 * Rings every other member of channel hostile.chan and a member index it does not have,
 * hostile.rounds times: the hypervisor's work is on this core only (as on arm64, whose
 * hostile guest does the same).
 */
static void doorbell_storm(void)
{
	unsigned long rounds = bootarg_ulong("hostile.rounds", 20000, 1, 100000000);
	struct channel ch;
	unsigned long rings = 0, refused = 0;
	enum channel_lookup found = channel_by_bootarg("hostile.chan", &ch);

	if (found != CHANNEL_FOUND) {
		printf("PROBE-JSON {\"test\":\"hostile-doorbell-storm\",\"error\":\"%s\","
		       "\"pass\":false}\n", found == CHANNEL_UNNAMED ?
		       "no channel named: hostile.chan=NAME" : "channel not in the device tree");
		return;
	}
	printf("PROBE-JSON {\"test\":\"hostile-doorbell-storm\",\"phase\":\"acting\"}\n");
	for (unsigned long i = 0; i < rounds; i++) {
		for (uint32_t k = 0; k < ch.members; k++) {
			if (k != ch.self) {
				channel_ring(&ch, k);
				rings++;
			}
		}
		channel_ring(&ch, ch.members);
		refused++;
	}
	printf("PROBE-JSON {\"test\":\"hostile-doorbell-storm\",\"phase\":\"done\",\"rounds\":%lu,"
	       "\"members\":%u,\"rings\":%lu,\"refused\":%lu,\"pass\":true}\n", rounds,
	       (unsigned)ch.members, rings, refused);
}

void ring_through_registers(uintptr_t ring, unsigned long rounds);

#define REGS_RINGS      80      /* a round of ring_through_registers (rings.S) */

/*
 * Rings member 1 of channel hostile.chan (member 0 from x0) storing from every register, with
 * SW and C.SW, hostile.rounds times (rings.S): each ring rings a member, none is refused.
 */
static void doorbell_regs(void)
{
	unsigned long rounds = bootarg_ulong("hostile.rounds", 1, 1, 1000000);
	struct channel ch;
	enum channel_lookup found = channel_by_bootarg("hostile.chan", &ch);

	if (found == CHANNEL_UNNAMED) {
		printf("PROBE-JSON {\"test\":\"hostile-doorbell-regs\",\"error\":"
		       "\"no channel named: hostile.chan=NAME\",\"pass\":false}\n");
		return;
	}
	if (found == CHANNEL_ABSENT || ch.members < 2) {
		printf("PROBE-JSON {\"test\":\"hostile-doorbell-regs\",\"error\":"
		       "\"no channel of two members or more\",\"pass\":false}\n");
		return;
	}
	printf("PROBE-JSON {\"test\":\"hostile-doorbell-regs\",\"phase\":\"acting\"}\n");
	ring_through_registers(ch.doorbell + CHANNEL_DB_RING, rounds);
	printf("PROBE-JSON {\"test\":\"hostile-doorbell-regs\",\"phase\":\"done\",\"rounds\":%lu,"
	       "\"rings\":%lu,\"pass\":true}\n", rounds, rounds * REGS_RINGS);
}

#define C_SW_A1_A0      0xc10cu /* c.sw a1, 0(a0) */

/*
 * Rings member 1 of channel hostile.chan with a C.SW in the last 2 bytes of its RAM, and runs
 * on past them: the hypervisor's doorbell path reads 4 bytes at a 2-byte aligned pc, the next
 * 2 where the partition's RAM ends (its channel's memory, never executable, or nothing), so
 * that read faults in the hypervisor. The ring is then C's (it reads a compressed store's 2
 * bytes only): rung once, and the partition's fetch after it faults.
 */
static void doorbell_edge(void)
{
	struct channel ch;
	uintptr_t at = (uintptr_t)(ram_base() + ram_size() - 2u);
	enum channel_lookup found = channel_by_bootarg("hostile.chan", &ch);

	if (found == CHANNEL_UNNAMED) {
		printf("PROBE-JSON {\"test\":\"hostile-doorbell-edge\",\"error\":"
		       "\"no channel named: hostile.chan=NAME\",\"pass\":false}\n");
		return;
	}
	if (found == CHANNEL_ABSENT || ch.members < 2) {
		printf("PROBE-JSON {\"test\":\"hostile-doorbell-edge\",\"error\":"
		       "\"no channel of two members or more\",\"pass\":false}\n");
		return;
	}
	trying("doorbell-edge", at);
	*(volatile uint16_t *)at = C_SW_A1_A0;
	register uintptr_t a0 __asm__("a0") = ch.doorbell + CHANNEL_DB_RING;
	register uintptr_t a1 __asm__("a1") = 1;
	__asm__ volatile("fence.i\n\tjalr %2" : : "r"(a0), "r"(a1), "r"(at) : "ra", "memory");
	printf("PROBE-JSON {\"test\":\"hostile-doorbell-edge\",\"phase\":\"after\",\"pass\":false}\n");
}

static void msi_foreign(void)
{
	struct pci_host host;
	uint32_t bdf;

	if (!pci_host_init(&host) || !pci_find(&host, 0x1234, 0x11e8, &bdf)) {
		printf("PROBE-JSON {\"test\":\"hostile-msi-foreign\",\"error\":\"no edu device\","
		       "\"pass\":false}\n");
		return;
	}
	uintptr_t file = foreign_file();
	trying("msi-foreign", file);
	bool enabled = pci_msi_enable(&host, bdf, file, 1);
	printf("PROBE-JSON {\"test\":\"hostile-msi-foreign\",\"phase\":\"after\",\"enabled\":%s,"
	       "\"pass\":false}\n", enabled ? "true" : "false");
}

/* ---- access-outside: the board's own access fault ---- */

#define OUTSIDE_DEFAULT   0x18000000UL  /* between fw_cfg and the flash */
#define EXC_INST_ACCESS   1
#define EXC_LOAD_ACCESS   5
#define EXC_STORE_ACCESS  7
#define SSTATUS_SPIE      (1UL << 5)
#define SSTATUS_SPP       (1UL << 8)

struct outside_seen {
	uint32_t count;
	uint64_t scause, stval, sepc, sstatus;
};

static volatile struct outside_seen seen;     /* the handler's: the last trap, and how many */

/* A fetch fault returns to the caller of the jump (ra); a load or store steps over it. */
static void outside_trap(struct trap_frame *frame)
{
	seen.count++;
	seen.scause = frame->scause;
	seen.stval = frame->stval;
	seen.sepc = frame->sepc;
	seen.sstatus = frame->sstatus;
	frame->sepc = frame->scause == EXC_INST_ACCESS ? frame->x[1] : frame->sepc + 4;
}

/* What the handler saw of the access made since `before` traps. */
static void outside_note(struct outside_seen *out, uint32_t before)
{
	out->count = seen.count - before;
	out->scause = seen.scause;
	out->stval = seen.stval;
	out->sepc = seen.sepc;
	out->sstatus = seen.sstatus;
}

/* One access's record, and whether it is the access fault the board raises there. */
static bool print_outside(const char *name, const struct outside_seen *s, uintptr_t addr,
			  uint64_t at, uint64_t cause)
{
	bool ok = s->count == 1 && s->scause == cause && s->stval == addr && s->sepc == at &&
		  (s->sstatus & SSTATUS_SPP) && (s->sstatus & SSTATUS_SPIE);

	printf(",\"%s\":{\"exceptions\":%u,\"scause\":%lu,\"stval\":\"0x%lx\",\"sepc_ok\":%s,"
	       "\"spp\":%u,\"spie\":%u,\"ok\":%s}", name, s->count, (unsigned long)s->scause,
	       (unsigned long)s->stval, s->sepc == at ? "true" : "false",
	       (s->sstatus & SSTATUS_SPP) ? 1u : 0u, (s->sstatus & SSTATUS_SPIE) ? 1u : 0u,
	       ok ? "true" : "false");
	return ok;
}

static void access_outside(void)
{
	uintptr_t addr = (uintptr_t)bootarg_ulong("hostile.addr", OUTSIDE_DEFAULT, 0, ~0UL);
	uint64_t load_at, store_at, value = 0;
	struct outside_seen load, store, fetch;
	uint32_t before;
	bool ok = true;

	trap_set_sync_handler(outside_trap);
	printf("PROBE-JSON {\"test\":\"hostile-access-outside\",\"phase\":\"trying\","
	       "\"addr\":\"0x%lx\"}\n", (unsigned long)addr);
	/*
	 * With sstatus.SIE on (and nothing enabled in sie): each handler must see it in SPIE, and
	 * find it on again after its sret.
	 */
	uint64_t sie = csr_read(CSR_SIE);
	csr_write(CSR_SIE, 0);
	csr_set(CSR_SSTATUS, SSTATUS_SIE);
	/* Uncompressed, so that the handler steps over 4 bytes; auipc gives its own address. */
	before = seen.count;
	__asm__ volatile(".option push\n.option norvc\nauipc %0, 0\nld %1, 0(%2)\n.option pop"
			 : "=&r"(load_at), "=r"(value) : "r"(addr) : "memory");
	outside_note(&load, before);
	before = seen.count;
	__asm__ volatile(".option push\n.option norvc\nauipc %0, 0\nsd %1, 0(%2)\n.option pop"
			 : "=&r"(store_at) : "r"(value), "r"(addr) : "memory");
	outside_note(&store, before);
	before = seen.count;
	/* The handler returns to ra, past the jump. */
	__asm__ volatile("jalr ra, 0(%0)" : : "r"(addr) : "ra", "memory");
	outside_note(&fetch, before);
	bool sie_back = (csr_read(CSR_SSTATUS) & SSTATUS_SIE) != 0;
	csr_clear(CSR_SSTATUS, SSTATUS_SIE);
	csr_write(CSR_SIE, sie);
	printf("PROBE-JSON {\"test\":\"hostile-access-outside\",\"phase\":\"done\","
	       "\"addr\":\"0x%lx\"", (unsigned long)addr);
	ok &= print_outside("load", &load, addr, load_at + 4, EXC_LOAD_ACCESS);
	ok &= print_outside("store", &store, addr, store_at + 4, EXC_STORE_ACCESS);
	ok &= print_outside("fetch", &fetch, addr, addr, EXC_INST_ACCESS);
	ok &= sie_back;
	printf(",\"sie_back\":%s,\"pass\":%s}\n", sie_back ? "true" : "false", ok ? "true" : "false");
	trap_set_sync_handler(0);
}

/* The VirtIO actions' sleep between looks: WFI until a timer a little ahead. */
static void vio_pause(uint64_t us)
{
	timer_sleep_until(deadline_after_us(us));
}

void guest_main(void)
{
	struct strview action = { "busy", 4 };

	(void)bootarg("hostile.action", &action);
	if (vio_hostile_action(action, vio_pause))
		; /* done in ../virtio/actions.c */
	else if (strview_eq(action, "ram-write"))
		store_outside("ram-write", (uintptr_t)(ram_base() + ram_size()));
	else if (strview_eq(action, "foreign-file"))
		store_outside("foreign-file", foreign_file());
	else if (strview_eq(action, "aplic"))
		store_outside("aplic", APLIC_S_BASE);
	else if (strview_eq(action, "sbi-foreign"))
		sbi_foreign();
	else if (strview_eq(action, "msi-foreign"))
		msi_foreign();
	else if (strview_eq(action, "aplic-foreign"))
		aplic_foreign();
	else if (strview_eq(action, "trap-storm"))
		trap_storm();
	else if (strview_eq(action, "doorbell-storm"))
		doorbell_storm();
	else if (strview_eq(action, "doorbell-regs"))
		doorbell_regs();
	else if (strview_eq(action, "doorbell-edge"))
		doorbell_edge();
	else if (strview_eq(action, "uart-flood"))
		uart_flood();
	else if (strview_eq(action, "reset-loop"))
		(void)sbi_call(SBI_EXT_SRST, 0, 1, 0, 0); /* cold reboot */
	else if (strview_eq(action, "fence-race"))
		fence_race();
	else if (strview_eq(action, "busy"))
		busy();
	else if (strview_eq(action, "vu-wfi"))
		vu_wfi();
	else if (strview_eq(action, "hsm-suspend"))
		hsm_suspend();
	else if (strview_eq(action, "hsm-suspend-forever"))
		hsm_suspend_forever();
	else if (strview_eq(action, "access-outside"))
		access_outside();
	else
		printf("PROBE-JSON {\"test\":\"hostile\",\"error\":\"unknown action\",\"pass\":false}\n");
	printf("PROBE-DONE\n");
}
