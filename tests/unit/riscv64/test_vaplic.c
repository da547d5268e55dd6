/* SPDX-License-Identifier: MIT */
/* The partitions' virtual APLIC (arch/riscv64/vaplic.c), on the fake riscv64 board (rv.h). */
#include <string.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/virtio_channel.h>
#include <tern/mmio.h>
#include <tern/platform.h>
#include "check.h"
#include "rv.h"
#include "system.h"
#include "tests.h"

#define DOMAINCFG   0x0000u
#define SOURCECFG(s) (0x0004u + 4u * ((s) - 1u))
#define SETIP(w)    (0x1c00u + 4u * (w))
#define SETIPNUM    0x1cdcu
#define IN_CLRIP(w) (0x1d00u + 4u * (w))
#define CLRIPNUM    0x1ddcu
#define SETIE(w)    (0x1e00u + 4u * (w))
#define SETIENUM    0x1edcu
#define CLRIE(w)    (0x1f00u + 4u * (w))
#define CLRIENUM    0x1fdcu
#define SETIPNUM_LE 0x2000u
#define SETIPNUM_BE 0x2004u
#define GENMSI      0x3000u
#define TARGET(s)   (0x3004u + 4u * ((s) - 1u))
#define IDC(h, r)   (0x4000u + 32u * (h) + (r))
#define IDELIVERY   0x00u
#define IFORCE      0x04u
#define ITHRESHOLD  0x08u
#define TOPI        0x18u
#define CLAIMI      0x1cu
#define HART(h)     ((uint32_t)(h) << 18)
#define EIID_OF(s)  (32u + (s)) /* EIID_WIRED_BASE + s */

/* How many writes the board's APLIC saw naming source s (its registers, or by number). */
static unsigned board_writes_for(uint32_t s, unsigned long since)
{
	unsigned n = 0;

	for (unsigned long i = since; i < fake_aplic_writes; i++) {
		const struct fake_aplic_write *w = &fake_aplic_log[i % FAKE_APLIC_LOG];
		bool by_number = w->offset == SETIPNUM || w->offset == CLRIPNUM ||
				 w->offset == SETIENUM || w->offset == CLRIENUM;
		if ((by_number && w->value == s) || w->offset == SOURCECFG(s) || w->offset == TARGET(s))
			n++;
	}
	return n;
}

static bool board_bit(uint32_t base, uint32_t s)
{
	return (fake_aplic_reg(base + 4u * (s / 32u)) >> (s % 32u)) & 1u;
}

void test_vaplic_sourcecfg_and_target(void)
{
	rv_boot();
	CHECK_EQ(vaplic_read(1, DOMAINCFG), 0x80000000u); /* direct delivery mode, off */
	vaplic_write(1, SOURCECFG(35), 6);
	CHECK_EQ(vaplic_read(1, SOURCECFG(35)), 6);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(35)), 6);
	/* Delivered into the hypervisor's own file of vCPU 0's core, one identity per source. */
	CHECK_EQ(fake_aplic_reg(TARGET(35)), HART(1) | EIID_OF(35));
	/* Modes: inactive, detached, edges and levels; reserved ones and delegation read inactive. */
	static const uint32_t modes[][2] = { { 0, 0 }, { 1, 1 }, { 2, 0 }, { 3, 0 }, { 4, 4 }, { 5, 5 },
					     { 7, 7 }, { 0x400 | 6, 0 }, { 0x3f9u, 1 } };
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		vaplic_write(1, SOURCECFG(35), modes[i][0]);
		CHECK_EQ(vaplic_read(1, SOURCECFG(35)), modes[i][1]);
		CHECK_EQ(fake_aplic_reg(SOURCECFG(35)), modes[i][1]);
	}
	/* Target: the hart and a priority (0 reads as 1); its core follows the hart. */
	vaplic_write(1, TARGET(35), HART(1) | 0);
	CHECK_EQ(vaplic_read(1, TARGET(35)), HART(1) | 1);
	CHECK_EQ(fake_aplic_reg(TARGET(35)), HART(2) | EIID_OF(35));
	vaplic_write(1, TARGET(35), HART(0) | 0xff | 0x3f00);
	CHECK_EQ(vaplic_read(1, TARGET(35)), HART(0) | 0xff);
	CHECK_EQ(fake_aplic_reg(TARGET(35)), HART(1) | EIID_OF(35));
	/* A hart it does not have: nothing is delivered to it, and no other core is named. */
	vaplic_write(1, TARGET(35), HART(5) | 2);
	CHECK_EQ(vaplic_read(1, TARGET(35)), HART(5) | 2);
	CHECK_EQ(fake_aplic_reg(TARGET(35)), HART(1) | EIID_OF(35));
	CHECK_EQ(stat_of(1, STAT_APLIC_IGNORED), 0);
	CHECK_EQ(stat_of(1, STAT_EXIT_MMIO), 2 + 2 * 9 + 6 + 1);
}

