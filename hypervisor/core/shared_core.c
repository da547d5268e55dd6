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
/* Window entries a core keeps one by one (tern-sched-windows), the first ones of its life. */
#define WINDOW_LOG 128u
#define WINDOW_LOG_LINE 16u

/* Ticks late, over every event measured (tern-sched). */
struct lateness {
	uint64_t count;
	uint64_t min;
	uint64_t max;
};

struct window_entry {
	uint64_t boundary;
	uint32_t late;
	uint32_t window;
};

struct shared_core {
	struct sched_core sched;
	struct vcpu *running;    /* in its guest on this core, or NULL */
	struct sched_vcpu *running_sched; /* its scheduler state, while `running` is set */
	uint64_t running_since;  /* ns: what sched_ran has not been told yet */
	uint32_t num_home;
	/*
	 * reconsider's decision to switch, handed to the loop it switches out to, which then
	 * does not make it again: the others were looked at, nothing was posted, and the vCPU
	 * that leaves needs nothing done (reconsider checked).
	 */
	bool chosen_ready;
	struct vcpu *home[SCHED_RUNQ_MAX]; /* every vCPU whose core this is */
	/*
	 * The hypervisor's own jitter, apart from any guest's (docs/design.md, "Scheduling"): the
	 * ARINC 653 window the core has decided in (only a window's first entry counts), the
	 * boundary its coming entry is late against (ticks, 0: not a window's first) and that
	 * window's index, the event arch_sched_timer holds (ticks, 0: none).
	 */
	uint64_t window_seen;
	uint64_t entry_boundary;
	uint32_t entry_window;
	uint32_t logged;
	uint64_t armed;
	uint64_t tick_ns;  /* ns a counter tick, if whole (both boards): a division, not ns_to_ticks */
	struct lateness window_entry;
	struct lateness event_arrival;
	struct window_entry log[WINDOW_LOG];
	struct sched_decision chosen;
};

/* Bit n: core n is shared.  Cleared with .bss: the tables below are written only for those. */
uint32_t shared_core_mask;
static struct shared_core shared_cores[TERN_MAX_CPUS] __attribute__((section(".noinit")));
static struct sched_vcpu vcpu_sched[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]
	__attribute__((section(".noinit")));

/*
 * An operator's orders (tern ctl), posted by the console core alone and carried out by the
 * core concerned at its next look, from its loop: new parameters for a vCPU, a core's new
 * ARINC 653 timeline, a vCPU's move to another core.  A posted order not yet carried out makes
 * the next one `busy`.  A moving vCPU leaves its old core's queue there, then arrives in its new
 * core's `incoming` (bit partition x TERN_MAX_VCPUS + vCPU), which any core may set.
 */
static struct sched_params posted_params[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]
	__attribute__((section(".noinit")));
static _Atomic bool params_posted[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS];
static struct sched_params posted_timeline[TERN_MAX_CPUS] __attribute__((section(".noinit")));
static _Atomic bool timeline_posted[TERN_MAX_CPUS];
static _Atomic uint32_t moving_to[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS]; /* core + 1, or 0 */
static _Atomic uint64_t incoming[TERN_MAX_CPUS];
/*
 * Set by whoever posts an order above for a core, after the order itself; cleared by the core
 * before it reads them.  reconsider, at every switch, reads this word instead of every home
 * vCPU's two.
 */
static _Atomic bool orders_waiting[TERN_MAX_CPUS];
_Static_assert(TERN_MAX_PARTITIONS * TERN_MAX_VCPUS <= 64, "incoming: a bit per vCPU");
/* Each partition's pool now (pool-migrate), TERN_POOL_NONE for an implicit null pool. */
static uint32_t partition_pool[TERN_MAX_PARTITIONS];
static const struct tern_config *shared_cfg;

bool cpu_is_shared(unsigned pcpu)
{
	return pcpu < TERN_MAX_CPUS && (shared_core_mask & (1u << pcpu));
}

