/* SPDX-License-Identifier: MIT */
/*
 * PSCI and SMCCC: sequences of calls (fuzzed x0..x3, through HVC or SMC) from the vCPUs of
 * two partitions, interleaved with operator requests (restart, stop) and time passing for a
 * restart's back-off.  Kicks are delivered and woken cores run after every step, as on the
 * board.
 *
 * Oracle: the power state machine's invariants (tern/power.h) after every step: no partition
 * left ENDING, never a running partition with no vCPU on, an ended one with none; a vCPU is
 * ON exactly while its core runs it; every lock free.  Every call that returns gives a PSCI
 * return value; AFFINITY_INFO tells the truth; a partition never changes another's vCPUs.
 * "trap" is a manager partition (tern/manager.h): its SMCCC calls 0xC600_0000/1 submit
 * command lines that change nothing and read their replies, which the console core (core 5)
 * carries out when its kick is delivered; "direct"'s are denied.
 */
#include <string.h>
#include <arch/sysreg.h>
#include <tern/power.h>
#include "harness.h"

#define STARTED (BIT(0) | BIT(3))

static const uint32_t ids[] = {
	0x84000000, 0x84000002, 0x84000003, 0xc4000003, 0x84000004, 0xc4000004, 0x84000006,
	0x84000008, 0x84000009, 0x8400000a, 0xc4000009, 0x84000001, 0x8400000b, 0xc4000006,
	0xc6000000, 0xc6000001, 0xc6000001, 0xc6000002, 0x86000000,
};

#define MANAGER_SUBMIT 0xc6000000u
#define MANAGER_REPLY  0xc6000001u

/* "trap" restarts after a fault or reset, at most 3 times, after a 100 us back-off. */
static void policy(struct tern_config *cfg)
{
	cfg->partition[STD_TRAP].fault_policy = TERN_FAULT_RESTART;
	cfg->partition[STD_TRAP].max_restarts = 3;
	cfg->partition[STD_TRAP].restart_backoff_us = 100;
	cfg->partition[STD_TRAP].flags |= TERN_PF_MANAGER;
}

/* Idle cores whose timer (a restart's back-off) expired wake up. */
static void wake_timers(void)
{
	for (unsigned c = 0; c < STD_CPUS; c++) {
		struct fake_core *fc = &fake_cores[c];
		if (fc->online && !fc->running && fc->deadline && fake_now >= fc->deadline) {
			fc->deadline = 0;
			fake_idle(c);
		}
	}
}

static struct vcpu *running_vcpu(uint8_t sel)
{
	for (unsigned n = 0; n < 5; n++) {
		unsigned i = (sel + n) % 5;
		struct vcpu *v = i < 3 ? std_vcpu(STD_TRAP, i) : std_vcpu(STD_DIRECT, i - 3);
		if (atomic_load(&v->power) == VCPU_ON)
			return v;
	}
	return NULL;
}

static const int64_t psci_returns[] = { 0, -1, -2, -3, -4, -9 }; /* never ON_PENDING (-5) */

/* A manager call's result: what tern/manager.h allows for it, and only a manager gets more than DENIED. */
ORACLE static void check_manager(const struct partition *p, uint32_t fn, uint64_t x0,
				 uint64_t x1, uint64_t x2)
{
	int64_t ret = (int64_t)x0;

	if (!(p->cfg->flags & TERN_PF_MANAGER)) {
		FUZZ_ASSERT(ret == -3);
		return;
	}
	if (fn == MANAGER_SUBMIT) {
		FUZZ_ASSERT(ret == 0 || ret == -2 || ret == -4 || ret == -9);
		return;
	}
	FUZZ_ASSERT(ret >= 0 || ret == -4 || ret == -8 || ret == -9);
	if (ret >= 0)
		check_manager_reply(p, x1, x2, (uint64_t)ret);
}

