/* SPDX-License-Identifier: MIT */
/*
 * arch/arm64/traps.c and firmware.c: SMCCC and PSCI calls (arm64_handle_call), system register traps,
 * emulated MMIO and the aborts it injects, AArch32 conditions, interrupts taken while a guest runs.
 */
#include <string.h>
#include <arch/decode.h>
#include <arch/firmware.h>
#include <arch/gicv3.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/sysreg.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

void arm64_guest_irq(uint32_t intid, struct guest_regs *r);
void arm64_guest_fiq(struct guest_regs *r);
void arm64_guest_async_abort(struct guest_regs *r, int kind);

#define NOT_SUPPORTED  ((uint64_t)-1)
#define INVALID_PARAMS ((uint64_t)-2)
#define INVALID_ADDR   ((uint64_t)-9)
#define VBAR           0x40001000ull
#define PC             0x40080000ull
#define EL1H           0x3c5ull

static struct partition *rt;
static struct vcpu *v0;
static struct guest_regs *regs;

/*
 * "rt" (trap-and-inject) on cores 0 and 1, vCPU 0 running, with the fault policy given;
 * "d" (direct) on core 2.
 */
static void traps_board_policy(uint32_t fault_policy)
{
	fake_config_begin(3);
	add_partition("rt", "0,1", 0)->fault_policy = fault_policy;
	add_partition("d", "2", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	boot_board();
	rt = partition_named("rt");
	v0 = &rt->vcpu[0];
	regs = fake_guest_regs(0);
	fake_sysreg_set(0, "vbar_el1", VBAR);
	fake_uart_clear();
}

static void traps_board(void)
{
	traps_board_policy(TERN_FAULT_STOP);
}

/* An SMCCC call through HVC on core 0; x0 afterwards. */
static uint64_t call(uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3)
{
	CHECK_EQ(hvc(0, x0, x1, x2, x3), FAKE_RETURNED);
	return regs->x[0];
}

static enum fake_exit trap(uint64_t ec, uint64_t iss, uint64_t far, uint64_t hpfar)
{
	return fake_trap(0, (ec << 26) | iss, far, hpfar);
}

/* A data abort at `ipa` (FAR carries a VA whose page offset is the IPA's). */
static enum fake_exit dabt(uint64_t ipa, unsigned size, bool write, unsigned rt_reg, uint32_t extra)
{
	uint32_t sas = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
	uint64_t iss = ESR_IL | BIT(24) | ((uint64_t)sas << 22) | ((uint64_t)rt_reg << 16) |
		       (write ? BIT(6) : 0) | extra;

	return trap(EC_DABT_LOW, iss, 0xffff000000000000ull | (ipa & 0xfff), (ipa >> 12) << 4);
}

static void at(uint64_t elr, uint64_t spsr)
{
	regs->elr = elr;
	regs->spsr = spsr;
}

/* The guest was sent to its EL1 vector at `offset` as the hardware would have, from PC/spsr. */
static void check_injected(uint64_t offset, uint64_t spsr, uint64_t esr_el1)
{
	CHECK_EQ(regs->elr, VBAR + offset);
	CHECK_EQ(regs->spsr, EL1H);
	CHECK_EQ(fake_sysreg(0, "elr_el1"), PC);
	CHECK_EQ(fake_sysreg(0, "spsr_el1"), spsr);
	CHECK_EQ(fake_sysreg(0, "esr_el1"), esr_el1);
}

/* ---- SMCCC and PSCI ---- */

void test_traps_psci_info_calls(void)
{
	static const uint32_t supported[] = { PSCI_VERSION, PSCI_CPU_OFF, PSCI_CPU_ON_32, PSCI_CPU_ON_64,
					      PSCI_AFFINITY_INFO_32, PSCI_AFFINITY_INFO_64, PSCI_MIGRATE_INFO_TYPE,
					      PSCI_SYSTEM_OFF, PSCI_SYSTEM_RESET, PSCI_FEATURES };

	traps_board();
	at(PC, EL1H);
	CHECK_EQ(call(PSCI_VERSION, 1, 2, 3), 0x10001); /* 1.1, as QEMU 7.2's firmware says */
	CHECK(regs->x[1] == 1 && regs->x[2] == 2 && regs->x[3] == 3);
	CHECK_EQ(regs->elr, PC); /* an HVC returns past itself */
	CHECK_EQ(v0->stats[STAT_EXIT_HVC], 1);
	CHECK_EQ(call(0xffffffff00000000ull | PSCI_VERSION, 0, 0, 0), 0x10001); /* W0 names it */
	CHECK_EQ(call(PSCI_MIGRATE_INFO_TYPE, 0, 0, 0), 2);
	for (unsigned i = 0; i < ARRAY_SIZE(supported); i++)
		CHECK_EQ(call(PSCI_FEATURES, supported[i], 0, 0), 0);
	CHECK_EQ(call(PSCI_FEATURES, 0x84000001, 0, 0), NOT_SUPPORTED); /* CPU_SUSPEND */
	CHECK_EQ(call(PSCI_FEATURES, 0x80000000, 0, 0), NOT_SUPPORTED);
	CHECK_EQ(call(PSCI_FEATURES, 0xffffffff00000000ull | PSCI_VERSION, 0, 0), 0); /* SMC32 */
	/* What 1.1 adds (SYSTEM_RESET2, MEM_PROTECT, MEM_PROTECT_CHECK_RANGE): the board has none. */
	static const uint32_t new_in_1_1[] = { 0x84000012, 0xc4000012, 0x84000013, 0x84000014,
					       0xc4000014 };
	for (unsigned i = 0; i < ARRAY_SIZE(new_in_1_1); i++)
		CHECK_EQ(call(PSCI_FEATURES, new_in_1_1[i], 0, 0), NOT_SUPPORTED);
}

/* Anything but the PSCI functions above: NOT_SUPPORTED, and nothing happens. */
void test_traps_unknown_calls(void)
{
	static const uint64_t ids[] = { 0x84000001, 0x84000005, 0x84000007, 0x8400000b, 0x8400000c,
					0x84000012, 0xc4000002, 0xc4000008, 0xc4000009, 0xc400000a,
					0x80000000, 0x80000001, 0x86000000, 0xc2000000, 0xbf00ff00,
					0x00000000, 0xffffffff };

	traps_board();
	for (unsigned i = 0; i < ARRAY_SIZE(ids); i++) {
		CHECK_EQ(call(ids[i], 1, 2, 3), NOT_SUPPORTED);
		CHECK_EQ(regs->x[1], 1);
	}
	CHECK_EQ(atomic_load(&rt->state), PARTITION_RUNNING);
	CHECK_EQ(atomic_load(&rt->vcpu[1].power), VCPU_OFF);
	CHECK_EQ(v0->stats[STAT_PSCI_DENIED], 0);
}

/* vCPU i is MPIDR Aff0 = i with Aff1-3 zero: anything else is outside the partition. */
void test_traps_psci_mpidr_outside(void)
{
	static const uint64_t outside[] = { 2, 0xff, 0x100, 0x10000, 1ull << 32, 0xff00000001ull };
	uint64_t entry;

	traps_board();
	entry = rt->cfg->entry_ipa;
	for (unsigned i = 0; i < ARRAY_SIZE(outside); i++) {
		CHECK_EQ(call(PSCI_CPU_ON_64, outside[i], entry, 0), INVALID_PARAMS);
		CHECK_EQ(call(PSCI_AFFINITY_INFO_64, outside[i], 0, 0), INVALID_PARAMS);
	}
	CHECK_EQ(v0->stats[STAT_PSCI_DENIED], 2 * ARRAY_SIZE(outside));
	CHECK_EQ(call(PSCI_AFFINITY_INFO_64, 1, 1, 0), INVALID_PARAMS); /* level 1: no clusters */
	CHECK_EQ(v0->stats[STAT_PSCI_DENIED], 2 * ARRAY_SIZE(outside));
	CHECK_EQ(atomic_load(&rt->vcpu[1].power), VCPU_OFF);
	/* MPIDR bits that are no affinity field (RES1 bit 31, MT, U) do not change the target. */
	CHECK_EQ(call(PSCI_AFFINITY_INFO_64, 0x80000000ull | 1, 0, 0), 1);
}

/* SMC32 functions take their arguments from W registers: the upper halves are ignored. */
void test_traps_smc32_arguments(void)
{
	uint64_t entry;

	traps_board();
	entry = rt->cfg->entry_ipa;          /* the fake's RAM is above 4 GiB */
	CHECK_EQ(call(PSCI_AFFINITY_INFO_32, (1ull << 32) | 1, 0, 0), 1);
	CHECK_EQ(call(PSCI_AFFINITY_INFO_64, (1ull << 32) | 1, 0, 0), INVALID_PARAMS);
	CHECK_EQ(call(PSCI_AFFINITY_INFO_32, 0, 1ull << 32, 0), 0);
	CHECK_EQ(call(PSCI_AFFINITY_INFO_64, 0, 1ull << 32, 0), INVALID_PARAMS);
	CHECK(entry >> 32);
	CHECK_EQ(call(PSCI_CPU_ON_32, (1ull << 32) | 1, entry, 0), INVALID_ADDR);
	CHECK_EQ(atomic_load(&rt->vcpu[1].power), VCPU_OFF);
	CHECK_EQ(call(PSCI_CPU_ON_64, 1, entry, 0xffffffff00000001ull), 0);
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_guest_regs(1)->x[0], 0xffffffff00000001ull); /* SMC64: the context whole */
}

