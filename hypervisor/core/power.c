/* SPDX-License-Identifier: MIT */
/* The partition and vCPU power state machine (tern/power.h), every step under p->lock. */
#include <tern/power.h>

static uint32_t vcpu_power(const struct vcpu *v)
{
	return atomic_load_explicit(&v->power, memory_order_relaxed);
}

static void set_power(struct vcpu *v, enum vcpu_power power)
{
	atomic_store_explicit(&v->power, power, memory_order_release);
}

static uint32_t state(const struct partition *p)
{
	return atomic_load_explicit(&p->state, memory_order_relaxed);
}

static void set_state(struct partition *p, enum partition_state to)
{
	atomic_store_explicit(&p->state, to, memory_order_release);
}

enum power_result power_cpu_on(struct partition *p, struct vcpu *t, uint64_t entry,
			       uint64_t context)
{
	enum power_result result = POWER_OK;

	spin_lock(&p->lock);
	if (state(p) != PARTITION_RUNNING) {
		result = POWER_DENIED;
	} else if (vcpu_power(t) == VCPU_ON) {
		result = POWER_ALREADY_ON;
	} else if (vcpu_power(t) == VCPU_ON_PENDING) {
		result = POWER_ON_PENDING;
	} else {
		t->entry = entry;
		t->context = context;
		set_power(t, VCPU_ON_PENDING);
	}
	spin_unlock(&p->lock);
	return result;
}

bool power_enter(struct partition *p, struct vcpu *v)
{
	bool enter;

	spin_lock(&p->lock);
	enter = state(p) == PARTITION_RUNNING && vcpu_power(v) == VCPU_ON_PENDING;
	if (enter)
		set_power(v, VCPU_ON);
	spin_unlock(&p->lock);
	return enter;
}

/* A vCPU on, about to be, and not on its way out of a CPU_OFF, other than `self`. */
static bool any_other_on(const struct partition *p, const struct vcpu *self)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		const struct vcpu *v = &p->vcpu[i];
		if (v == self || vcpu_power(v) == VCPU_OFF)
			continue;
		if (vcpu_power(v) == VCPU_ON_PENDING ||
		    !atomic_load_explicit(&v->stop, memory_order_relaxed))
			return true;
	}
	return false;
}

bool power_cpu_off(struct partition *p, struct vcpu *v)
{
	bool last;

	spin_lock(&p->lock);
	/*
	 * v stays ON until its core has left the guest, but from now on it no longer counts as
	 * on: of two simultaneous CPU_OFFs the second sees the first as gone and ends the
	 * partition, where checking power alone would let both leave a RUNNING partition empty.
	 */
	atomic_store_explicit(&v->stop, true, memory_order_relaxed);
	last = state(p) == PARTITION_RUNNING && !any_other_on(p, v);
	if (last)
		set_state(p, PARTITION_ENDING);
	spin_unlock(&p->lock);
	return last;
}

bool power_begin_end(struct partition *p, const struct vcpu *self, uint32_t *to_kick)
{
	uint32_t kick = 0;

	spin_lock(&p->lock);
	if (state(p) != PARTITION_RUNNING) {
		spin_unlock(&p->lock);
		*to_kick = 0;
		return false;
	}
	set_state(p, PARTITION_ENDING);
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vcpu *v = &p->vcpu[i];
		if (v == self)
			continue;
		if (vcpu_power(v) == VCPU_ON_PENDING) {
			set_power(v, VCPU_OFF);
		} else if (vcpu_power(v) == VCPU_ON) {
			atomic_store_explicit(&v->stop, true, memory_order_relaxed);
			kick |= 1u << i;
		}
	}
	spin_unlock(&p->lock);
	*to_kick = kick;
	return true;
}

void power_left(struct partition *p, struct vcpu *v)
{
	spin_lock(&p->lock);
	atomic_store_explicit(&v->stop, false, memory_order_relaxed);
	set_power(v, VCPU_OFF);
	spin_unlock(&p->lock);
}

bool power_must_leave(const struct partition *p, const struct vcpu *v)
{
	return atomic_load_explicit(&v->stop, memory_order_relaxed) ||
	       state(p) != PARTITION_RUNNING ||
	       atomic_load_explicit(&p->request, memory_order_relaxed) != 0u;
}

bool power_others_off(struct partition *p, const struct vcpu *self)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (&p->vcpu[i] != self &&
		    atomic_load_explicit(&p->vcpu[i].power, memory_order_acquire) != VCPU_OFF)
			return false;
	}
	return true;
}

void power_end(struct partition *p, enum partition_state to)
{
	spin_lock(&p->lock);
	set_state(p, to);
	spin_unlock(&p->lock);
}

bool power_begin_restart(struct partition *p)
{
	bool ended;

	spin_lock(&p->lock);
	ended = state(p) == PARTITION_OFF || state(p) == PARTITION_STOPPED;
	if (ended)
		set_state(p, PARTITION_RESTARTING);
	spin_unlock(&p->lock);
	return ended;
}

void power_restarted(struct partition *p, uint64_t entry, uint64_t context)
{
	struct vcpu *boot = &p->vcpu[0];

	spin_lock(&p->lock);
	boot->entry = entry;
	boot->context = context;
	set_power(boot, VCPU_ON_PENDING);
	set_state(p, PARTITION_RUNNING);
	spin_unlock(&p->lock);
}
