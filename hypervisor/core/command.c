/* SPDX-License-Identifier: MIT */
/*
 * The hypervisor console's commands, typed on the board UART (docs/design.md, "Console
 * protocol" has the replies):
 *
 *   help             what follows
 *   list             each partition: state, vCPUs, cores, restarts, pool
 *   vcpu-list        each vCPU: its partition, core, power state, whether paused
 *   pool-list        the pools: the description's, and each pool-less partition's own null one
 *   stats            every partition's counters (tern-stats), each shared core's window entries
 *                    and scheduling events, how late (tern-sched), the hypervisor's memory (tern-mem)
 *   restart NAME     reload NAME from its pristine copies and start it again
 *   stop NAME        end NAME, as its own SYSTEM_OFF would
 *   pause NAME       hold NAME's vCPUs in the hypervisor on their cores, guest untouched
 *   unpause NAME     let them go on where they were
 *   vcpu-pin NAME VCPU CPU         move a vCPU to another core of its (shared) pool
 *   pool-migrate NAME POOL          move a partition to another shared pool (its scheduler's
 *                                   defaults there)
 *   sched-rtds NAME --budget US --period US, sched-credit NAME --weight W [--cap PERCENT]
 *                                   a partition's parameters, from its next period
 *   sched-arinc653 POOL [--major-frame US] --window NAME:US ... (NAME `idle`: no one)
 *                                   a pool's timeline, from its next major frame
 *
 * A line may start with `@N ` (N a decimal sequence number): a tool's request (`tern run`'s
 * control socket), whose reply lines carry "seq":N.  Every command ends its reply with one
 * `tern-ctl {...,"ok":true|false}` line (a refusal has "reason"); list, vcpu-list and pool-list
 * put a `tern-ctl` line per item before it.
 *
 * Input arrives as an interrupt on the console core, the one that also drains the console's
 * output (tern/console.h).  This file only parses:
 * a restart, stop or pause is a request that the partition's own cores carry out, so the work
 * (a reload copies the partition's whole RAM) never runs on another partition's core, and the
 * console core never waits for another core.
 */
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/manager.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/shared_core.h>

#define LINE_MAX 256

static char line[LINE_MAX];
static size_t line_len;
static bool line_too_long;
/*
 * The console core is one no partition uses if there is one, else the first whose partition
 * traps its interrupts anyway; a direct partition's core is the last resort.  Its partition,
 * if any, pays for draining everyone's output (docs/design.md, "Console").
 */
void console_input_start(unsigned board_cpus)
{
	unsigned trapping = board_cpus;
	unsigned input_core = 0;
	unsigned pcpu = board_cpus;

	while (pcpu-- > 0) {
		struct vcpu *v = vcpu_of_cpu(pcpu);
		if (!v)
			input_core = pcpu;
		else if (!(v->partition->cfg->flags & TERN_PF_IRQ_DIRECT))
			trapping = pcpu;
	}
	if (vcpu_of_cpu(input_core) && trapping < board_cpus)
		input_core = trapping;
	console_start(input_core);
	uart_rx_enable();
	arch_hyp_irq_route(platform.uart_irq, input_core);
}

static struct partition *partition_named(const char *name)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		if (!strcmp(partitions[i].name, name))
			return &partitions[i];
	}
	return NULL;
}

/* sched-arinc653 POOL --major-frame US and 16 windows of two words each */
#define MAX_WORDS 40

/*
 * The request being answered: its sequence number if a tool sent one, and its verb.  Only the
 * console core touches it: console_rx is its input interrupt, and a manager's commands are
 * carried out by its drain (core/manager.c).
 */
static struct console_request {
	bool tagged;
	uint32_t seq;
	char verb[24];
} req;

