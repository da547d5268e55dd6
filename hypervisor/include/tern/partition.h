/* SPDX-License-Identifier: MIT */
#ifndef TERN_PARTITION_H
#define TERN_PARTITION_H

#include <stdatomic.h>
#include <arch/partition.h>
#include <tern/config_abi.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/pci.h>
#include <tern/stats.h>
#include <tern/spinlock.h>
#include <tern/types.h>
#include <tern/vuart.h>

enum vcpu_power {
	VCPU_OFF,
	VCPU_ON_PENDING,   /* CPU_ON accepted, the core has not entered it yet */
	VCPU_ON,
};

/* tern/power.h draws the transitions. */
enum partition_state {
	PARTITION_RUNNING,
	PARTITION_OFF,        /* ended: its guest powered it off, or an operator stopped it */
	PARTITION_STOPPED,    /* ended: contained after a fault, or out of restarts */
	PARTITION_ENDING,     /* one of its cores is taking it down: no vCPU may enter */
	PARTITION_RESTARTING, /* waiting for vCPU 0's core to reload it (and its back-off) */
};

/* What the hypervisor console asks of a partition (struct partition.request bits). */
#define PARTITION_REQ_RESTART (1u << 0)
#define PARTITION_REQ_STOP    (1u << 1)
/* A VirtIO backend completed requests of a device this partition is the frontend of. */
#define PARTITION_REQ_VIRTIO  (1u << 2)

struct partition;

/* A vCPU is pinned to one core for its whole life: it is that core's only guest. */
struct vcpu {
	struct partition *partition;
	uint32_t index;          /* within the partition; the arch names it to the guest (MPIDR, hart id) */
	uint32_t pcpu;
	_Atomic uint32_t power;  /* enum vcpu_power */
	_Atomic bool stop;       /* on its way out: asked to leave, or its own CPU_OFF */
	_Atomic bool paused;     /* waiting on its core at an operator's pause (vcpu_check_requests) */
	bool shared;             /* its core is shared (cpu_is_shared): set at boot, for ever */
	bool saved;              /* shared: its context holds a guest that left mid-run (arch_vcpu_save) */
	uint64_t entry;          /* valid while ON_PENDING */
	uint64_t context;
	uint64_t stats[STAT_COUNT];
	struct arch_vcpu arch;
};

struct partition {
	const struct tern_config_partition *cfg;
	const char *name;
	uint32_t index;
	uint32_t num_vcpus;
	struct spinlock lock;        /* power state (tern/power.h); the partition's cores only */
	_Atomic uint32_t state;      /* enum partition_state */
	_Atomic uint32_t restarts;   /* reloads so far */
	_Atomic uint32_t request;    /* PARTITION_REQ_*, carried out on the partition's own core */
	_Atomic bool paused;         /* an operator paused it: its vCPUs wait at their next kick */
	struct vcpu vcpu[TERN_MAX_VCPUS];
	/* Restart policy: written by the ending core before RESTARTING, read by vCPU 0's core. */
	uint32_t auto_restarts;      /* restarts after faults and guest resets */
	bool reload_is_reset;        /* it was running (a reset), not ended (a restart) */
	uint64_t backoff;            /* the last automatic restart's wait, counter ticks */
	uint64_t started;            /* counter when it last started */
	uint64_t restart_at;         /* RESTARTING: reload no earlier than this */
	uint64_t created;            /* boot timestamps, counter ticks since board reset */
	uint64_t first_entry;        /* the eret into vCPU 0's first instruction */
	struct vuart uart;
	struct vpci vpci;            /* its emulated ECAM's MSI addresses, if it owns one */
	struct console_ring console; /* its guest's lines and the hypervisor's about it */
	struct mmio_devices devices; /* what the hypervisor emulates in its map */
	struct arch_partition arch;  /* its address space and interrupt controller: last (partition_create) */
};

extern struct partition partitions[TERN_MAX_PARTITIONS];
extern uint32_t num_partitions;

/* The vCPU pinned on a core, or NULL for a core no partition uses. */
struct vcpu *vcpu_of_cpu(unsigned pcpu);

