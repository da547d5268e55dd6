/* SPDX-License-Identifier: MIT */
/*
 * The schedulers of a pool's cores (docs/design.md, "Scheduling"): which vCPU a core runs and
 * until when.  Pure functions over one core's own state: no locks, no allocation, no clock of
 * their own.  Time is nanoseconds on one monotonic clock the caller converts its counter to, so
 * that parameters read as the description writes them (microseconds) and both ports agree.
 *
 * The caller's protocol, for one core:
 *   d = sched_pick(core, now): run d.vcpu (NULL: idle) until d.until at the latest, the
 *       core's next scheduling event (SCHED_NEVER: none);
 *   when it comes back at t (the event, a WFI, an exit): sched_ran(vcpu, from, t), then
 *       sched_block(vcpu, t) if its guest waits, and pick again;
 *   sched_wake(vcpu, now) for a vCPU whose interrupt arrived: true if the core must pick again
 *       now (a preemption: its core is kicked).
 */
#ifndef TERN_SCHED_H
#define TERN_SCHED_H

#include <tern/types.h>
#include <tern/config_abi.h>

#define SCHED_NEVER UINT64_MAX
#define SCHED_NS_PER_US 1000u

/* Every vCPU of the system could be homed on one core. */
#define SCHED_RUNQ_MAX (TERN_MAX_PARTITIONS * TERN_MAX_VCPUS)
#define SCHED_MAX_WINDOWS 16u
/* A window that names no partition: the core idles through it. */
#define SCHED_NO_PARTITION 0xffffu

/*
 * Credit: Xen's credit1 accounts every 30 ms and lets a vCPU run 30 ms (10 ms ticks, 3 per
 * slice); Tern keeps the 30 ms accounting period and cuts the slice to 10 ms, so that three
 * CPU-bound vCPUs each get a turn within one period, and a boosted (just woken) vCPU may keep
 * the core for at most 1 ms before it competes on its credit again: the wake-up latency of a
 * vCPU with credit left is bounded by 1 ms per other boosted vCPU on its core.
 */
#define SCHED_CREDIT_PERIOD_NS 30000000ULL
#define SCHED_CREDIT_SLICE_NS  10000000ULL
#define SCHED_CREDIT_BOOST_NS   1000000ULL
#define SCHED_CREDIT_WEIGHT_DEFAULT 256u
#define SCHED_CREDIT_WEIGHT_MAX 65535u

/* RTDS: a server shorter than this would spend its budget on switching. */
#define SCHED_RTDS_PERIOD_MIN_NS 100000ULL  /* 100 us */
#define SCHED_RTDS_BUDGET_MIN_NS 10000ULL   /* 10 us */
/* Bounds every product of time in these files well inside 64 bits. */
#define SCHED_TIME_MAX_NS (3600ULL * 1000000000ULL)

/* struct sched_params.kind, struct sched_ops.kind */
#define SCHED_NULL     0u
#define SCHED_ARINC653 1u
#define SCHED_RTDS     2u
#define SCHED_CREDIT   3u

/* struct sched_vcpu.state */
#define SCHED_RUNNABLE 0u
#define SCHED_RUNNING  1u
#define SCHED_BLOCKED  2u	/* its guest waits for an interrupt */

struct sched_window {
	uint16_t partition;	/* SCHED_NO_PARTITION: idle */
	uint64_t duration;
};

/*
 * ARINC 653: a window of the timeline in force, as a pick reads it: the next window starts
 * where the last pick's ends, so the common pick needs neither a division nor a walk.
 */
struct sched_a653_slot {
	uint64_t length;
	uint16_t partition;	/* SCHED_NO_PARTITION: idle, the tail */
	uint8_t next;		/* the one after it: the tail, or the next frame's first */
};

/*
 * An operator's or the description's parameters: those of `kind`'s scheduler are read.  A
 * vCPU's for RTDS and credit, a core's (its timeline) for ARINC 653.
 */
struct sched_params {
	uint64_t budget;		/* RTDS */
	uint64_t period;
	uint64_t major;			/* ARINC 653: the major frame */
	uint32_t weight;		/* credit */
	uint32_t cap;			/* percent of one core, 0 = none */
	uint32_t nwindows;		/* ARINC 653 */
	uint8_t kind;
	struct sched_window windows[SCHED_MAX_WINDOWS];
};

struct sched_core;

/* Scheduler state of one vCPU; `owner` is the vCPU (opaque here). */
struct sched_vcpu {
	void *owner;
	struct sched_core *core;	/* the core it is queued on */
	uint16_t partition;
	uint8_t state;
	bool paused;			/* an operator's: never picked, wakes remembered */
	/* RTDS: the server's parameters, what is left of this period's budget and its end. */
	uint64_t budget;
	uint64_t period;
	uint64_t left;
	uint64_t deadline;
	uint64_t next_budget;		/* from the period after `params` */
	uint64_t next_period;
	bool rtds_pending;
	uint64_t misses;		/* periods that ended with budget left while it was runnable */
	/* credit: ns of CPU it may still take this accounting period (negative: overran). */
	int64_t credit;
	uint32_t weight;
	uint32_t cap;
	uint32_t next_weight;		/* from the accounting period after `params` */
	uint32_t next_cap;
	bool credit_pending;
	bool boost;
	uint64_t boost_left;
	uint64_t used;			/* in this accounting period (for cap) */
	uint64_t total;			/* ns it ran, ever (stats, tests) */
};

