/* SPDX-License-Identifier: MIT */
/*
 * Synchronous exceptions from a guest: fuzzed ESR_EL2, FAR_EL2, HPFAR_EL2 and guest registers
 * through arm64_guest_sync, as vectors.S calls it.  An exit that does not return (a partition
 * stopped after a fault, a vCPU off) comes back here through the fake (longjmp); the board is
 * then brought back to the same running vCPUs before the next input.
 *
 * Oracle, for a trap that returns to the guest: it resumes at the next instruction (ELR
 * advanced by ESR.IL's length) or in its own EL1 vector with ELR_EL1, SPSR_EL1 and ESR_EL1 as
 * the hardware would have set them; no register changes but the one a load writes (or x0 for
 * an SMCCC call); an access outside everything that partition "trap" (on_fault = "inject")
 * was given, the syndrome esr_external_abort() makes of it.  For every trap: the other
 * partition's vCPUs are untouched, and the power invariants hold once the cores have settled.
 */
#include <string.h>
#include <arch/decode.h>
#include <arch/sysreg.h>
#include <tern/platform.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(3))
static const struct { uint32_t p, index; } actors[] = { { 0, 0 }, { 0, 1 }, { 1, 0 } };

static const uint8_t classes[] = {
	EC_UNKNOWN, EC_WFX, EC_CP15_32, EC_CP15_64, EC_CP14_32, EC_CP14_LS, EC_CP14_64,
	EC_HVC64, EC_SMC64, EC_SYSREG, EC_IABT_LOW, EC_DABT_LOW, EC_DABT_CUR, 0x07, 0x0e,
	0x15, 0x19, 0x22, 0x26, 0x2c, 0x2f, 0x3c,
};

/* SMCCC function IDs: PSCI's, and a few it does not have. */
static const uint32_t psci_ids[] = {
	0x84000000, 0x84000002, 0x84000003, 0xc4000003, 0x84000004, 0xc4000004, 0x84000006,
	0x84000008, 0x84000009, 0x8400000a, 0x80000000, 0xc4000002,
};

static uint64_t ipa_for(struct input *in, uint8_t sel)
{
	uint64_t off = take(in, 3);

	switch (sel % 5) {
	case 0: return platform.arch.gicd_base + off % platform.arch.gicd_size;
	case 1: return platform.arch.gicr_base + off % (platform.arch.gicr_stride * 8);
	case 2: return platform.uart_base + off % 0x2000;
	case 3: return partitions[0].cfg->ram_ipa + off;
	default: return take(in, 8);
	}
}

static struct guest_regs before;
static uint64_t injected_before;     /* the acting vCPU's fault_injected */

/* "trap" hands accesses outside it to its guest; "direct" keeps the stop policy. */
static void policy(struct tern_config *cfg)
{
	cfg->partition[STD_TRAP].fault_policy = TERN_FAULT_INJECT;
}
static struct partition_snapshot {
	uint32_t state, power[TERN_MAX_VCPUS];
} other_before;

static void snapshot_other(uint32_t pi)
{
	struct partition *p = &partitions[!pi];

	other_before.state = atomic_load(&p->state);
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		other_before.power[i] = atomic_load(&p->vcpu[i].power);
}

ORACLE static void check_other(uint32_t pi)
{
	struct partition *p = &partitions[!pi];

	FUZZ_ASSERT(atomic_load(&p->state) == other_before.state);
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		FUZZ_ASSERT(atomic_load(&p->vcpu[i].power) == other_before.power[i]);
}

