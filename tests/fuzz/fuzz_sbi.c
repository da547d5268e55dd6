/* SPDX-License-Identifier: MIT */
/*
 * The riscv64 SBI (arch/riscv64/firmware.c): sequences of ecalls from the vCPUs of two partitions
 * (every extension of the SBI and some that are not offered, any function ID, arguments biased
 * towards hart ids, masks, -1 and the partition's RAM), with the kicks they send delivered to
 * a fuzzed subset of cores between calls: a hart_start whose core has not taken it yet races
 * the next hart_start, hart_stop or get_status.  Built with the riscv64 headers and fake.
 *
 * Oracle, after every call: it returns an SBI error code, and what a call answers is true
 * (BASE's version, HSM's status of the hart as it was, IPI and RFENCE refuse a mask naming a
 * hart the partition does not have and send nothing then, DBCN writes only from the
 * partition's RAM, at most a page); the other partition's vCPUs, cores (posted work, hvip,
 * fences) and state do not change and only the acting partition's cores (and the console
 * core) are kicked.  Once every kick is delivered: the power state machine's invariants.
 * "trap" is a manager partition (tern/manager.h): Tern's extension submits command lines that
 * change nothing and reads their replies (carried out by the console core, core 5, when its
 * kick is delivered); "direct" is denied every call of it.
 */
#include <string.h>
#include <arch/sysreg.h>
#include <tern/power.h>
#include "fake_riscv64.h"
#include "harness.h"

#define STARTED (BIT(0) | BIT(1) | BIT(3))
#define CONSOLE_CORE 5u

#define EXT_BASE   0x10u
#define EXT_TIME   0x54494d45u
#define EXT_IPI    0x735049u
#define EXT_RFENCE 0x52464e43u
#define EXT_HSM    0x48534du
#define EXT_SRST   0x53525354u
#define EXT_DBCN   0x4442434eu
#define EXT_TERN   0x0a54524eu

static const uint32_t exts[] = { EXT_BASE, EXT_TIME, EXT_IPI, EXT_RFENCE, EXT_HSM, EXT_SRST,
				 EXT_DBCN, 0x01, 0x08 /* legacy shutdown */, 0x4e41434c /* PMU */,
				 EXT_TERN, EXT_TERN };

/* "trap" restarts after a fault or reset (a few times); "direct" ends. */
static void policy(struct tern_config *cfg)
{
	cfg->partition[STD_TRAP].fault_policy = TERN_FAULT_RESTART;
	cfg->partition[STD_TRAP].max_restarts = 3;
	cfg->partition[STD_TRAP].flags |= TERN_PF_MANAGER;
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

/* An argument: a small number (a hart, a mask), -1, an address of the partition's RAM, or anything. */
static uint64_t arg(struct input *in, const struct partition *p)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b < 0x80)
		return b & 7u;
	if (b < 0xc0)
		return 1ull << (b & 63);
	if (b < 0xf0)
		return p->cfg->ram_ipa + take(in, 3) - 0x10;
	if (b == 0xff)
		return ~0ull;
	return take(in, 8);
}

/* What the other partition has that an SBI call of this one must not change. */
struct others {
	uint32_t state;
	uint32_t power[TERN_MAX_VCPUS];
	uint32_t posted[TERN_MAX_VCPUS];
	uint64_t hvip[TERN_MAX_VCPUS], stimecmp[TERN_MAX_VCPUS], vstimecmp[TERN_MAX_VCPUS];
	unsigned fences[TERN_MAX_VCPUS], runs[TERN_MAX_VCPUS];
};

ORACLE static void snapshot(const struct partition *o, struct others *s)
{
	memset(s, 0, sizeof(*s));
	s->state = atomic_load(&o->state);
	for (uint32_t i = 0; i < o->num_vcpus; i++) {
		unsigned c = o->vcpu[i].pcpu;
		s->power[i] = atomic_load(&o->vcpu[i].power);
		s->posted[i] = atomic_load(&o->vcpu[i].arch.posted);
		s->hvip[i] = fake_csr(c, "hvip");
		s->stimecmp[i] = fake_csr(c, "0x14d");
		s->vstimecmp[i] = fake_csr(c, "0x24d");
		s->fences[i] = fake_insn_count(c, "hfence.vvma") + fake_insn_count(c, "hfence.gvma");
		s->runs[i] = fake_cores[c].runs;
	}
}

