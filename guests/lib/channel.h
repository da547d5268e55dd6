/*
 * Channels between partitions (Tern's [[channel]]): shared memory that every member maps at
 * the same address, a doorbell page beside it, and a doorbell interrupt per member. Found in
 * the device tree as "tern,channel" nodes:
 *
 *     reg = <shm size>, <doorbell 0x1000>; tern,name; tern,member = <k>; tern,members = ...;
 *     tern,readonly (a read-only member); interrupts (arm64) or interrupts-extended (riscv64)
 *
 * Doorbell page (32-bit accesses only): RING (write k: raise member k's doorbell interrupt),
 * SELF (read: this member's index), MEMBERS (read: how many there are).
 *
 * Queues: the single-producer single-consumer rings that members 0 and 1 exchange fixed-size
 * messages through, in the shared memory (S bytes):
 *
 *     [0, S/2)     queue 0, member 0 -> member 1
 *     [S/2, S)     queue 1, member 1 -> member 0
 *
 * and within a queue (offsets from its start; each index free-running, one writer each):
 *
 *     +0x00  u32 head     messages written: the producer's, on its own cache line
 *     +0x04  u32 ready    CHANNEL_READY once the producer has opened the channel
 *     +0x40  u32 tail     messages read: the consumer's, on its own cache line
 *     +0x80  slots        2^n slots of CHANNEL_MSG_SIZE bytes (as many as fit)
 *
 * Message i is in slot i mod 2^n. The producer writes the slot, then (release barrier) head;
 * the consumer reads head, (acquire barrier) the slot, then (release barrier) tail. Opening
 * zeroes the indices a member writes and then sets its ready word: a member opens before its
 * peer sends to it, and neither restarts alone (a restarted member would see stale indices).
 */
#ifndef GUEST_CHANNEL_H
#define GUEST_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#define CHANNEL_NAME_LEN        16      /* with its NUL */
#define CHANNEL_MAX_MEMBERS     8

/* The doorbell page's registers. */
#define CHANNEL_DB_RING         0x0
#define CHANNEL_DB_SELF         0x4
#define CHANNEL_DB_MEMBERS      0x8

struct channel {
	char name[CHANNEL_NAME_LEN];
	uintptr_t shm;                  /* the shared memory, as this member maps it */
	uint64_t size;
	uintptr_t doorbell;             /* the doorbell page */
	uint32_t self;                  /* this partition's member index */
	uint32_t members;               /* members in all (read-write and read-only) */
	bool readonly;
	uint32_t irq;                   /* this member's doorbell: GIC INTID / APLIC source */
};

/*
 * This partition's channels, from its device tree (fdt_init first): the next well-formed
 * channel node after node `after` (FDT_NONE: from the start) into *ch, and that node;
 * FDT_NONE when there are no more.
 */
int channel_next(int after, struct channel *ch);

/* The channel called `name`. */
bool channel_find(const char *name, struct channel *ch);

/* What channel_by_bootarg() found. */
enum channel_lookup {
	CHANNEL_FOUND,
	CHANNEL_UNNAMED,        /* no bootarg `key`, or a value no channel's name can be */
	CHANNEL_ABSENT,         /* a name this partition's device tree has no channel of */
};

/* The channel bootarg `key` names (key=NAME): each guest's tests find theirs so. */
enum channel_lookup channel_by_bootarg(const char *key, struct channel *ch);

/* Raise member `member`'s doorbell interrupt: one trapped 32-bit store. */
void channel_ring(const struct channel *ch, uint32_t member);

/* The doorbell page's SELF and MEMBERS, as the hypervisor reports them. */
uint32_t channel_self(const struct channel *ch);
uint32_t channel_members(const struct channel *ch);

#define CHANNEL_MSG_SIZE        64
#define CHANNEL_READY           0x59444552u     /* "REDY" */

/* Offsets in a queue (above). */
#define CHANNEL_QUEUE_HEAD      0x00
#define CHANNEL_QUEUE_READY     0x04
#define CHANNEL_QUEUE_TAIL      0x40
#define CHANNEL_QUEUE_SLOTS     0x80

struct channel_msg {
	uint64_t word[CHANNEL_MSG_SIZE / 8];
};

/* One direction, as one member sees it. */
struct channel_queue {
	volatile uint32_t *head;
	volatile uint32_t *ready;
	volatile uint32_t *tail;
	volatile uint64_t *slots;
	uint32_t mask;                  /* slots - 1 */
};

/*
 * Member 0 or 1 of a read-write channel: its queues (tx: it produces, rx: it consumes), with
 * the indices it writes zeroed and its ready word set. False for any other member.
 */
bool channel_open(const struct channel *ch, struct channel_queue *tx, struct channel_queue *rx);

/* Whether the peer has opened the channel (its producer side of rx is ready). */
bool channel_peer_ready(const struct channel_queue *rx);

/* Append a message; false if the queue is full. */
bool channel_send(struct channel_queue *q, const struct channel_msg *msg);

/* Take the oldest message; false if the queue is empty. */
bool channel_recv(struct channel_queue *q, struct channel_msg *msg);

/* Messages in the queue that its consumer has not taken yet. */
uint32_t channel_queued(const struct channel_queue *q);

#endif