/* `s` as the inside of a JSON string, cut to fit `n` (names come from the operator too). */
static void json_text(char *dst, size_t n, const char *s)
{
	size_t o = 0;

	for (; *s && o + 7 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			dst[o++] = '\\';
			dst[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			o += (size_t)snprintf(&dst[o], n - o, "\\u%04x", c);
		} else {
			dst[o++] = (char)c;
		}
	}
	dst[o] = '\0';
}

/* One `tern-ctl` line of the reply: the request's seq and verb, then `fmt`'s members. */
static void __attribute__((format(printf, 1, 2))) ctl_line(const char *fmt, ...)
{
	char body[512];
	char verb[sizeof(req.verb) * 6];
	char seq[24];
	va_list ap;

	seq[0] = '\0';
	va_start(ap, fmt);
	(void)vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	json_text(verb, sizeof(verb), req.verb);
	if (req.tagged)
		(void)snprintf(seq, sizeof(seq), "\"seq\":%u,", req.seq);
	console_printf("tern-ctl {%s\"cmd\":\"%s\",%s}", seq, verb, body);
}

static void ok(void)
{
	ctl_line("\"ok\":true");
}

/* A refusal: the console's human line, and the reply with the same reason. */
static void __attribute__((format(printf, 1, 2))) say_refused(const char *fmt, ...)
{
	char reason[160];
	char quoted[sizeof(reason) * 6];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	tern_log("console: %s", reason);
	json_text(quoted, sizeof(quoted), reason);
	ctl_line("\"ok\":false,\"reason\":\"%s\"", quoted);
}

/* A decimal number below 2^32, all of `s`. */
static bool number(const char *s, uint32_t *out)
{
	uint64_t n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10u + (uint64_t)(*s - '0');
		if (n > 0xffffffffu)
			return false;
	}
	*out = (uint32_t)n;
	return true;
}

/* The partition `name` names, or NULL after refusing. */
static struct partition *named(const char *name)
{
	struct partition *p = name ? partition_named(name) : NULL;

	if (!p)
		say_refused("no partition named \"%s\"", name ? name : "");
	return p;
}

/* "running", or "paused" once every vCPU of a paused partition waits ("pausing" until then). */
static const char *shown_state(const struct partition *p)
{
	uint32_t state = atomic_load(&p->state);

	if (state == PARTITION_RUNNING && atomic_load(&p->paused))
		return partition_pause_complete(p) ? "paused" : "pausing";
	return partition_state_name(state);
}

static const char *const power_names[VCPU_ON + 1] = {
	[VCPU_OFF] = "off", [VCPU_ON_PENDING] = "on_pending", [VCPU_ON] = "on",
};

/* `[1,2]`: the partition's cores, vCPU order. */
static void cores_of(const struct partition *p, char *out, size_t n)
{
	size_t o = (size_t)snprintf(out, n, "[");

	for (uint32_t i = 0; i < p->num_vcpus && o < n; i++)
		o += (size_t)snprintf(&out[o], n - o, "%s%u", i ? "," : "", p->vcpu[i].pcpu);
	if (o < n)
		(void)snprintf(&out[o], n - o, "]");
}

static const struct tern_config *config(void)
{
	return (const struct tern_config *)(uintptr_t)platform.config_hpa;
}

/* A pool's name as a JSON value: "name", or null for an implicit null pool. */
static void pool_json(uint32_t q, char *out, size_t n)
{
	if (q == TERN_POOL_NONE || q >= config()->num_pools)
		(void)snprintf(out, n, "null");
	else
		(void)snprintf(out, n, "\"%s\"", config_pools(config())[q].name);
}

static const char *const pool_scheduler_names[] = { "null", "arinc653", "rtds", "credit" };