ORACLE static uint32_t cores_of(const struct partition *p)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < p->num_vcpus; i++)
		m |= 1u << p->vcpu[i].pcpu;
	return m;
}

/* Whether mask/base (base -1: every hart) names a hart the partition does not have. */
ORACLE static bool names_other_harts(uint64_t mask, uint64_t base, uint32_t n)
{
	if (base == ~0ull)
		return false;
	for (unsigned i = 0; i < 64; i++) {
		if (!(mask & (1ull << i)))
			continue;
		if (base >= n || i >= n - base) /* base + i, without wrapping */
			return true;
	}
	return false;
}

static const int64_t sbi_errors[] = { 0, -1, -2, -3, -4, -5, -6 };

ORACLE static void check_call(const struct partition *p, uint64_t ext, uint32_t fn,
			      const uint64_t a[3], uint64_t err, uint64_t value,
			      uint32_t target_power, bool sent_anything)
{
	bool known = false;

	if (ext == 0x01) {
		FUZZ_ASSERT(err == 0);
		return;
	}
	if (ext == EXT_TERN) {
		int64_t e = (int64_t)err;
		if (fn > 1u)
			FUZZ_ASSERT(e == -2);
		else if (!(p->cfg->flags & TERN_PF_MANAGER))
			FUZZ_ASSERT(e == -4);
		else if (fn == 0u)
			FUZZ_ASSERT(e == 0 || e == -3 || e == -5 || e == -7);
		else
			FUZZ_ASSERT(e == 0 || e == -5 || e == -7 || e == -10);
		if (fn == 1u && e == 0)
			check_manager_reply(p, a[0], a[1], value);
		return;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(sbi_errors); i++)
		known |= (int64_t)err == sbi_errors[i];
	FUZZ_ASSERT(known);
	if (ext == EXT_BASE && fn == 0)
		FUZZ_ASSERT(err == 0 && value == 0x02000000);
	if (ext == EXT_HSM && fn == 2) {
		if (a[0] >= p->num_vcpus) {
			FUZZ_ASSERT((int64_t)err == -3);
		} else {
			FUZZ_ASSERT(err == 0);
			FUZZ_ASSERT(value == (target_power == VCPU_ON ? 0 : target_power == VCPU_ON_PENDING ? 2 : 1));
		}
	}
	if (ext == EXT_HSM && (fn == 0 || fn == 2) && a[0] >= p->num_vcpus)
		FUZZ_ASSERT((int64_t)err == -3);
	if ((ext == EXT_IPI && fn == 0) || (ext == EXT_RFENCE && fn <= 2)) {
		bool bad = names_other_harts(a[0], a[1], p->num_vcpus);
		FUZZ_ASSERT((int64_t)err == (bad ? -3 : 0));
		if (bad) /* refused: nothing sent to anybody */
			FUZZ_ASSERT(!sent_anything);
	}
	if (ext == EXT_DBCN && fn == 0 && err == 0) {
		const struct tern_config_partition *c = p->cfg;
		FUZZ_ASSERT(a[2] == 0);
		FUZZ_ASSERT(value == (a[0] < 4096 ? a[0] : 4096));
		FUZZ_ASSERT(a[1] >= c->ram_ipa && a[1] - c->ram_ipa <= c->ram_size &&
			    value <= c->ram_size - (a[1] - c->ram_ipa));
	}
}

/* Whether the call posted work to a core of `p` or kicked one (its own core takes its own at once). */
ORACLE static bool sent(const struct partition *p, const struct others *before, uint32_t kicks_before)
{
	struct others now;

	snapshot(p, &now);
	if ((atomic_load(&fake_kicks) & ~kicks_before) & cores_of(p))
		return true;
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (now.posted[i] != before->posted[i] || now.hvip[i] != before->hvip[i] ||
		    now.fences[i] != before->fences[i])
			return true;
	}
	return false;
}