void test_vaplic_unowned_sources_read_zero(void)
{
	rv_boot();
	unsigned long since = fake_aplic_writes;
	/* 36 is "direct"'s, 34 and 38 nobody's: read-only zero, counted, never on the board. */
	static const uint32_t others[] = { 34, 36, 38, 1, 95 };
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		uint32_t s = others[i];
		vaplic_write(1, SOURCECFG(s), 6);
		CHECK_EQ(vaplic_read(1, SOURCECFG(s)), 0);
		vaplic_write(1, TARGET(s), HART(0) | 1);
		CHECK_EQ(vaplic_read(1, TARGET(s)), 0);
		vaplic_write(1, SETIENUM, s);
		vaplic_write(1, SETIPNUM, s);
		vaplic_write(1, SETIPNUM_LE, s);
		vaplic_write(1, SETIPNUM_BE, __builtin_bswap32(s));
		vaplic_write(1, CLRIPNUM, s);
		vaplic_write(1, CLRIENUM, s);
		CHECK_EQ(board_writes_for(s, since), 0);
	}
	/* Each access that named one of them, by its register or by number. */
	CHECK_EQ(stat_of(1, STAT_APLIC_IGNORED), 10 * 5);
	/* The word registers show only its own sources. */
	fake_aplic_input[1] = ~0u;
	fake_aplic_input[0] = ~0u;
	CHECK_EQ(vaplic_read(1, IN_CLRIP(1)), (1u << 3) | (1u << 5));
	CHECK_EQ(vaplic_read(1, IN_CLRIP(0)), 0);
	vaplic_write(1, SETIE(1), ~0u);
	vaplic_write(1, SETIP(1), ~0u);
	CHECK_EQ(board_writes_for(36, since), 0);
	CHECK_EQ(board_writes_for(34, since), 0);
	CHECK_EQ(vaplic_read(1, SETIE(1)), 0); /* its sources are inactive: nothing enables */
	CHECK_EQ(vaplic_read(1, CLRIE(1)), 0);
	/* Beyond the board's sources, and reserved offsets: zero, not counted. */
	CHECK_EQ(vaplic_read(1, SOURCECFG(100)), 0);
	CHECK_EQ(vaplic_read(1, 0x1bfc), 0);
	CHECK_EQ(vaplic_read(1, GENMSI), 0); /* MSI delivery mode only */
	CHECK_EQ(vaplic_read(1, IDC(2, IDELIVERY)), 0); /* a hart it does not have */
	CHECK_EQ(stat_of(1, STAT_APLIC_IGNORED), 10 * 5);
	/* The other partition's APLIC state did not move. */
	CHECK_EQ(rv_part(RV_DIRECT)->arch.vaplic.sourcecfg[36], 0);
	CHECK_EQ(rv_part(RV_DIRECT)->arch.vaplic.enabled[1], 0);
}