static void list(void)
{
	char cores[TERN_MAX_VCPUS * 4 + 3];

	for (uint32_t i = 0; i < num_partitions; i++) {
		const struct partition *p = &partitions[i];
		cores_of(p, cores, sizeof(cores));
		char pool[TERN_NAME_LEN + 2];
		pool_json(shared_core_pool_of(p), pool, sizeof(pool));
		ctl_line("\"partition\":\"%s\",\"id\":%u,\"state\":\"%s\",\"vcpus\":%u,\"cpus\":%s,"
			 "\"mem_mib\":%llu,\"restarts\":%u,\"pool\":%s",
			 p->name, p->index, shown_state(p), p->num_vcpus, cores,
			 (unsigned long long)(p->cfg->ram_size >> 20), atomic_load(&p->restarts), pool);
	}
	ok();
}

static void vcpu_list(void)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		const struct partition *p = &partitions[i];
		for (uint32_t k = 0; k < p->num_vcpus; k++) {
			const struct vcpu *v = &p->vcpu[k];
			uint32_t power = atomic_load(&v->power);
			const char *sched = shared_core_state_name(v);
			ctl_line("\"partition\":\"%s\",\"id\":%u,\"vcpu\":%u,\"cpu\":%u,\"power\":\"%s\","
				 "\"paused\":%s,\"affinity\":[%u],\"sched\":\"%s\"",
				 p->name, p->index, k, v->pcpu, power <= VCPU_ON ? power_names[power] : "?",
				 atomic_load(&v->paused) ? "true" : "false", v->pcpu,
				 sched ? sched : "pinned");
		}
	}
	ok();
}

/* The description's pools with their partitions now, then each pool-less partition's own. */
static void pool_list(void)
{
	const struct tern_config *cfg = config();
	char cores[TERN_MAX_CPUS * 4 + 3];
	char members[TERN_MAX_PARTITIONS * (TERN_NAME_LEN + 3) + 3];

	for (uint32_t q = 0; q < cfg->num_pools; q++) {
		const struct tern_config_pool *pl = &config_pools(cfg)[q];
		size_t o = (size_t)snprintf(cores, sizeof(cores), "[");
		for (unsigned c = 0; c < TERN_MAX_CPUS && o < sizeof(cores); c++) {
			if (pl->cpus & (1u << c))
				o += (size_t)snprintf(&cores[o], sizeof(cores) - o, "%s%u", o > 1 ? "," : "", c);
		}
		if (o < sizeof(cores))
			(void)snprintf(&cores[o], sizeof(cores) - o, "]");
		o = (size_t)snprintf(members, sizeof(members), "[");
		for (uint32_t i = 0; i < num_partitions && o < sizeof(members); i++) {
			if (shared_core_pool_of(&partitions[i]) == q)
				o += (size_t)snprintf(&members[o], sizeof(members) - o, "%s\"%s\"",
						      o > 1 ? "," : "", partitions[i].name);
		}
		if (o < sizeof(members))
			(void)snprintf(&members[o], sizeof(members) - o, "]");
		ctl_line("\"pool\":\"%s\",\"scheduler\":\"%s\",\"cpus\":%s,\"partitions\":%s", pl->name,
			 pl->scheduler < 4u ? pool_scheduler_names[pl->scheduler] : "?", cores, members);
	}
	for (uint32_t i = 0; i < num_partitions; i++) {
		const struct partition *p = &partitions[i];
		if (shared_core_pool_of(p) != TERN_POOL_NONE)
			continue;
		cores_of(p, cores, sizeof(cores));
		ctl_line("\"pool\":null,\"scheduler\":\"null\",\"cpus\":%s,\"partitions\":[\"%s\"]",
			 cores, p->name);
	}
	ok();
}

static void stop_or_restart(struct partition *p, bool restart)
{
	/*
	 * Answered before it is requested: stopping the last partition powers the board off on
	 * that partition's core, which may come before this core's next line.
	 */
	ok();
	/* An operator's stop or restart also ends a pause (the reloaded guest starts afresh). */
	atomic_store(&p->paused, false);
	partition_request(p, restart ? PARTITION_REQ_RESTART : PARTITION_REQ_STOP);
}

