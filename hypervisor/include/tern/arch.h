/* SPDX-License-Identifier: MIT */
/*
 * What the generic core asks of an architecture.  Each arch/<isa>/ tree
 * implements all of it; nothing else of the arch is visible to the core.
 */
#ifndef TERN_ARCH_H
#define TERN_ARCH_H

#include <tern/mmio.h>
#include <tern/stats.h>
#include <tern/types.h>

struct partition;
struct tern_config;
struct vcpu;

unsigned arch_cpu_id(void);
/* Bring a core online; it arrives in cpu_idle(). */
bool arch_cpu_start(unsigned pcpu);
/* Drop whatever this core was doing (its stack included) and enter cpu_idle(). */
__attribute__((noreturn)) void arch_cpu_return_to_idle(void);
/* Make another core look at its vCPU's requests. */
void arch_cpu_kick(unsigned pcpu);
/* Spin-wait politely (a cross-core wait's loop body). */
void arch_cpu_relax(void);
/*
 * Sleep until something may have changed for this core (a kick or an interrupt), or until the
 * counter reaches `deadline` (0: no deadline).
 */
void arch_cpu_idle_wait(uint64_t deadline);
/*
 * Sleep on the core of `v`, which is inside the hypervisor at a kick, its guest's state kept
 * as the exit left it, until a kick (or the console's input, if this is the console core).
 * The guest's own interrupts that arrive meanwhile stay pending for it, and do not wake the
 * core: they are delivered once it returns to the guest.
 */
void arch_vcpu_wait(struct vcpu *v);

/*
 * Confine DMA, once, before any partition is built: if the description says the board has
 * an IOMMU, take it.  A device behind it then reaches the RAM of the partition that owns it,
 * at that partition's addresses, and nothing else.
 */
bool arch_iommu_init(const struct tern_config *cfg, char *err, size_t errlen);
/* Whether the board has an IOMMU the hypervisor knows how to take. */
bool arch_iommu_present(void);
/* Report the DMA the IOMMU refused since the last call: counted per partition, first few logged. */
void arch_iommu_poll(void);
/* The same, if `p` owns devices behind the IOMMU (its end reports its DMA faults). */
void arch_iommu_poll_partition(struct partition *p);

/*
 * Where a device's MSI to `guest_addr` (an address of partition p's map: one of its
 * interrupt controller's doorbells) must go on the board; false if the address is none of
 * the partition's.  Boards with an emulated ECAM only (platform.h).
 */
bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr);

/*
 * Give partition p the devices the architecture emulates for it (its interrupt controller's
 * frames: mmio_add); false, with the reason in `err`, if it cannot have them.
 */
bool arch_partition_devices(struct partition *p, char *err, size_t errlen);
/* An emulated access done (mmio_trap): a load's value into its register, the guest past it. */
void arch_mmio_complete(struct vcpu *v, const struct mmio_access *a);
/* An emulated register refused the access (MMIO_ABORT, MMIO_MISALIGNED): the guest takes the
 * fault the board's bus raises for it. */
void arch_mmio_bus_fault(struct vcpu *v, const struct mmio_access *a, enum mmio_result why);
/*
 * An access to nothing the partition has: the guest's own bus error if its fault policy says
 * so (partition_fault_to_guest), else the partition is contained (partition_fault).
 */
void arch_mmio_outside(struct vcpu *v, const struct mmio_access *a);

/* The guest-physical addresses a partition's map can cover (stage-2 input range). */
uint64_t arch_ipa_limit(void);

/* Build the partition's address space. */
bool arch_partition_init(struct partition *p, char *err, size_t errlen);
/*
 * Map [pa, pa + size) at `ipa` in the partition's map (built by arch_partition_init): memory
 * it shares with other partitions (a channel), normal cacheable memory, never executable,
 * read-write or read-only.  At boot; false, with the reason in `err`, if it cannot be mapped.
 */
bool arch_partition_map_shared(struct partition *p, ipaddr_t ipa, paddr_t pa, uint64_t size,
			       bool writable, char *err, size_t errlen);
/*
 * Let the hypervisor itself read and write [pa, pa + size) of board RAM, memory it shares with
 * partitions (a VirtIO device's channel: virtio_mmio.c).  At boot, before any partition is
 * created; false if it cannot be mapped.
 */
