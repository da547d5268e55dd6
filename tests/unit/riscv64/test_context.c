/* SPDX-License-Identifier: MIT */
/*
 * A vCPU's context (arch/riscv64/vcpu.c, arch_vcpu_save/restore): every register a switch
 * carries comes back, two vCPUs of one core keep their own, and the context holds whatever
 * arch_vcpu_run resets.
 */
#include <stdio.h>
#include <string.h>
#include <tern/arch.h>
#include "check.h"
#include "rv.h"
#include "tests.h"

/*
 * Every CSR the fake core has, by what a vCPU switch does with it.  A CSR added to the fake
 * (because the hypervisor now touches it) and not to this table fails
 * test_rv_context_table_is_complete, which makes its author decide.
 */
enum carried {
	SAVED,   /* the vCPU's: in its context */
	ENTRY,   /* the core's, set at entry from the vCPU's partition (its delivery mode) */
	TRAP,    /* the last trap's, or the hypervisor's own interrupts: not the guest's */
	FILE_,   /* a window onto the guest interrupt file, which stays in the hart */
	FILES,   /* the hart's guest files: a saved trap-less vCPU's bit in hgeie, set and cleared by bit */
};

static const struct {
	const char *csr;
	enum carried how;
} csrs[] = {
	{ "vsstatus", SAVED }, { "vsie", SAVED }, { "vstvec", SAVED }, { "vsscratch", SAVED },
	{ "vsepc", SAVED }, { "vscause", SAVED }, { "vstval", SAVED }, { "vsatp", SAVED },
	{ "0x250" /* vsiselect */, SAVED }, { "hvip", SAVED }, { "hie", SAVED },
	{ "hstatus", SAVED }, { "0x60a" /* henvcfg */, SAVED }, { "0x24d" /* vstimecmp */, SAVED },
	{ "0x14d" /* stimecmp */, SAVED }, { "hgatp", SAVED },
	{ "sstatus", ENTRY }, { "sie", ENTRY },
	{ "sip", TRAP }, { "scause", TRAP }, { "stval", TRAP }, { "sepc", TRAP }, { "hip", TRAP },
	{ "htval", TRAP }, { "0x64a" /* htinst */, TRAP },
	{ "0x251" /* vsireg */, FILE_ },
	{ "0x607" /* hgeie */, FILES }, { "0xe12" /* hgeip */, FILES },
};
#define NUM_CSRS (sizeof(csrs) / sizeof(csrs[0]))

#define CORE 3u /* "direct"'s vCPU 0 (trap-less) */

static int carried_as(const char *name)
{
	for (unsigned i = 0; i < NUM_CSRS; i++) {
		if (!strcmp(csrs[i].csr, name))
			return (int)csrs[i].how;
	}
	return -1;
}

/* A register's value in state `seed`: distinct per register and per state. */
static uint64_t value(uint64_t seed, unsigned reg)
{
	return seed * 0x0100010001000100ULL + 0x1111ULL * (reg + 1u);
}

/* Register numbers of the state beyond the CSRs. */
#define REG_X(i)  (100u + (i))
#define REG_SEPC  140u
#define REG_F(i)  (200u + (i))
#define REG_FCSR  240u

/* The core's guest state (what the context covers) is state `seed`, with hstatus.VGEIN = vgein. */
static void fill(unsigned cpu, uint64_t seed, uint64_t vgein)
{
	for (unsigned i = 0; i < NUM_CSRS; i++) {
		if (csrs[i].how == SAVED)
			fake_csr_put(cpu, csrs[i].csr, value(seed, i));
	}
	fake_csr_put(cpu, "hstatus", (value(seed, 0) & ~HSTATUS_VGEIN_MASK) |
				     (vgein << HSTATUS_VGEIN_SHIFT));
	struct guest_regs *r = fake_guest_regs(cpu);
	for (unsigned i = 1; i < 32; i++)
		r->x[i] = value(seed, REG_X(i));
	r->sepc = value(seed, REG_SEPC);
	for (unsigned i = 0; i < 32; i++)
		fake_fp[cpu].f[i] = value(seed, REG_F(i));
	fake_fp[cpu].fcsr = value(seed, REG_FCSR);
}

/* A check that names the register when it fails: `what`, or `what`<i> for i >= 0. */
static void expect(const char *what, int i, uint64_t got, uint64_t want)
{
	if (got != want && i >= 0)
		fprintf(stderr, "  %s%d: 0x%llx, want 0x%llx\n", what, i, (unsigned long long)got,
			(unsigned long long)want);
	else if (got != want)
		fprintf(stderr, "  %s: 0x%llx, want 0x%llx\n", what, (unsigned long long)got,
			(unsigned long long)want);
	CHECK(got == want);
}

