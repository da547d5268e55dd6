/* SPDX-License-Identifier: MIT */
/*
 * VirtIO devices served by another partition: the frontend partition sees a virtio-mmio
 * (version 2) transport at one of the board's slots, emulated here; the backend partition sees
 * requests in a channel (tern/virtio_channel.h).  The hypervisor walks the frontend's
 * virtqueues on the frontend's own core, checks every descriptor against the frontend's RAM,
 * and copies the data between the chains' buffers and the channel's slots.
 * docs/design.md, "VirtIO devices served by another partition".
 */
#ifndef TERN_VIRTIO_MMIO_H
#define TERN_VIRTIO_MMIO_H

#include <tern/config_abi.h>
#include <tern/types.h>
#include <tern/virtio_channel.h>

struct partition;
struct vcpu;

/* The transport's register window (a riscv64 slot's page is larger: the rest reads 0). */
#define VIRTIO_MMIO_SIZE 0x200u

/* A device type's fixed shape (tern/virtio_channel.h's table). */
struct virtio_shape {
	uint32_t queues;
	uint32_t queue_size;
	uint32_t slot_size;
};

/*
 * The shape of device type `device_id` (TERN_VIRTIO_*); false for one Tern does not serve.
 * Inline: the config check (config.c) asks it without the transport.
 */
static inline bool virtio_shape_of(uint32_t device_id, struct virtio_shape *out)
{
	if (device_id == TERN_VIRTIO_BLK)
		*out = (struct virtio_shape){ VIO_BLK_QUEUES, VIO_BLK_QUEUE_SIZE, VIO_BLK_SLOT_SIZE };
	else if (device_id == TERN_VIRTIO_NET)
		*out = (struct virtio_shape){ VIO_NET_QUEUES, VIO_NET_QUEUE_SIZE, VIO_NET_SLOT_SIZE };
	else if (device_id == TERN_VIRTIO_CONSOLE)
		*out = (struct virtio_shape){ VIO_CONSOLE_QUEUES, VIO_CONSOLE_QUEUE_SIZE,
					      VIO_CONSOLE_SLOT_SIZE };
	else if (device_id == TERN_VIRTIO_VSOCK)
		*out = (struct virtio_shape){ VIO_VSOCK_QUEUES, VIO_VSOCK_QUEUE_SIZE,
					      VIO_VSOCK_SLOT_SIZE };
	else
		return false;
	return true;
}
/*
 * A trusted backend's window onto its frontend's RAM: the backend's TERN_RF_PARTITION_RAM
 * region holding exactly the frontend's RAM; where it is in the backend's map in *ipa (if
 * not NULL).  Inline: the config check asks it too.
 */
static inline bool virtio_window(const struct tern_config_partition *backend,
				 const struct tern_config_partition *frontend, uint64_t *ipa)
{
	for (uint32_t r = 0; r < backend->num_regions && r < TERN_MAX_REGIONS; r++) {
		const struct tern_config_region *g = &backend->region[r];
		if (g->flags == TERN_RF_PARTITION_RAM && g->hpa == frontend->ram_hpa &&
		    g->size == frontend->ram_size) {
			if (ipa != NULL)
				*ipa = g->ipa;
			return true;
		}
	}
	return false;
}

/*
 * Give partition p the transports of the devices it is the frontend of (mmio_add) and write
 * each channel's header.  At boot, after its channels; false, with the reason in `err`.
 */
bool virtio_partition_init(struct partition *p, const struct tern_config *cfg, char *err,
			   size_t errlen);
/*
 * The backend of the device served through channel c rang the frontend (its member 1): the
 * completions it posted are taken on a core of the frontend, so that they reach the driver's
 * used ring even while it polls with its interrupts masked (virtio_console's output does), and
 * the device's interrupt follows.  Where the slot's interrupt goes through the hypervisor
 * anyway (arch_irq_hypervisor_first) it is raised at once and its entry takes them
 * (virtio_irq_taken): one entry on the frontend's core, not a kick and then the interrupt.
 * Elsewhere a request and a kick (partition_request, then virtio_take_rung there).  Nothing
 * of the copy runs on the ringing core.  Lock-free.
 */
void virtio_backend_rang(uint32_t c);
/* On a core of the frontend partition, after a PARTITION_REQ_VIRTIO: the rung devices' completions. */
void virtio_take_rung(struct vcpu *v);
/*
 * On the core of frontend vCPU v, the board interrupt `irq` taken by the hypervisor before its
 * guest (arch_irq_hypervisor_first): if it is one of v's devices', the completions its backend
 * rang for are taken; whether the guest is to get it (InterruptStatus not 0; true for any
 * other interrupt).
 */
bool virtio_irq_taken(struct vcpu *v, uint32_t irq);
/* The partition starts again: each of its devices is reset (a new epoch), as by Status 0. */
void virtio_reset(const struct partition *p);
/*
 * Whether p's device whose interrupt is board interrupt `irq` asserts it: InterruptStatus is
 * not 0, or completions wait in its channel.  The input of a slot interrupt the guest made
 * level-sensitive, which has no wire of its own.
 */
bool virtio_line(const struct partition *p, uint32_t irq);

#endif
