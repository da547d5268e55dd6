/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <tern/power.h>
#include "harness.h"

const uint8_t std_trap_cpus[3] = { 0, 1, 2 };
const uint8_t std_direct_cpus[2] = { 3, 4 };
void (*std_config_hook)(struct tern_config *cfg);
bool fuzz_trace;

struct vcpu *std_vcpu(uint32_t p, uint32_t index)
{
	return &partitions[p].vcpu[index];
}

/*
 * The hypervisor's memset in the fuzzers (-Dmemset=fuzz_memset): a reload clears its
 * partition's 2 MiB of RAM, which would be most of a fuzzer's time; whole pages are handed
 * back to the kernel instead, which maps them again zeroed when next touched.
 */
void *fuzz_memset(void *dst, int c, size_t n);
void *fuzz_memset(void *dst, int c, size_t n)
{
	uintptr_t a = (uintptr_t)dst, lo = (a + 4095) & ~4095ul, hi = (a + n) & ~4095ul;

	if (c == 0 && n >= (64u << 10) && !madvise((void *)lo, hi - lo, MADV_DONTNEED)) {
		memset(dst, 0, lo - a);
		memset((void *)hi, 0, a + n - hi);
		return dst;
	}
	return memset(dst, c, n);
}

bool same_bytes(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t u, v;
		__builtin_memcpy(&u, x + i, 8);
		__builtin_memcpy(&v, y + i, 8);
		if (u != v)
			return false;
	}
	for (; i < n; i++) {
		if (x[i] != y[i])
			return false;
	}
	return true;
}

static bool wanted(uint32_t p, uint32_t index, uint32_t started)
{
	return started & (1u << (p == STD_TRAP ? index : 3 + index));
}

/* A vCPU of `p` that is on, to make calls from; NULL if none. */
static struct vcpu *any_on(struct partition *p)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (atomic_load(&p->vcpu[i].power) == VCPU_ON)
			return &p->vcpu[i];
	}
	return NULL;
}

void std_repair(uint32_t started)
{
	fake_deliver_all_kicks(64);
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		if (atomic_load(&p->state) != PARTITION_RUNNING) {
			partition_request(p, PARTITION_REQ_RESTART);
			fake_deliver_all_kicks(64);
		}
		FUZZ_ASSERT(atomic_load(&p->state) == PARTITION_RUNNING);
		for (uint32_t j = 0; j < p->num_vcpus; j++) {
			struct vcpu *v = &p->vcpu[j], *caller = any_on(p);
			if (!wanted(i, j, started) || atomic_load(&v->power) != VCPU_OFF)
				continue;
			FUZZ_ASSERT(caller);
			FAKE_ON(caller->pcpu, vcpu_cpu_on(caller, j, p->cfg->entry_ipa, j));
			fake_deliver_all_kicks(64);
		}
		for (uint32_t j = 0; j < p->num_vcpus; j++) {
			struct vcpu *v = &p->vcpu[j];
			if (!wanted(i, j, started) && atomic_load(&v->power) == VCPU_ON)
				fake_settle(v->pcpu, FAKE_ON(v->pcpu, vcpu_cpu_off(v)));
		}
		fake_deliver_all_kicks(64);
		for (uint32_t j = 0; j < p->num_vcpus; j++)
			FUZZ_ASSERT((atomic_load(&p->vcpu[j].power) == VCPU_ON) == wanted(i, j, started));
	}
}

void std_boot(uint32_t started)
{
	static bool booted;

	if (!booted) {
		fuzz_trace = getenv("FUZZ_TRACE") != NULL;
		struct tern_config *cfg = fake_config_begin(STD_CPUS);
		struct tern_config_partition *t = fake_config_add("trap", std_trap_cpus, 3, 0);
		t->irqs[1] = BIT(35 - 32) | BIT(37 - 32);
		struct tern_config_partition *d = fake_config_add("direct", std_direct_cpus, 2,
								  TERN_PF_IRQ_DIRECT | TERN_PF_WFI_NATIVE);
		d->irqs[1] = BIT(36 - 32);
		if (std_config_hook)
			std_config_hook(cfg);
		FUZZ_ASSERT(fake_boot(0) == FAKE_EXIT_RUN);
		fake_start_secondaries();
		fake_relax_hook = fake_deliver_kicks_while_waiting;
		booted = true;
	}
	std_repair(started);
	/* What earlier inputs left behind that a step could depend on, as at boot. */
	fake_now = 1000000;
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		FUZZ_ASSERT(!atomic_load(&p->request));
		p->auto_restarts = 0;
		p->backoff = 0;
		p->started = fake_now;
		p->restart_at = 0;
	}
	for (unsigned c = 0; c < FAKE_CPUS; c++)
		fake_cores[c].deadline = 0;
}

