/* SPDX-License-Identifier: MIT */
/*
 * The virtio-mmio transport of a device another partition serves (tern/virtio_mmio.h).
 *
 * Everything here runs on the frontend's cores, in its trapped register accesses, under the
 * device's lock, which only the frontend's vCPUs (and its own restart, when none runs) take:
 * the backend only ever touches the channel, and the frontend only its own RAM and registers.
 * Both are untrusted.  Every guest address is checked with frontend_ram() before it is
 * touched, every value read from shared memory is copied once and then checked, and every
 * loop is bounded by the device's fixed shape, so neither side can make this code touch
 * anything but the frontend's RAM and the channel, or run for long.
 *
 * A trusted device (TERN_VF_BACKEND_TRUSTED) is walked and checked alike, but its slot gets the
 * chain's scatter list (addresses in the backend's window onto the frontend's RAM) instead of
 * its bytes, and nothing is copied either way: the backend moves the data itself.
 *
 * The copies into the frontend's RAM go through the hypervisor's 1:1 cacheable map of board
 * RAM; the frontend maps its RAM cacheable too, and the data caches are coherent between the
 * cores of these boards, so a store here is what the frontend's driver reads once it has
 * seen the used index (release order here, the driver's acquire there), as from a
 * dma-coherent device: no cache maintenance.  Instruction fetch of copied bytes is the
 * driver's business, as after any DMA.
 */
#include <stdatomic.h>
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/spinlock.h>
#include <tern/virtio_mmio.h>

/* virtio-mmio version 2 registers (VirtIO 1.2, 4.2.2). */
#define REG_MAGIC               0x000u
#define REG_VERSION             0x004u
#define REG_DEVICE_ID           0x008u
#define REG_VENDOR_ID           0x00cu
#define REG_DEVICE_FEATURES     0x010u
#define REG_DEVICE_FEATURES_SEL 0x014u
#define REG_DRIVER_FEATURES     0x020u
#define REG_DRIVER_FEATURES_SEL 0x024u
#define REG_QUEUE_SEL           0x030u
#define REG_QUEUE_NUM_MAX       0x034u
#define REG_QUEUE_NUM           0x038u
#define REG_QUEUE_READY         0x044u
#define REG_QUEUE_NOTIFY        0x050u
#define REG_INTERRUPT_STATUS    0x060u
#define REG_INTERRUPT_ACK       0x064u
#define REG_STATUS              0x070u
#define REG_QUEUE_DESC_LOW      0x080u
#define REG_QUEUE_DESC_HIGH     0x084u
#define REG_QUEUE_DRIVER_LOW    0x090u
#define REG_QUEUE_DRIVER_HIGH   0x094u
#define REG_QUEUE_DEVICE_LOW    0x0a0u
#define REG_QUEUE_DEVICE_HIGH   0x0a4u
#define REG_CONFIG_GENERATION   0x0fcu
#define REG_CONFIG              0x100u

#define MMIO_MAGIC              0x74726976u     /* "virt" */
#define MMIO_VERSION            2u
#define VENDOR_TERN             0x4e524554u     /* "TERN" */

#define STATUS_FEATURES_OK      0x08u
#define STATUS_DRIVER_OK        0x04u
#define STATUS_NEEDS_RESET      0x40u
#define INT_USED                0x1u
#define INT_CONFIG              0x2u

#define F_VERSION_1             (1ULL << 32)
#define F_BLK_SIZE_MAX          (1ULL << 1)
#define F_BLK_SEG_MAX           (1ULL << 2)
#define F_NET_MAC               (1ULL << 5)

#define DESC_F_NEXT             1u
#define DESC_F_WRITE            2u
#define DESC_F_INDIRECT         4u
#define DESC_SIZE               16u

/* The largest shape: the per-queue state is sized for it. */
#define MAX_QUEUES              3u      /* vsock's rx, tx and event */
#define MAX_QUEUE_SIZE          64u
/* Log lines about one device's misbehaving sides, until its next reset. */
#define LOG_BUDGET              4u

struct vq {
	uint32_t num;                   /* QueueNum */
	bool ready;
	uint64_t desc;                  /* guest addresses */
	uint64_t driver;
	uint64_t device;
	uint16_t last_avail;            /* the next available entry to take */
	uint16_t used_idx;
	uint64_t outstanding;           /* bit h: head h's request is posted */
	uint32_t readable[MAX_QUEUE_SIZE];
	uint32_t writable[MAX_QUEUE_SIZE];
};

