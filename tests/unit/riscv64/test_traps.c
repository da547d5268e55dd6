/* SPDX-License-Identifier: MIT */
/*
 * The rest of what a riscv64 guest reaches (arch/riscv64/traps.c, vcpu.c, stage2.c): MMIO through a
 * fetched instruction, trapped instructions, interrupts, device MSI steering, restarts.
 */
#include <stdio.h>
#include <string.h>
#include <tern/arch.h>
#include <tern/platform.h>
#include "check.h"
#include "rv.h"
#include "tests.h"

/* The guest's instruction at `offset` of its RAM, and its pc there. */
static void guest_insn(unsigned cpu, uint64_t offset, const void *insn, size_t len)
{
	const struct tern_config_partition *c = cpus[cpu].vcpu->partition->cfg;

	memcpy(fake_partition_ram(c) + offset, insn, len);
	fake_guest_regs(cpu)->sepc = c->ram_ipa + offset;
}

/* No htinst (QEMU 7.2): the instruction is read from the guest, compressed or not. */
void test_rv_mmio_fetched_instruction(void)
{
	rv_boot();
	struct guest_regs *r = fake_guest_regs(1);
	uint64_t gpa = platform.arch.aplic_s_base + 0x4 + 4 * 34; /* sourcecfg[35] */
	static const uint16_t c_sw_a3 = 0xc1d4, c_lw_a2 = 0x41d0; /* c.sw a3, 4(a1); c.lw a2, 4(a1) */
	static const uint32_t sw_s2 = 0x0125a023, lhu_a0 = 0x0005d503;

	guest_insn(1, 0x4000, &c_sw_a3, 2);
	r->x[13] = 5;
	CHECK_EQ(fake_rv_trap(1, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0), FAKE_RETURNED);
	CHECK_EQ(r->sepc, cpus[1].vcpu->partition->cfg->ram_ipa + 0x4002);
	CHECK_EQ(fake_aplic_reg(0x4 + 4 * 34), 5);
	guest_insn(1, 0x4010, &c_lw_a2, 2);
	CHECK_EQ(fake_rv_trap(1, EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0), FAKE_RETURNED);
	CHECK_EQ(r->x[12], 5);
	guest_insn(1, 0x4020, &sw_s2, 4);
	r->x[18] = 7;
	CHECK_EQ(fake_rv_trap(1, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0), FAKE_RETURNED);
	CHECK_EQ(fake_aplic_reg(0x4 + 4 * 34), 7);
	CHECK_EQ(r->sepc, cpus[1].vcpu->partition->cfg->ram_ipa + 0x4024);
	/* A transformed compressed load (htinst bit 1 clear): pc moves by 2. */
	r->sepc = 0x80000000;
	CHECK_EQ(fake_rv_trap(1, EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0x2601), FAKE_RETURNED);
	CHECK_EQ(r->x[12], 7);
	CHECK_EQ(r->sepc, 0x80000002);
	/* A load to x0 changes nothing. */
	CHECK_EQ(fake_rv_trap(1, EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0x00002003), FAKE_RETURNED);
	CHECK_EQ(r->x[0], 0);
	/* A store fault whose instruction is a load: the partition is stopped. */
	guest_insn(1, 0x4030, &lhu_a0, 4);
	enum fake_exit e = fake_rv_trap(1, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, 0);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("store outside its memory"));
	CHECK(!fake_cores[1].running);
}