ORACLE static void check_resumed(const struct vcpu *v, unsigned core, uint64_t esr)
{
	const struct guest_regs *r = fake_guest_regs(core);
	uint64_t ec = ESR_EC(esr);
	unsigned len = esr_insn_len(esr);
	unsigned may_change = 32; /* no register */

	if (ec == EC_HVC64 && r->elr == before.elr) {
		/* An HVC returns past itself already. */
		FUZZ_ASSERT(r->spsr == before.spsr);
		may_change = 0;
	} else if (r->elr == before.elr + len) {
		/* Stepped over. */
		FUZZ_ASSERT(r->spsr == esr_advance_it(before.spsr));
		if (ec == EC_SMC64) {
			may_change = 0;
		} else if (ec == EC_DABT_LOW) {
			struct esr_data_access a;
			esr_data_abort(esr, &a);
			FUZZ_ASSERT(a.valid);
			may_change = a.write ? 32 : a.rt;
		}
	} else {
		/* Into its EL1 vector, as the hardware takes a synchronous exception. */
		uint64_t vbar = fake_sysreg(core, "vbar_el1");
		uint64_t offset = r->elr - vbar;
		FUZZ_ASSERT(offset == 0 || offset == 0x200 || offset == 0x400 || offset == 0x600);
		FUZZ_ASSERT(r->spsr == 0x3c5);
		FUZZ_ASSERT(fake_sysreg(core, "elr_el1") == before.elr);
		FUZZ_ASSERT(fake_sysreg(core, "spsr_el1") == before.spsr);
		uint64_t esr1 = fake_sysreg(core, "esr_el1");
		uint64_t ec1 = ESR_EC(esr1);
		if (v->stats[STAT_FAULT_INJECTED] != injected_before) {
			bool from_el1 = ((before.spsr >> 2) & 3) == 1 && !(before.spsr & BIT(4));
			FUZZ_ASSERT(v->partition == &partitions[STD_TRAP]);
			FUZZ_ASSERT(v->stats[STAT_FAULT_INJECTED] == injected_before + 1);
			FUZZ_ASSERT(esr_unmapped_access(esr));
			FUZZ_ASSERT(esr1 == esr_external_abort(esr, from_el1));
		} else {
			FUZZ_ASSERT((esr1 & ESR_IL) == (esr & ESR_IL));
			FUZZ_ASSERT(ec1 == EC_UNKNOWN || ec1 == EC_DABT_LOW || ec1 == EC_DABT_CUR);
		}
		if (ec1 != EC_UNKNOWN)
			FUZZ_ASSERT(fake_sysreg(core, "far_el1") == fake_sysreg(core, "far_el2"));
	}
	for (unsigned i = 0; i < 31; i++) {
		if (i != may_change)
			FUZZ_ASSERT(r->x[i] == before.x[i]);
	}
}

/* The kicks the trap sent arrive; then no core is in the middle of a power transition. */
static void settle(void)
{
	fake_deliver_all_kicks(64);
	check_power_invariants();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_config_hook = policy;
	std_boot(STARTED);
	unsigned a = (unsigned)take(&in, 1) % 3;
	struct vcpu *v = std_vcpu(actors[a].p, actors[a].index);
	unsigned core = v->pcpu;
	struct guest_regs *r = fake_guest_regs(core);
	uint8_t ecsel = (uint8_t)take(&in, 1);
	uint64_t ec = ecsel < 0xf0 ? classes[ecsel % sizeof(classes)] : ecsel & 0x3f;
	uint64_t esr = (ec << 26) | (take(&in, 4) & (ESR_IL | 0x1ffffff));
	uint8_t where = (uint8_t)take(&in, 1);
	uint64_t ipa = ipa_for(&in, where);
	uint64_t far = (take(&in, 1) << 12) | (ipa & 0xfff);
	uint64_t hpfar = (ipa >> 12) << 4;

	memset(r, 0, sizeof(*r));
	r->elr = partitions[actors[a].p].cfg->entry_ipa + (take(&in, 2) & ~1ull);
	r->spsr = take(&in, 4);
	if (ec == EC_HVC64 || ec == EC_SMC64) {
		uint8_t id = (uint8_t)take(&in, 1);
		r->x[0] = id < 0xc0 ? psci_ids[id % ARRAY_SIZE(psci_ids)] : take(&in, 4);
		r->x[1] = take(&in, 1) < 0x80 ? take(&in, 1) % 4 : take(&in, 8);
		r->x[2] = partitions[actors[a].p].cfg->ram_ipa + take(&in, 3);
		r->x[3] = take(&in, 8);
	}
	while (input_left(&in)) {
		uint8_t n = (uint8_t)take(&in, 1);
		r->x[n % 31] = take(&in, 8);
	}
	fake_sysreg_set(core, "vbar_el1", 0x40001000);
	memcpy(&before, r, sizeof(before));
	injected_before = v->stats[STAT_FAULT_INJECTED];
	snapshot_other(actors[a].p);

	enum fake_exit e = fake_trap(core, esr, far, hpfar);
	check_other(actors[a].p);
	if (e == FAKE_RETURNED)
		check_resumed(v, core, esr);
	else
		FUZZ_ASSERT(e == FAKE_EXIT_IDLE || e == FAKE_EXIT_BOARD_OFF);
	fake_settle(core, e);
	settle();
	return 0;
}