struct vdev {
	/* Set by the boot core while it creates the frontend; read-only once a vCPU runs. */
	const struct tern_config_virtio *cfg;
	const struct tern_config_channel *ch;
	const struct tern_config_partition *fe;  /* the frontend's record: its RAM */
	const char *backend;
	struct partition *frontend;
	uintptr_t mem;                  /* the channel's memory */
	uint32_t channel;
	struct virtio_shape shape;
	uint64_t features;
	/* Trusted (segments): a guest address + to_window is the backend's address of it. */
	uint64_t to_window;
	struct spinlock lock;
	/* The frontend's, under the lock. */
	uint32_t status;
	uint32_t device_features_sel;
	uint32_t driver_features_sel;
	uint32_t queue_sel;
	uint64_t driver_features;
	uint32_t epoch;
	uint32_t generation;            /* config_generation the driver last heard of */
	uint32_t req_prod;
	uint32_t logged;
	struct vq q[MAX_QUEUES];
	/* Set by the backend's ring (virtio_backend_rang), taken on the frontend's core. */
	_Atomic uint32_t rung;
	/* Read without the lock by virtio_line. */
	_Atomic uint32_t interrupt_status;
	_Atomic uint32_t comp_cons;
	/*
	 * Set at boot (here for the struct's packing): trusted, requests carry the chains'
	 * segments; the slot's interrupt takes the completions (arch_irq_hypervisor_first).
	 */
	bool segments;
	bool irq_first;
};

/*
 * By virtio record index.  Not cleared at boot (.noinit, like ivshmem.c's functions): each
 * frontend's virtio_partition_init sets its devices' state before any vCPU runs.
 */
static struct vdev vdevs[TERN_MAX_VIRTIO] __attribute__((section(".noinit")));
/* What each transport is added with (mmio_add's ctx): its device's index. */
static const uint32_t vdev_index[TERN_MAX_VIRTIO] = { 0, 1, 2, 3, 4, 5, 6, 7 };
/* Which devices each partition is the frontend of: set at boot. */
static uint32_t frontend_of[TERN_MAX_PARTITIONS];
/* Channel c's device, + 1 (0: the channel serves none); set at boot with the devices. */
static uint32_t device_of_channel[TERN_MAX_CHANNELS];

static uint64_t features_of(uint32_t device_id)
{
	if (device_id == TERN_VIRTIO_BLK)
		return F_VERSION_1 | F_BLK_SIZE_MAX | F_BLK_SEG_MAX;
	if (device_id == TERN_VIRTIO_NET)
		return F_VERSION_1 | F_NET_MAC;
	return F_VERSION_1;
}

/* The one door to the frontend's memory: whether [ipa, ipa + len) is all its RAM, and where. */
static bool frontend_ram(const struct vdev *d, uint64_t ipa, uint64_t len, uintptr_t *at)
{
	const struct tern_config_partition *c = d->fe;
	uint64_t off = ipa - c->ram_ipa;

	if (ipa < c->ram_ipa || len > c->ram_size || off > c->ram_size - len)
		return false;
	*at = (uintptr_t)(c->ram_hpa + off);
	return true;
}

static struct vio_header *header(const struct vdev *d)
{
	return (struct vio_header *)d->mem;
}

static _Atomic uint32_t *ring_index(const struct vdev *d, uint32_t ring, uint32_t at)
{
	return (_Atomic uint32_t *)(d->mem + ring + at);
}

static uintptr_t ring_entry(const struct vdev *d, uint32_t ring, uint32_t i)
{
	uint32_t entries = d->shape.queues * d->shape.queue_size;
	uintptr_t slot = (uintptr_t)i % entries;

	return d->mem + ring + VIO_RING_ENTRIES_AT + (slot * VIO_RING_ENTRY_SIZE);
}

static uintptr_t slot_of(const struct vdev *d, uint32_t q, uint32_t head)
{
	return d->mem + VIO_DATA + (((uintptr_t)q * d->shape.queue_size) + head) * d->shape.slot_size;
}

static uint16_t load16_acquire(uintptr_t at)
{
	return __atomic_load_n((const uint16_t *)at, __ATOMIC_ACQUIRE);
}