static struct sched_vcpu *sched_of(const struct vcpu *v)
{
	return &vcpu_sched[v->partition->index][v->index];
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

/*
 * The switch's own conversions: with a whole number of ns a tick (both boards) a multiply and
 * a rounded-up division give what ticks_to_ns and ns_to_ticks do, without asking the port for
 * the frequency and dividing twice on every switch.
 */
static uint64_t core_now_ns(const struct shared_core *sc)
{
	uint64_t t = sc->tick_ns;

	return t != 0u ? arch_counter() * t : now_ns();
}

static uint64_t core_ns_to_ticks(const struct shared_core *sc, uint64_t ns)
{
	uint64_t t = sc->tick_ns;

	return t != 0u ? ns / t + (ns % t != 0u) : ns_to_ticks(ns);
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

	shared_cfg = cfg;
	for (uint32_t i = 0; i < num_partitions; i++)
		partition_pool[i] = partitions[i].cfg->pool;
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
			sc->window_seen = SCHED_NEVER;
			sc->entry_boundary = 0;
			sc->logged = 0;
			sc->armed = 0;
			sc->tick_ns = NS_PER_S % arch_counter_freq() == 0u ? NS_PER_S / arch_counter_freq() : 0u;
			(void)memset(&sc->window_entry, 0, sizeof(sc->window_entry));
			(void)memset(&sc->event_arrival, 0, sizeof(sc->event_arrival));
			sc->chosen_ready = false;
			if (pl->scheduler == TERN_SCHED_ARINC653)
				timeline_of(pl, &sp);
			why = sched_core_init(&sc->sched, ops, pl->scheduler == TERN_SCHED_ARINC653 ? &sp : NULL, now);
			if (why != NULL) {
				(void)snprintf(err, errlen, "pool %s: core %u: %s", pl->name, pcpu, why);
				return -1;
			}
			shared_core_mask |= 1u << pcpu;
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
			v->shared = true;
			v->saved = false;
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

/* Spelt with locals: every store through l would otherwise reload what it read. */
static void lateness_add(struct lateness *l, uint64_t ticks)
{
	uint64_t n = l->count;
	uint64_t min = l->min;
	uint64_t max = l->max;

	l->min = n == 0u || ticks < min ? ticks : min;
	l->max = ticks > max ? ticks : max;
	l->count = n + 1u;
}

/*
 * ARINC 653: whether the core's last pick is its first in that window.  Marks it decided, so
 * that a later entry in the same window (after a kick, a wake-up) is not taken for its start.
 */
static bool window_begins(struct shared_core *sc)
{
	if (sc->sched.ops->kind != SCHED_ARINC653 || sc->sched.window_start == sc->window_seen)
		return false;
	sc->window_seen = sc->sched.window_start;
	return true;
}

/* The core's scheduling event, remembered for its arrival's lateness. */
static void arm_event(struct shared_core *sc, uint64_t event)
{
	sc->armed = event;
	arch_sched_timer(event);
}

/* Account what the running vCPU ran up to `now`. */
static void charge(struct shared_core *sc, uint64_t now)
{
	sched_ran(sc->running_sched, sc->running_since, now);
	sc->running_since = now;
}

/* v, running here, leaves its guest for the loop with its context saved. */
static __attribute__((noreturn)) void switch_out(struct shared_core *sc, struct vcpu *v)
{
	arch_vcpu_save(v);
	v->saved = true;
	sc->running = NULL;
	arch_cpu_return_to_idle();
}

static void enter_decided(struct shared_core *sc, unsigned pcpu, struct sched_decision d,
			  uint64_t now, uint64_t housekeeping, bool more);

/* Whether every partition here runs: none has housekeeping (a restart's back-off) for the loop. */
static bool all_running(const struct shared_core *sc)
{
	for (uint32_t i = 0; i < sc->num_home; i++) {
		if (atomic_load(&sc->home[i]->partition->state) != PARTITION_RUNNING)
			return false;
	}
	return true;
}

/*
 * v leaves for the vCPU reconsider chose (sc->chosen, ready).  When the loop would do nothing
 * else first (the console's core drains its output there; a partition here that is not
 * running may have a restart due) and the chosen vCPU is saved, it is resumed from here: the
 * way back to the idle stack and into the loop cost a switch some 60 instructions.
 */
static __attribute__((noreturn)) void switch_to_chosen(struct shared_core *sc, struct vcpu *v)
{
	unsigned pcpu = v->pcpu;

	arch_vcpu_save(v);
	v->saved = true;
	sc->running = NULL;
	if (sc->chosen.vcpu != NULL && pcpu != console_core()) {
		/* cppcheck-suppress misra-c2012-11.5 ; the vCPU shared_cores_init queued it for */
		const struct vcpu *next = sc->chosen.vcpu->owner;
		if (next->saved && all_running(sc)) {
			sc->chosen_ready = false;
			enter_decided(sc, pcpu, sc->chosen, core_now_ns(sc), 0, false);
		}
	}
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
		charge(sc, now);
		sc->running = NULL;
	}
	v->saved = false;
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
/* Inlined: reconsider's copy (act false, once per vCPU at every switch) loses its act paths. */
static inline __attribute__((always_inline)) bool look_at(struct shared_core *sc, struct vcpu *w,
							  struct sched_vcpu *s, uint64_t now,
							  bool act)
{
	struct partition *p = w->partition;
	uint32_t power = atomic_load(&w->power);
	bool saved = w->saved;
	bool pause = power != VCPU_OFF && atomic_load(&p->paused);

	(void)sc;
	if (power == VCPU_ON && saved && must_act(p, w)) {
		if (!act)
			return true;
		vcpu_act_descheduled(w); /* may not return: it leaves, or its partition ends */
		power = atomic_load(&w->power);
		saved = w->saved;
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
/* Inlined, as it was before core_ns_to_ticks: a call's frame costs the switch more than it saves. */
static inline __attribute__((always_inline)) uint64_t next_event(const struct shared_core *sc,
								 uint64_t until_ns,
								 uint64_t housekeeping)
{
	uint64_t event = until_ns == SCHED_NEVER ? UINT64_MAX : core_ns_to_ticks(sc, until_ns);

	/*
	 * The run queue's vCPUs (a home vCPU not queued is never picked, nor woken), the scheduler's
	 * state first: at a switch none is blocked, and that is one load each.
	 */
	for (uint32_t i = 0; i < sc->sched.count; i++) {
		const struct sched_vcpu *s = sc->sched.runq[i];
		if (s->state != (uint8_t)SCHED_BLOCKED)
			continue;
		/* cppcheck-suppress misra-c2012-11.5 ; the vCPU shared_cores_init queued it for */
		struct vcpu *w = s->owner;
		if (w != sc->running && w->saved) {
			uint64_t t = arch_vcpu_timer_deadline(w);
			if (t < event)
				event = t;
		}
	}
	if (housekeeping && housekeeping < event)
		event = housekeeping;
	return event == UINT64_MAX ? 0 : event;
}

static uint32_t vcpu_bit(const struct vcpu *v)
{
	return v->partition->index * TERN_MAX_VCPUS + v->index;
}

static struct vcpu *vcpu_of_bit(uint32_t bit)
{
	return &partitions[bit / TERN_MAX_VCPUS].vcpu[bit % TERN_MAX_VCPUS];
}

/* Whether the operator posted anything this core must carry out from its loop. */
static bool orders_for(unsigned pcpu)
{
	return atomic_load(&orders_waiting[pcpu]) || atomic_load(&incoming[pcpu]);
}

static void home_remove(struct shared_core *sc, uint32_t i)
{
	for (uint32_t j = i + 1u; j < sc->num_home; j++)
		sc->home[j - 1u] = sc->home[j];
	sc->num_home--;
}

/*
 * From the loop, nothing loaded: what the operator posted.  Arrivals first, with the
 * parameters their move carried (at once: a new pool's scheduler), then changes to the
 * vCPUs here (from their next period or frame), then departures.
 */
static void carry_out_orders(struct shared_core *sc, unsigned pcpu, uint64_t now)
{
	uint64_t arrived;

	atomic_store(&orders_waiting[pcpu], false); /* first: an order posted from here on sets it again */
	arrived = atomic_exchange(&incoming[pcpu], 0);

	for (; arrived; arrived &= arrived - 1u) {
		struct vcpu *v = vcpu_of_bit((uint32_t)__builtin_ctzll(arrived));
		struct sched_vcpu *s = sched_of(v);
		_Atomic bool *posted = &params_posted[v->partition->index][v->index];
		bool blocked = s->state == (uint8_t)SCHED_BLOCKED;
		const char *why;

		v->pcpu = pcpu;
		why = sched_add(&sc->sched, s, atomic_load(posted) ? &posted_params[v->partition->index][v->index] : NULL, now);
		if (why != NULL) /* checked when posted: only a race with another order gets here */
			why = sched_add(&sc->sched, s, NULL, now);
		if (why != NULL)
			tern_log("core %u: vCPU %u of %s cannot be queued here: %s", pcpu, v->index,
				 v->partition->name, why);
		atomic_store(posted, false);
		if (blocked)
			sched_block(s, now);
		if (sc->num_home < SCHED_RUNQ_MAX)
			sc->home[sc->num_home++] = v;
		atomic_store(&moving_to[v->partition->index][v->index], 0);
	}
	if (atomic_load(&timeline_posted[pcpu])) {
		const char *why = sched_params(&sc->sched, NULL, &posted_timeline[pcpu], now);
		if (why != NULL)
			tern_log("core %u: timeline refused: %s", pcpu, why);
		atomic_store(&timeline_posted[pcpu], false);
	}
	uint32_t i = 0;
	while (i < sc->num_home) {
		struct vcpu *w = sc->home[i];
		uint32_t to = atomic_load(&moving_to[w->partition->index][w->index]);
		_Atomic bool *posted = &params_posted[w->partition->index][w->index];
		if (to != 0u && to != pcpu + 1u) {
			/* Its parameters, if any, travel with it. */
			sched_remove(sched_of(w));
			home_remove(sc, i);
			atomic_fetch_or(&incoming[to - 1u], 1ULL << vcpu_bit(w));
			arch_cpu_kick(to - 1u);
			continue;
		}
		if (atomic_load(posted)) {
			const char *why = sched_params(&sc->sched, sched_of(w), &posted_params[w->partition->index][w->index], now);
			if (why != NULL)
				tern_log("core %u: parameters of %s vCPU %u refused: %s", pcpu,
					 w->partition->name, w->index, why);
			atomic_store(posted, false);
		}
		atomic_store(&moving_to[w->partition->index][w->index], 0);
		i++;
	}
}

/*
 * The running vCPU's core has news (a kick, its scheduling event): the others' wake-ups are
 * applied, and v goes on only if it is still the scheduler's choice and nothing waits for the
 * loop.  At a kick every other vCPU here is looked at.  At the core's own event only time has
 * moved, and time only wakes: only the blocked ones are.  Whatever another core changes for a
 * vCPU (a pause, a stop or request, its power, an operator's order) it changes before it kicks
 * the vCPU's core, and that kick, taken at the next entry into a guest here if not before,
 * looks at them all.
 */
static void reconsider(struct vcpu *v, bool kicked)
{
	struct shared_core *sc = &shared_cores[v->pcpu];
	uint64_t now = core_now_ns(sc);
	bool loop = atomic_load(&v->partition->paused);

	charge(sc, now);
	if (kicked) {
		loop |= orders_for(v->pcpu);
		for (uint32_t i = 0; i < sc->num_home; i++) {
			if (sc->home[i] != v)
				loop |= look_at(sc, sc->home[i], sched_of(sc->home[i]), now, false);
		}
	} else {
		for (uint32_t i = 0; i < sc->sched.count; i++) {
			struct sched_vcpu *s = sc->sched.runq[i];
			/* cppcheck-suppress misra-c2012-11.5 ; the vCPU shared_cores_init queued it for */
			struct vcpu *w = s->owner;
			if (s->state == (uint8_t)SCHED_BLOCKED && w != v)
				loop |= look_at(sc, w, s, now, false);
		}
	}
	if (loop)
		switch_out(sc, v);
	struct sched_decision d = sched_pick(&sc->sched, now);
	if (d.vcpu != sc->running_sched) { /* v is sc->running */
		sc->chosen = d;
		sc->chosen_ready = !must_act(v->partition, v);
		if (sc->chosen_ready)
			switch_to_chosen(sc, v);
		switch_out(sc, v);
	}
	(void)window_begins(sc); /* v runs on into it: no entry to measure */
	arm_event(sc, next_event(sc, d.until, 0));
}

void shared_core_kicked(struct vcpu *v)
{
	reconsider(v, true);
}

void sched_timer_expired(struct vcpu *v)
{
	uint64_t t = arch_counter(); /* first: only the port's acknowledgement came before */
	struct shared_core *sc = &shared_cores[v->pcpu];

	uint64_t armed = sc->armed; /* what fired: every arming (arm_event) replaces it */

	if (armed != 0u && t >= armed)
		lateness_add(&sc->event_arrival, t - armed);
	reconsider(v, false);
}

void shared_core_entering(const struct vcpu *v)
{
	struct shared_core *sc = &shared_cores[v->pcpu];
	uint64_t boundary = sc->entry_boundary;

	if (boundary != 0u) {
		uint64_t late = arch_counter() - boundary; /* only the port's eret/sret path follows */
		uint32_t i = sc->logged;

		sc->entry_boundary = 0;
		lateness_add(&sc->window_entry, late);
		if (i < WINDOW_LOG) {
			sc->log[i] = (struct window_entry){ boundary, (uint32_t)late, sc->entry_window };
			sc->logged = i + 1u;
		}
	}
}

static void print_lateness(char *buf, size_t len, const char *name, const struct lateness *l)
{
	(void)snprintf(buf, len, "\"%s\":{\"count\":%llu,\"min\":%llu,\"max\":%llu}", name,
		       (unsigned long long)l->count, (unsigned long long)l->min,
		       (unsigned long long)l->max);
}

/* The first window entries one by one, a line per WINDOW_LOG_LINE: [window, boundary, late]. */
static void print_window_log(unsigned pcpu, const struct shared_core *sc)
{
	char buf[WINDOW_LOG_LINE * 48u];

	for (uint32_t from = 0; from < sc->logged; from += WINDOW_LOG_LINE) {
		size_t n = 0;
		for (uint32_t i = from; i < sc->logged && i < from + WINDOW_LOG_LINE && n < sizeof(buf); i++)
			n += (size_t)snprintf(&buf[n], sizeof(buf) - n, "%s[%u,%llu,%u]", i > from ? "," : "",
					      sc->log[i].window, (unsigned long long)sc->log[i].boundary,
					      sc->log[i].late);
		console_printf("tern-sched-windows {\"cpu\":%u,\"from\":%u,\"entries\":[%s]}", pcpu,
			       from, buf);
	}
}

void shared_cores_print_stats(bool windows)
{
	char entry[96];
	char arrival[96];

	for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
		const struct shared_core *sc = &shared_cores[pcpu];
		if (!cpu_is_shared(pcpu))
			continue;
		print_lateness(entry, sizeof(entry), "window_entry", &sc->window_entry);
		print_lateness(arrival, sizeof(arrival), "event_arrival", &sc->event_arrival);
		console_printf("tern-sched {\"cpu\":%u,\"scheduler\":\"%s\",\"freq_hz\":%llu,%s,%s}",
			       pcpu, sc->sched.ops->name, (unsigned long long)arch_counter_freq(),
			       entry, arrival);
		if (windows)
			print_window_log(pcpu, sc);
	}
}

void sched_guest_waits(struct vcpu *v)
{
	struct shared_core *sc = &shared_cores[v->pcpu];
	uint64_t now = now_ns();

	charge(sc, now);
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
		    w->saved && must_act(p, w)) {
			shared_core_left(w);
			power_left(p, w);
		}
	}
}

/* The earliest restart back-off among the partitions here that are not running, 0 for none. */
static uint64_t housekeeping_of(const struct shared_core *sc)
{
	uint64_t housekeeping = 0;

	for (uint32_t i = 0; i < sc->num_home; i++) {
		struct vcpu *w = sc->home[i];
		/* A running partition has nothing for it (vcpu_housekeeping returns 0): no call. */
		if (w->index == 0 && atomic_load(&w->partition->state) != PARTITION_RUNNING) {
			uint64_t t = vcpu_housekeeping(w);
			if (t && (!housekeeping || t < housekeeping))
				housekeeping = t;
		}
	}
	return housekeeping;
}

/*
 * The decision d, carried out: its vCPU resumed (or started), or the core idle to its event.
 * `more`: the console core has output left, for the guest's first exit.
 */
static void enter_decided(struct shared_core *sc, unsigned pcpu, struct sched_decision d,
			  uint64_t now, uint64_t housekeeping, bool more)
{
	uint64_t event = next_event(sc, d.until, housekeeping);

	if (d.vcpu != NULL) {
		/* cppcheck-suppress misra-c2012-11.5 ; the vCPU shared_cores_init queued it for */
		struct vcpu *v = d.vcpu->owner;
		sc->running = v;
		sc->running_sched = d.vcpu;
		sc->running_since = now;
		if (more)
			arch_cpu_kick(pcpu); /* the console's rest at the guest's first exit */
		arm_event(sc, event);
		if (v->saved) {
			v->saved = false;
			/* A guest's start (arch_vcpu_run) is a boot, not a switch: not measured. */
			uint64_t start = sc->sched.window_start;
			if (!window_begins(sc))
				sc->entry_boundary = 0;
			else
				sc->entry_boundary = sc->tick_ns != 0u ? start / sc->tick_ns : ns_to_ticks(start);
			sc->entry_window = sc->sched.window;
			arch_vcpu_resume(v);
		}
		(void)window_begins(sc);
		if (power_enter(v->partition, v))
			arch_vcpu_run(v, v->entry, v->context);
		/* Not startable (off, or its partition ending): it waits for its power. */
		sc->running = NULL;
		sched_block(d.vcpu, now);
		return;
	}
	(void)window_begins(sc); /* an idle window, or its vCPU not ready at its start */
	if (!more)
		arch_cpu_idle_wait(event);
}

/*
 * One turn of the loop, out of line: inlined in the for (;;), the compiler hoisted every address
 * the turn might use above it, and every switch (which enters the loop afresh) paid for them.
 */
static __attribute__((noinline)) void loop_turn(struct shared_core *sc, unsigned pcpu)
{
	bool more = pcpu == console_core() && console_drain();
	uint64_t housekeeping = housekeeping_of(sc);
	uint64_t now = core_now_ns(sc);
	struct sched_decision d = sc->chosen;

	if (!sc->chosen_ready) {
		carry_out_orders(sc, pcpu, now);
		for (uint32_t i = 0; i < sc->num_home; i++)
			(void)look_at(sc, sc->home[i], sched_of(sc->home[i]), now, true);
		d = sched_pick(&sc->sched, now);
	}
	sc->chosen_ready = false;
	enter_decided(sc, pcpu, d, now, housekeeping, more);
}

void shared_core_loop(unsigned pcpu)
{
	struct shared_core *sc = &shared_cores[pcpu];

	for (;;)
		loop_turn(sc, pcpu);
}

/* ---- the operator's side: the console core posts, the cores carry out ---- */

uint32_t shared_core_pool_of(const struct partition *p)
{
	return shared_cfg != NULL ? partition_pool[p->index] : TERN_POOL_NONE;
}

static bool pool_is_shared(uint32_t q)
{
	return q != TERN_POOL_NONE && config_pools(shared_cfg)[q].scheduler != TERN_SCHED_NULL;
}

#define BUSY "busy: its previous change is not carried out yet (retry)"
#define OVERLOAD "its core would be asked for more than all of its time (RTDS meets its deadlines up to 100 %)"
#define LOAD_ONE 1000000000ULL /* a whole core, in parts per billion */

/* A server's share of its core, rounded down (parts per billion). */
static uint64_t server_load(uint64_t budget, uint64_t period)
{
	return period != 0u ? budget / period * LOAD_ONE + budget % period * LOAD_ONE / period : 0u;
}

/* What a queued or moving vCPU's server will be: its change from the next period included. */
static uint64_t vcpu_load(const struct sched_vcpu *s)
{
	return s->rtds_pending ? server_load(s->next_budget, s->next_period)
			       : server_load(s->budget, s->period);
}

/*
 * An RTDS core's load, as `tern check` sums it for the description: every server queued there
 * or on its way to it, at the parameters posted for it if any, but partition `except`'s
 * (TERN_MAX_PARTITIONS: none) and `except_v`.  Against what the core had when it last
 * decided, as the parameters' own check.
 */
static uint64_t core_load(unsigned pcpu, uint32_t except, const struct sched_vcpu *except_v,
			  uint32_t *terms)
{
	const struct sched_core *core = &shared_cores[pcpu].sched;
	uint64_t load = 0;

	*terms = 0;
	for (uint32_t i = 0; i < num_partitions; i++) {
		for (uint32_t j = 0; j < partitions[i].num_vcpus && i != except; j++) {
			const struct sched_vcpu *s = &vcpu_sched[i][j];
			/* Only a shared vCPU's scheduler state is set (the rest is .noinit). */
			bool here = partitions[i].vcpu[j].shared && s->core == core;
			if (s == except_v || (!here && atomic_load(&moving_to[i][j]) != pcpu + 1u))
				continue;
			load += atomic_load(&params_posted[i][j])
					? server_load(posted_params[i][j].budget, posted_params[i][j].period)
					: vcpu_load(s);
			(*terms)++;
		}
	}
	return load;
}

/* Whether `add` more (and `add_terms` servers) fits: each term may be a part short (rounding). */
static bool load_fits(uint64_t load, uint32_t terms, uint64_t add, uint32_t add_terms)
{
	return load + add <= LOAD_ONE + terms + add_terms;
}

/* Whether v can take parameters p now (not posted). */
static const char *params_refused(const struct vcpu *v, const struct sched_params *p)
{
	const struct sched_core *core;

	/* Before the scheduler's kind: a vCPU on its way to a new pool is still on an old core. */
	if (atomic_load(&params_posted[v->partition->index][v->index]) ||
	    atomic_load(&moving_to[v->partition->index][v->index]))
		return BUSY;
	core = &shared_cores[v->pcpu].sched;
	if (p->kind != core->ops->kind)
		return "its pool's scheduler is another";
	/* Against what the core had when it last decided: it checks again when it applies them. */
	return core->ops->check(core, sched_of(v), p);
}

const char *shared_core_post_params(struct partition *part, const struct sched_params *p,
				    uint32_t *which)
{
	*which = 0;
	if (!pool_is_shared(shared_core_pool_of(part)))
		return "its pool's scheduler (null) takes no parameters";
	/* All or none: a refusal about one vCPU leaves the others as they were. */
	for (uint32_t i = 0; i < part->num_vcpus; i++) {
		const struct vcpu *v = &part->vcpu[i];
		const char *why = params_refused(v, p);
		*which = i;
		if (why != NULL)
			return why;
		if (p->kind == SCHED_RTDS) {
			/* Every vCPU of the partition on v's core, at the new parameters. */
			uint32_t terms;
			uint32_t mine = 0;
			uint64_t load = core_load(v->pcpu, part->index, NULL, &terms);
			for (uint32_t j = 0; j < part->num_vcpus; j++)
				mine += part->vcpu[j].pcpu == v->pcpu ? 1u : 0u;
			if (!load_fits(load, terms, mine * server_load(p->budget, p->period), mine))
				return OVERLOAD;
		}
	}
	for (uint32_t i = 0; i < part->num_vcpus; i++) {
		const struct vcpu *v = &part->vcpu[i];
		posted_params[part->index][i] = *p;
		atomic_store(&params_posted[part->index][i], true);
		atomic_store(&orders_waiting[v->pcpu], true);
		arch_cpu_kick(v->pcpu);
	}
	return NULL;
}

const char *shared_core_post_timeline(uint32_t q, const struct sched_params *p)
{
	const struct tern_config_pool *pl;
	const char *why;

	if (q >= shared_cfg->num_pools || config_pools(shared_cfg)[q].scheduler != TERN_SCHED_ARINC653)
		return "not an ARINC 653 pool";
	pl = &config_pools(shared_cfg)[q];
	for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
		if ((pl->cpus & (1u << pcpu)) && atomic_load(&timeline_posted[pcpu]))
			return BUSY;
	}
	for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
		if (!(pl->cpus & (1u << pcpu)))
			continue;
		why = shared_cores[pcpu].sched.ops->check(&shared_cores[pcpu].sched, NULL, p);
		if (why != NULL)
			return why;
	}
	for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
		if (!(pl->cpus & (1u << pcpu)))
			continue;
		posted_timeline[pcpu] = *p;
		atomic_store(&timeline_posted[pcpu], true);
		atomic_store(&orders_waiting[pcpu], true);
		arch_cpu_kick(pcpu);
	}
	return NULL;
}