struct sched_core {
	const struct sched_ops *ops;
	struct sched_vcpu *runq[SCHED_RUNQ_MAX];
	uint32_t count;
	/* Adds and removes: what a scheduler noted of the queue holds while this stays. */
	uint32_t runq_changes;
	struct sched_vcpu *current;
	uint64_t next_event;
	/* ARINC 653: frame n starts at epoch + n * major; a change starts at `next_epoch`. */
	uint64_t epoch;
	uint64_t major;
	uint32_t nwindows;
	struct sched_window windows[SCHED_MAX_WINDOWS];
	bool a653_pending;
	uint64_t next_epoch;
	uint64_t next_major;
	uint32_t next_nwindows;
	struct sched_window next_windows[SCHED_MAX_WINDOWS];
	/*
	 * ARINC 653: the window the last pick fell in (nwindows: the idle tail), its exact start
	 * and end; the timeline in force window by window, a653_slot[nwindows] its tail.
	 */
	uint64_t window_start;
	uint64_t window_end;
	uint32_t window;
	struct sched_a653_slot a653_slot[SCHED_MAX_WINDOWS + 1u];
	/*
	 * ARINC 653: each slot's partition's one vCPU on the run queue as it was at
	 * a653_runq_seen; NULL: none or several (the queue is walked).
	 */
	struct sched_vcpu *a653_only[SCHED_MAX_WINDOWS + 1u];
	uint32_t a653_runq_seen;
	/* credit: the current accounting period starts at acct_start (absolute, no drift). */
	uint64_t acct_start;
};

struct sched_decision {
	struct sched_vcpu *vcpu;	/* NULL: idle */
	uint64_t until;
};

struct sched_ops {
	const char *name;
	uint8_t kind;
	/* Sets *until, always. */
	struct sched_vcpu *(*pick)(struct sched_core *core, uint64_t now, uint64_t *until);
	/* True if the core must pick again now. */
	bool (*wake)(struct sched_vcpu *v, uint64_t now);
	void (*block)(struct sched_vcpu *v, uint64_t now);
	void (*ran)(struct sched_vcpu *v, uint64_t from, uint64_t to);
	/* NULL, or why not (a string for the operator).  v NULL: the core's parameters. */
	const char *(*check)(const struct sched_core *core, const struct sched_vcpu *v,
			     const struct sched_params *p);
	/* Checked parameters, `now` true: at once (setup), else from the next period or frame. */
	void (*apply)(struct sched_core *core, struct sched_vcpu *v, const struct sched_params *p,
		      uint64_t now, bool at_once);
	void (*added)(struct sched_vcpu *v, uint64_t now);
};

extern const struct sched_ops sched_null_ops;
extern const struct sched_ops sched_arinc653_ops;
extern const struct sched_ops sched_rtds_ops;
extern const struct sched_ops sched_credit_ops;

const struct sched_ops *sched_ops_of(uint8_t kind);

/* A core's scheduler from `now`; p: its parameters (ARINC 653's timeline), or NULL. */
const char *sched_core_init(struct sched_core *core, const struct sched_ops *ops,
			    const struct sched_params *p, uint64_t now);
void sched_vcpu_init(struct sched_vcpu *v, void *owner, uint16_t partition);
/* Queues v on core, runnable, with its parameters (p NULL: the scheduler's defaults). */
const char *sched_add(struct sched_core *core, struct sched_vcpu *v,
		      const struct sched_params *p, uint64_t now);
/* Takes v off its core's queue (a pin or a migration moves it to another core's). */
void sched_remove(struct sched_vcpu *v);

struct sched_decision sched_pick(struct sched_core *core, uint64_t now);
bool sched_wake(struct sched_vcpu *v, uint64_t now);
void sched_block(struct sched_vcpu *v, uint64_t now);
void sched_ran(struct sched_vcpu *v, uint64_t from, uint64_t to);
void sched_pause(struct sched_vcpu *v, uint64_t now);
bool sched_unpause(struct sched_vcpu *v, uint64_t now);
/*
 * An operator's change, checked: v for RTDS and credit, NULL for a core's ARINC 653 timeline.
 * Effective from v's next period (RTDS), the core's next accounting period (credit) or the
 * next major frame (ARINC 653).
 */
const char *sched_params(struct sched_core *core, struct sched_vcpu *v,
			 const struct sched_params *p, uint64_t now);

static inline bool sched_ready(const struct sched_vcpu *v)
{
	return v->state != (uint8_t)SCHED_BLOCKED && !v->paused;
}

#endif
