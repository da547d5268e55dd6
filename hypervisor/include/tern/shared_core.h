/* SPDX-License-Identifier: MIT */
/*
 * The core's side of shared cores (core/shared_core.c); what the arch calls is in
 * tern/partition.h (cpu_is_shared, sched_guest_waits, sched_timer_expired).
 */
#ifndef TERN_SHARED_CORE_H
#define TERN_SHARED_CORE_H

#include <tern/config_abi.h>
#include <tern/sched.h>
#include <tern/types.h>

struct partition;
struct vcpu;

/* Bit n: core n is shared (cpu_is_shared); read inline where a call would cost a kick. */
extern uint32_t shared_core_mask;

/* At boot, once every partition is created: the shared pools' cores and their vCPUs. */
int shared_cores_init(const struct tern_config *cfg, char *err, size_t errlen);
/* cpu_idle of a shared core. */
__attribute__((noreturn)) void shared_core_loop(unsigned pcpu);
/* A kick while v runs on its shared core: may switch to another vCPU (then does not return). */
void shared_core_kicked(struct vcpu *v);
/* v leaves its guest for good (its CPU_OFF, its partition's end), running or not. */
void shared_core_left(struct vcpu *v);
/* This core's vCPUs of p that are not in their guest and must leave, leave (p is ending here). */
void shared_core_reap(struct partition *p);
/* v's scheduler state if its core is shared, else NULL (for the console's commands). */
struct sched_vcpu *shared_core_sched_vcpu(const struct vcpu *v);

/*
 * The operator's changes (tern ctl), on the console core: each is posted to the cores
 * concerned and kicked, never waited for; NULL when posted, else why not (`busy` while the
 * previous change to the same vCPU or core is not carried out).
 */
uint32_t shared_core_pool_of(const struct partition *p);
/* New parameters for every vCPU of `part`, all or none; *which: the vCPU a refusal is about. */
const char *shared_core_post_params(struct partition *part, const struct sched_params *p,
				    uint32_t *which);
const char *shared_core_post_timeline(uint32_t pool, const struct sched_params *p);
const char *shared_core_pin(struct vcpu *v, unsigned pcpu);
const char *shared_core_migrate(struct partition *p, uint32_t pool);
/*
 * `tern-sched {json}` per shared core: its ARINC 653 window entries' and scheduling events'
 * lateness (ticks); `windows`: the first window entries one by one (tern-sched-windows).
 */
void shared_cores_print_stats(bool windows);
/* "running", "runnable", "blocked", "paused" on a shared core, else NULL. */
const char *shared_core_state_name(const struct vcpu *v);

/* In partition.c, for the loop: a vCPU out of its guest that must leave or carry out its
 * partition's request (may not return); vCPU 0's core's work for its idle partition. */
void vcpu_act_descheduled(struct vcpu *v);
uint64_t vcpu_housekeeping(struct vcpu *v);

#endif