static inline void vcpu_count(struct vcpu *v, enum stat_id id)
{
	v->stats[id]++;
}

/* `tern: ` + text as one line of the partition's console (dropped and counted when full). */
void partition_log(struct partition *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum power_result {
	POWER_OK,
	POWER_ALREADY_ON,
	POWER_ON_PENDING,
	POWER_DENIED,            /* the partition is ending: no vCPU may start */
	POWER_INVALID_ADDRESS,   /* the entry point is outside the partition's RAM */
};

/*
 * Start vCPU `target` of the caller's own partition (vCPUs are named by index, < num_vcpus),
 * as the firmware interface means it (PSCI CPU_ON on arm64, SBI HSM hart_start on riscv64).
 */
enum power_result vcpu_cpu_on(struct vcpu *caller, uint32_t target, uint64_t entry,
			      uint64_t context);
/* The power state of vCPU `target`. */
enum vcpu_power vcpu_power_of(struct vcpu *caller, uint32_t target);
__attribute__((noreturn)) void vcpu_cpu_off(struct vcpu *v);
__attribute__((noreturn)) void partition_system_off(struct vcpu *v);
__attribute__((noreturn)) void partition_system_reset(struct vcpu *v);
/*
 * Contain a guest that did something it may not: end its partition (stopped, or restarted
 * if its fault policy says so), report, keep the rest running.
 */
__attribute__((noreturn, format(printf, 2, 3)))
void partition_fault(struct vcpu *v, const char *fmt, ...);
/*
 * A guest access that reached nothing the partition has (no RAM, device or emulated register).
 * True if its fault policy makes it the guest's own bus error, as on the board: counted, the
 * first few of each vCPU reported, and the caller raises it in the guest. False: the caller
 * contains it with partition_fault().
 */
__attribute__((format(printf, 2, 3)))
bool partition_fault_to_guest(struct vcpu *v, const char *fmt, ...);
/* Whether `ipa` is the partition's RAM, one of its devices' regions or one of its channels. */
bool partition_maps(const struct partition *p, ipaddr_t ipa);

void partition_print_stats(struct partition *p);
/* "running", "off", ...: the names tern-stats and the console's commands use. */
const char *partition_state_name(uint32_t state);

/* Hypervisor boot timestamps, counter ticks since board reset; printed at power-off. */
struct boot_times {
	uint64_t entry;     /* first hypervisor instruction */
	uint64_t mmu_on;    /* the hypervisor's MMU and caches on */
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
/*
 * An operator's pause: each of its vCPUs, at the kick, waits on its own core in the hypervisor
 * with its guest's state untouched, until unpaused, stopped or restarted.  Only posts and
 * kicks: the caller does not wait.  Unpause clears it and kicks the waiting cores.
 */
void partition_pause(struct partition *p);
void partition_unpause(struct partition *p);
/* Paused and every vCPU that is on waits (an ON_PENDING one has not entered the guest). */
bool partition_pause_complete(const struct partition *p);

/*
 * Shared cores: the cores of a pool whose scheduler is not null, where vCPUs take turns
 * (core/shared_core.c).  A core that is not shared runs its one vCPU as if there were no
 * scheduler.  The arch calls the other two on a shared core only, on the running vCPU's core:
 * its guest waits for an interrupt (a trapped WFI, stepped past, nothing pending): another
 * runs; its core's scheduling event came (arch_sched_timer): returns if v goes on running.
 */
bool cpu_is_shared(unsigned pcpu);
__attribute__((noreturn)) void sched_guest_waits(struct vcpu *v);
void sched_timer_expired(struct vcpu *v);
/*
 * A shared core's port, last before it enters a resumed guest (arch_vcpu_resume): an ARINC
 * 653 window's first entry is measured against its boundary here (core/shared_core.c).
 */
void shared_core_entering(const struct vcpu *v);

/* Core entry points.  tern_main: the boot core, given the firmware's device tree. */
__attribute__((noreturn)) void tern_main(paddr_t fdt);
__attribute__((noreturn)) void cpu_idle(unsigned pcpu);

#endif