/* Post v's move to `pcpu`, with parameters for its new core's scheduler (NULL: its own). */
static const char *post_move(struct vcpu *v, unsigned pcpu, const struct sched_params *p)
{
	_Atomic bool *posted = &params_posted[v->partition->index][v->index];

	if (atomic_load(posted) || atomic_load(&moving_to[v->partition->index][v->index]))
		return BUSY;
	if (p != NULL) {
		posted_params[v->partition->index][v->index] = *p;
		atomic_store(posted, true);
	}
	atomic_store(&moving_to[v->partition->index][v->index], pcpu + 1u);
	atomic_store(&orders_waiting[v->pcpu], true);
	arch_cpu_kick(v->pcpu);
	return NULL;
}

const char *shared_core_pin(struct vcpu *v, unsigned pcpu)
{
	uint32_t q = shared_core_pool_of(v->partition);

	/* Where it is and staying there; on its way out, even to here, it is busy (post_move). */
	if (pcpu == v->pcpu && !atomic_load(&moving_to[v->partition->index][v->index]))
		return NULL;
	if (!pool_is_shared(q))
		return "it is in a null pool, which keeps each vCPU on its own core";
	if (pcpu >= TERN_MAX_CPUS || !(config_pools(shared_cfg)[q].cpus & (1u << pcpu)))
		return "that core is not in its pool (pool-migrate moves a partition to another)";
	const char *why = arch_vcpu_can_move(v);
	if (why != NULL && pcpu != v->pcpu)
		return why;
	if (config_pools(shared_cfg)[q].scheduler == TERN_SCHED_RTDS &&
	    !atomic_load(&moving_to[v->partition->index][v->index])) {
		uint32_t terms;
		uint64_t load = core_load(pcpu, TERN_MAX_PARTITIONS, sched_of(v), &terms);
		if (!load_fits(load, terms, vcpu_load(sched_of(v)), 1u))
			return "that core would be asked for more than all of its time (RTDS meets its "
			       "deadlines up to 100 %)";
	}
	return post_move(v, pcpu, NULL);
}

