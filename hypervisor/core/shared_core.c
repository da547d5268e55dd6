/* SPDX-License-Identifier: MIT */
/*
 * Shared cores: the loop of a core whose vCPUs take turns under its pool's scheduler
 * (docs/design.md, "Scheduling").  Everything here runs on the core it is about; other cores
 * reach it only through the state they post in its vCPUs and a kick, so nothing waits across
 * cores.  A core that is not shared never comes here: cpu_idle runs its one vCPU as before.
 */
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/power.h>
#include <tern/sched.h>
#include <tern/shared_core.h>

#define NS_PER_S 1000000000ULL

struct shared_core {
	struct sched_core sched;
	struct vcpu *running;    /* in its guest on this core, or NULL */
	uint64_t running_since;  /* ns: what sched_ran has not been told yet */
	uint32_t num_home;
	struct vcpu *home[SCHED_RUNQ_MAX]; /* every vCPU whose core this is */
};

/* Bit n: core n is shared.  Cleared with .bss: the tables below are written only for those. */
static uint32_t shared_mask;
static struct shared_core shared_cores[TERN_MAX_CPUS] __attribute__((section(".noinit")));
static struct sched_vcpu vcpu_sched[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]
	__attribute__((section(".noinit")));
/* Its context holds a guest that left mid-run (arch_vcpu_save): resume it, not enter it afresh. */
static bool vcpu_saved[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS] __attribute__((section(".noinit")));

bool cpu_is_shared(unsigned pcpu)
{
	return pcpu < TERN_MAX_CPUS && (shared_mask & (1u << pcpu));
}

static struct sched_vcpu *sched_of(const struct vcpu *v)
{
	return &vcpu_sched[v->partition->index][v->index];
}

static bool *saved_of(const struct vcpu *v)
{
	return &vcpu_saved[v->partition->index][v->index];
}

struct sched_vcpu *shared_core_sched_vcpu(const struct vcpu *v)
{
	return cpu_is_shared(v->pcpu) ? sched_of(v) : NULL;
}

/* The counter and the schedulers' nanoseconds: exact for counters whose tick is whole ns. */
static uint64_t ticks_to_ns(uint64_t ticks)
{
	uint64_t f = arch_counter_freq();

	return ticks / f * NS_PER_S + ticks % f * NS_PER_S / f;
}

/* Rounded up: an event armed early would find its decision not due yet. */
static uint64_t ns_to_ticks(uint64_t ns)
{
	uint64_t f = arch_counter_freq();

	return ns / NS_PER_S * f + (ns % NS_PER_S * f + NS_PER_S - 1u) / NS_PER_S;
}

static uint64_t now_ns(void)
{
	return ticks_to_ns(arch_counter());
}

static void sched_params_of(const struct tern_config_pool *pl, const struct partition *p,
			    struct sched_params *sp)
{
	(void)memset(sp, 0, sizeof(*sp));
	sp->kind = (uint8_t)pl->scheduler;
	if (pl->scheduler == TERN_SCHED_RTDS) {
		sp->budget = (uint64_t)p->cfg->budget_us * SCHED_NS_PER_US;
		sp->period = (uint64_t)p->cfg->period_us * SCHED_NS_PER_US;
	} else if (pl->scheduler == TERN_SCHED_CREDIT) {
		sp->weight = p->cfg->weight;
		sp->cap = p->cfg->cap;
	}
}

/* An ARINC 653 pool's timeline; the windows name partitions by index, as the blob does. */
static void timeline_of(const struct tern_config_pool *pl, struct sched_params *sp)
{
	(void)memset(sp, 0, sizeof(*sp));
	sp->kind = SCHED_ARINC653;
	sp->major = (uint64_t)pl->major_frame_us * SCHED_NS_PER_US;
	sp->nwindows = pl->num_windows;
	for (uint32_t w = 0; w < pl->num_windows && w < SCHED_MAX_WINDOWS; w++) {
		sp->windows[w].partition = (uint16_t)pl->window[w].partition;
		sp->windows[w].duration = (uint64_t)pl->window[w].duration_us * SCHED_NS_PER_US;
	}
}