static void store16_release(uintptr_t at, uint16_t value)
{
	__atomic_store_n((uint16_t *)at, value, __ATOMIC_RELEASE);
}

/* A used ring's element. */
struct used_elem {
	uint32_t id;
	uint32_t len;
};

/* A side broke the rules: a log line naming the device and the offender, a few per reset. */
static void complain(struct vdev *d, const char *who, const char *what)
{
	if (d->logged < LOG_BUDGET) {
		d->logged++;
		partition_log(d->frontend, "virtio %s: %s %s", d->cfg->name, who, what);
	}
}

/* The frontend broke a rule: the device needs a reset, and the driver hears of it. */
static void frontend_refused(struct vcpu *v, struct vdev *d, const char *what)
{
	vcpu_count(v, STAT_VIRTIO_REFUSED_FRONTEND);
	complain(d, d->frontend->name, what);
	d->status |= STATUS_NEEDS_RESET;
	header(d)->status = d->status;
	(void)atomic_fetch_or(&d->interrupt_status, INT_CONFIG);
	arch_irq_raise(d->cfg->irq);
}

static void backend_refused(struct vcpu *v, struct vdev *d, const char *what)
{
	vcpu_count(v, STAT_VIRTIO_REFUSED_BACKEND);
	complain(d, d->backend, what);
}

/* One descriptor. */
struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/*
 * What a walk does with each buffer: nothing (slot 0), copy the readable ones into the slot
 * (to_slot), or the slot's written bytes into the writable ones; or, trusted (segments), list
 * every buffer in the slot.
 */
struct walk {
	uintptr_t slot;
	bool to_slot;
	uint32_t from;          /* to the chain: the written bytes' start in the slot ... */
	uint32_t written;       /* ... and how many */
	uint32_t readable;      /* out: the chain's bytes of each kind */
	uint32_t writable;
	uint32_t copied;        /* to the chain: bytes copied */
	bool segments;
	uint64_t to_window;     /* segments: a guest address + this = the backend's */
	uint32_t count;         /* segments listed */
};

/* One buffer of a chain (at guest address ipa, here at buf), its bytes moved as the walk says. */
static void walk_buffer(struct walk *w, bool writable, uintptr_t buf, uint64_t ipa, uint32_t len)
{
	if (w->segments) {
		struct vio_segment *seg = (struct vio_segment *)(w->slot + VIO_SEGMENTS_AT +
								  ((uintptr_t)w->count * sizeof(struct vio_segment)));
		*seg = (struct vio_segment){ ipa + w->to_window, len, writable ? VIO_SEG_WRITABLE : 0u };
		w->count++;
		if (writable)
			w->writable += len;
		else
			w->readable += len;
		return;
	}
	if (!writable) {
		if (w->to_slot && (len != 0u))
			(void)memcpy((uint8_t *)(w->slot + w->readable), (const uint8_t *)buf, len);
		w->readable += len;
	} else {
		uint32_t left = w->written - w->copied;
		uint32_t n = (len < left) ? len : left;
		if (!w->to_slot && (n != 0u))
			(void)memcpy((uint8_t *)buf, (const uint8_t *)(w->slot + w->from + w->copied), n);
		w->copied += n;
		w->writable += len;
	}
}

/*
 * Walk the chain from `head` of queue q: at most num descriptors, none indirect, the readable
 * ones first, every buffer the frontend's RAM, in all at most a slot.  False (nothing more
 * copied) at the first broken rule.
 */
static bool walk_chain(const struct vdev *d, const struct vq *q, uint32_t head, struct walk *w)
{
	uint32_t idx = head;
	uint64_t total = 0;
	bool writing = false;

	w->readable = 0;
	w->writable = 0;
	w->copied = 0;
	w->count = 0;
	for (uint32_t n = 0u; n < q->num; n++) {
		uintptr_t at;
		uintptr_t buf;
		if (!frontend_ram(d, q->desc + ((uint64_t)idx * DESC_SIZE), DESC_SIZE, &at))
			return false;
		/* Copied once: the frontend may change it meanwhile. */
		struct desc e = *(const struct desc *)at;
		bool writable = (e.flags & DESC_F_WRITE) != 0u;
		total += e.len;
		if ((e.flags & DESC_F_INDIRECT) || (writing && !writable) || total > d->shape.slot_size ||
		    !frontend_ram(d, e.addr, e.len, &buf))
			return false;
		writing = writable;
		walk_buffer(w, writable, buf, e.addr, e.len);
		if (!(e.flags & DESC_F_NEXT))
			return true;
		idx = e.next;
		if (idx >= q->num)
			return false;
	}
	return false; /* more descriptors than the queue has: a loop */
}