void test_rv_mmio_faults(void)
{
	rv_boot();
	struct guest_regs *r = fake_guest_regs(3);

	/* An instruction it cannot have fetched (pc outside its RAM). */
	r->sepc = 0x1000;
	enum fake_exit e = fake_rv_trap(3, EXC_LOAD_GUEST_PAGE_FAULT, 0x2000, 0x2000 >> 2, 0);
	CHECK_EQ(fake_settle(3, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("load outside its memory: gpa=0x2000 pc=0x1000"));
	/* A fetch outside its memory. */
	e = fake_rv_trap(5, EXC_INST_GUEST_PAGE_FAULT, 0x3000, 0x3000 >> 2, 0);
	CHECK_EQ(fake_settle(5, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("fetch outside its memory"));
	/* Another exception the hypervisor never delegates: stopped with a line. */
	e = fake_rv_trap(1, 13, 0x55, 0, 0);
	CHECK_EQ(e, FAKE_EXIT_BOARD_OFF); /* the last partition ended: the board goes off */
	CHECK(rv_console_has("scause=13 stval=0x55"));
	CHECK_EQ(fake_board_offs, 1);
}

void test_rv_virtual_instructions(void)
{
	rv_boot();
	struct guest_regs *r = fake_guest_regs(1);
	static const uint32_t wfi = 0x10500073, csrr_hgatp = 0x68002573;

	/* A trapped WFI: the core waits itself, the guest goes on after it. */
	guest_insn(1, 0x5000, &wfi, 4);
	CHECK_EQ(fake_rv_trap(1, EXC_VIRTUAL_INSTRUCTION, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_insn_count(1, "wfi"), 1);
	CHECK_EQ(r->sepc, cpus[1].vcpu->partition->cfg->ram_ipa + 0x5004);
	CHECK_EQ(stat_of(1, STAT_EXIT_WFI), 1);
	/* ... and takes the timer that woke it. */
	fake_csr_put(1, "sip", SIP_STIP);
	CHECK_EQ(fake_rv_trap(1, EXC_VIRTUAL_INSTRUCTION, wfi, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "hvip") & HVIP_VSTIP, HVIP_VSTIP);
	fake_csr_put(1, "sip", 0);
	/* Anything else: an illegal instruction for the guest, from VS-mode. */
	fake_csr_put(1, "vstvec", 0x80002001);
	fake_csr_put(1, "sstatus", SSTATUS_SPP);
	fake_csr_put(1, "vsstatus", SSTATUS_SIE);
	r->sepc = 0x80000100;
	CHECK_EQ(fake_rv_trap(1, EXC_VIRTUAL_INSTRUCTION, csrr_hgatp, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vscause"), EXC_ILLEGAL_INSTRUCTION);
	CHECK_EQ(fake_csr(1, "vstval"), csrr_hgatp);
	CHECK_EQ(fake_csr(1, "vsepc"), 0x80000100);
	CHECK_EQ(fake_csr(1, "vsstatus"), SSTATUS_SPP | SSTATUS_SPIE);
	CHECK_EQ(r->sepc, 0x80002000);
	CHECK_EQ(stat_of(1, STAT_EXIT_VIRTUAL_INSN), 1);
	/* From VU-mode, interrupts off: SPP and SPIE clear. */
	fake_csr_put(1, "sstatus", 0);
	fake_csr_put(1, "vsstatus", SSTATUS_SPP | SSTATUS_SPIE);
	guest_insn(1, 0x5010, &csrr_hgatp, 4);
	CHECK_EQ(fake_rv_trap(1, EXC_VIRTUAL_INSTRUCTION, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vsstatus"), 0);
	CHECK_EQ(fake_csr(1, "vstval"), csrr_hgatp);
	/* A pc it cannot fetch from: an illegal instruction with no value. */
	r->sepc = 0x10;
	CHECK_EQ(fake_rv_trap(1, EXC_VIRTUAL_INSTRUCTION, 0, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "vstval"), 0);
	CHECK(fake_cores[1].running);
}

void test_rv_interrupts(void)
{
	rv_boot();
	/* A kick with nothing posted, then one that brings an operator's stop. */
	CHECK_EQ(fake_kick_running(1), FAKE_RETURNED);
	CHECK_EQ(stat_of(1, STAT_EXIT_IRQ), 1);
	partition_request(rv_part(RV_NONE), PARTITION_REQ_STOP);
	CHECK_EQ(fake_settle(5, fake_kick_running(5)), FAKE_EXIT_WAIT);
	CHECK(!fake_cores[5].running);
	CHECK_EQ(atomic_load(&rv_part(RV_NONE)->state), PARTITION_OFF); /* an operator's stop is an end, not a fault */
	/* Another interrupt cause is the hypervisor's bug: the partition stops. */
	enum fake_exit e = fake_rv_trap(1, SCAUSE_IRQ | IRQ_S_SOFT, 0, 0, 0);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("unexpected interrupt 1"));
}

/* A device's MSI to a vCPU's interrupt file goes to the guest file behind it; nothing else does. */
void test_rv_msi_target(void)
{
	rv_boot();
	const struct partition *d = rv_part(RV_DIRECT), *t = rv_part(RV_TRAP);
	uint64_t base = platform.arch.imsic_s_base, stride = platform.arch.imsic_vcpu_stride, host = 0;

	CHECK(arch_msi_target(d, base + 0x10, &host));
	CHECK_EQ(host, base + 3 * stride + VCPU_GUEST_FILE * 0x1000 + 0x10);
	CHECK(arch_msi_target(d, base + stride, &host));
	CHECK_EQ(host, base + 4 * stride + VCPU_GUEST_FILE * 0x1000);
	CHECK(arch_msi_target(d, base + stride + 0xffc, &host));
	CHECK_EQ(host, base + 4 * stride + VCPU_GUEST_FILE * 0x1000 + 0xffc);
	host = 0;
	CHECK(!arch_msi_target(d, base + 0x1000, &host));        /* vCPU 0's guest files: not its */
	CHECK(!arch_msi_target(d, base + 2 * stride, &host));    /* no vCPU 2 */
	CHECK(!arch_msi_target(d, base - 4, &host));
	CHECK(!arch_msi_target(t, base, &host));                 /* trap-and-emulate: no files */
	CHECK_EQ(host, 0);
	/* Its map: RAM, and its vCPUs' files at the board's addresses of harts 0 and 1. */
	const uint64_t *root = d->arch.gstage_root;
	CHECK(root[(base >> 30) & 2047] & 1);
	uint32_t used, total;
	arch_table_pages(&used, &total);
	CHECK(used > 0 && used <= total);
}

void test_rv_direct_needs_guest_files(void)
{
	fake_guest_files = 0;
	CHECK_EQ(rv_boot(), FAKE_EXIT_BOARD_OFF);
	CHECK(rv_console_has("irq = direct needs guest interrupt files"));
}

/* A restart puts its sources back to inactive on the board and in its APLIC. */
void test_rv_restart_resets_sources(void)
{
	rv_boot();
	vaplic_write(1, 0x0, 0x100);
	vaplic_write(1, 0x4 + 4 * 34, 4);
	vaplic_write(1, 0x1edc, 35);
	CHECK_EQ(fake_aplic_reg(0x4 + 4 * 34), 4);
	CHECK((fake_aplic_reg(0x1e04) >> 3) & 1);
	enum fake_exit e = sbi(1, SBI_SRST, 0, 1, 0, 0);
	fake_settle(1, e);
	fake_deliver_all_kicks(16);
	CHECK(fake_cores[1].running);
	CHECK_EQ(fake_aplic_reg(0x4 + 4 * 34), 0);
	CHECK_EQ((fake_aplic_reg(0x1e04) >> 3) & 1, 0);
	CHECK_EQ(vaplic_read(1, 0x0), 0x80000000u);
	CHECK_EQ(vaplic_read(1, 0x4 + 4 * 34), 0);
	CHECK_EQ(vaplic_read(1, 0x3004 + 4 * 34), 1); /* hart 0, priority 1 */
}

/* The leaf mapping `gpa` in a G-stage (Sv39x4) tree, and its level's size; 0 if none. */
static uint64_t gstage_leaf(const uint64_t *root, uint64_t gpa, uint64_t *size)
{
	uint64_t e = root[(gpa >> 30) & 2047];

	for (unsigned shift = 21; e & 1; shift -= 9) {
		const uint64_t *table = (const uint64_t *)(uintptr_t)((e >> 10) << 12);
		e = table[(gpa >> shift) & 511];
		if (e & 0xe) { /* R, W or X: a leaf */
			*size = 1ull << shift;
			return e;
		}
		if (shift == 12)
			break;
	}
	return 0;
}

/* RAM in 2 MiB leaves, executable; a device region and the vCPUs' files in 4 KiB ones, not. */
void test_rv_gstage_map(void)
{
	static const uint8_t cores[] = { 1, 2 };
	uint64_t size = 0, e;

	fake_config_begin(3);
	struct tern_config_partition *c = fake_config_add("dev", cores, 2, TERN_PF_IRQ_DIRECT);
	c->num_regions = 1;
	c->region[0] = (struct tern_config_region){ FAKE_MEM_WINDOW + 0x3000, FAKE_MEM_WINDOW + 0x3000,
						    0x2000, TERN_RF_DEVICE, 0 };
	CHECK_EQ(fake_boot(0), FAKE_EXIT_WAIT);
	if (num_partitions != 1) {
		CHECK(!"booted");
		fprintf(stderr, "%s", fake_uart_out);
		return;
	}
	const uint64_t *root = rv_part(0)->arch.gstage_root;

	e = gstage_leaf(root, c->ram_ipa + 0x1000, &size);
	CHECK_EQ(size, 2u << 20);
	CHECK_EQ(e >> 10, c->ram_hpa >> 12);
	CHECK_EQ(e & 0xff, 0xdf); /* V R W X U A D */
	CHECK_EQ(gstage_leaf(root, c->ram_ipa + c->ram_size, &size), 0);
	CHECK_EQ(gstage_leaf(root, c->ram_ipa - 4096, &size), 0);
	for (uint64_t off = 0; off < 0x2000; off += 0x1000) {
		e = gstage_leaf(root, FAKE_MEM_WINDOW + 0x3000 + off, &size);
		CHECK_EQ(size, 4096);
		CHECK_EQ(e >> 10, (FAKE_MEM_WINDOW + 0x3000 + off) >> 12);
		CHECK_EQ(e & 0xff, 0xd7); /* V R W U A D: never executable */
	}
	CHECK_EQ(gstage_leaf(root, FAKE_MEM_WINDOW + 0x2000, &size), 0);
	CHECK_EQ(gstage_leaf(root, FAKE_MEM_WINDOW + 0x5000, &size), 0);
	/* vCPU i's S-level file where hart i's is on the board: its core's guest file. */
	for (uint32_t i = 0; i < 2; i++) {
		e = gstage_leaf(root, platform.arch.imsic_s_base + i * platform.arch.imsic_vcpu_stride, &size);
		CHECK_EQ(size, 4096);
		CHECK_EQ(e >> 10, riscv_vcpu_file_hpa(rv_part(0), i) >> 12);
		CHECK_EQ(e & 0xff, 0xd7);
	}
	CHECK_EQ(gstage_leaf(root, platform.arch.imsic_s_base + 2 * platform.arch.imsic_vcpu_stride, &size), 0);
	/* VMID: the partition's index + 1. */
	CHECK_EQ(rv_part(0)->arch.hgatp >> 60, 8);
	CHECK_EQ(rv_part(0)->arch.hgatp >> 44 & 0x3fff, 1);
}

/* ---- on_fault = "inject": an access outside everything is the bus's access fault, the guest's ---- */

#define HOLE        0x0b000010ull          /* nothing there, on the board or in "rt" */
#define HOLE_VA     0xffffffc00b000010ull
#define HTINST_LW   0x00002503u            /* lw a0, 0(x0), transformed */
#define HTINST_SW   0x00a02023u            /* sw a0, 0(x0) */
#define VS_SIE      BIT(1)
#define VS_SPIE     BIT(5)

static const struct tern_config_partition *inj;
static uint64_t handler, pc;

/*
 * "rt" on hart 1 with a device region and the policy given, its vCPU running at `pc`; "other"
 * on hart 2 keeps the board on when rt stops.
 */
static struct guest_regs *inject_board(uint32_t fault_policy)
{
	static const uint8_t cores[] = { 1 }, other[] = { 2 };

	fake_config_begin(3);
	fake_config_add("other", other, 1, 0);
	struct tern_config_partition *c = fake_config_add("rt", cores, 1, 0);
	c->fault_policy = fault_policy;
	c->num_regions = 1;
	c->region[0] = (struct tern_config_region){ FAKE_MEM_WINDOW, FAKE_MEM_WINDOW, 0x1000,
						    TERN_RF_DEVICE, 0 };
	fake_boot(0);
	fake_start_secondaries();
	CHECK(fake_cores[1].running);
	inj = rv_part(1)->cfg;
	handler = inj->ram_ipa + 0x200;
	pc = inj->ram_ipa + 0x1000;
	fake_csr_put(1, "vstvec", handler | 1); /* vectored: exceptions still go to the base */
	fake_uart_clear();
	struct guest_regs *r = fake_guest_regs(1);
	r->sepc = pc;
	return r;
}

/* The guest's handler entered for exception `cause` at `tval`, from `pc` in VS-mode (`from_vs`) or VU. */
static void check_rv_injected(const struct guest_regs *r, uint64_t cause, uint64_t tval, bool from_vs)
{
	CHECK_EQ(r->sepc, handler);
	CHECK_EQ(fake_csr(1, "vscause"), cause);
	CHECK_EQ(fake_csr(1, "vstval"), tval);
	CHECK_EQ(fake_csr(1, "vsepc"), pc);
	uint64_t vsstatus = fake_csr(1, "vsstatus");
	CHECK_EQ(vsstatus & SSTATUS_SPP, from_vs ? SSTATUS_SPP : 0);
	CHECK_EQ(vsstatus & (VS_SIE | VS_SPIE), VS_SPIE);  /* interrupts were on: off in the handler */
	CHECK(fake_csr(1, "sstatus") & SSTATUS_SPP);        /* the handler runs in VS-mode */
}

/* A guest page fault on gpa, gva as stval, the access as htinst (0: a fetch). */
static enum fake_exit rv_fault(uint64_t cause, uint64_t gva, uint64_t gpa, uint32_t htinst, bool from_vs)
{
	fake_csr_put(1, "sstatus", from_vs ? SSTATUS_SPP : 0);
	fake_csr_put(1, "vsstatus", VS_SIE);
	return fake_rv_trap(1, cause, gva, gpa >> 2, htinst);
}

/* A load, a store and a fetch: the access faults of each (cause 5, 7, 1) with the guest's address. */
void test_rv_outside_access_injected(void)
{
	struct guest_regs *r = inject_board(TERN_FAULT_INJECT);
	const struct vcpu *v = cpus[1].vcpu;
	char line[160];

	CHECK_EQ(rv_fault(EXC_LOAD_GUEST_PAGE_FAULT, HOLE_VA, HOLE, HTINST_LW, true), FAKE_RETURNED);
	check_rv_injected(r, EXC_LOAD_ACCESS, HOLE_VA, true);
	snprintf(line, sizeof(line), "injected fault partition=rt vcpu=0 gpa=0x%llx pc=0x%llx scause=%u",
		 HOLE, (unsigned long long)pc, EXC_LOAD_GUEST_PAGE_FAULT);
	CHECK(rv_console_has(line));
	r->sepc = pc;
	CHECK_EQ(rv_fault(EXC_STORE_GUEST_PAGE_FAULT, HOLE_VA, HOLE, HTINST_SW, false), FAKE_RETURNED);
	check_rv_injected(r, EXC_STORE_ACCESS, HOLE_VA, false);
	/* A load no instruction says is one (htinst 0, and RAM holds none at pc): still outside. */
	r->sepc = pc;
	CHECK_EQ(rv_fault(EXC_LOAD_GUEST_PAGE_FAULT, HOLE_VA, HOLE, 0, true), FAKE_RETURNED);
	check_rv_injected(r, EXC_LOAD_ACCESS, HOLE_VA, true);
	r->sepc = pc;
	CHECK_EQ(rv_fault(EXC_INST_GUEST_PAGE_FAULT, HOLE_VA, HOLE, 0, true), FAKE_RETURNED);
	check_rv_injected(r, EXC_INST_ACCESS, HOLE_VA, true);
	CHECK_EQ(v->stats[STAT_FAULT_INJECTED], 4);
	CHECK_EQ(v->stats[STAT_EXCEPTION_INJECTED], 4);
	CHECK_EQ(v->stats[STAT_FAULT], 0);
	CHECK_EQ(atomic_load(&rv_part(1)->state), PARTITION_RUNNING);
	/* Only the first few are reported: a guest retrying in a loop does not flood its console. */
	fake_uart_clear();
	r->sepc = pc;
	CHECK_EQ(rv_fault(EXC_INST_GUEST_PAGE_FAULT, HOLE_VA, HOLE, 0, true), FAKE_RETURNED);
	CHECK_EQ(v->stats[STAT_FAULT_INJECTED], 5);
	CHECK(!rv_console_has("injected fault"));
}

/* Its handler's own fetch faulting would repeat for ever: the partition stops instead. */
void test_rv_outside_fetch_of_handler_stops(void)
{
	struct guest_regs *r = inject_board(TERN_FAULT_INJECT);

	r->sepc = handler;
	pc = handler;
	enum fake_exit e = rv_fault(EXC_INST_GUEST_PAGE_FAULT, handler, HOLE, 0, true);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has("fetch outside its memory"));
	CHECK(!rv_console_has("injected fault"));
	CHECK_EQ(atomic_load(&rv_part(1)->state), PARTITION_STOPPED);
}

/*
 * A fault on what the partition has (its RAM, its device region) is not the bus's: it stops
 * the partition even under "inject" (gpa 0: its RAM).
 */
static void check_fault_stops(uint32_t policy, uint64_t gpa, uint32_t htinst, const char *says)
{
	struct guest_regs *r = inject_board(policy);
	bool store = htinst == HTINST_SW;

	gpa = gpa ? gpa : inj->ram_ipa + 0x3000;
	enum fake_exit e = rv_fault(store ? EXC_STORE_GUEST_PAGE_FAULT : EXC_LOAD_GUEST_PAGE_FAULT,
				    gpa, gpa, htinst, true);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	CHECK(rv_console_has(says));
	CHECK(!rv_console_has("injected fault"));
	CHECK_EQ(r->sepc, pc);
	CHECK_EQ(atomic_load(&rv_part(1)->state), PARTITION_STOPPED);
	CHECK_EQ(rv_part(1)->vcpu[0].stats[STAT_FAULT_INJECTED], 0);
}

void test_rv_fault_in_ram_not_injected(void)
{
	check_fault_stops(TERN_FAULT_INJECT, 0, HTINST_LW, "load outside its memory: gpa=0x");
}

void test_rv_fault_in_device_region_not_injected(void)
{
	check_fault_stops(TERN_FAULT_INJECT, FAKE_MEM_WINDOW + 0x10, HTINST_SW, "store outside its memory");
}

/* Under "stop", a hole stops it too. */
void test_rv_fault_outside_stops(void)
{
	check_fault_stops(TERN_FAULT_STOP, HOLE, HTINST_LW, "load outside its memory");
}

/*
 * The guest's own page-table walk reading a PTE outside its memory (htinst's pseudoinstruction
 * names it): the partition's fault, never an access fault for its handler, even where an
 * emulated device's register is.
 */
void test_rv_page_walk_outside_stops(void)
{
	inject_board(TERN_FAULT_INJECT);
	uint64_t pte = platform.arch.aplic_s_base + 0x8;
	char line[160];

	enum fake_exit e = rv_fault(EXC_LOAD_GUEST_PAGE_FAULT, HOLE_VA, pte, 0x3000, true);
	CHECK_EQ(fake_settle(1, e), FAKE_EXIT_WAIT);
	snprintf(line, sizeof(line), "page-table walk outside its memory: gpa=0x%llx va=0x%llx pc=0x%llx",
		 (unsigned long long)pte, HOLE_VA, (unsigned long long)pc);
	CHECK(rv_console_has(line));
	CHECK(!rv_console_has("injected fault"));
	CHECK_EQ(atomic_load(&rv_part(1)->state), PARTITION_STOPPED);
}

/* A reserved htinst (neither an access nor a walk) says nothing: outside, the bus's fault. */
void test_rv_reserved_htinst_outside_injected(void)
{
	struct guest_regs *r = inject_board(TERN_FAULT_INJECT);

	CHECK_EQ(rv_fault(EXC_STORE_GUEST_PAGE_FAULT, HOLE_VA, HOLE, 0x0002, false), FAKE_RETURNED);
	check_rv_injected(r, EXC_STORE_ACCESS, HOLE_VA, false);
}