/* The defaults of the new pool's scheduler (Xen's: RTDS 4 ms every 10 ms, credit 256). */
static void default_params(uint32_t scheduler, struct sched_params *sp)
{
	(void)memset(sp, 0, sizeof(*sp));
	sp->kind = (uint8_t)scheduler;
	sp->budget = 4000u * (uint64_t)SCHED_NS_PER_US;
	sp->period = 10000u * (uint64_t)SCHED_NS_PER_US;
	sp->weight = SCHED_CREDIT_WEIGHT_DEFAULT;
}

const char *shared_core_migrate(struct partition *p, uint32_t q)
{
	uint32_t from = shared_core_pool_of(p);
	const struct tern_config_pool *pl;
	struct sched_params sp;
	unsigned cores[TERN_MAX_CPUS];
	unsigned n = 0;

	if (q == from)
		return NULL;
	if (!pool_is_shared(from) || !pool_is_shared(q))
		return "only between shared pools (a null pool's cores are its partitions' own)";
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		const char *why = arch_vcpu_can_move(&p->vcpu[i]);
		if (why != NULL)
			return why;
		if (atomic_load(&params_posted[p->index][i]) || atomic_load(&moving_to[p->index][i]))
			return BUSY;
	}
	pl = &config_pools(shared_cfg)[q];
	for (unsigned pcpu = 0; pcpu < TERN_MAX_CPUS; pcpu++) {
		if (pl->cpus & (1u << pcpu))
			cores[n++] = pcpu;
	}
	default_params(pl->scheduler, &sp);
	const struct sched_params *carried = pl->scheduler == TERN_SCHED_ARINC653 ? NULL : &sp;
	if (pl->scheduler == TERN_SCHED_RTDS) {
		/* Each core of the new pool with the defaults of every vCPU that goes to it. */
		for (unsigned k = 0; k < n && k < p->num_vcpus; k++) {
			uint32_t terms;
			uint32_t going = (p->num_vcpus - k + n - 1u) / n;
			uint64_t load = core_load(cores[k], p->index, NULL, &terms);
			if (!load_fits(load, terms, going * server_load(sp.budget, sp.period), going))
				return "a core of that pool would be asked for more than all of its time "
				       "(RTDS's defaults: 4000 us every 10000 us per vCPU)";
		}
	}
	partition_pool[p->index] = q;
	/* vCPU i to the pool's cores in turn: its affinity there. */
	for (uint32_t i = 0; i < p->num_vcpus; i++)
		(void)post_move(&p->vcpu[i], cores[i % n], carried);
	return NULL;
}

const char *shared_core_state_name(const struct vcpu *v)
{
	static const char *const names[] = { "runnable", "running", "blocked" };
	const struct sched_vcpu *s;

	if (!cpu_is_shared(v->pcpu))
		return NULL;
	s = sched_of(v);
	if (s->paused)
		return "paused";
	return s->state < 3u ? names[s->state] : "?";
}