/* Direct delivery mode: an edge source's interrupt, pending, enabled, delivered, claimed. */
void test_vaplic_pending_enable_claim(void)
{
	rv_boot();
	vaplic_write(1, DOMAINCFG, 0x100);
	CHECK_EQ(vaplic_read(1, DOMAINCFG), 0x80000100u);
	vaplic_write(1, SOURCECFG(35), 4);
	vaplic_write(1, TARGET(35), HART(0) | 3);
	vaplic_write(1, IDC(0, IDELIVERY), 1);
	CHECK_EQ(vaplic_read(1, IDC(0, IDELIVERY)), 1);
	vaplic_write(1, SETIENUM, 35);
	CHECK_EQ(vaplic_read(1, SETIE(1)), 1u << 3);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);

	/* The board sends it into vCPU 0's core's file: VSEIP for the guest. */
	fake_raise_eiid(1, EIID_OF(35));
	CHECK_EQ(fake_kick_running(1), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	CHECK_EQ(vaplic_read(1, SETIP(1)), 1u << 3);
	CHECK_EQ(vaplic_read(1, IDC(0, TOPI)), (35u << 16) | 3);
	CHECK_EQ(vaplic_read(1, IDC(0, CLAIMI)), (35u << 16) | 3);
	CHECK_EQ(vaplic_read(1, SETIP(1)), 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	CHECK_EQ(vaplic_read(1, IDC(0, CLAIMI)), 0);

	/* The guest's own setipnum, and the threshold. */
	vaplic_write(1, SETIPNUM, 35);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	vaplic_write(1, IDC(0, ITHRESHOLD), 3);
	CHECK_EQ(vaplic_read(1, IDC(0, ITHRESHOLD)), 3);
	CHECK_EQ(vaplic_read(1, IDC(0, TOPI)), 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	vaplic_write(1, IDC(0, ITHRESHOLD), 4);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	vaplic_write(1, CLRIPNUM, 35);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	vaplic_write(1, SETIPNUM_LE, 35);
	CHECK_EQ(vaplic_read(1, SETIP(1)), 1u << 3);
	vaplic_write(1, IN_CLRIP(1), 1u << 3);
	vaplic_write(1, SETIPNUM_BE, __builtin_bswap32(35));
	CHECK_EQ(vaplic_read(1, SETIP(1)), 1u << 3);
	/* Disabled: pending, not delivered; domain off: nothing delivered. */
	vaplic_write(1, CLRIENUM, 35);
	CHECK_EQ(vaplic_read(1, SETIE(1)), 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	vaplic_write(1, SETIE(1), 1u << 3);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	vaplic_write(1, DOMAINCFG, 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	vaplic_write(1, DOMAINCFG, 0x100);
	vaplic_write(1, CLRIE(1), 1u << 3);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);

	/* iforce: an interrupt with nothing pending; a claim of nothing drops it. */
	vaplic_write(1, IDC(0, IFORCE), 1);
	CHECK_EQ(vaplic_read(1, IDC(0, IFORCE)), 1);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	CHECK_EQ(vaplic_read(1, IDC(0, CLAIMI)), 0);
	CHECK_EQ(vaplic_read(1, IDC(0, IFORCE)), 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	/* An inactive source is neither enabled nor made pending. */
	vaplic_write(1, SOURCECFG(35), 0);
	vaplic_write(1, SETIENUM, 35);
	vaplic_write(1, SETIPNUM, 35);
	CHECK_EQ(vaplic_read(1, SETIE(1)), 0);
	CHECK_EQ(vaplic_read(1, SETIP(1)), 0);
}

/* A level source is pending while its input is high; another hart's source goes to its core. */
void test_vaplic_level_source_and_sibling(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);
	sbi(1, SBI_HSM, 0, 1, p->cfg->entry_ipa, 0);
	fake_deliver_all_kicks(8);
	CHECK(fake_cores[2].running == &p->vcpu[1]);

	vaplic_write(1, DOMAINCFG, 0x100);
	vaplic_write(1, SOURCECFG(37), 6);
	vaplic_write(1, TARGET(37), HART(1) | 2);
	CHECK_EQ(fake_aplic_reg(TARGET(37)), HART(2) | EIID_OF(37));
	vaplic_write(2, IDC(1, IDELIVERY), 1);
	vaplic_write(1, SETIENUM, 37);
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSEIP, 0);
	vaplic_write(1, SETIPNUM, 37); /* a level source's pending bit is its input */
	CHECK_EQ(vaplic_read(1, SETIP(1)), 0);
	fake_aplic_input[1] = 1u << 5;
	CHECK_EQ(vaplic_read(1, SETIP(1)), 1u << 5);
	fake_raise_eiid(2, EIID_OF(37));
	CHECK_EQ(fake_kick_running(2), FAKE_RETURNED);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	/* Claimed while the input stays high: still pending. */
	CHECK_EQ(vaplic_read(2, IDC(1, CLAIMI)), (37u << 16) | 2);
	CHECK_EQ(vaplic_read(2, IDC(1, TOPI)), (37u << 16) | 2);
	fake_aplic_input[1] = 0;
	vaplic_write(1, DOMAINCFG, 0x100); /* any write re-evaluates every vCPU: posted to hart 1's core */
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSEIP, 0);
	/* Identities of sources it does not own, or of a trap-less partition's, change nothing. */
	fake_raise_eiid(1, EIID_OF(36));
	fake_raise_eiid(1, EIID_OF(38));
	fake_raise_eiid(1, EIID_OF(200));
	CHECK_EQ(fake_kick_running(1), FAKE_RETURNED);
	CHECK_EQ(rv_part(RV_DIRECT)->arch.vaplic.pending[1], 0);
	CHECK_EQ(p->arch.vaplic.pending[1], 0);
}

/* MSI delivery mode (trap-less): the board's APLIC sends into the vCPU's guest file. */
void test_vaplic_msi_mode(void)
{
	rv_boot();
	CHECK_EQ(vaplic_read(3, DOMAINCFG), 0x80000004u);
	unsigned long since = fake_aplic_writes;
	vaplic_write(3, SOURCECFG(36), 4);
	vaplic_write(3, TARGET(36), HART(1) | (5u << 12) | 0x25);
	CHECK_EQ(vaplic_read(3, TARGET(36)), HART(1) | 0x25); /* no guest index: it has no guests */
	CHECK_EQ(fake_aplic_reg(TARGET(36)), HART(4) | (VCPU_GUEST_FILE << 12) | 0x25);
	vaplic_write(3, SETIENUM, 36);
	CHECK(!board_bit(0x1e00, 36)); /* the domain is off */
	vaplic_write(3, DOMAINCFG, 0x100);
	CHECK(board_bit(0x1e00, 36));
	vaplic_write(3, SETIPNUM, 36);
	CHECK(board_bit(0x1c00, 36));
	CHECK_EQ(vaplic_read(3, SETIP(1)), 1u << 4);
	vaplic_write(3, CLRIPNUM, 36);
	CHECK(!board_bit(0x1c00, 36));
	/* A level source: pending on the board only while its input is high. */
	vaplic_write(3, SOURCECFG(36), 6);
	vaplic_write(3, SETIPNUM, 36);
	CHECK(!board_bit(0x1c00, 36));
	fake_aplic_input[1] = 1u << 4;
	vaplic_write(3, SETIPNUM, 36);
	CHECK(board_bit(0x1c00, 36));
	/* A hart it does not have: disabled on the board. */
	vaplic_write(3, TARGET(36), HART(2) | 0x25);
	CHECK(!board_bit(0x1e00, 36));
	CHECK_EQ(fake_aplic_reg(TARGET(36)), HART(3) | (VCPU_GUEST_FILE << 12) | 0x25);
	CHECK_EQ(board_writes_for(35, since) + board_writes_for(37, since), 0);

	/* genmsi: into its own hart's guest file; a hart it does not have gets nothing. */
	vaplic_write(3, GENMSI, HART(1) | 0x7);
	CHECK_EQ(fake_imsic_seteipnum(4, VCPU_GUEST_FILE), 7);
	CHECK_EQ(vaplic_read(3, GENMSI), HART(1) | 0x7);
	vaplic_write(3, GENMSI, HART(2) | 0x9);
	for (unsigned c = 0; c < FAKE_CPUS; c++) {
		for (unsigned f = 0; f < 8; f++)
			CHECK_EQ(fake_imsic_seteipnum(c, f), c == 4 && f == VCPU_GUEST_FILE ? 7 : 0);
	}
	/* No interrupt delivery controls in MSI mode. */
	vaplic_write(3, IDC(0, IDELIVERY), 1);
	CHECK_EQ(vaplic_read(3, IDC(0, IDELIVERY)), 0);
	CHECK_EQ(stat_of(3, STAT_APLIC_IGNORED), 0);
}

void test_vaplic_wrong_width_and_no_aplic(void)
{
	rv_boot();
	struct guest_regs *r = fake_guest_regs(1);
	uint64_t gpa = platform.arch.aplic_s_base + SOURCECFG(35);

	/* lb a0 and sd a0: an access fault for the guest's handler. */
	fake_csr_put(1, "vstvec", 0x80001000);
	r->sepc = 0x80000400;
	CHECK_EQ(fake_rv_trap(1, EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0x00000503), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vscause"), EXC_LOAD_ACCESS);
	CHECK_EQ(fake_csr(1, "vsepc"), 0x80000400);
	CHECK_EQ(fake_csr(1, "vstval"), gpa);
	CHECK_EQ(r->sepc, 0x80001000);
	CHECK_EQ(fake_rv_trap(1, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0x00a03023), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vscause"), EXC_STORE_MISALIGNED);
	gpa = platform.arch.aplic_s_base + DOMAINCFG;
	CHECK_EQ(fake_rv_trap(1, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0x00a03023), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vscause"), EXC_STORE_ACCESS);
	CHECK_EQ(stat_of(1, STAT_EXCEPTION_INJECTED), 3);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(35)), 0);
	/* Past the APLIC's registers, and a partition that owns no source: outside its map. */
	enum fake_exit e = rv_load(1, platform.arch.aplic_s_base + 0x8000);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("load outside its memory"));
	e = rv_load(5, platform.arch.aplic_s_base + SOURCECFG(35));
	CHECK_EQ(fake_settle(5, e), FAKE_EXIT_WAIT);
	CHECK(!fake_cores[5].running);
	CHECK(fake_cores[3].running);
}

/*
 * A channel's doorbell has no input line: a level mode the guest picks for it (the ivshmem
 * function's INTx is level-high) is latched like an edge, on the board and in the partition's
 * pending bits, so the hypervisor's setipnum is seen in both delivery modes.
 */
/*
 * Partition `name`'s first channel function (device 1 on its emulated bridge) with its INTx
 * line asserted or not: enabled, IntrMask set and IntrStatus written (high), or IntrStatus
 * read, which clears it (low).
 */
static void function_line(const char *name, bool high)
{
	struct vcpu *v = &partition_named(name)->vcpu[0];
	uint64_t ecam = 0, window = 0, value;

	for (uint32_t i = 0; i < platform.num_devices; i++) {
		if (platform.devices[i].flags & PLATFORM_ECAM)
			ecam = platform.devices[i].base;
		if (platform.devices[i].flags & PLATFORM_PCI_MEM32)
			window = platform.devices[i].base;
	}
	value = 2; /* Command.MEMORY */
	CHECK_EQ(mmio_emulate(v, ecam + (1u << 15) + 4, 2, true, &value), MMIO_DONE);
	value = 1;
	CHECK_EQ(mmio_emulate(v, window + IVSHMEM_INTR_MASK, 4, true, &value), MMIO_DONE);
	if (high)
		CHECK_EQ(mmio_emulate(v, window + IVSHMEM_INTR_STATUS, 4, true, &value), MMIO_DONE);
	else
		CHECK_EQ(mmio_emulate(v, window + IVSHMEM_INTR_STATUS, 4, false, &value), MMIO_DONE);
}

void test_vaplic_doorbell_in_a_level_mode(void)
{
	static const uint8_t trap[] = { 1, 2 }, direct[] = { 3, 4 };
	static const uint32_t members[] = { 0, 1 };

	fake_config_begin(6);
	fake_config_add("trap", trap, 2, 0)->irqs[1] = 1u << (35 - 32);
	fake_config_add("direct", direct, 2, TERN_PF_IRQ_DIRECT)->irqs[1] = 1u << (36 - 32);
	const struct tern_config_channel *ch = fake_config_add_channel("msg", 0x10000, members, 2, 2);
	enum fake_exit e = fake_boot(0);
	CHECK(e == FAKE_EXIT_RUN || e == FAKE_EXIT_WAIT); /* hart 0 is nobody's */
	fake_start_secondaries();
	fake_relax_hook = fake_deliver_kicks_while_waiting;
	uint32_t t = ch->member[0].irq, d = ch->member[1].irq;

	/* Trap-and-emulate: level-high as the guest reads it, an edge on the board, latched. */
	vaplic_write(1, DOMAINCFG, 0x100);
	vaplic_write(1, SOURCECFG(t), 6);
	CHECK_EQ(vaplic_read(1, SOURCECFG(t)), 6u);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(t)), 4u);
	vaplic_write(1, TARGET(t), HART(0) | 3);
	vaplic_write(1, IDC(0, IDELIVERY), 1);
	vaplic_write(1, SETIENUM, t);
	fake_raise_eiid(1, EIID_OF(t));
	CHECK_EQ(fake_kick_running(1), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, HVIP_VSEIP);
	CHECK_EQ(vaplic_read(1, SETIP(t / 32)), 1u << (t % 32));
	CHECK_EQ(vaplic_read(1, IDC(0, CLAIMI)), (t << 16) | 3);
	CHECK_EQ(vaplic_read(1, SETIP(t / 32)), 0u);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSEIP, 0);
	/* The guest's own setipnum lands only while its function's INTx is asserted. */
	vaplic_write(1, SETIPNUM, t);
	CHECK_EQ(vaplic_read(1, SETIP(t / 32)), 0u);
	function_line("trap", true);
	vaplic_write(1, SETIPNUM, t);
	CHECK_EQ(vaplic_read(1, SETIP(t / 32)), 1u << (t % 32));

	/*
	 * Trap-less: an edge on the board, and the guest's setipnum_le (Linux's EOI of a level
	 * source in MSI mode) re-pends it only while the line is high: never a storm.
	 */
	vaplic_write(3, SOURCECFG(d), 6);
	CHECK_EQ(vaplic_read(3, SOURCECFG(d)), 6u);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(d)), 4u);
	vaplic_write(3, SETIPNUM_LE, d);
	CHECK(!board_bit(0x1c00, d));
	function_line("direct", true);
	vaplic_write(3, CLRIPNUM, d);
	vaplic_write(3, SETIPNUM_LE, d);
	CHECK(board_bit(0x1c00, d));
	function_line("direct", false);
	vaplic_write(3, CLRIPNUM, d);
	vaplic_write(3, SETIPNUM_LE, d);
	CHECK(!board_bit(0x1c00, d));
	/* A device's level source is still its input (test_vaplic_msi_mode). */
	vaplic_write(3, SOURCECFG(36), 6);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(36)), 6u);
}