/* A trapped SMC returns to itself: the handler steps over it; an HVC returns past itself. */
void test_traps_smc_and_hvc(void)
{
	traps_board();
	at(PC, EL1H);
	regs->x[0] = PSCI_VERSION;
	CHECK_EQ(trap(EC_SMC64, ESR_IL, 0, 0), FAKE_RETURNED);
	CHECK_EQ(regs->x[0], 0x10001);
	CHECK_EQ(regs->elr, PC + 4);
	CHECK_EQ(v0->stats[STAT_EXIT_SMC], 1);
	regs->x[0] = PSCI_VERSION;
	CHECK_EQ(trap(EC_HVC64, ESR_IL, 0, 0), FAKE_RETURNED);
	CHECK_EQ(regs->elr, PC + 4);
}

/* ---- system registers ---- */

static uint64_t sysreg_iss(uint32_t id, unsigned rt_reg, bool read)
{
	return ESR_IL | id | ((uint64_t)rt_reg << 5) | read;
}

void test_traps_sgi_registers(void)
{
	traps_board();
	struct vcpu *v1 = &rt->vcpu[1];
	at(PC, EL1H);
	regs->x[5] = (3ull << 24) | 0b10;
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ISS_ICC_SGI1R, 5, false), 0, 0), FAKE_RETURNED);
	CHECK_EQ(regs->elr, PC + 4);
	CHECK_EQ(atomic_load(&v1->arch.redist.pending), 1u << 3);
	CHECK_EQ(v0->stats[STAT_EXIT_SYSREG], 1);
	CHECK_EQ(v0->stats[STAT_SGI_SENT], 1);
	/* XZR: SGI 0 to nobody */
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ISS_ICC_SGI1R, 31, false), 0, 0), FAKE_RETURNED);
	CHECK_EQ(atomic_load(&v1->arch.redist.pending), 1u << 3);
	/* Group 0 and alias SGIs are refused, and stepped over. */
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ISS_ICC_ASGI1R, 5, false), 0, 0), FAKE_RETURNED);
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ISS_ICC_SGI0R, 5, false), 0, 0), FAKE_RETURNED);
	CHECK_EQ(v0->stats[STAT_SGI_DENIED], 2);
	CHECK_EQ(regs->elr, PC + 16);
	CHECK_EQ(atomic_load(&v1->arch.redist.pending), 1u << 3);
	/* Reading ICC_SGI1R_EL1 (write-only): undefined. */
	at(PC, EL1H);
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ISS_ICC_SGI1R, 5, true), 0, 0), FAKE_RETURNED);
	check_injected(0x200, EL1H, ESR_IL);
	CHECK_EQ(regs->x[5], (3ull << 24) | 0b10);
}