ORACLE static void check_others(const struct partition *o, const struct others *before,
				uint32_t kicks_before, uint32_t allowed_kicks)
{
	struct others now;

	snapshot(o, &now);
	FUZZ_ASSERT(same_bytes(&now, before, sizeof(now)));
	FUZZ_ASSERT(((atomic_load(&fake_kicks) & ~kicks_before) & ~allowed_kicks) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size, 0 };

	std_config_hook = policy;
	std_boot(STARTED);
	atomic_store(&fake_kicks, 0);
	while (input_left(&in)) {
		uint8_t op = (uint8_t)take(&in, 1);
		struct vcpu *v = running_vcpu(op);
		if (!v) {
			std_repair(STARTED);
			continue;
		}
		struct partition *p = v->partition, *o = &partitions[!p->index];
		struct guest_regs *r = fake_guest_regs(v->pcpu);
		uint8_t sel = (uint8_t)take(&in, 1);
		uint64_t ext = sel < 0xf0 ? exts[sel % ARRAY_SIZE(exts)] : take(&in, 4);
		uint8_t f = (uint8_t)take(&in, 1);
		uint32_t fn = f < 0xf0 ? f % 8u : (uint32_t)take(&in, 4);
		uint64_t a[3] = { arg(&in, p), arg(&in, p), arg(&in, p) };
		if (ext == EXT_TERN && fn == 0u)
			a[1] = manager_text(&in, p, &a[0]);
		else if (ext == EXT_TERN && fn == 1u)
			a[1] = manager_buffer(&in, p, &a[0]);
		uint32_t target_power = a[0] < p->num_vcpus ? atomic_load(&p->vcpu[a[0]].power) : VCPU_OFF;
		struct others before, own_before;

		/*
		 * The other partition's cores take what is still on its way to them first: a core
		 * that waits in this call delivers every pending kick (fake_deliver_kicks_while_
		 * waiting), and what the other partition's own calls sent is not this call's doing.
		 */
		fake_deliver_kicks(cores_of(o), 64);
		uint32_t kicks_before = atomic_load(&fake_kicks);

		snapshot(o, &before);
		snapshot(p, &own_before);
		r->x[10] = a[0];
		r->x[11] = a[1];
		r->x[12] = a[2];
		r->x[16] = fn;
		r->x[17] = ext;
		TRACE("op 0x%02x: %s vcpu %u ext 0x%llx fn %u a0 0x%llx a1 0x%llx a2 0x%llx\n", op,
		      p->name, v->index, (unsigned long long)ext, fn, (unsigned long long)a[0],
		      (unsigned long long)a[1], (unsigned long long)a[2]);
		enum fake_exit e = fake_rv_trap(v->pcpu, EXC_VS_ECALL, 0, 0, 0);
		TRACE("  -> %s a0 0x%llx a1 0x%llx\n", fake_exit_name(e), (unsigned long long)r->x[10],
		      (unsigned long long)r->x[11]);
		if (e == FAKE_RETURNED)
			check_call(p, ext, fn, a, r->x[10], r->x[11], target_power,
				   sent(p, &own_before, kicks_before));
		else
			FUZZ_ASSERT(e == FAKE_EXIT_IDLE || e == FAKE_EXIT_BOARD_OFF);
		check_others(o, &before, kicks_before, cores_of(p) | (1u << CONSOLE_CORE));
		fake_settle(v->pcpu, e);
		/* The kicks arrive at some cores now, at the others later. */
		uint8_t mask = (uint8_t)take(&in, 1);
		fake_deliver_kicks(mask == 0xff ? ~0u : mask, 64);
		if (mask == 0xff || !input_left(&in)) {
			fake_deliver_all_kicks(64);
			check_power_invariants();
		}
	}
	fake_deliver_all_kicks(64);
	check_power_invariants();
	return 0;
}