bool arch_hyp_map_shared(paddr_t pa, uint64_t size);
/* Set a board interrupt pending, as its device would (a channel's doorbell). */
void arch_irq_raise(uint32_t irq);
/*
 * Whether partition p's interrupt `irq` (a VirtIO slot's: no device drives it) can reach its
 * guest only through the hypervisor's C path on the vCPU's core, which asks
 * virtio_irq_taken() first: true on arm64 for a trap-and-inject partition (the interrupt
 * then never takes the vector's fast path); false where the guest takes it from the
 * interrupt controller itself (direct delivery) or where the port has no such path
 * (riscv64).  At boot, before any vCPU runs.
 */
bool arch_irq_hypervisor_first(struct partition *p, uint32_t irq);
/* Enter the guest on this core at `entry` with x0/a0 = `context`. */
__attribute__((noreturn)) void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context);
/* Release what the vCPU holds on this core (interrupts, timers) after it left the guest. */
void arch_vcpu_quiesce(struct vcpu *v);
/*
 * A vCPU switch's halves, on the vCPU's own core: save what the guest left in the core (its
 * registers, timer and interrupt-controller state, the frame at the top of the stack) into
 * the vCPU's saved context (which the port keeps beside struct vcpu) after it exited;
 * restore it before it enters again.  Not on any fast path.
 */
void arch_vcpu_save(struct vcpu *v);
void arch_vcpu_restore(struct vcpu *v);
/*
 * A shared core (cpu_is_shared): enter v where its saved context left it (arch_vcpu_save),
 * with the per-core caches arch_vcpu_run would build, the running-vCPU pointer set, and a
 * local invalidation of its VMID's guest translations if another vCPU of its partition ran on
 * this core since v last did.
 */
__attribute__((noreturn)) void arch_vcpu_resume(struct vcpu *v);
/*
 * A shared core's scheduling event at counter value `deadline` (0: none) for while a guest
 * runs: when it comes, the arch calls sched_timer_expired().  Idle, arch_cpu_idle_wait's
 * deadline is the event.
 */
void arch_sched_timer(uint64_t deadline);
/*
 * A vCPU whose context is saved: whether a WFI of it would end now (an interrupt pending and
 * enabled at its virtual interrupt controller, posted or saved, or its timer due), whatever
 * its guest's own interrupt masks.
 */
bool arch_vcpu_wake_pending(const struct vcpu *v);
/* A vCPU whose context is saved: the counter value its enabled guest timer fires at, or UINT64_MAX. */
uint64_t arch_vcpu_timer_deadline(const struct vcpu *v);
/* Counters the arch keeps outside the generic array (fast paths). */
uint64_t arch_vcpu_stat(const struct vcpu *v, enum stat_id id);

/*
 * Whether a partition with direct interrupt delivery may have its WFI trapped: the
 * hypervisor then waits for what the guest's own controller state would wake it with.
 */
bool arch_direct_wfi_trap(void);
/*
 * How many direct-delivery vCPUs one core can hold when vCPUs share it, each with interrupt
 * state of its own in the interrupt controller (config_limits.shared_direct_vcpus); 0 where
 * direct delivery hands the guest the core's own.
 */
uint32_t arch_shared_direct_vcpus(void);
/*
 * Why vCPU v may not move to another core of its pool (vcpu-pin, pool-migrate), or NULL:
 * interrupt state of its own that the port keeps on its core (riscv64: a trap-less vCPU's
 * guest interrupt file).  vcpu-pin and pool-migrate refuse with it.
 */
const char *arch_vcpu_can_move(const struct vcpu *v);

/*
 * Put the partition's pass-through interrupts in their reset state: disabled, nothing pending
 * or active, routed to vCPU 0.  At boot, when the partition ends and before it restarts.
 */
void arch_partition_irqs_reset(struct partition *p);

/* Take a board interrupt in the hypervisor (the console's input) on core `pcpu`. */
void arch_hyp_irq_route(uint32_t irq, unsigned pcpu);

/* Page-table pages the hypervisor has handed out, and how many it has: it allocates only at boot. */
void arch_table_pages(uint32_t *used, uint32_t *total);

/*
 * Make freshly copied guest memory visible to the guest and to instruction fetch on this core
 * (each core drops its own stale instructions when it enters a vCPU).
 */
void arch_sync_guest_memory(paddr_t pa, uint64_t size);
uint64_t arch_counter(void);
uint64_t arch_counter_freq(void);

__attribute__((noreturn)) void arch_board_off(void);

#endif