static bool driver_ok(const struct vdev *d)
{
	uint32_t live = STATUS_FEATURES_OK | STATUS_DRIVER_OK;

	return (d->status & (live | STATUS_NEEDS_RESET)) == live;
}

/*
 * Complete one request: the chain's writable buffers (copy mode; in segments mode the backend
 * wrote them, `written` bytes, checked against the chain's room), the used ring, InterruptStatus.
 */
static void complete(struct vcpu *v, struct vdev *d, uint32_t qi, uint32_t head, uint32_t written)
{
	struct vq *q = &d->q[qi];
	struct walk w = { slot_of(d, qi, head), false, q->readable[head], written, 0, 0, written,
			  false, 0, 0 };
	uintptr_t used;

	q->outstanding &= ~(1ULL << head);
	if (!q->ready || !frontend_ram(d, q->device, 4u + (8u * (uint64_t)q->num), &used) ||
	    (!d->segments && !walk_chain(d, q, head, &w))) {
		frontend_refused(v, d, "changed a chain it had posted");
		return;
	}
	struct used_elem *ring = (struct used_elem *)(used + 4u);
	ring[q->used_idx % q->num] = (struct used_elem){ head, w.copied };
	q->used_idx++;
	store16_release(used + 2u, q->used_idx);
	(void)atomic_fetch_or(&d->interrupt_status, INT_USED);
	vcpu_count(v, STAT_VIRTIO_COMPLETION);
}

/* Whether completion c names an outstanding request that has room for what it wrote. */
static bool completion_ok(struct vcpu *v, struct vdev *d, const struct vio_completion *c)
{
	if (c->epoch != d->epoch || c->queue >= d->shape.queues || c->head >= d->shape.queue_size ||
	    !(d->q[c->queue].outstanding & (1ULL << c->head))) {
		backend_refused(v, d, "completed no outstanding request");
		return false;
	}
	if (c->written > d->q[c->queue].writable[c->head]) {
		backend_refused(v, d, "wrote more than the request has room for");
		return false;
	}
	return true;
}