static void pause_partition(struct partition *p)
{
	uint32_t state = atomic_load(&p->state);

	if (state != PARTITION_RUNNING) {
		say_refused("partition %s is %s: only a running partition can be paused", p->name,
		       partition_state_name(state));
		return;
	}
	/* Again on a paused one: kicks a vCPU that entered since (partition_pause). */
	partition_pause(p);
	ctl_line("\"ok\":true,\"state\":\"%s\"", shown_state(p));
}

static void unpause_partition(struct partition *p)
{
	if (!atomic_load(&p->paused)) {
		say_refused("partition %s is not paused", p->name);
		return;
	}
	partition_unpause(p);
	ok();
}

/* `why` NULL: done (posted to the cores concerned); else the refusal, about `what`. */
static void posted(const char *why, const char *what)
{
	if (why == NULL)
		ok();
	else
		say_refused("%s: %s", what, why);
}

/* The pool `name` names, or TERN_POOL_NONE. */
static uint32_t pool_named(const char *name)
{
	const struct tern_config *cfg = config();

	for (uint32_t q = 0; q < cfg->num_pools; q++) {
		if (strcmp(config_pools(cfg)[q].name, name) == 0)
			return q;
	}
	return TERN_POOL_NONE;
}

static void vcpu_pin(char **word, unsigned words)
{
	struct partition *p;
	uint32_t vcpu;
	uint32_t cpu;
	char what[64];

	if (words != 4) {
		say_refused("usage: vcpu-pin PARTITION VCPU CPU");
		return;
	}
	p = named(word[1]);
	if (!p)
		return;
	if (!number(word[2], &vcpu) || vcpu >= p->num_vcpus) {
		say_refused("partition %s has no vCPU %s (it has %u)", p->name, word[2], p->num_vcpus);
		return;
	}
	if (!number(word[3], &cpu)) {
		say_refused("not a core number: %s", word[3]);
		return;
	}
	(void)snprintf(what, sizeof(what), "vcpu-pin %s %u %u", p->name, vcpu, cpu);
	posted(shared_core_pin(&p->vcpu[vcpu], cpu), what);
}

static void pool_migrate(char **word, unsigned words)
{
	struct partition *p;
	uint32_t q;
	char what[80];

	if (words != 3) {
		say_refused("usage: pool-migrate PARTITION POOL");
		return;
	}
	p = named(word[1]);
	if (!p)
		return;
	q = pool_named(word[2]);
	if (q == TERN_POOL_NONE) {
		say_refused("no pool named \"%s\"", word[2]);
		return;
	}
	(void)snprintf(what, sizeof(what), "pool-migrate %s %s", p->name, word[2]);
	posted(shared_core_migrate(p, q), what);
}

/* `--flag value` pairs after the first `skip` words: the value of `flag`, or NULL. */
static const char *option(char **word, unsigned words, unsigned skip, const char *flag)
{
	for (unsigned i = skip; i + 1u < words; i += 2u) {
		if (!strcmp(word[i], flag))
			return word[i + 1u];
	}
	return NULL;
}

/* Every word after `skip` is a `--flag value` pair of `flags` (NULL-terminated). */
static bool options_known(char **word, unsigned words, unsigned skip, const char *const *flags)
{
	if ((words - skip) % 2u)
		return false;
	for (unsigned i = skip; i < words; i += 2u) {
		bool known = false;
		for (const char *const *f = flags; *f; f++)
			known |= !strcmp(word[i], *f);
		if (!known)
			return false;
	}
	return true;
}