/* Set/way maintenance: once per sweep (set 0, way 0 of a level) the partition's RAM by address. */
void test_traps_set_way(void)
{
	static const uint32_t ops[] = { SYSREG_ISS(1, 0, 7, 6, 2), SYSREG_ISS(1, 0, 7, 10, 2),
					SYSREG_ISS(1, 0, 7, 14, 2) };

	traps_board();
	for (unsigned i = 0; i < ARRAY_SIZE(ops); i++) {
		unsigned syncs = fake_syncs;
		regs->x[3] = 2;                  /* level 2, set 0, way 0 */
		CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ops[i], 3, false), 0, 0), FAKE_RETURNED);
		CHECK_EQ(fake_syncs, syncs + 1);
		CHECK_EQ(fake_synced_pa, rt->cfg->ram_hpa);
		CHECK_EQ(fake_synced_size, rt->cfg->ram_size);
		regs->x[3] = 0x40 | 2;           /* set 1 */
		CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ops[i], 3, false), 0, 0), FAKE_RETURNED);
		regs->x[3] = (1ull << 30) | 2;   /* way 1 */
		CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ops[i], 3, false), 0, 0), FAKE_RETURNED);
		CHECK_EQ(fake_syncs, syncs + 1);
		CHECK_EQ(trap(EC_SYSREG, sysreg_iss(ops[i], 31, false), 0, 0), FAKE_RETURNED);
		CHECK_EQ(fake_syncs, syncs + 2);
	}
	CHECK_EQ(v0->stats[STAT_SETWAY], 12);
	CHECK_EQ(v0->stats[STAT_UNDEF_INJECTED], 0);
}