/* The completions the backend posted since the last look, taken on the frontend's core. */
static void take_completions(struct vcpu *v, struct vdev *d)
{
	uint32_t entries = d->shape.queues * d->shape.queue_size;
	uint32_t cons = atomic_load_explicit(&d->comp_cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(ring_index(d, VIO_COMPLETIONS, VIO_RING_PROD),
					     memory_order_acquire);
	uint32_t n = prod - cons;

	if (n == 0u)
		return;
	if (n > entries) {
		backend_refused(v, d, "moved its completion ring past its entries");
		n = 0;
	}
	/* A frontend that breaks a rule meanwhile stops it: the rest goes with its reset. */
	for (uint32_t i = 0u; (i < n) && driver_ok(d); i++) {
		struct vio_completion c = *(const struct vio_completion *)ring_entry(d, VIO_COMPLETIONS, cons + i);
		uint32_t age = d->epoch - c.epoch;
		if ((age != 0u) && (age < 0x80000000u))
			continue; /* a request from before the last reset */
		if (completion_ok(v, d, &c))
			complete(v, d, c.queue, c.head, c.written);
	}
	atomic_store_explicit(&d->comp_cons, prod, memory_order_release);
	atomic_store_explicit(ring_index(d, VIO_COMPLETIONS, VIO_RING_CONS), prod, memory_order_release);
}

/* Post one chain: its readable bytes (or, trusted, its scatter list) into its slot, a request. */
static bool post(struct vcpu *v, struct vdev *d, uint32_t qi, uint32_t head)
{
	struct vq *q = &d->q[qi];
	struct walk w = { slot_of(d, qi, head), true, 0, 0, 0, 0, 0, d->segments, d->to_window, 0 };

	if (head >= q->num || (q->outstanding & (1ULL << head))) {
		frontend_refused(v, d, "posted a head that is not free");
		return false;
	}
	if (!walk_chain(d, q, head, &w)) {
		frontend_refused(v, d, "posted a chain outside the rules");
		return false;
	}
	if (d->segments)
		*(uint32_t *)w.slot = w.count;
	struct vio_request r = { (uint16_t)qi, (uint16_t)head, w.readable, w.writable, d->epoch };
	*(struct vio_request *)ring_entry(d, VIO_REQUESTS, d->req_prod) = r;
	d->req_prod++;
	atomic_store_explicit(ring_index(d, VIO_REQUESTS, VIO_RING_PROD), d->req_prod, memory_order_release);
	q->outstanding |= 1ULL << head;
	q->readable[head] = w.readable;
	q->writable[head] = w.writable;
	vcpu_count(v, STAT_VIRTIO_REQUEST);
	return true;
}

/* QueueNotify: the queue's new chains, at most a queue's worth, then one ring of the backend. */
static void notify(struct vcpu *v, struct vdev *d, uint32_t qi)
{
	uint32_t entries = d->shape.queues * d->shape.queue_size;
	uint32_t posted = 0;
	uintptr_t avail;

	vcpu_count(v, STAT_VIRTIO_NOTIFY);
	if (!driver_ok(d) || qi >= d->shape.queues || !d->q[qi].ready)
		return;
	struct vq *q = &d->q[qi];
	if (!frontend_ram(d, q->driver, 4u + (2u * (uint64_t)q->num), &avail))
		return;
	const uint16_t *ring = (const uint16_t *)(avail + 4u);
	uint16_t pending = (uint16_t)(load16_acquire(avail + 2u) - q->last_avail);
	if (pending > q->num) {
		frontend_refused(v, d, "moved its available ring past its entries");
		return;
	}
	bool more = true;
	for (uint32_t i = 0u; more && (i < pending); i++) {
		uint32_t cons = atomic_load_explicit(ring_index(d, VIO_REQUESTS, VIO_RING_CONS),
						     memory_order_relaxed);
		/* The backend has not taken enough: the rest at the next notify. */
		more = (d->req_prod - cons) < entries;
		if (more)
			more = post(v, d, qi, ring[q->last_avail % q->num]);
		if (more) {
			q->last_avail++;
			posted++;
		}
	}
	if (posted != 0u)
		ivshmem_ring(d->channel, 0, d->ch->member[0].irq);
	take_completions(v, d);
}

static void reset_queues(struct vdev *d)
{
	for (uint32_t i = 0; i < MAX_QUEUES; i++) {
		struct vq *q = &d->q[i];
		q->num = d->shape.queue_size;
		q->ready = false;
		q->desc = 0;
		q->driver = 0;
		q->device = 0;
		q->last_avail = 0;
		q->used_idx = 0;
		q->outstanding = 0;
	}
}

/* Status 0, or the frontend's restart: a new epoch, nothing outstanding, no interrupt. */
static void reset_device(struct vdev *d)
{
	struct vio_header *h = header(d);

	d->status = 0;
	d->device_features_sel = 0;
	d->driver_features_sel = 0;
	d->queue_sel = 0;
	d->driver_features = 0;
	d->logged = 0;
	d->epoch++;
	reset_queues(d);
	atomic_store(&d->interrupt_status, 0u);
	d->generation = atomic_load_explicit((_Atomic uint32_t *)&h->config_generation, memory_order_relaxed);
	h->status = 0;
	h->driver_features = 0;
	atomic_store_explicit((_Atomic uint32_t *)&h->epoch, d->epoch, memory_order_release);
}

static void write_status(struct vdev *d, uint32_t value)
{
	if (value == 0u) {
		reset_device(d);
		return;
	}
	uint32_t status = (value & 0xffu & ~STATUS_NEEDS_RESET) | (d->status & STATUS_NEEDS_RESET);
	if ((status & STATUS_FEATURES_OK) && !(d->status & STATUS_FEATURES_OK) &&
	    ((d->driver_features & ~d->features) || !(d->driver_features & F_VERSION_1)))
		status &= ~STATUS_FEATURES_OK; /* the driver reads it back and gives up */
	if ((status & STATUS_DRIVER_OK) && !(d->status & STATUS_DRIVER_OK))
		d->generation = header(d)->config_generation;
	d->status = status;
	header(d)->status = status;
	if (status & STATUS_FEATURES_OK)
		header(d)->driver_features = d->driver_features;
}

/* QueueReady: the queue's size and rings, checked once here and again at every use. */
static void write_ready(struct vcpu *v, struct vdev *d, struct vq *q, uint32_t value)
{
	uintptr_t at;

	if (!(value & 1u)) {
		q->ready = false;
		return;
	}
	if (q->num == 0u || q->num > d->shape.queue_size || (q->num & (q->num - 1u)) ||
	    !IS_ALIGNED(q->desc, 16u) || !IS_ALIGNED(q->driver, 2u) || !IS_ALIGNED(q->device, 4u) ||
	    !frontend_ram(d, q->desc, (uint64_t)DESC_SIZE * q->num, &at) ||
	    !frontend_ram(d, q->driver, 6u + (2u * (uint64_t)q->num), &at) ||
	    !frontend_ram(d, q->device, 6u + (8u * (uint64_t)q->num), &at)) {
		frontend_refused(v, d, "set up a queue outside its RAM");
		return;
	}
	q->ready = true;
	q->last_avail = 0;
	q->used_idx = 0;
}

static void set_half(uint64_t *reg, bool high, uint32_t value)
{
	*reg = high ? ((*reg & 0xffffffffULL) | ((uint64_t)value << 32)) :
		      ((*reg & ~0xffffffffULL) | value);
}

static void write_reg(struct vcpu *v, struct vdev *d, uint32_t reg, uint32_t value)
{
	struct vq *q = (d->queue_sel < d->shape.queues) ? &d->q[d->queue_sel] : NULL;
	/* A queue's setup may change only while it is not ready. */
	struct vq *setup = ((q != NULL) && !q->ready) ? q : NULL;

	switch (reg) {
	case REG_DEVICE_FEATURES_SEL:
		d->device_features_sel = value;
		break;
	case REG_DRIVER_FEATURES:
		if (d->driver_features_sel < 2u && !(d->status & STATUS_FEATURES_OK))
			set_half(&d->driver_features, d->driver_features_sel == 1u, value);
		break;
	case REG_DRIVER_FEATURES_SEL:
		d->driver_features_sel = value;
		break;
	case REG_QUEUE_SEL:
		d->queue_sel = value;
		break;
	case REG_QUEUE_NUM:
		if (setup)
			setup->num = value;
		break;
	case REG_QUEUE_READY:
		if (q)
			write_ready(v, d, q, value);
		break;
	case REG_QUEUE_NOTIFY:
		notify(v, d, value);
		break;
	case REG_INTERRUPT_ACK:
		(void)atomic_fetch_and(&d->interrupt_status, ~value);
		break;
	case REG_STATUS:
		write_status(d, value);
		break;
	case REG_QUEUE_DESC_LOW:
	case REG_QUEUE_DESC_HIGH:
		if (setup)
			set_half(&setup->desc, reg == REG_QUEUE_DESC_HIGH, value);
		break;
	case REG_QUEUE_DRIVER_LOW:
	case REG_QUEUE_DRIVER_HIGH:
		if (setup)
			set_half(&setup->driver, reg == REG_QUEUE_DRIVER_HIGH, value);
		break;
	case REG_QUEUE_DEVICE_LOW:
	case REG_QUEUE_DEVICE_HIGH:
		if (setup)
			set_half(&setup->device, reg == REG_QUEUE_DEVICE_HIGH, value);
		break;
	default:
		break; /* read-only or absent: ignored */
	}
}

static uint32_t read_reg(struct vcpu *v, struct vdev *d, uint32_t reg)
{
	const struct vq *q = (d->queue_sel < d->shape.queues) ? &d->q[d->queue_sel] : NULL;
	uint32_t generation = header(d)->config_generation;

	switch (reg) {
	case REG_MAGIC:
		return MMIO_MAGIC;
	case REG_VERSION:
		return MMIO_VERSION;
	case REG_DEVICE_ID:
		return d->cfg->device_id;
	case REG_VENDOR_ID:
		return VENDOR_TERN;
	case REG_DEVICE_FEATURES:
		return d->device_features_sel < 2u ?
		       (uint32_t)(d->features >> (32u * d->device_features_sel)) : 0u;
	case REG_QUEUE_NUM_MAX:
		return (q != NULL) ? d->shape.queue_size : 0u;
	case REG_QUEUE_READY:
		return ((q != NULL) && q->ready) ? 1u : 0u;
	case REG_INTERRUPT_STATUS:
		if (driver_ok(d)) {
			take_completions(v, d);
			if (generation != d->generation) {
				d->generation = generation;
				(void)atomic_fetch_or(&d->interrupt_status, INT_CONFIG);
			}
		}
		return atomic_load(&d->interrupt_status);
	case REG_STATUS:
		return d->status;
	case REG_CONFIG_GENERATION:
		return generation;
	default:
		return 0u;
	}
}

static enum mmio_result transport_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
					 uint64_t *value, const void *ctx)
{
	/* cppcheck-suppress misra-c2012-11.5 ; the device's index, as virtio_partition_init added it */
	const uint32_t *index = ctx;
	struct vdev *d = &vdevs[*index];

	if (offset >= VIRTIO_MMIO_SIZE) {
		if (!write)
			*value = 0; /* the rest of a slot's page */
		return MMIO_DONE;
	}
	if (offset >= REG_CONFIG) {
		/* The backend's config space: little-endian, read as it lies; writes ignored. */
		if (!write) {
			const uint8_t *config = (const uint8_t *)(d->mem + VIO_CONFIG);
			uint64_t bytes = 0;
			for (uint32_t i = 0u; i < size; i++)
				bytes |= (uint64_t)config[(offset - REG_CONFIG) + i] << (8u * i);
			*value = bytes;
		}
		return MMIO_DONE;
	}
	if (size != 4u)
		return MMIO_ABORT; /* the registers are 32-bit */
	spin_lock(&d->lock);
	if (write)
		write_reg(v, d, (uint32_t)offset, (uint32_t)*value);
	else
		*value = read_reg(v, d, (uint32_t)offset);
	spin_unlock(&d->lock);
	return MMIO_DONE;
}

