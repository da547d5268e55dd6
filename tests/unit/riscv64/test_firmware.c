/* SPDX-License-Identifier: MIT */
/* The SBI a riscv64 guest calls (arch/riscv64/firmware.c, dispatched by traps.c), on the fake riscv64 board (rv.h). */
#include <string.h>
#include <tern/platform.h>
#include <tern/arch.h>
#include "check.h"
#include "rv.h"
#include "tests.h"

void test_sbi_boot(void)
{
	CHECK_EQ(rv_boot(), FAKE_EXIT_WAIT); /* hart 0: the console core, nobody's */
	CHECK(fake_cores[1].running == &rv_part(RV_TRAP)->vcpu[0]);
	CHECK(fake_cores[3].running == &rv_part(RV_DIRECT)->vcpu[0]);
	CHECK(fake_cores[5].running == &rv_part(RV_NONE)->vcpu[0]);
	CHECK(!fake_cores[2].running && !fake_cores[4].running);
	/* a0: the hart id (its index in the partition), a1: its device tree. */
	CHECK_EQ(fake_guest_regs(3)->x[10], 0);
	CHECK_EQ(fake_cores[3].context, rv_part(RV_DIRECT)->cfg->dtb_ipa);
	/* Trap-less: its guest file selected and cleared; trap-and-emulate: WFI traps. */
	CHECK_EQ(fake_csr(3, "hstatus") & HSTATUS_VGEIN_MASK, (uint64_t)VCPU_GUEST_FILE << HSTATUS_VGEIN_SHIFT);
	CHECK_EQ(fake_csr(1, "hstatus") & (HSTATUS_VGEIN_MASK | HSTATUS_VTW), HSTATUS_VTW);
	CHECK_EQ(fake_csr(1, "0x60a"), 0);
	CHECK_EQ(fake_csr(3, "0x60a"), HENVCFG_STCE);
	CHECK_EQ(fake_csr(1, "hgatp"), rv_part(RV_TRAP)->arch.hgatp);
	CHECK_EQ(fake_csr(1, "hgatp") >> 44 & 0x3fff, 1); /* VMID: the partition's index + 1 */
	CHECK_EQ(fake_insn_count(1, "hfence.gvma"), 1);
}

