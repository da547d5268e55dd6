/*
 * The riscv64 hostile partition (tests/system/test_riscv64_partitions.py): one misdeed per
 * boot, chosen with hostile.action=NAME, as guests/hostile does on arm64.
 *
 * What the hypervisor must do with each:
 *  - ram-write: a store just past the partition's RAM; foreign-file: a store into the IMSIC
 *    file where a hart the partition does not have would find its own; aplic: a store into
 *    the APLIC's supervisor domain by a partition that owns no wired source (it has no
 *    APLIC). Each is outside the partition's map: it is stopped with a `tern: fault` line,
 *    the access never completes.
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
 *  - msi-foreign: QEMU's edu (the partition owns the PCIe bus) with its MSI aimed at the
 *    IMSIC file of a hart the partition does not have, and enabled: the hypervisor refuses
 *    the enable and stops the partition; the device never writes there.
 *  - busy: no misdeed, the control neighbour (it only computes, with a timer armed).
 *  - vu-wfi: a WFI in its own user mode (U, or VU in a partition), a timer armed in case it
 *    waits: on the board (mstatus.TW = 0) an illegal instruction for its own handler at the
 *    WFI, never a wait; a partition's must be the same.
 * Output: PROBE-JSON lines with "test":"hostile-<action>" (tools/tern/results.py parses them).
 */
#include "aplic.h"
#include "bootargs.h"
#include "console.h"
#include "imsic.h"
#include "pci.h"
#include "riscv.h"
#include "runtime.h"
#include "sbi.h"
#include "timer.h"
#include "trap.h"

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

void guest_main(void)
{
	struct strview action = { "busy", 4 };

	(void)bootarg("hostile.action", &action);
	if (strview_eq(action, "ram-write"))
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
	else if (strview_eq(action, "uart-flood"))
		uart_flood();
	else if (strview_eq(action, "reset-loop"))
		(void)sbi_call(SBI_EXT_SRST, 0, 1, 0, 0); /* cold reboot */
	else if (strview_eq(action, "busy"))
		busy();
	else if (strview_eq(action, "vu-wfi"))
		vu_wfi();
	else
		printf("PROBE-JSON {\"test\":\"hostile\",\"error\":\"unknown action\",\"pass\":false}\n");
	printf("PROBE-DONE\n");
}