ORACLE static void check_return(uint32_t fn, uint64_t x0, uint32_t power_before)
{
	int64_t ret = (int64_t)x0;

	switch (fn) {
	case 0x84000000:
		FUZZ_ASSERT(x0 == 0x10001);
		return;
	case 0x84000006:
		FUZZ_ASSERT(x0 == 2);
		return;
	case 0x84000004:
	case 0xc4000004:
		FUZZ_ASSERT(ret == -2 || ret == (power_before == VCPU_ON ? 0 :
						 power_before == VCPU_ON_PENDING ? 2 : 1));
		return;
	default:
		for (unsigned i = 0; i < ARRAY_SIZE(psci_returns); i++) {
			if (ret == psci_returns[i])
				return;
		}
		FUZZ_ASSERT(!"not a PSCI return value");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_config_hook = policy;
	std_boot(STARTED);
	while (input_left(&in)) {
		uint8_t op = (uint8_t)take(&in, 1);

		if (op >= 0xf0) {
			/* The operator, or time. */
			struct partition *p = &partitions[op & 1];
			TRACE("op 0x%02x: %s %s\n", op, (op & 6) == 0 ? "restart" : (op & 6) == 2 ? "stop" : "time", p->name);
			if ((op & 6) == 0)
				partition_request(p, PARTITION_REQ_RESTART);
			else if ((op & 6) == 2)
				partition_request(p, PARTITION_REQ_STOP);
			else
				fake_now += take(&in, 2);
		} else {
			struct vcpu *v = running_vcpu(op);
			if (!v) {
				std_repair(STARTED);
				continue;
			}
			struct guest_regs *r = fake_guest_regs(v->pcpu);
			uint8_t sel = (uint8_t)take(&in, 1);
			uint32_t fn = sel < 0xe0 ? ids[sel % ARRAY_SIZE(ids)] : (uint32_t)take(&in, 4);
			uint8_t m = (uint8_t)take(&in, 1);
			uint64_t mpidr = m < 0xc0 ? (m >> 1) % 4 : take(&in, 8);
			uint64_t entry = v->partition->cfg->ram_ipa + take(&in, 3) * 4;
			if (m & 1)
				entry = take(&in, 8);
			r->x[0] = fn | (take(&in, 1) == 0xff ? 0xffffffff00000000ull : 0);
			r->x[1] = mpidr;
			r->x[2] = entry;
			r->x[3] = take(&in, 8);
			if (fn == MANAGER_SUBMIT)
				r->x[2] = manager_text(&in, v->partition, &r->x[1]);
			else if (fn == MANAGER_REPLY)
				r->x[2] = manager_buffer(&in, v->partition, &r->x[1]);
			uint64_t x1 = r->x[1], x2 = r->x[2];
			bool smc = op & 0x80;
			uint64_t esr = ((uint64_t)(smc ? EC_SMC64 : EC_HVC64) << 26) | ESR_IL;
			struct partition *other = &partitions[!v->partition->index];
			uint32_t other_state = atomic_load(&other->state);
			/* SMC32 takes 32-bit arguments; only an MPIDR's affinity fields name a core. */
			uint64_t aff = ((fn & BIT(30)) ? mpidr : (uint32_t)mpidr) & 0xff00ffffffull;
			uint32_t target_power = aff < v->partition->num_vcpus ?
						atomic_load(&v->partition->vcpu[aff].power) : VCPU_OFF;
			TRACE("op 0x%02x: %s vcpu %u (core %u) %s fn 0x%llx x1 0x%llx x2 0x%llx\n", op,
			      v->partition->name, v->index, v->pcpu, smc ? "smc" : "hvc",
			      (unsigned long long)r->x[0], (unsigned long long)r->x[1],
			      (unsigned long long)r->x[2]);
			enum fake_exit e = fake_trap(v->pcpu, esr, 0, 0);
			TRACE("  -> %s x0 0x%llx\n", fake_exit_name(e), (unsigned long long)r->x[0]);
			if (e == FAKE_RETURNED && (fn == MANAGER_SUBMIT || fn == MANAGER_REPLY))
				check_manager(v->partition, fn, r->x[0], x1, x2);
			else if (e == FAKE_RETURNED)
				check_return(fn, r->x[0], target_power);
			else
				FUZZ_ASSERT(e == FAKE_EXIT_IDLE || e == FAKE_EXIT_BOARD_OFF);
			FUZZ_ASSERT(atomic_load(&other->state) == other_state);
			fake_settle(v->pcpu, e);
		}
		fake_deliver_all_kicks(64);
		wake_timers();
		fake_deliver_all_kicks(64);
		check_power_invariants();
	}
	return 0;
}