/* Any other trapped register: an undefined instruction, taken to the vector of where it came from. */
void test_traps_undefined_register(void)
{
	static const struct { uint64_t spsr, offset; } from[] = {
		{ 0x3c5, 0x200 }, { 0x005, 0x200 }, { 0x004, 0x000 }, { 0x000, 0x400 },
		{ 0x010, 0x600 }, { 0x01f, 0x600 },
	};

	traps_board();
	for (unsigned i = 0; i < ARRAY_SIZE(from); i++) {
		at(PC, from[i].spsr);
		fake_sysreg_set(0, "far_el1", 0x1234);
		CHECK_EQ(trap(EC_SYSREG, sysreg_iss(SYSREG_ISS(3, 1, 15, 2, 0), 4, true), 0, 0), FAKE_RETURNED);
		check_injected(from[i].offset, from[i].spsr, ESR_IL);
		CHECK_EQ(fake_sysreg(0, "far_el1"), 0);
	}
	/* A 16-bit instruction keeps IL clear in ESR_EL1 too. */
	at(PC, EL1H);
	CHECK_EQ(trap(EC_SYSREG, SYSREG_ISS(3, 0, 1, 0, 0) | (4u << 5), 0, 0), FAKE_RETURNED);
	check_injected(0x200, EL1H, 0);
	/* DC ISW read (no such thing) */
	at(PC, EL1H);
	CHECK_EQ(trap(EC_SYSREG, sysreg_iss(SYSREG_ISS(1, 0, 7, 6, 2), 3, true), 0, 0), FAKE_RETURNED);
	check_injected(0x200, EL1H, ESR_IL);
	CHECK_EQ(v0->stats[STAT_UNDEF_INJECTED], ARRAY_SIZE(from) + 2);
}

/* ---- emulated MMIO ---- */

void test_traps_mmio_write_and_read(void)
{
	traps_board();
	at(PC, EL1H);
	regs->x[3] = 0x1241;                                    /* 'A' in the low byte */
	CHECK_EQ(dabt(platform.uart_base, 1, true, 3, 0), FAKE_RETURNED);
	regs->x[3] = '\n';
	CHECK_EQ(dabt(platform.uart_base, 1, true, 3, 0), FAKE_RETURNED);
	CHECK(console_ends_with("[rt] A"));
	CHECK_EQ(regs->elr, PC + 8);
	CHECK_EQ(v0->stats[STAT_EXIT_MMIO], 2);
	regs->x[4] = ~0ull;
	CHECK_EQ(dabt(platform.uart_base + 0x18, 4, false, 4, 0), FAKE_RETURNED);
	CHECK_EQ(regs->x[4], 0x90);                            /* a W register: the top cleared */
	CHECK_EQ(dabt(platform.uart_base + 0xffc, 1, false, 5, BIT(21) | BIT(15)), FAKE_RETURNED);
	CHECK_EQ(regs->x[5], 0xffffffffffffffb1ull);           /* LDRSB X5 */
	CHECK_EQ(dabt(platform.uart_base + 0xffc, 1, false, 5, BIT(21)), FAKE_RETURNED);
	CHECK_EQ(regs->x[5], 0xffffffb1ull);                   /* LDRSB W5 */
	CHECK_EQ(dabt(platform.uart_base + 0xfe0, 1, false, 5, BIT(21) | BIT(15)), FAKE_RETURNED);
	CHECK_EQ(regs->x[5], 0x11);
	/* XZR: a read goes nowhere, a write writes zero */
	struct guest_regs before = *regs;
	CHECK_EQ(dabt(platform.uart_base + 0x18, 4, false, 31, 0), FAKE_RETURNED);
	CHECK(!memcmp(before.x, regs->x, sizeof(regs->x)));
	CHECK_EQ(dabt(platform.uart_base + 0x30, 4, true, 31, 0), FAKE_RETURNED);
	CHECK_EQ(rt->uart.regs.cr, 0);
	regs->x[6] = 0xffffffff00000301ull;
	CHECK_EQ(dabt(platform.uart_base + 0x30, 4, true, 6, 0), FAKE_RETURNED);
	CHECK_EQ(rt->uart.regs.cr, 0x301);
	/* the distributor, through the same path */
	regs->x[7] = 0;
	CHECK_EQ(dabt(platform.arch.gicd_base + GICD_PIDR2, 4, false, 7, 0), FAKE_RETURNED);
	CHECK_EQ(regs->x[7], 0x3b);
}