ORACLE void check_power_invariants(void)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		uint32_t state = atomic_load(&p->state);
		bool any = false;

		FUZZ_ASSERT(state != PARTITION_ENDING);
		FUZZ_ASSERT(atomic_load(&p->lock.next) == atomic_load(&p->lock.serving));
		for (uint32_t j = 0; j < p->num_vcpus; j++) {
			struct vcpu *v = &p->vcpu[j];
			uint32_t power = atomic_load(&v->power);
			FUZZ_ASSERT(!atomic_load(&v->stop));
			FUZZ_ASSERT(power != VCPU_ON_PENDING); /* its core took the kick */
			FUZZ_ASSERT((power == VCPU_ON) == (fake_cores[v->pcpu].running == v));
			if (state == PARTITION_RUNNING)
				any |= power != VCPU_OFF;
			else
				FUZZ_ASSERT(power == VCPU_OFF);
		}
		/* Never a running partition with no vCPU on or about to be. */
		if (state == PARTITION_RUNNING)
			FUZZ_ASSERT(any);
	}
}

unsigned long gic_writes;
uintptr_t last_gic_write;
uint64_t last_gic_value;

void count_gic_write(uintptr_t addr, unsigned size, uint64_t value)
{
	(void)size;
	gic_writes++;
	last_gic_write = addr;
	last_gic_value = value;
}

static uint64_t stats_before[2][TERN_MAX_VCPUS][STAT_COUNT];

ORACLE void stats_snapshot(void)
{
	for (uint32_t p = 0; p < 2; p++) {
		for (uint32_t i = 0; i < partitions[p].num_vcpus; i++)
			memcpy(stats_before[p][i], partitions[p].vcpu[i].stats, sizeof(stats_before[p][i]));
	}
}

ORACLE void stats_check(const struct vcpu *acting, int id, uint64_t by)
{
	for (uint32_t p = 0; p < 2; p++) {
		for (uint32_t i = 0; i < partitions[p].num_vcpus; i++) {
			const struct vcpu *v = &partitions[p].vcpu[i];
			for (int s = 0; s < STAT_COUNT; s++) {
				uint64_t want = stats_before[p][i][s] + ((v == acting && s == id) ? by : 0);
				FUZZ_ASSERT(v->stats[s] == want);
			}
		}
	}
}

/* Near the end of the partition's RAM, clear of what its image and device tree hold. */
#define MANAGER_TEXT_AT 0x1f0000u

uint64_t manager_text(struct input *in, const struct partition *p, uint64_t *gpa)
{
	static const char *const safe[] = { "list", "vcpu-list", "pool-list", "stats", "help",
					    "@1 list", "unknown", "" };
	const char *verb = safe[take(in, 1) % ARRAY_SIZE(safe)];
	char *text = (char *)fake_partition_ram(p->cfg) + MANAGER_TEXT_AT;
	size_t n = strlen(verb);
	size_t extra = (size_t)take(in, 1);

	memcpy(text, verb, n);
	for (size_t i = 0; i < extra; i++)
		text[n + i] = (char)take(in, 1);
	*gpa = p->cfg->ram_ipa + MANAGER_TEXT_AT;
	return n + extra;
}

uint64_t manager_buffer(struct input *in, const struct partition *p, uint64_t *gpa)
{
	uint8_t where = (uint8_t)take(in, 1);
	uint64_t len = take(in, 2) & 0x1fffu;

	if (where < 0xe0)
		*gpa = p->cfg->ram_ipa + 0x180000u + (uint64_t)where * 0x100u;
	else if (where < 0xf0)
		*gpa = p->cfg->ram_ipa + p->cfg->ram_size - (where & 0xfu) * 0x100u;
	else
		*gpa = take(in, 8);
	return len;
}

ORACLE void check_manager_reply(const struct partition *p, uint64_t gpa, uint64_t len,
				uint64_t full)
{
	const char *out = (const char *)fake_partition_ram(p->cfg) + (gpa - p->cfg->ram_ipa);

	FUZZ_ASSERT(full <= 4096u);
	FUZZ_ASSERT(gpa >= p->cfg->ram_ipa && len <= p->cfg->ram_size - (gpa - p->cfg->ram_ipa));
	if (full && len >= full)
		FUZZ_ASSERT(out[full - 1u] == '\n');
}