int shared_cores_init(const struct tern_config *cfg, char *err, size_t errlen)
{
	const struct tern_config_pool *pools = config_pools(cfg);
	uint64_t now = now_ns();
	struct sched_params sp;
	const char *why;

	for (uint32_t q = 0; q < cfg->num_pools; q++) {
		const struct tern_config_pool *pl = &pools[q];
		const struct sched_ops *ops = sched_ops_of((uint8_t)pl->scheduler);
		if (pl->scheduler == TERN_SCHED_NULL || ops == NULL)
			continue;
		for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
			if (!(pl->cpus & (1u << pcpu)))
				continue;
			struct shared_core *sc = &shared_cores[pcpu];
			sc->running = NULL;
			sc->running_since = now;
			sc->num_home = 0;
			if (pl->scheduler == TERN_SCHED_ARINC653)
				timeline_of(pl, &sp);
			why = sched_core_init(&sc->sched, ops, pl->scheduler == TERN_SCHED_ARINC653 ? &sp : NULL, now);
			if (why != NULL) {
				(void)snprintf(err, errlen, "pool %s: core %u: %s", pl->name, pcpu, why);
				return -1;
			}
			shared_mask |= 1u << pcpu;
		}
	}
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		if (p->cfg->pool == TERN_POOL_NONE || !cpu_is_shared(p->vcpu[0].pcpu))
			continue;
		sched_params_of(&pools[p->cfg->pool], p, &sp);
		for (uint32_t j = 0; j < p->num_vcpus; j++) {
			struct vcpu *v = &p->vcpu[j];
			struct shared_core *sc = &shared_cores[v->pcpu];
			struct sched_vcpu *s = sched_of(v);
			sched_vcpu_init(s, v, (uint16_t)p->index);
			*saved_of(v) = false;
			bool has_params = sp.kind == SCHED_RTDS || sp.kind == SCHED_CREDIT;
			why = sched_add(&sc->sched, s, has_params ? &sp : NULL, now);
			if (why != NULL) {
				(void)snprintf(err, errlen, "partition %s: vCPU %u on core %u: %s", p->name, j,
					       v->pcpu, why);
				return -1;
			}
			/* Runnable once its power says so: vCPU 0 at its first look, the others at CPU_ON. */
			sched_block(s, now);
			sc->home[sc->num_home++] = v;
		}
	}
	return 0;
}

/* Account what v ran up to `now`. */
static void charge(struct shared_core *sc, struct vcpu *v, uint64_t now)
{
	sched_ran(sched_of(v), sc->running_since, now);
	sc->running_since = now;
}

/* v, running here, leaves its guest for the loop with its context saved. */
static __attribute__((noreturn)) void switch_out(struct shared_core *sc, struct vcpu *v)
{
	arch_vcpu_save(v);
	*saved_of(v) = true;
	sc->running = NULL;
	arch_cpu_return_to_idle();
}

/* The vCPU no longer runs: forget its guest (the next start enters it afresh). */
void shared_core_left(struct vcpu *v)
{
	struct shared_core *sc;
	uint64_t now;

	if (!cpu_is_shared(v->pcpu))
		return;
	sc = &shared_cores[v->pcpu];
	now = now_ns();
	if (sc->running == v) {
		charge(sc, v, now);
		sc->running = NULL;
	}
	*saved_of(v) = false;
	sched_block(sched_of(v), now);
}

/* Whether w, out of its guest, must leave it or carry out its partition's stop or restart. */
static bool must_act(const struct partition *p, const struct vcpu *w)
{
	return atomic_load(&w->stop) || atomic_load(&p->state) != PARTITION_RUNNING ||
	       (atomic_load(&p->request) & (PARTITION_REQ_STOP | PARTITION_REQ_RESTART));
}

/*
 * What a vCPU that is not in its guest needs from its core.  `act`: from the loop, where
 * nothing is loaded in the core, do it (a stop or a request may end here); else only say
 * whether the loop must run.
 */
static bool look_at(struct shared_core *sc, struct vcpu *w, uint64_t now, bool act)
{
	struct partition *p = w->partition;
	struct sched_vcpu *s = sched_of(w);
	uint32_t power = atomic_load(&w->power);
	bool saved = *saved_of(w);
	bool pause = power != VCPU_OFF && atomic_load(&p->paused);

	(void)sc;
	if (power == VCPU_ON && saved && must_act(p, w)) {
		if (!act)
			return true;
		vcpu_act_descheduled(w); /* may not return: it leaves, or its partition ends */
		power = atomic_load(&w->power);
		saved = *saved_of(w);
		pause = power != VCPU_OFF && atomic_load(&p->paused);
	}
	if (pause != s->paused) {
		if (!act)
			return true;
		if (pause) {
			sched_pause(s, now);
			atomic_store(&w->paused, true);
		} else {
			atomic_store(&w->paused, false);
			(void)sched_unpause(s, now);
		}
	}
	if (s->paused || s->state != (uint8_t)SCHED_BLOCKED)
		return false;
	if ((power == VCPU_ON_PENDING && !saved) ||
	    (power == VCPU_ON && saved && arch_vcpu_wake_pending(w)))
		return sched_wake(s, now);
	return false;
}