/* The core holds state `seed` (as fill() left it), hstatus.VGEIN = vgein. */
static void expect_state(unsigned cpu, uint64_t seed, uint64_t vgein)
{
	for (unsigned i = 0; i < NUM_CSRS; i++) {
		if (csrs[i].how != SAVED || !strcmp(csrs[i].csr, "hstatus"))
			continue;
		expect(csrs[i].csr, -1, fake_csr(cpu, csrs[i].csr), value(seed, i));
	}
	expect("hstatus", -1, fake_csr(cpu, "hstatus"),
	       (value(seed, 0) & ~HSTATUS_VGEIN_MASK) | (vgein << HSTATUS_VGEIN_SHIFT));
	const struct guest_regs *r = fake_guest_regs(cpu);
	for (unsigned i = 1; i < 32; i++)
		expect("x", (int)i, r->x[i], value(seed, REG_X(i)));
	expect("sepc (frame)", -1, r->sepc, value(seed, REG_SEPC));
	for (unsigned i = 0; i < 32; i++)
		expect("f", (int)i, fake_fp[cpu].f[i], value(seed, REG_F(i)));
	expect("fcsr", -1, fake_fp[cpu].fcsr, value(seed, REG_FCSR));
}

/* After a save the core is quiesced: nothing of the vCPU's fires or shows in the next one. */
static void expect_quiesced(unsigned cpu)
{
	expect("stimecmp after save", -1, fake_csr(cpu, "0x14d"), ~0ULL);
	expect("vstimecmp after save", -1, fake_csr(cpu, "0x24d"), ~0ULL);
	expect("hvip after save", -1, fake_csr(cpu, "hvip"), 0);
	expect("hie after save", -1, fake_csr(cpu, "hie"), 0);
}

void test_rv_context_table_is_complete(void)
{
	unsigned n = 0;

	for (const char *name; (name = fake_csr_name(n)) != NULL; n++) {
		if (carried_as(name) < 0)
			fprintf(stderr, "  %s: not in test_context.c's table\n", name);
		CHECK(carried_as(name) >= 0);
	}
	CHECK_EQ(n, NUM_CSRS);
}

void test_rv_context_round_trip(void)
{
	rv_boot();
	struct vcpu *v = &rv_part(RV_DIRECT)->vcpu[0];

	fill(CORE, 1, VCPU_GUEST_FILE);
	CHECK_EQ(FAKE_ON(CORE, arch_vcpu_save(v)), FAKE_RETURNED);
	expect_quiesced(CORE);
	fill(CORE, 2, 0); /* every register clobbered */
	CHECK_EQ(FAKE_ON(CORE, arch_vcpu_restore(v)), FAKE_RETURNED);
	expect_state(CORE, 1, VCPU_GUEST_FILE);
	CHECK(cpus[CORE].vcpu == v);
	CHECK_EQ(fake_csr(CORE, "sie"), SIE_SEIE); /* trap-less: its timer is its own */
	CHECK(fake_csr(CORE, "sstatus") & SSTATUS_SPP);
	CHECK_EQ(fake_insn_count(CORE, "hfence.gvma"), 1); /* its first entry's only: a VMID of its own */
}

/* Two trap-less vCPUs on one core, each with its own guest file: neither sees the other's state. */
void test_rv_context_two_vcpus_one_core(void)
{
	rv_boot();
	struct vcpu *a = &rv_part(RV_DIRECT)->vcpu[0], *b = &rv_part(RV_DIRECT)->vcpu[1];

	fill(CORE, 20, 2);
	FAKE_ON(CORE, arch_vcpu_save(b));
	fill(CORE, 10, 1);
	FAKE_ON(CORE, arch_vcpu_save(a));
	FAKE_ON(CORE, arch_vcpu_restore(b));
	expect_state(CORE, 20, 2);
	CHECK(cpus[CORE].vcpu == b);
	fill(CORE, 21, 2); /* b ran: all of it changed */
	FAKE_ON(CORE, arch_vcpu_save(b));
	expect_quiesced(CORE);
	FAKE_ON(CORE, arch_vcpu_restore(a));
	expect_state(CORE, 10, 1);
	CHECK(cpus[CORE].vcpu == a);
	fill(CORE, 11, 1);
	FAKE_ON(CORE, arch_vcpu_save(a));
	FAKE_ON(CORE, arch_vcpu_restore(b));
	expect_state(CORE, 21, 2);
	FAKE_ON(CORE, arch_vcpu_save(b));
	FAKE_ON(CORE, arch_vcpu_restore(a));
	expect_state(CORE, 11, 1);
}

/*
 * The timers as the SBI set them: a trap-less vCPU's vstimecmp (with its QEMU nudge on the
 * core's stimecmp), a trap-and-emulate one's deadline on the core's stimecmp, both back after a
 * switch through one core, and each with its own hstatus.VGEIN, henvcfg and sie.
 */
