/* SPDX-License-Identifier: MIT */
/*
 * The power state machine of a partition and its vCPUs.  Every transition happens under the
 * partition's lock (struct partition.lock), which only the partition's own cores take, so a
 * neighbour can never make one wait.
 *
 *   vCPU          OFF --CPU_ON--> ON_PENDING --its core enters--> ON --CPU_OFF / stopped--> OFF
 *                 ON_PENDING --the partition ends--> OFF (the CPU_ON is cancelled)
 *
 *   partition     RUNNING --a core ends it--> ENDING --every other vCPU OFF--> OFF | STOPPED
 *                                                                          \-> RESTARTING
 *                 OFF | STOPPED --restart request--> RESTARTING --reloaded--> RUNNING
 *
 * Who moves what:
 *   - CPU_ON (OFF -> ON_PENDING): a running vCPU of the same partition, only while RUNNING.
 *   - ON_PENDING -> ON: the target's own core (power_enter), only while RUNNING.
 *   - ON -> OFF: the vCPU's own core (CPU_OFF, or leaving after power_begin_end asked it to).
 *   - RUNNING -> ENDING: one core of the partition (a fault, SYSTEM_OFF/RESET, the last
 *     CPU_OFF, an operator's request carried out on the partition's core); a second core
 *     trying to end it learns that it lost and just leaves.
 *   - ENDING -> OFF/STOPPED/RESTARTING: that same core, once every other vCPU is OFF.
 *   - OFF/STOPPED -> RESTARTING -> RUNNING: vCPU 0's core.
 */
#ifndef TERN_POWER_H
#define TERN_POWER_H

#include <tern/partition.h>

/* CPU_ON of `t` by a running vCPU of the same partition. */
enum power_result power_cpu_on(struct partition *p, struct vcpu *t, uint64_t entry,
			       uint64_t context);
/* On `v`'s own core: may it enter the guest now (ON_PENDING -> ON while RUNNING)? */
bool power_enter(struct partition *p, struct vcpu *v);
/*
 * CPU_OFF of `v`: it is OFF.  True if it was the partition's last vCPU on or about to be:
 * the partition is then ENDING and the caller ends it (power_begin_end is not needed).
 */
bool power_cpu_off(struct partition *p, struct vcpu *v);
/*
 * On `self`'s core: take the partition from RUNNING to ENDING.  Cancels every pending CPU_ON,
 * asks every other running vCPU to stop (their `stop` flag) and returns those in `to_kick`
 * (bit i = vCPU i).  False if the partition is not RUNNING: another core is ending or
 * restarting it, and the caller just leaves.
 */
bool power_begin_end(struct partition *p, const struct vcpu *self, uint32_t *to_kick);
/* A vCPU that was asked to stop, or the ending core itself, has left its guest: OFF. */
void power_left(struct partition *p, struct vcpu *v);
/*
 * Must `v`, on its own core, stop waiting for another core and leave the guest as soon as it
 * can?  True once it is asked to stop, its partition has left RUNNING (another core is ending
 * it), or the console asked the partition for something.  Every cross-core wait a guest can
 * start ends when this is true, so no guest can keep its partition from ending.
 */
bool power_must_leave(const struct partition *p, const struct vcpu *v);
/* Is every vCPU of `p` but `self` OFF? */
bool power_others_off(struct partition *p, const struct vcpu *self);
/* ENDING -> `to` (OFF, STOPPED or RESTARTING), once every vCPU is OFF. */
void power_end(struct partition *p, enum partition_state to);
/* An ended partition (OFF, STOPPED) -> RESTARTING; false if it is not ended. */
bool power_begin_restart(struct partition *p);
/* RESTARTING -> RUNNING with vCPU 0 pending at `entry` with `context`. */
void power_restarted(struct partition *p, uint64_t entry, uint64_t context);

#endif