/*
 * A network device's MAC before its backend has written one (VIO_NET_MAC_*): a frontend may
 * read the config space first, and Linux's virtio_net refuses to bring up an interface whose
 * address is zero.
 */
static void default_mac(const char *name, uint8_t *mac)
{
	uint64_t h = VIO_NET_MAC_FNV_BASIS;

	for (uint32_t i = 0; i < TERN_NAME_LEN && name[i] != '\0'; i++)
		h = (h ^ (uint8_t)name[i]) * VIO_NET_MAC_FNV_PRIME;
	mac[0] = VIO_NET_MAC_FIRST;
	for (uint32_t i = 1; i < 6u; i++)
		mac[i] = (uint8_t)(h >> (8u * (i - 1u)));
}

/*
 * A vsock device's guest_cid before its backend serves (VIO_VSOCK_CID_FIRST + the device's
 * index): Linux's driver reads it once, at probe, which may come first.
 */
static void default_cid(uint32_t index, uint8_t *config)
{
	uint64_t cid = VIO_VSOCK_CID_FIRST + (uint64_t)index;

	for (uint32_t i = 0; i < 8u; i++)
		config[i] = (uint8_t)(cid >> (8u * i));
}

bool virtio_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			   size_t errlen)
{
	const struct tern_config_virtio *all = config_virtio(cfg);
	uint64_t size = platform.virtio_stride > VIRTIO_MMIO_SIZE ? platform.virtio_stride : VIRTIO_MMIO_SIZE;

	frontend_of[p->index] = 0;
	for (uint32_t i = 0; i < cfg->num_virtio; i++) {
		const struct tern_config_virtio *rec = &all[i];
		if (rec->frontend != p->index)
			continue;
		struct vdev *d = &vdevs[i];
		const struct tern_config_channel *ch = &config_channels(cfg)[rec->channel];
		(void)memset(d, 0, sizeof(*d));
		d->cfg = rec;
		d->ch = ch;
		d->fe = p->cfg;
		d->backend = cfg->partition[rec->backend].name;
		d->frontend = p;
		d->mem = (uintptr_t)ch->hpa;
		d->channel = rec->channel;
		(void)virtio_shape_of(rec->device_id, &d->shape);
		d->features = features_of(rec->device_id);
		spin_lock_init(&d->lock);
		struct vio_header *h = header(d);
		h->magic = VIO_MAGIC;
		h->version = VIO_VERSION;
		h->device_id = rec->device_id;
		h->num_queues = d->shape.queues;
		h->queue_size = d->shape.queue_size;
		h->slot_size = d->shape.slot_size;
		h->device_features = d->features;
		uint64_t window = 0;
		d->segments = (rec->flags & TERN_VF_BACKEND_TRUSTED) &&
			      virtio_window(&cfg->partition[rec->backend], p->cfg, &window);
		d->to_window = window - p->cfg->ram_ipa; /* wraps: added back to a guest address */
		h->data_mode = d->segments ? VIO_MODE_SEGMENTS : VIO_MODE_COPY;
		h->window_ipa = d->segments ? window : 0u;
		h->window_size = d->segments ? p->cfg->ram_size : 0u;
		if (rec->device_id == TERN_VIRTIO_NET)
			default_mac(rec->name, (uint8_t *)(d->mem + VIO_CONFIG));
		if (rec->device_id == TERN_VIRTIO_VSOCK)
			default_cid(i, (uint8_t *)(d->mem + VIO_CONFIG));
		atomic_store(ring_index(d, VIO_REQUESTS, VIO_RING_PROD), 0u);
		atomic_store(ring_index(d, VIO_COMPLETIONS, VIO_RING_CONS), 0u);
		d->epoch = UINT32_MAX; /* the reset makes it 0 */
		reset_device(d);
		d->irq_first = arch_irq_hypervisor_first(p, rec->irq);
		frontend_of[p->index] |= 1u << i;
		device_of_channel[rec->channel] = i + 1u;
		if (!mmio_add(p, rec->mmio_ipa, size, transport_access, &vdev_index[i], err, errlen))
			return false;
	}
	return true;
}