/* sched-rtds and sched-credit: the same parameters for every vCPU of the partition. */
static void sched_partition(char **word, unsigned words, bool rtds)
{
	static const char *const rtds_flags[] = { "--budget", "--period", NULL };
	static const char *const credit_flags[] = { "--weight", "--cap", NULL };
	struct sched_params sp;
	struct partition *p;
	uint32_t a = 0;
	uint32_t b = 0;
	const char *x;
	const char *y;

	if (words < 2 || !options_known(word, words, 2, rtds ? rtds_flags : credit_flags)) {
		say_refused(rtds ? "usage: sched-rtds PARTITION --budget US --period US"
				 : "usage: sched-credit PARTITION --weight W [--cap PERCENT]");
		return;
	}
	p = named(word[1]);
	if (!p)
		return;
	x = option(word, words, 2, rtds ? "--budget" : "--weight");
	y = option(word, words, 2, rtds ? "--period" : "--cap");
	if (!x || !number(x, &a) || (rtds && (!y || !number(y, &b))) || (!rtds && y && !number(y, &b))) {
		say_refused("%s: %s", word[0], rtds ? "--budget and --period take microseconds"
						    : "--weight and --cap take whole numbers");
		return;
	}
	(void)memset(&sp, 0, sizeof(sp));
	sp.kind = rtds ? SCHED_RTDS : SCHED_CREDIT;
	sp.budget = (uint64_t)a * SCHED_NS_PER_US;
	sp.period = (uint64_t)b * SCHED_NS_PER_US;
	sp.weight = a;
	sp.cap = b;
	uint32_t which;
	const char *why = shared_core_post_params(p, &sp, &which);
	if (why != NULL) {
		say_refused("%s %s: vCPU %u: %s", word[0], p->name, which, why);
		return;
	}
	ok();
}

static void sched_arinc653(char **word, unsigned words)
{
	struct sched_params sp;
	uint32_t q;
	uint32_t us;

	if (words < 2) {
		say_refused("usage: sched-arinc653 POOL [--major-frame US] --window PARTITION:US ...");
		return;
	}
	q = pool_named(word[1]);
	if (q == TERN_POOL_NONE) {
		say_refused("no pool named \"%s\"", word[1]);
		return;
	}
	(void)memset(&sp, 0, sizeof(sp));
	sp.kind = SCHED_ARINC653;
	sp.major = (uint64_t)config_pools(config())[q].major_frame_us * SCHED_NS_PER_US;
	for (unsigned i = 2; i < words; i += 2u) {
		char *arg = i + 1u < words ? word[i + 1u] : NULL;
		if (arg && !strcmp(word[i], "--major-frame") && number(arg, &us)) {
			sp.major = (uint64_t)us * SCHED_NS_PER_US;
			continue;
		}
		size_t colon = 0;
		bool window = arg && !strcmp(word[i], "--window");
		while (window && arg[colon] && arg[colon] != ':')
			colon++;
		if (!window || !arg[colon] || !number(&arg[colon + 1u], &us) ||
		    sp.nwindows == SCHED_MAX_WINDOWS) {
			say_refused("sched-arinc653: expected --major-frame US or --window PARTITION:US "
				    "(at most %u), not \"%s\"", SCHED_MAX_WINDOWS, word[i]);
			return;
		}
		arg[colon] = '\0';
		bool idle = strcmp(arg, "idle") == 0;
		struct partition *p = idle ? NULL : named(arg);
		if (!idle && !p)
			return;
		if (p && shared_core_pool_of(p) != q) {
			say_refused("sched-arinc653 %s: partition %s is not in the pool", word[1], p->name);
			return;
		}
		sp.windows[sp.nwindows].partition = p ? (uint16_t)p->index : SCHED_NO_PARTITION;
		sp.windows[sp.nwindows].duration = (uint64_t)us * SCHED_NS_PER_US;
		sp.nwindows++;
	}
	char what[48];
	(void)snprintf(what, sizeof(what), "sched-arinc653 %s", word[1]);
	posted(sp.nwindows ? shared_core_post_timeline(q, &sp) : "no --window given", what);
}