static void virtio_reg(const struct tern_config_virtio *dev, uint32_t off, bool write, uint64_t *value)
{
	CHECK_EQ(mmio_emulate(&partition_named("fe")->vcpu[0], dev->mmio_ipa + off, 4, write, value), MMIO_DONE);
}

/*
 * A VirtIO slot's source has no input either (no device behind the board's transport): the
 * level-high mode QEMU's tree gives it is latched as an edge, and the guest's own set of it
 * lands only while the device's interrupt is asserted (InterruptStatus, here a config change).
 */
void test_vaplic_virtio_slot_in_a_level_mode(void)
{
	static const uint8_t fe_cores[] = { 1, 2 }, be_cores[] = { 3 };
	uint64_t value;

	fake_config_begin(4);
	fake_config_add("fe", fe_cores, 2, 0);
	fake_config_add("be", be_cores, 1, 0);
	const struct tern_config_virtio *dev = fake_config_add_virtio("con", TERN_VIRTIO_CONSOLE, 0, 1, 0, 0x85000);
	enum fake_exit e = fake_boot(0);
	CHECK(e == FAKE_EXIT_RUN || e == FAKE_EXIT_WAIT); /* hart 0 is nobody's */
	fake_start_secondaries();
	fake_relax_hook = fake_deliver_kicks_while_waiting;
	uint32_t s = dev->irq;
	CHECK_EQ(s, 1u);

	vaplic_write(1, DOMAINCFG, 0x100);
	vaplic_write(1, SOURCECFG(s), 6);
	CHECK_EQ(vaplic_read(1, SOURCECFG(s)), 6u);
	CHECK_EQ(fake_aplic_reg(SOURCECFG(s)), 4u);
	vaplic_write(1, TARGET(s), HART(0) | 3);
	/* The line low: the guest's set does not land. */
	vaplic_write(1, SETIPNUM, s);
	CHECK_EQ(vaplic_read(1, SETIP(s / 32)), 0u);
	/* The driver up, then a config change it has looked at: InterruptStatus 2, the line high. */
	static const uint32_t status[] = { 1, 3 };
	for (unsigned i = 0; i < 2; i++) {
		value = status[i];
		virtio_reg(dev, 0x070, true, &value);
	}
	value = 1;
	virtio_reg(dev, 0x024, true, &value);
	virtio_reg(dev, 0x020, true, &value);
	static const uint32_t more[] = { 0xb, 0xf };
	for (unsigned i = 0; i < 2; i++) {
		value = more[i];
		virtio_reg(dev, 0x070, true, &value);
	}
	virtio_reg(dev, 0x070, false, &value);
	CHECK_EQ(value, 0xf);
	const struct tern_config *cfg = (const struct tern_config *)(const void *)fake_config;
	struct vio_header *h = (struct vio_header *)(uintptr_t)config_channels(cfg)[dev->channel].hpa;
	h->config_generation++;
	virtio_reg(dev, 0x060, false, &value);
	CHECK_EQ(value, 2u);
	vaplic_write(1, SETIPNUM, s);
	CHECK_EQ(vaplic_read(1, SETIP(s / 32)), 1u << (s % 32));
	/* Acknowledged: low again. */
	value = 2;
	virtio_reg(dev, 0x064, true, &value);
	vaplic_write(1, CLRIPNUM, s);
	vaplic_write(1, SETIPNUM, s);
	CHECK_EQ(vaplic_read(1, SETIP(s / 32)), 0u);
}