void virtio_backend_rang(uint32_t c)
{
	/* The config check gave every frontend member a device, set up before any vCPU ran. */
	if (c >= TERN_MAX_CHANNELS || device_of_channel[c] == 0u)
		return;
	struct vdev *d = &vdevs[device_of_channel[c] - 1u];

	atomic_store_explicit(&d->rung, 1u, memory_order_release);
	if (d->irq_first)
		arch_irq_raise(d->cfg->irq);
	else
		partition_request(d->frontend, PARTITION_REQ_VIRTIO);
}

bool virtio_irq_taken(struct vcpu *v, uint32_t irq)
{
	for (uint32_t bits = frontend_of[v->partition->index]; bits != 0u; bits &= bits - 1u) {
		struct vdev *d = &vdevs[__builtin_ctz(bits)];
		if (d->cfg->irq != irq)
			continue;
		if (atomic_exchange_explicit(&d->rung, 0u, memory_order_acquire)) {
			spin_lock(&d->lock);
			take_completions(v, d);
			spin_unlock(&d->lock);
		}
		return atomic_load(&d->interrupt_status) != 0u;
	}
	return true;
}

void virtio_take_rung(struct vcpu *v)
{
	for (uint32_t bits = frontend_of[v->partition->index]; bits != 0u; bits &= bits - 1u) {
		struct vdev *d = &vdevs[__builtin_ctz(bits)];
		if (!atomic_exchange_explicit(&d->rung, 0u, memory_order_acquire))
			continue;
		spin_lock(&d->lock);
		take_completions(v, d);
		spin_unlock(&d->lock);
		if (atomic_load(&d->interrupt_status) != 0u)
			arch_irq_raise(d->cfg->irq);
	}
}

void virtio_reset(const struct partition *p)
{
	for (uint32_t bits = frontend_of[p->index]; bits != 0u; bits &= bits - 1u) {
		struct vdev *d = &vdevs[__builtin_ctz(bits)];
		spin_lock(&d->lock);
		reset_device(d);
		spin_unlock(&d->lock);
	}
}

bool virtio_line(const struct partition *p, uint32_t irq)
{
	for (uint32_t bits = frontend_of[p->index]; bits != 0u; bits &= bits - 1u) {
		struct vdev *d = &vdevs[__builtin_ctz(bits)];
		if (d->cfg->irq != irq)
			continue;
		return atomic_load(&d->interrupt_status) != 0u ||
		       atomic_load(ring_index(d, VIO_COMPLETIONS, VIO_RING_PROD)) !=
		       atomic_load(&d->comp_cons);
	}
	return false;
}
