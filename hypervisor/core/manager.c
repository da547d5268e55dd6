/* SPDX-License-Identifier: MIT */
/*
 * A manager partition's command mailbox (tern/manager.h).
 *
 * A mailbox goes EMPTY -> FILLING (a submitting vCPU owns it) -> QUEUED -> READY (the console
 * core wrote the reply) -> READING (a vCPU copies it out) -> EMPTY.  Each step is one
 * compare-and-swap by whoever may take it, so a manager's vCPUs never wait for each other or
 * for the console core: a call that finds the mailbox in another state is answered at once.
 * The console core runs the command through command.c, whose request state is then only ever
 * used on that core, and whose output it captures (console_capture_start).
 */
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/manager.h>
#include <tern/partition.h>

#define BOX_EMPTY   0u
#define BOX_FILLING 1u
#define BOX_QUEUED  2u
#define BOX_READY   3u
#define BOX_READING 4u

struct manager_box {
	_Atomic uint32_t state;              /* BOX_* */
	uint32_t reply_len;                  /* READY: bytes in reply */
};

/*
 * EMPTY at boot (.bss); the commands and replies are written before they are read, so not
 * cleared (.noinit: zeroing the 2 KiB of commands cost every boot about 600 instructions).
 */
static struct manager_box boxes[TERN_MAX_PARTITIONS];
static char commands[TERN_MAX_PARTITIONS][MANAGER_COMMAND_MAX + 1u] __attribute__((section(".noinit")));
static char replies[TERN_MAX_PARTITIONS][MANAGER_REPLY_MAX] __attribute__((section(".noinit")));
/* Mailboxes QUEUED, one bit per partition: the console core's drain looks at this word only. */
static _Atomic uint32_t queued;

/* [gpa, gpa + len) of p's RAM as the hypervisor maps it, or NULL if not wholly inside. */
static char *guest_buffer(const struct partition *p, uint64_t gpa, uint64_t len)
{
	const struct tern_config_partition *c = p->cfg;
	uint64_t off = gpa - c->ram_ipa;

	if (gpa < c->ram_ipa || off >= c->ram_size || len > c->ram_size - off)
		return NULL;
	return (char *)(uintptr_t)(c->ram_hpa + off);
}

/* Refused, and counted, if the partition is not a manager (the port counts every call). */
static bool allowed(struct vcpu *v)
{
	if (v->partition->cfg->flags & TERN_PF_MANAGER)
		return true;
	vcpu_count(v, STAT_MANAGER_DENIED);
	return false;
}

static bool claim(struct manager_box *b, uint32_t from, uint32_t to)
{
	return atomic_compare_exchange_strong(&b->state, &from, to);
}

enum manager_result manager_submit(struct vcpu *v, uint64_t gpa, uint64_t len)
{
	struct partition *p = v->partition;
	struct manager_box *b = &boxes[p->index];
	const char *text;

	if (!allowed(v))
		return MANAGER_DENIED;
	if (len == 0u || len > MANAGER_COMMAND_MAX)
		return MANAGER_INVALID;
	text = guest_buffer(p, gpa, len);
	if (!text)
		return MANAGER_BAD_ADDRESS;
	if (!claim(b, BOX_EMPTY, BOX_FILLING))
		return MANAGER_BUSY;
	/* Copied first, then checked: the guest may go on writing its buffer. */
	char *command = commands[p->index];
	(void)memcpy(command, text, (size_t)len);
	command[len] = '\0';
	for (uint64_t i = 0; i < len; i++) {
		if (command[i] == '\0' || command[i] == '\r' || command[i] == '\n') {
			atomic_store(&b->state, BOX_EMPTY);
			return MANAGER_INVALID;
		}
	}
	atomic_store(&b->state, BOX_QUEUED);
	(void)atomic_fetch_or(&queued, 1u << p->index);
	arch_cpu_kick(console_core());
	return MANAGER_OK;
}

enum manager_result manager_reply(struct vcpu *v, uint64_t gpa, uint64_t len, uint64_t *full)
{
	struct partition *p = v->partition;
	struct manager_box *b = &boxes[p->index];
	char *out;

	*full = 0;
	if (!allowed(v))
		return MANAGER_DENIED;
	out = guest_buffer(p, gpa, len);
	if (!out)
		return MANAGER_BAD_ADDRESS;
	if (!claim(b, BOX_READY, BOX_READING)) {
		uint32_t state = atomic_load(&b->state);
		return state == BOX_EMPTY ? MANAGER_NO_COMMAND : MANAGER_BUSY;
	}
	*full = b->reply_len;
	(void)memcpy(out, replies[p->index], (size_t)(len < b->reply_len ? len : b->reply_len));
	atomic_store(&b->state, BOX_EMPTY);
	return MANAGER_OK;
}

/* The line as the console shows it: a guest's control characters do not reach the operator's terminal. */
static void printable(char *out, const char *text)
{
	size_t i = 0;

	for (; text[i] != '\0'; i++)
		out[i] = ((unsigned char)text[i] < 0x20u || (unsigned char)text[i] == 0x7fu) ? '?' : text[i];
	out[i] = '\0';
}

void manager_serve(void)
{
	/* The console core's only: off its stack, which every caller of the drain shares. */
	static char shown[MANAGER_COMMAND_MAX + 1u];

	uint32_t waiting = atomic_load_explicit(&queued, memory_order_relaxed);

	if (!waiting || arch_cpu_id() != console_core())
		return;
	waiting = atomic_exchange(&queued, 0u);
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct manager_box *b = &boxes[i];
		if (!(waiting & (1u << i)) || atomic_load(&b->state) != BOX_QUEUED)
			continue;
		/* An operator sees what a manager did, on the console, before its effects. */
		printable(shown, commands[i]);
		tern_log("> (manager %s) %s", partitions[i].name, shown);
		console_capture_start(replies[i], sizeof(replies[i]));
		console_command(commands[i], partitions[i].name);
		b->reply_len = (uint32_t)console_capture_end();
		atomic_store(&b->state, BOX_READY);
	}
}