/* Misaligned or of the wrong size: a data abort for the guest, as the bus would give it. */
void test_traps_mmio_aborts(void)
{
	uint64_t esr_base;

	traps_board();
	at(PC, EL1H);
	regs->x[2] = 0xffffffff;
	CHECK_EQ(dabt(platform.arch.gicd_base + 0x105, 4, true, 2, 0), FAKE_RETURNED);
	esr_base = ((uint64_t)EC_DABT_CUR << 26) | ESR_IL;
	check_injected(0x200, EL1H, esr_base | BIT(6) | 0x21);
	CHECK_EQ(fake_sysreg(0, "far_el1"), 0xffff000000000105ull);
	CHECK_EQ(v0->stats[STAT_ABORT_INJECTED], 1);
	CHECK_EQ(v0->stats[STAT_EXIT_MMIO], 0);
	/* From EL0: a lower-EL abort, to the EL0 vector. */
	at(PC, 0);
	CHECK_EQ(dabt(platform.arch.gicd_base + GICD_CTLR, 8, false, 2, 0), FAKE_RETURNED);
	check_injected(0x400, 0, ((uint64_t)EC_DABT_LOW << 26) | ESR_IL | 0x10);
	CHECK_EQ(regs->x[2], 0xffffffff);
	CHECK_EQ(v0->stats[STAT_ABORT_INJECTED], 2);
	CHECK_EQ(atomic_load(&rt->state), PARTITION_RUNNING);
}

/* Outside everything the partition has: stopped, with one line that says where. */
void test_traps_unhandled_abort_stops(void)
{
	char line[160];

	traps_board();
	at(PC, EL1H);
	uint64_t ipa = 0x123456789ull;
	CHECK_EQ(dabt(ipa, 4, false, 1, 0), FAKE_EXIT_IDLE);
	snprintf(line, sizeof(line), "tern: fault partition=rt vcpu=0 ipa=0x%llx pc=0x%llx esr=0x%llx\r\n",
		 (unsigned long long)ipa, (unsigned long long)PC,
		 (unsigned long long)(((uint64_t)EC_DABT_LOW << 26) | ESR_IL | BIT(24) | (2u << 22) | (1u << 16)));
	CHECK(console_has(line));
	CHECK_EQ(atomic_load(&rt->state), PARTITION_STOPPED);
}

void test_traps_abort_without_syndrome_stops(void)
{
	traps_board();
	at(PC, EL1H);
	CHECK_EQ(trap(EC_DABT_LOW, ESR_IL, 0, (platform.uart_base >> 12) << 4), FAKE_EXIT_IDLE);
	CHECK(console_has(" (not emulatable: no syndrome)\r\n"));
	CHECK_EQ(atomic_load(&rt->state), PARTITION_STOPPED);
}

void test_traps_instruction_abort_stops(void)
{
	traps_board();
	at(PC, EL1H);
	CHECK_EQ(trap(EC_IABT_LOW, ESR_IL | BIT(24), 0, (platform.uart_base >> 12) << 4), FAKE_EXIT_IDLE);
	CHECK(console_has(" (instruction fetch)\r\n"));
	CHECK_EQ(v0->stats[STAT_FAULT], 1);
}

/* ---- on_fault = "inject": an access outside everything is the guest's external abort ---- */

