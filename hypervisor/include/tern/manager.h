/* SPDX-License-Identifier: MIT */
/*
 * The console's commands as calls of a manager partition (`manager = true`,
 * docs/management.md, "Hypercalls for a manager partition").  Each partition has a mailbox:
 * a submitted command line waits there until the console core carries it out through the
 * same parser as a typed line, its output captured into the mailbox's reply, which the
 * manager then reads.  The caller never waits: it polls.
 */
#ifndef TERN_MANAGER_H
#define TERN_MANAGER_H

#include <tern/types.h>

#define MANAGER_COMMAND_MAX 255u   /* the console's own line limit */
#define MANAGER_REPLY_MAX   4096u  /* a reply's bytes, "truncated\n" included when cut */

enum manager_result {
	MANAGER_OK,
	MANAGER_DENIED,       /* the partition is not a manager */
	MANAGER_INVALID,      /* a length of 0 or over MANAGER_COMMAND_MAX, a NUL, CR or LF */
	MANAGER_BAD_ADDRESS,  /* the buffer is not wholly in the caller's RAM */
	MANAGER_BUSY,         /* a command is under way, or its reply not read yet */
	MANAGER_NO_COMMAND,   /* a reply asked for with no command submitted */
};

struct vcpu;

/*
 * Queue the command line at [gpa, gpa + len) of the caller's RAM and kick the console core;
 * any vCPU of the partition, on its own core.
 */
enum manager_result manager_submit(struct vcpu *v, uint64_t gpa, uint64_t len);
/*
 * The reply of the command submitted, at most `len` bytes of it to [gpa, gpa + len); its full
 * length in *full.  MANAGER_OK consumes it, whether or not it was cut.
 */
enum manager_result manager_reply(struct vcpu *v, uint64_t gpa, uint64_t len, uint64_t *full);
/* The console core: carry out the queued commands (console_drain calls it). */
void manager_serve(void);

/* core/command.c: one command line as typed, by `manager` (NULL: the operator's console). */
void console_command(char *text, const char *manager);

#endif