/* The next event: the scheduler's, a blocked vCPU's own timer, a restart's back-off (ticks). */
static uint64_t next_event(const struct shared_core *sc, uint64_t until_ns, uint64_t housekeeping)
{
	uint64_t event = until_ns == SCHED_NEVER ? UINT64_MAX : ns_to_ticks(until_ns);

	for (uint32_t i = 0; i < sc->num_home; i++) {
		struct vcpu *w = sc->home[i];
		if (w != sc->running && *saved_of(w) && sched_of(w)->state == (uint8_t)SCHED_BLOCKED) {
			uint64_t t = arch_vcpu_timer_deadline(w);
			if (t < event)
				event = t;
		}
	}
	if (housekeeping && housekeeping < event)
		event = housekeeping;
	return event == UINT64_MAX ? 0 : event;
}

/*
 * The running vCPU's core has news (a kick, its scheduling event): the others' wake-ups are
 * applied, and v goes on only if it is still the scheduler's choice and nothing waits for the
 * loop.
 */
static void reconsider(struct vcpu *v)
{
	struct shared_core *sc = &shared_cores[v->pcpu];
	uint64_t now = now_ns();
	bool loop = atomic_load(&v->partition->paused);

	charge(sc, v, now);
	for (uint32_t i = 0; i < sc->num_home; i++) {
		if (sc->home[i] != v)
			loop |= look_at(sc, sc->home[i], now, false);
	}
	if (loop)
		switch_out(sc, v);
	struct sched_decision d = sched_pick(&sc->sched, now);
	if (d.vcpu != sched_of(v))
		switch_out(sc, v);
	arch_sched_timer(next_event(sc, d.until, 0));
}

void shared_core_kicked(struct vcpu *v)
{
	reconsider(v);
}

void sched_timer_expired(struct vcpu *v)
{
	reconsider(v);
}

void sched_guest_waits(struct vcpu *v)
{
	struct shared_core *sc = &shared_cores[v->pcpu];
	uint64_t now = now_ns();

	charge(sc, v, now);
	sched_block(sched_of(v), now);
	switch_out(sc, v);
}

void shared_core_reap(struct partition *p)
{
	unsigned pcpu = arch_cpu_id();
	struct shared_core *sc;

	if (!cpu_is_shared(pcpu))
		return;
	sc = &shared_cores[pcpu];
	for (uint32_t i = 0; i < sc->num_home; i++) {
		struct vcpu *w = sc->home[i];
		if (w->partition == p && w != sc->running && atomic_load(&w->power) == VCPU_ON &&
		    *saved_of(w) && must_act(p, w)) {
			shared_core_left(w);
			power_left(p, w);
		}
	}
}

void shared_core_loop(unsigned pcpu)
{
	struct shared_core *sc = &shared_cores[pcpu];

	for (;;) {
		bool more = pcpu == console_core() && console_drain();
		uint64_t housekeeping = 0;
		uint64_t now;

		for (uint32_t i = 0; i < sc->num_home; i++) {
			struct vcpu *w = sc->home[i];
			if (w->index == 0) {
				uint64_t t = vcpu_housekeeping(w);
				if (t && (!housekeeping || t < housekeeping))
					housekeeping = t;
			}
		}
		now = now_ns();
		for (uint32_t i = 0; i < sc->num_home; i++)
			(void)look_at(sc, sc->home[i], now, true);
		struct sched_decision d = sched_pick(&sc->sched, now);
		uint64_t event = next_event(sc, d.until, housekeeping);
		if (d.vcpu != NULL) {
			struct vcpu *v = d.vcpu->owner;
			sc->running = v;
			sc->running_since = now;
			if (more)
				arch_cpu_kick(pcpu); /* the console's rest at the guest's first exit */
			arch_sched_timer(event);
			if (*saved_of(v)) {
				*saved_of(v) = false;
				arch_vcpu_resume(v);
			}
			if (power_enter(v->partition, v))
				arch_vcpu_run(v, v->entry, v->context);
			/* Not startable (off, or its partition ending): it waits for its power. */
			sc->running = NULL;
			sched_block(d.vcpu, now);
			continue;
		}
		if (!more)
			arch_cpu_idle_wait(event);
	}
}