#define HOLE        0x0b000000ull         /* nothing there, on the board or in "rt" */
#define HOLE_VA     0xffff00000b000010ull
#define FSC_TRANSL1 0x05u                 /* stage-2 translation fault, level 1 */
#define IL_EA_FSC   (ESR_IL | 0x10u)      /* syndrome bits every injected external abort has */

static enum fake_exit outside(uint64_t ec, uint32_t iss)
{
	return trap(ec, ESR_IL | iss, HOLE_VA, (HOLE >> 12) << 4);
}

static void check_injected_at(uint64_t offset, uint64_t spsr, uint64_t esr_el1, uint64_t far)
{
	check_injected(offset, spsr, esr_el1);
	CHECK_EQ(fake_sysreg(0, "far_el1"), far);
}

/* A load, a store and a fetch from EL1h: data and instruction aborts of the current EL. */
void test_traps_outside_access_injected(void)
{
	char line[200];

	traps_board_policy(TERN_FAULT_INJECT);
	at(PC, EL1H);
	/* A load with a syndrome (LDR W1): no emulated device there, so the guest's own abort. */
	CHECK_EQ(outside(EC_DABT_LOW, BIT(24) | (2u << 22) | (1u << 16) | FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x200, EL1H, ((uint64_t)EC_DABT_CUR << 26) | IL_EA_FSC, HOLE_VA);
	snprintf(line, sizeof(line), "tern: injected fault partition=rt vcpu=0 ipa=0x%llx pc=0x%llx "
		 "esr=0x%llx\r\n", (unsigned long long)(HOLE | (HOLE_VA & 0xfff)), (unsigned long long)PC,
		 (unsigned long long)(((uint64_t)EC_DABT_LOW << 26) | ESR_IL | BIT(24) | (2u << 22) |
				      (1u << 16) | FSC_TRANSL1));
	CHECK(console_has(line));
	/* A store pair (no syndrome): WnR kept. */
	at(PC, EL1H);
	CHECK_EQ(outside(EC_DABT_LOW, BIT(6) | FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x200, EL1H, ((uint64_t)EC_DABT_CUR << 26) | IL_EA_FSC | BIT(6), HOLE_VA);
	/* A cache maintenance by VA: CM and WnR, as the board reports it. */
	at(PC, EL1H);
	CHECK_EQ(outside(EC_DABT_LOW, BIT(8) | BIT(6) | FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x200, EL1H, ((uint64_t)EC_DABT_CUR << 26) | IL_EA_FSC | BIT(8) | BIT(6),
			  HOLE_VA);
	/* A branch there: the instruction abort class. */
	at(PC, EL1H);
	CHECK_EQ(outside(EC_IABT_LOW, FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x200, EL1H, ((uint64_t)EC_IABT_CUR << 26) | IL_EA_FSC, HOLE_VA);
	CHECK_EQ(v0->stats[STAT_FAULT_INJECTED], 4);
	CHECK_EQ(v0->stats[STAT_FAULT], 0);
	CHECK_EQ(v0->stats[STAT_ABORT_INJECTED], 0);
	CHECK_EQ(atomic_load(&rt->state), PARTITION_RUNNING);
	/* Only the first few are reported: a guest retrying in a loop does not flood its console. */
	fake_uart_clear();
	at(PC, EL1H);
	CHECK_EQ(outside(EC_IABT_LOW, FSC_TRANSL1), FAKE_RETURNED);
	CHECK_EQ(v0->stats[STAT_FAULT_INJECTED], 5);
	CHECK(!console_has("injected fault"));
}

/* The vector the guest's exception level and stack pointer select; AArch32 EL0 too. */
void test_traps_outside_access_vectors(void)
{
	traps_board_policy(TERN_FAULT_INJECT);
	/* EL1t (SP_EL0): the current EL's SP0 vector. */
	at(PC, 0x3c4);
	CHECK_EQ(outside(EC_IABT_LOW, FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x000, 0x3c4, ((uint64_t)EC_IABT_CUR << 26) | IL_EA_FSC, HOLE_VA);
	/* AArch64 EL0: lower-EL classes, the AArch64 lower-EL vector. */
	at(PC, 0);
	CHECK_EQ(outside(EC_IABT_LOW, FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x400, 0, ((uint64_t)EC_IABT_LOW << 26) | IL_EA_FSC, HOLE_VA);
	at(PC, 0);
	CHECK_EQ(outside(EC_DABT_LOW, BIT(6) | FSC_TRANSL1), FAKE_RETURNED);
	check_injected_at(0x400, 0, ((uint64_t)EC_DABT_LOW << 26) | IL_EA_FSC | BIT(6), HOLE_VA);
	/* AArch32 EL0 (M[4] set, user mode): the AArch32 lower-EL vector. */
	at(PC, 0x10);
	CHECK_EQ(trap(EC_DABT_LOW, ESR_IL | FSC_TRANSL1, 0x0b000010ull, (HOLE >> 12) << 4),
		 FAKE_RETURNED);
	check_injected_at(0x600, 0x10, ((uint64_t)EC_DABT_LOW << 26) | IL_EA_FSC, 0x0b000010ull);
	CHECK_EQ(v0->stats[STAT_FAULT_INJECTED], 4);
	CHECK_EQ(atomic_load(&rt->state), PARTITION_RUNNING);
}

/*
 * What stays a stop with on_fault = "inject": an emulated device's address without a syndrome,
 * a fetch from an emulated device, the guest's own page table walk, a permission fault, and a
 * fetch of the very vector the abort would go to (it would be taken again for ever).
 */
void test_traps_outside_access_not_injected(void)
{
	static const struct {
		uint64_t ec, hpfar_ipa, elr, spsr;
		uint32_t iss;
	} cases[] = {
		{ EC_DABT_LOW, 0, PC, EL1H, FSC_TRANSL1 },                    /* GICD, no syndrome */
		{ EC_IABT_LOW, 0, PC, EL1H, FSC_TRANSL1 },                    /* fetch from GICD */
		{ EC_DABT_LOW, HOLE, PC, EL1H, BIT(7) | FSC_TRANSL1 },        /* S1PTW */
		{ EC_DABT_LOW, HOLE, PC, EL1H, 0x0fu },                       /* permission */
		{ EC_IABT_LOW, HOLE, VBAR + 0x200, EL1H, FSC_TRANSL1 },       /* its own vector */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ipa = cases[i].hpfar_ipa ? cases[i].hpfar_ipa : platform.arch.gicd_base;

		traps_board_policy(TERN_FAULT_INJECT);
		/* A board booted again keeps the previous one's counters: count from here. */
		uint64_t faults = v0->stats[STAT_FAULT];

		at(cases[i].elr, cases[i].spsr);
		CHECK_EQ(trap(cases[i].ec, ESR_IL | cases[i].iss, ipa, (ipa >> 12) << 4), FAKE_EXIT_IDLE);
		CHECK_EQ(v0->stats[STAT_FAULT], faults + 1);
		CHECK_EQ(v0->stats[STAT_FAULT_INJECTED], 0);
		CHECK_EQ(atomic_load(&rt->state), PARTITION_STOPPED);
		CHECK(!console_has("injected fault"));
	}
}

/* ---- AArch32 guests (EL0): conditions and IT blocks ---- */

void test_traps_aarch32(void)
{
	const uint64_t usr = 0x10, t32 = SPSR_T32;
	traps_board();

	/* WFI, condition NE with Z set: fails, stepped over (16-bit T32), the IT block advances. */
	uint64_t it = 0x0c; /* NE block, two instructions left */
	at(PC, usr | t32 | BIT(30) | ((it & 0xfc) << 8) | ((it & 3) << 25));
	CHECK_EQ(trap(EC_WFX, BIT(24) | (1u << 20), 0, 0), FAKE_RETURNED);
	CHECK_EQ(regs->elr, PC + 2);
	CHECK_EQ(regs->spsr, esr_advance_it(usr | t32 | BIT(30) | ((it & 0xfc) << 8) | ((it & 3) << 25)));
	CHECK_EQ(v0->stats[STAT_EXIT_WFI], 1);
	/* WFE that passes: a hint, stepped over */
	at(PC, usr);
	CHECK_EQ(trap(EC_WFX, ESR_IL | 1, 0, 0), FAKE_RETURNED);
	CHECK_EQ(regs->elr, PC + 4);
	CHECK_EQ(v0->stats[STAT_EXIT_WFE], 1);
	/* A CP15 access whose condition passes: undefined, to the AArch32 vector */
	at(PC, usr | BIT(30));
	CHECK_EQ(trap(EC_CP15_32, ESR_IL | BIT(24) | (0u << 20), 0, 0), FAKE_RETURNED);
	check_injected(0x600, usr | BIT(30), ESR_IL);
	/* ... and whose condition fails: nothing but stepping over */
	static const uint64_t classes[] = { EC_CP15_32, EC_CP15_64, EC_CP14_32, EC_CP14_LS, EC_CP14_64 };
	for (unsigned i = 0; i < ARRAY_SIZE(classes); i++) {
		at(PC, usr);
		CHECK_EQ(trap(classes[i], ESR_IL | BIT(24) | (0u << 20), 0, 0), FAKE_RETURNED);
		CHECK_EQ(regs->elr, PC + 4);
	}
	CHECK_EQ(v0->stats[STAT_EXIT_SYSREG], 1 + ARRAY_SIZE(classes));
	CHECK_EQ(v0->stats[STAT_UNDEF_INJECTED], 1);
}

/* An exception class nothing handles: the partition is stopped. */
void test_traps_unknown_class_stops(void)
{
	traps_board();
	at(PC, EL1H);
	CHECK_EQ(trap(0x07, ESR_IL, 0, 0), FAKE_EXIT_IDLE);
	CHECK(console_has("tern: fault partition=rt vcpu=0 unhandled exception class 0x7 pc=0x40080000 "
			  "esr=0x1e000000\r\n"));
	CHECK_EQ(v0->stats[STAT_EXIT_OTHER], 1);
}

void test_traps_async_aborts_stop(void)
{
	traps_board();
	at(PC, EL1H);
	fake_sysreg_set(0, "esr_el2", 0xbe000000);
	CHECK_EQ(FAKE_ON(0, arm64_guest_async_abort(regs, 0)), FAKE_EXIT_IDLE);
	CHECK(console_has("tern: fault partition=rt vcpu=0 SError pc=0x40080000 esr=0xbe000000\r\n"));
	fake_uart_clear();
	partition_request(rt, PARTITION_REQ_RESTART);
	fake_deliver_all_kicks(8);
	at(PC, EL1H);
	CHECK_EQ(FAKE_ON(0, arm64_guest_async_abort(regs, 1)), FAKE_EXIT_IDLE);
	CHECK(console_has("unexpected exception pc=0x40080000"));
}

/* ---- interrupts taken while a guest runs (the C side of the fast path) ---- */

void test_traps_interrupts(void)
{
	traps_board();
	fake_sysreg_set(0, "icc_eoir1_el1", 0);
	CHECK_EQ(FAKE_ON(0, arm64_guest_irq(1023, regs)), FAKE_RETURNED);   /* spurious */
	CHECK_EQ(fake_sysreg(0, "icc_eoir1_el1"), 0);
	CHECK_EQ(v0->stats[STAT_EXIT_IRQ], 0);
	fake_dir_count[0] = 0;
	CHECK_EQ(FAKE_ON(0, arm64_guest_irq(PPI_HYP_TIMER, regs)), FAKE_RETURNED); /* not the guest's */
	CHECK_EQ(fake_sysreg(0, "icc_eoir1_el1"), PPI_HYP_TIMER);
	CHECK_EQ(fake_dir_count[0], 1);
	CHECK_EQ(fake_lrs[0][0], 0);
	CHECK_EQ(FAKE_ON(0, arm64_guest_irq(PPI_VTIMER, regs)), FAKE_RETURNED);   /* its timer */
	CHECK_EQ(fake_dir_count[0], 1);                 /* deactivated by the guest's EOI */
	CHECK_EQ(fake_lrs[0][0] & ICH_LR_VINTID_MASK, PPI_VTIMER);
	CHECK_EQ(v0->stats[STAT_EXIT_IRQ], 2);
	/* The control path: nothing pending reads as spurious. */
	CHECK_EQ(FAKE_ON(0, arm64_guest_fiq(regs)), FAKE_RETURNED);
	CHECK_EQ(v0->stats[STAT_EXIT_IRQ], 2);
	/* A kick on a direct core: EOImode 0, no separate deactivation. */
	fake_dir_count[2] = 0;
	CHECK_EQ(fake_deliver_kick(2), FAKE_RETURNED);
	CHECK_EQ(fake_sysreg(2, "icc_eoir0_el1"), SGI_KICK);
	CHECK_EQ(fake_dir_count[2], 0);
	fake_dir_count[0] = 0;
	CHECK_EQ(fake_deliver_kick(0), FAKE_RETURNED);
	CHECK_EQ(fake_dir_count[0], 1);
}