void test_sbi_base(void)
{
	static const uint64_t offered[] = { SBI_BASE, SBI_TIME, SBI_IPI, SBI_RFENCE, SBI_HSM,
					    SBI_SRST, SBI_DBCN, 0x01 /* legacy putchar */,
					    /* Tern's manager calls: probed by any partition (this one is no manager) */
					    0x0a54524e };

	rv_boot();
	uint64_t sepc = fake_guest_regs(1)->sepc;
	CHECK_EQ(sbi(1, SBI_BASE, 0, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 0x02000000); /* SBI 2.0 */
	CHECK_EQ(fake_guest_regs(1)->sepc, sepc + 4);
	sbi(1, SBI_BASE, 1, 0, 0, 0);
	CHECK_EQ(a1_of(1), 0x5465726e);
	sbi(1, SBI_BASE, 2, 0, 0, 0);
	CHECK_EQ(a1_of(1), 1);
	for (unsigned i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
		sbi(1, SBI_BASE, 3, offered[i], 0, 0);
		CHECK_EQ(a0_of(1), 0);
		CHECK_EQ(a1_of(1), 1);
	}
	sbi(1, SBI_BASE, 3, 0x735049u + 1, 0, 0); /* no such extension */
	CHECK_EQ(a1_of(1), 0);
	sbi(1, SBI_BASE, 3, 0x4e41434c /* PMU */, 0, 0);
	CHECK_EQ(a1_of(1), 0);
	for (uint64_t fn = 4; fn <= 6; fn++) { /* mvendorid, marchid, mimpid */
		sbi(1, SBI_BASE, fn, 0, 0, 0);
		CHECK_EQ(a0_of(1), 0);
		CHECK_EQ(a1_of(1), 0);
	}
	sbi(1, SBI_BASE, 7, 0, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(1, STAT_SBI_BASE), 1 + 2 + 9 + 2 + 3 + 1);
}

void test_sbi_unknown_extensions(void)
{
	rv_boot();
	CHECK_EQ(sbi(1, 0x4e41434c /* PMU */, 0, 1, 2, 3), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	sbi(1, 0x08 /* legacy shutdown: never the board's */, 0, 0, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(1, STAT_SBI_OTHER), 2);
	CHECK_EQ(fake_board_offs, 0);
	CHECK(fake_cores[1].running);
}

/* HSM of the partition's own harts: hart id = vCPU index; other partitions' are not there. */
void test_sbi_hsm_start_status_stop(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);
	uint64_t entry = p->cfg->entry_ipa + 0x200;

	sbi(1, SBI_HSM, 2, 1, 0, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 1); /* STOPPED */
	sbi(1, SBI_HSM, 2, 0, 0, 0);
	CHECK_EQ(a1_of(1), 0); /* STARTED: itself */
	atomic_store(&fake_kicks, 0);
	CHECK_EQ(sbi(1, SBI_HSM, 0, 1, entry, 0x1234), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	sbi(1, SBI_HSM, 2, 1, 0, 0);
	CHECK_EQ(a1_of(1), 2); /* START_PENDING until its core takes it */
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2); /* only its own core is told */
	fake_deliver_all_kicks(8);
	CHECK(fake_cores[2].running == &p->vcpu[1]);
	CHECK_EQ(fake_cores[2].entry, entry);
	CHECK_EQ(fake_guest_regs(2)->x[10], 1);      /* a0: its hart id */
	CHECK_EQ(fake_guest_regs(2)->x[11], 0x1234); /* a1: the opaque */
	sbi(1, SBI_HSM, 2, 1, 0, 0);
	CHECK_EQ(a1_of(1), 0);
	sbi(1, SBI_HSM, 0, 1, entry, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_ALREADY_AVAILABLE);

	/* hart_stop: the vCPU leaves its core; its sibling sees it stopped. */
	enum fake_exit e = sbi(2, SBI_HSM, 1, 0, 0, 0);
	CHECK(e == FAKE_EXIT_IDLE || e == FAKE_EXIT_WAIT);
	fake_settle(2, e);
	CHECK(!fake_cores[2].running);
	sbi(1, SBI_HSM, 2, 1, 0, 0);
	CHECK_EQ(a1_of(1), 1);
	CHECK_EQ(stat_of(1, STAT_SBI_HSM), 7);
}

void test_sbi_hsm_refuses_other_harts(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);
	uint64_t entry = p->cfg->entry_ipa;

	atomic_store(&fake_kicks, 0);
	/* Hart 2 is no hart of a two-vCPU partition (the board's hart 2 is its vCPU 1's core). */
	static const uint64_t others[] = { 2, 3, 5, 63, 1ull << 32, 1ull << 32 | 1, ~0ull };
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		CHECK_EQ(sbi(1, SBI_HSM, 0, others[i], entry, 0), FAKE_RETURNED);
		CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
		sbi(1, SBI_HSM, 2, others[i], 0, 0);
		CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	}
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK(fake_cores[3].running == &rv_part(RV_DIRECT)->vcpu[0]);
	CHECK(!fake_cores[4].running);
	/* An entry outside its RAM. */
	sbi(1, SBI_HSM, 0, 1, p->cfg->ram_ipa + p->cfg->ram_size, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_ADDRESS);
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	/* suspend: reserved types refused, platform-specific ones not offered; newer: not offered. */
	sbi(1, SBI_HSM, 3, 1, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_HSM, 3, 0x10000000, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	sbi(1, SBI_HSM, 3, 0x80000000, p->cfg->ram_ipa + p->cfg->ram_size, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_ADDRESS); /* non-retentive, resuming outside its RAM */
	sbi(1, SBI_HSM, 4, 0, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
}

/* Both vCPUs of "trap" on, kicks cleared. */
static struct partition *trap_both_on(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);

	sbi(1, SBI_HSM, 0, 1, p->cfg->entry_ipa, 0);
	fake_deliver_all_kicks(8);
	CHECK(fake_cores[2].running == &p->vcpu[1]);
	atomic_store(&fake_kicks, 0);
	fake_csr_put(1, "hvip", 0);
	fake_csr_put(2, "hvip", 0);
	return p;
}