void test_rv_context_timers(void)
{
	rv_boot();
	struct vcpu *direct = &rv_part(RV_DIRECT)->vcpu[0], *trap = &rv_part(RV_TRAP)->vcpu[0];
	const uint64_t t1 = 0x123456789, t2 = 0x2468ace0;

	CHECK_EQ(sbi(CORE, SBI_TIME, 0, t1, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(CORE, "0x24d"), t1);
	uint64_t nudge = fake_csr(CORE, "0x14d");
	CHECK(nudge > t1 && nudge != ~0ULL);
	CHECK_EQ(sbi(1, SBI_TIME, 0, t2, 0, 0), FAKE_RETURNED);
	CHECK_EQ(fake_csr(1, "0x14d"), t2);
	/* The trap-and-emulate vCPU leaves core 1, then runs on the trap-less one's core. */
	FAKE_ON(1, arch_vcpu_save(trap));
	expect_quiesced(1);
	FAKE_ON(CORE, arch_vcpu_save(direct));
	expect_quiesced(CORE);
	FAKE_ON(CORE, arch_vcpu_restore(trap));
	CHECK_EQ(fake_csr(CORE, "0x14d"), t2);
	CHECK_EQ(fake_csr(CORE, "0x60a"), 0);
	CHECK_EQ(fake_csr(CORE, "hstatus") & HSTATUS_VGEIN_MASK, 0);
	CHECK_EQ(fake_csr(CORE, "hstatus") & HSTATUS_VTW, HSTATUS_VTW);
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_TRAP)->arch.hgatp);
	CHECK_EQ(fake_csr(CORE, "sie"), SIE_SEIE | SIE_STIE); /* its SBI timer is the core's */
	FAKE_ON(CORE, arch_vcpu_save(trap));
	FAKE_ON(CORE, arch_vcpu_restore(direct));
	CHECK_EQ(fake_csr(CORE, "0x24d"), t1);
	CHECK_EQ(fake_csr(CORE, "0x14d"), nudge);
	CHECK_EQ(fake_csr(CORE, "0x60a"), HENVCFG_STCE);
	CHECK_EQ(fake_csr(CORE, "hstatus") & HSTATUS_VGEIN_MASK,
		 (uint64_t)VCPU_GUEST_FILE << HSTATUS_VGEIN_SHIFT);
	CHECK_EQ(fake_csr(CORE, "hgatp"), rv_part(RV_DIRECT)->arch.hgatp);
	CHECK_EQ(fake_csr(CORE, "sie"), SIE_SEIE);
}

/*
 * What arch_vcpu_run writes is the context's or the entry's: a register the entry starts
 * resetting must be carried by a switch too (or classed in the table above, with a reason).
 * And the VS CSRs it resets are the context's list (RISCV_VCPU_VS_CSRS), each reset to 0.
 */
void test_rv_context_covers_what_entry_resets(void)
{
	rv_boot();
	struct vcpu *v = &rv_part(RV_DIRECT)->vcpu[0];
	const uint64_t junk = 0x5a5a5a5a5a5a5a5aULL;

	for (unsigned i = 0; i < NUM_CSRS; i++)
		fake_csr_put(CORE, csrs[i].csr, junk);
	CHECK_EQ(FAKE_ON(CORE, arch_vcpu_run(v, 0x80000000, 0)), FAKE_EXIT_RUN);
	for (unsigned i = 0; i < NUM_CSRS; i++) {
		bool written = fake_csr(CORE, csrs[i].csr) != junk;

		if (written && csrs[i].how != SAVED && csrs[i].how != ENTRY && csrs[i].how != FILE_ &&
		    csrs[i].how != FILES)
			fprintf(stderr, "  %s: written at entry, not carried by a switch\n", csrs[i].csr);
		CHECK(!written || csrs[i].how != TRAP);
	}
#define VS_NAME(csr) #csr,
	static const char *const vs[] = { RISCV_VCPU_VS_CSRS(VS_NAME) };
#undef VS_NAME
	for (unsigned i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		expect(vs[i], -1, fake_csr(CORE, vs[i]), 0);
		CHECK_EQ(carried_as(vs[i]), SAVED);
	}
	/* Every VS-level CSR the fake knows by name is one the entry resets. */
	for (unsigned n = 0; fake_csr_name(n) != NULL; n++) {
		const char *name = fake_csr_name(n);
		bool listed = false;

		if (strncmp(name, "vs", 2) != 0)
			continue;
		for (unsigned i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
			listed = listed || !strcmp(vs[i], name);
		if (!listed)
			fprintf(stderr, "  %s: a VS CSR not in RISCV_VCPU_VS_CSRS\n", name);
		CHECK(listed);
	}
}