void console_command(char *text, const char *manager)
{
	char *word[MAX_WORDS];
	unsigned words = 0;
	char shown[LINE_MAX];
	size_t o = 0;

	req.tagged = false;
	(void)snprintf(req.verb, sizeof(req.verb), "?");
	char *t = text;
	while (*t) {
		while (*t == ' ')
			t++;
		if (!*t)
			break;
		if (words == MAX_WORDS) {
			say_refused("more than %u words", MAX_WORDS);
			return;
		}
		word[words++] = t;
		while (*t && *t != ' ')
			t++;
		if (*t)
			*t++ = '\0';
	}
	if (words && word[0][0] == '@') {
		req.tagged = number(&word[0][1], &req.seq);
		if (!req.tagged) {
			say_refused("bad sequence number \"%s\"", word[0]);
			return;
		}
		words--;
		for (unsigned i = 0; i < words; i++)
			word[i] = word[i + 1];
	}
	if (!words)
		return;
	for (unsigned i = 0; i < words && o < sizeof(shown); i++)
		o += (size_t)snprintf(&shown[o], sizeof(shown) - o, "%s%s", i ? " " : "", word[i]);
	if (!manager) /* a manager's was logged with its name (manager_serve) */
		tern_log("> %s", shown);
	(void)snprintf(req.verb, sizeof(req.verb), "%s", word[0]);

	const char *verb = word[0];
	if (!strcmp(verb, "help")) {
		tern_log("commands: help, list, vcpu-list, pool-list, stats, restart NAME, stop NAME, "
			 "pause NAME, unpause NAME, vcpu-pin NAME VCPU CPU");
		tern_log("commands: pool-migrate NAME POOL, sched-rtds NAME --budget US --period US, "
			 "sched-credit NAME --weight W [--cap P]");
		tern_log("commands: sched-arinc653 POOL [--major-frame US] --window NAME:US ...");
		ok();
	} else if (!strcmp(verb, "stats")) {
		arch_iommu_poll(); /* dma_faults up to now */
		for (uint32_t i = 0; i < num_partitions; i++)
			partition_print_stats(&partitions[i]);
		shared_cores_print_stats(false);
		print_memory_use();
		ok();
	} else if (!strcmp(verb, "list") || !strcmp(verb, "vcpu-list") || !strcmp(verb, "pool-list")) {
		if (words != 1)
			say_refused("%s takes no arguments", verb);
		else if (verb[0] == 'l')
			list();
		else if (verb[0] == 'v')
			vcpu_list();
		else
			pool_list();
	} else if (!strcmp(verb, "restart") || !strcmp(verb, "stop") || !strcmp(verb, "pause") ||
		   !strcmp(verb, "unpause")) {
		struct partition *p = words > 2 ? NULL : named(words == 2 ? word[1] : "");
		if (words > 2)
			say_refused("%s takes one partition name", verb);
		else if (p && verb[0] == 'p')
			pause_partition(p);
		else if (p && verb[0] == 'u')
			unpause_partition(p);
		else if (p)
			stop_or_restart(p, verb[2] == 's');
	} else if (!strcmp(verb, "vcpu-pin")) {
		vcpu_pin(word, words);
	} else if (!strcmp(verb, "pool-migrate")) {
		pool_migrate(word, words);
	} else if (!strcmp(verb, "sched-rtds") || !strcmp(verb, "sched-credit")) {
		sched_partition(word, words, verb[6] == 'r');
	} else if (!strcmp(verb, "sched-arinc653")) {
		sched_arinc653(word, words);
	} else {
		say_refused("unknown command \"%s\" (try help)", verb);
	}
}

void console_rx(void)
{
	for (int c = uart_getc(); c >= 0; c = uart_getc()) {
		if (c == '\r' || c == '\n') {
			line[line_len] = '\0';
			if (line_too_long)
				tern_log("console: line longer than %u characters ignored", LINE_MAX - 1);
			else
				console_command(line, NULL);
			line_len = 0;
			line_too_long = false;
		} else if (c == 0x7f || c == '\b') {
			if (line_len)
				line_len--;
		} else if (line_len < LINE_MAX - 1) {
			line[line_len++] = (char)c;
		} else {
			line_too_long = true;
		}
	}
}