void test_sbi_ipi_masks(void)
{
	trap_both_on();
	/* hart 1 from hart 0: a kick to its core, VSSIP there once taken. */
	CHECK_EQ(sbi(1, SBI_IPI, 0, 0x2, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSSIP, 0);
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	CHECK(fake_cores[2].running);
	fake_csr_put(2, "hvip", 0);

	/* base -1: every hart of the partition, itself at once. */
	sbi(1, SBI_IPI, 0, 0, ~0ull, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2);
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	fake_csr_put(1, "hvip", 0);
	fake_csr_put(2, "hvip", 0);

	/* base 1, bit 0: hart 1. */
	sbi(1, SBI_IPI, 0, 0x1, 1, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(atomic_load(&fake_kicks), 1u << 2);
	fake_deliver_all_kicks(8);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSSIP, HVIP_VSSIP);
	fake_csr_put(2, "hvip", 0);

	/* Any hart named that is not the partition's: refused, and nobody is sent anything. */
	static const uint64_t masks[][2] = {
		{ 0x4, 0 }, { 0x7, 0 }, { 0x2, 1 }, { 0x1, 2 }, { 1ull << 63, 0 }, { 0x1, 1ull << 40 },
		{ 0x1, ~0ull - 1 }, { ~0ull, 0 },
	};
	for (unsigned i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		sbi(1, SBI_IPI, 0, masks[i][0], masks[i][1], 0);
		CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	}
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	CHECK_EQ(fake_csr(1, "hvip"), 0);
	CHECK_EQ(atomic_load(&rv_part(RV_TRAP)->vcpu[1].arch.posted), 0);
	/* An empty mask names nobody. */
	sbi(1, SBI_IPI, 0, 0, 0, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(atomic_load(&fake_kicks), 0);
	sbi(1, SBI_IPI, 1, 1, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(1, STAT_SBI_IPI), 3 + 8 + 2);
}

/* A hart that is off is sent nothing it keeps: it starts with nothing posted. */
void test_sbi_ipi_to_a_stopped_hart(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);

	sbi(1, SBI_IPI, 0, 0x2, 0, 0);
	CHECK_EQ(a0_of(1), 0);
	fake_deliver_all_kicks(8);
	CHECK(!fake_cores[2].running);
	sbi(1, SBI_HSM, 0, 1, p->cfg->entry_ipa, 0);
	fake_deliver_all_kicks(8);
	CHECK(fake_cores[2].running);
	CHECK_EQ(fake_csr(2, "hvip") & HVIP_VSSIP, 0);
	CHECK_EQ(atomic_load(&rv_part(RV_TRAP)->vcpu[1].arch.posted), 0);
}

void test_sbi_rfence(void)
{
	trap_both_on();
	unsigned before1 = fake_insn_count(1, "hfence.vvma"), before2 = fake_insn_count(2, "hfence.vvma");

	/* remote_fence_i, remote_sfence_vma, remote_sfence_vma_asid: done when the call returns. */
	for (uint64_t fn = 0; fn <= 2; fn++) {
		CHECK_EQ(sbi(1, SBI_RFENCE, fn, 0, ~0ull, 0), FAKE_RETURNED);
		CHECK_EQ(a0_of(1), 0);
		CHECK_EQ(fake_insn_count(1, "hfence.vvma"), before1 + fn + 1);
		CHECK_EQ(fake_insn_count(2, "hfence.vvma"), before2 + fn + 1);
		CHECK_EQ(atomic_load(&rv_part(RV_TRAP)->vcpu[1].arch.posted), 0);
	}
	/* The other partitions' harts are never fenced. */
	for (unsigned c = 3; c <= 5; c++)
		CHECK_EQ(fake_insn_count(c, "hfence.vvma"), 0);
	sbi(1, SBI_RFENCE, 1, 0x4, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_RFENCE, 1, 0x1, 2, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	CHECK_EQ(fake_insn_count(2, "hfence.vvma"), before2 + 3);
	/* The HFENCE calls (guests with guests of their own): not offered. */
	for (uint64_t fn = 3; fn <= 7; fn++) {
		sbi(1, SBI_RFENCE, fn, 0, ~0ull, 0);
		CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	}
}

/* A hart that is off is not waited for. */
void test_sbi_rfence_stopped_hart(void)
{
	rv_boot();
	CHECK_EQ(sbi(1, SBI_RFENCE, 1, 0x3, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(fake_insn_count(1, "hfence.vvma"), 1);
	CHECK_EQ(fake_insn_count(2, "hfence.vvma"), 0);
}

void test_sbi_dbcn(void)
{
	rv_boot();
	const struct tern_config_partition *c = rv_part(RV_TRAP)->cfg;
	uint8_t *ram = fake_partition_ram(c);

	memcpy(ram + 0x3000, "hello sbi\n", 10);
	CHECK_EQ(sbi(1, SBI_DBCN, 0, 10, c->ram_ipa + 0x3000, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 10);
	CHECK(rv_console_has("[trap] hello sbi"));
	/* Bounds: the partition's RAM only, all of it or nothing; a page a call at most. */
	sbi(1, SBI_DBCN, 0, 10, c->ram_ipa + 0x3000, 1);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_DBCN, 0, 10, c->ram_ipa - 1, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_DBCN, 0, 2, c->ram_ipa + c->ram_size - 1, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_DBCN, 0, ~0ull, c->ram_ipa + c->ram_size - 4096, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 4096);
	sbi(1, SBI_DBCN, 0, 1, (uintptr_t)fake_partition_ram(rv_part(RV_DIRECT)->cfg), 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM); /* another partition's RAM, by its host address */
	sbi(1, SBI_DBCN, 0, 0, c->ram_ipa, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 0);
	/* write_byte, and the legacy console_putchar. */
	fake_uart_clear();
	sbi(1, SBI_DBCN, 2, 'o', 0, 0);
	CHECK_EQ(a0_of(1), 0);
	sbi(1, SBI_DBCN, 2, 'k' | 0x100, 0, 0);
	sbi(1, 0x01, 0, '\n', 0, 0);
	CHECK_EQ(a0_of(1), 0);
	CHECK(rv_console_has("[trap] ok"));
	/* read: no input for partitions. */
	sbi(1, SBI_DBCN, 1, 1, c->ram_ipa, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(1, STAT_SBI_DBCN), 11);
}

void test_sbi_srst(void)
{
	rv_boot();
	sbi(1, SBI_SRST, 0, 3, 0, 0); /* a reset type that is not there */
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_SRST, 0, 0xf0000000u, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_INVALID_PARAM);
	sbi(1, SBI_SRST, 1, 0, 0, 0);
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	/* A cold reboot: this partition reloads, the board and the others go on. */
	unsigned runs = fake_cores[1].runs;
	enum fake_exit e = sbi(1, SBI_SRST, 0, 1, 0, 0);
	CHECK(e != FAKE_RETURNED);
	fake_settle(1, e);
	fake_deliver_all_kicks(16);
	CHECK(rv_console_has("partition trap reset"));
	CHECK_EQ(fake_cores[1].runs, runs + 1);
	CHECK(fake_cores[3].running && fake_cores[5].running);
	/* Warm reboot likewise; shutdown ends the partition only. */
	e = sbi(1, SBI_SRST, 0, 2, 0, 0);
	fake_settle(1, e);
	fake_deliver_all_kicks(16);
	CHECK_EQ(fake_cores[1].runs, runs + 2);
	e = sbi(1, SBI_SRST, 0, 0, 0, 0);
	fake_settle(1, e);
	fake_deliver_all_kicks(16);
	CHECK(rv_console_has("partition trap off"));
	CHECK(!fake_cores[1].running);
	CHECK_EQ(fake_board_offs, 0);
	CHECK(fake_cores[3].running && fake_cores[5].running);
}

void test_sbi_time(void)
{
	rv_boot();
	/* Trap-and-emulate: the core's own timer stands in, the guest's pending timer drops. */
	fake_csr_put(1, "hvip", HVIP_VSTIP);
	CHECK_EQ(sbi(1, SBI_TIME, 0, 12345, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(fake_csr(1, "0x14d"), 12345);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSTIP, 0);
	/* Its interrupt: the stand-in disarmed, VSTIP for the guest. */
	CHECK_EQ(fake_rv_trap(1, SCAUSE_IRQ | IRQ_S_TIMER, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "0x14d"), ~0ull);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	/* Trap-less (Sstc): the guest's own vstimecmp. */
	sbi(3, SBI_TIME, 0, 777, 0, 0);
	CHECK_EQ(a0_of(3), 0);
	CHECK_EQ(fake_csr(3, "0x24d"), 777);
	/* The core's own timer 1 ms later, its interrupt disabled: QEMU 7.2's lost VS timer's nudge. */
	CHECK_EQ(fake_csr(3, "0x14d"), 777 + arch_counter_freq() / 1000u);
	CHECK_EQ(fake_csr(3, "sie") & SIE_STIE, 0);
	sbi(3, SBI_TIME, 0, ~0ull - 1u, 0, 0);
	CHECK_EQ(fake_csr(3, "0x14d"), ~0ull); /* never: no wrap */
	sbi(3, SBI_TIME, 1, 777, 0, 0);
	CHECK_EQ(a0_of(3), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(3, STAT_SBI_TIME), 3);
}

/* HSM hart_suspend: the default types wait for the vCPU's own enabled interrupt. */
void test_sbi_hsm_suspend(void)
{
	rv_boot();
	struct partition *p = rv_part(RV_TRAP);
	uint64_t resume = p->cfg->ram_ipa + 0x3000;

	/* Retentive: the guest's timer enabled ends the wait; the call returns. */
	fake_csr_put(1, "hie", HVIP_VSTIP);
	CHECK_EQ(sbi(1, SBI_HSM, 3, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(fake_insn_count(1, "wfi"), 1);
	/* Non-retentive: resumes at resume_addr with a0 = hart id and a1 = opaque, MMU off. */
	fake_csr_put(1, "hip", 0);
	fake_csr_put(1, "vsatp", 0x8000000000012345ull);
	CHECK_EQ(sbi(1, SBI_HSM, 3, 0x80000000, resume, 0x77), FAKE_RETURNED);
	CHECK_EQ(fake_guest_regs(1)->sepc, resume);
	CHECK_EQ(a0_of(1), 0);
	CHECK_EQ(a1_of(1), 0x77);
	CHECK_EQ(fake_csr(1, "vsatp"), 0);
	/* Nothing enabled: only a stop ends it, and the vCPU leaves with its partition. */
	fake_csr_put(1, "hie", 0);
	fake_csr_put(1, "hip", 0);
	CHECK(sbi(1, SBI_HSM, 3, 0, 0, 0) != FAKE_RETURNED);
	CHECK(fake_cores[1].running == NULL);
}

/* Tern's manager extension is counted as its own calls, not as an unsupported extension's. */
void test_sbi_manager_extension_counted_as_manager_calls(void)
{
	rv_boot();
	uint64_t other = stat_of(1, STAT_SBI_OTHER);
	sbi(1, 0x0a54524e, 0, rv_part(RV_TRAP)->cfg->ram_ipa, 4, 0);
	CHECK_EQ(a0_of(1), (uint64_t)-4); /* SBI_ERR_DENIED: "trap" is no manager */
	CHECK_EQ(stat_of(1, STAT_SBI_OTHER), other);
	CHECK_EQ(stat_of(1, STAT_MANAGER_CALL), 1);
	CHECK_EQ(stat_of(1, STAT_MANAGER_DENIED), 1);
	sbi(1, 0x0a54524f, 0, 0, 0, 0); /* the next one is nobody's */
	CHECK_EQ(a0_of(1), SBI_ERR_NOT_SUPPORTED);
	CHECK_EQ(stat_of(1, STAT_SBI_OTHER), other + 1);
}
