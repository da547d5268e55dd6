/* SPDX-License-Identifier: MIT */
#ifndef TERN_PARTITION_H
#define TERN_PARTITION_H

#include <stdatomic.h>
#include <tern/config_abi.h>
#include <tern/stats.h>
#include <tern/spinlock.h>
#include <tern/types.h>
#include <tern/vpl011.h>

enum vcpu_power {
	VCPU_OFF,
	VCPU_ON_PENDING,   /* CPU_ON accepted, the core has not entered it yet */
	VCPU_ON,
};

enum partition_state {
	PARTITION_RUNNING,
	PARTITION_OFF,      /* the guest asked (SYSTEM_OFF) */
	PARTITION_STOPPED,  /* contained after a fault */
	PARTITION_RESETTING, /* SYSTEM_RESET: being reloaded, no vCPU may enter */
};

/* What the hypervisor console asks of a partition (struct partition.request bits). */
#define PARTITION_REQ_RESTART (1u << 0)
#define PARTITION_REQ_STOP    (1u << 1)

struct partition;

/* A vCPU is pinned to one core for its whole life: it is that core's only guest. */
struct vcpu {
	struct partition *partition;
	uint32_t index;          /* within the partition; MPIDR Aff0 */
	uint32_t pcpu;
	_Atomic uint32_t power;  /* enum vcpu_power */
	_Atomic bool stop;       /* asked to leave the guest (another core ended the partition) */
	uint64_t entry;          /* valid while ON_PENDING */
	uint64_t context;
	uint64_t stats[STAT_COUNT];
};

struct partition {
	const struct tern_config_partition *cfg;
	const char *name;
	uint32_t index;
	uint32_t num_vcpus;
	_Atomic uint32_t state;  /* enum partition_state */
	_Atomic uint32_t generation; /* bumped at every restart */
	_Atomic uint32_t request; /* PARTITION_REQ_*, carried out on the partition's own core */
	struct vcpu vcpu[TERN_MAX_VCPUS];
	struct spinlock power_lock; /* vCPU power transitions of this partition */
	uint64_t created;        /* boot timestamps, counter ticks since board reset */
	uint64_t first_entry;    /* the eret into vCPU 0's first instruction */
	struct vpl011 uart;
};

extern struct partition partitions[TERN_MAX_PARTITIONS];
extern uint32_t num_partitions;

/* The vCPU pinned on a core, or NULL for a core no partition uses. */
struct vcpu *vcpu_of_cpu(unsigned pcpu);

static inline void vcpu_count(struct vcpu *v, enum stat_id id)
{
	v->stats[id]++;
}

/* PSCI semantics, on the calling vCPU's own partition only. */
int32_t vcpu_cpu_on(struct vcpu *caller, uint64_t target_mpidr, uint64_t entry, uint64_t context);
int32_t vcpu_affinity_info(struct vcpu *caller, uint64_t target_mpidr, uint32_t level);
__attribute__((noreturn)) void vcpu_cpu_off(struct vcpu *v);
__attribute__((noreturn)) void partition_system_off(struct vcpu *v);
__attribute__((noreturn)) void partition_system_reset(struct vcpu *v);
/* Contain a guest that did something it may not: stop its partition, report, keep the rest running. */
__attribute__((noreturn, format(printf, 2, 3)))
void partition_fault(struct vcpu *v, const char *fmt, ...);

void partition_print_stats(struct partition *p);

/* Hypervisor boot timestamps, counter ticks since board reset; printed at power-off. */
struct boot_times {
	uint64_t entry;     /* first hypervisor instruction */
	uint64_t mmu_on;    /* EL2 MMU and caches on */
	uint64_t ready;     /* every partition created, secondary cores started */
};
extern struct boot_times boot_times;
void print_boot_times(void);
/* `tern-mem {json}`: the hypervisor's table memory, to show restarts allocate nothing. */
void print_memory_use(void);

/* Called by the architecture when a kick arrives while a guest runs on this core. */
void vcpu_check_requests(struct vcpu *v);
/* Ask the partition's own core to restart or stop it (the console's commands). */
void partition_request(struct partition *p, uint32_t request);

/* Core entry points. */
__attribute__((noreturn)) void tern_main(void);
__attribute__((noreturn)) void cpu_idle(unsigned pcpu);

#endif
