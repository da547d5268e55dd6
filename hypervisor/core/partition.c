/* SPDX-License-Identifier: MIT */
/*
 * Partition and vCPU life cycle: boot, vCPU power state (the firmware interface's), ending
 * (off, stopped after a fault), restarts from pristine images with their limit and back-off,
 * board power-off when the last partition ends.  The state machine itself is core/power.c;
 * everything here that a guest can set off runs on that partition's own cores and waits only
 * for them.
 */
#include <tern/arch.h>
#include <tern/channel.h>
#include <tern/config.h>
#include <tern/console.h>
#include <tern/fdt.h>
#include <tern/ivshmem.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/pci.h>
#include <tern/platform.h>
#include <tern/power.h>
#include <tern/shared_core.h>
#include <tern/virtio_mmio.h>

/* Why a partition ends (partition_end). */
enum end_reason {
	END_OFF,        /* its guest powered it off (SYSTEM_OFF, the last CPU_OFF) */
	END_STOP,       /* an operator stopped it */
	END_FAULT,      /* contained after a fault: stopped, or restarted by its policy */
	END_RESET,      /* its guest asked for a reset (SYSTEM_RESET): restarted, within its limit */
	END_RESTART,    /* an operator restarted it */
};

/* The back-off doubles while restarts come within this many times its base, up to that. */
#define BACKOFF_SPAN 32u

/*
 * Not cleared at boot, it is large: partition_create clears what the core keeps of each
 * partition there is, the architecture sets its part up field by field.
 */
struct partition partitions[TERN_MAX_PARTITIONS] __attribute__((section(".noinit")));
uint32_t num_partitions;
static struct vcpu *cpu_vcpu[TERN_MAX_CPUS];
static _Atomic uint32_t partitions_running;
struct boot_times boot_times;
/* Never read before written: not cleared at boot. */
static char console_bufs[TERN_MAX_PARTITIONS][CONSOLE_RING_SIZE] __attribute__((section(".noinit")));

struct vcpu *vcpu_of_cpu(unsigned pcpu)
{
	return pcpu < ARRAY_SIZE(cpu_vcpu) ? cpu_vcpu[pcpu] : NULL;
}

void partition_log(struct partition *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	console_log(&p->console, fmt, ap);
	va_end(ap);
}

static uint32_t state_of(const struct partition *p)
{
	return atomic_load(&p->state);
}

static __attribute__((noreturn)) void board_off(void)
{
	arch_iommu_poll(); /* DMA refused since the last partition ended counts too */
	console_flush();
	print_boot_times();
	for (uint32_t i = 0; i < num_partitions; i++)
		partition_print_stats(&partitions[i]);
	shared_cores_print_stats(true);
	tern_log("all partitions ended, board off");
	console_flush();
	arch_board_off();
}

static void partition_ended(void)
{
	if (atomic_fetch_sub(&partitions_running, 1) == 1)
		board_off();
}

/* Leave the guest on this core for good (until a CPU_ON or restart). */
static __attribute__((noreturn)) void vcpu_leave(struct vcpu *v)
{
	struct partition *p = v->partition;

	arch_vcpu_quiesce(v);
	shared_core_left(v);
	power_left(p, v);
	/* A request whose kick found this vCPU on its way out goes to one that stays. */
	if (atomic_load(&p->request) && state_of(p) == PARTITION_RUNNING)
		partition_request(p, 0);
	arch_cpu_return_to_idle();
}

static bool has_pristine(const struct partition *p)
{
	const struct tern_config_partition *c = p->cfg;

	return c->pristine_image_hpa && c->pristine_dtb_hpa &&
	       (!c->initrd_size || c->pristine_initrd_hpa);
}

static uint64_t us_to_ticks(uint64_t us)
{
	return us * arch_counter_freq() / 1000000u;
}

/*
 * When an automatic restart may reload the partition: its back-off doubles for every restart
 * that follows the previous start within BACKOFF_SPAN times the base, up to that span.
 */
static uint64_t backoff_deadline(struct partition *p, uint64_t now)
{
	uint64_t base = us_to_ticks(p->cfg->restart_backoff_us);
	uint64_t span = base * BACKOFF_SPAN;

	if (!base)
		return now;
	if (!p->backoff || now - p->started >= span)
		p->backoff = base;
	else
		p->backoff = p->backoff * 2 < span ? p->backoff * 2 : span;
	return now + p->backoff;
}

/* An automatic restart (after a fault, or the guest's reset), if its limit and images allow. */
static enum partition_state auto_restart(struct partition *p, bool reset)
{
	uint32_t limit = p->cfg->max_restarts;

	if (!has_pristine(p)) {
		/* A reset that cannot happen ends the partition as its guest would: off. */
		partition_log(p, "partition %s: restart needs a pristine image", p->name);
		partition_log(p, "partition %s %s", p->name, reset ? "off" : "stopped");
		return reset ? PARTITION_OFF : PARTITION_STOPPED;
	}
	if (limit && p->auto_restarts >= limit) {
		partition_log(p, "partition %s: restart limit %u reached", p->name, limit);
		partition_log(p, "partition %s stopped", p->name);
		return PARTITION_STOPPED;
	}
	p->auto_restarts++;
	p->restart_at = backoff_deadline(p, arch_counter());
	p->reload_is_reset = reset;
	return PARTITION_RESTARTING;
}

/* What the partition becomes once down, and the line that says so. */
static enum partition_state outcome(struct partition *p, enum end_reason why)
{
	switch (why) {
	case END_FAULT:
		if (p->cfg->fault_policy == TERN_FAULT_RESTART)
			return auto_restart(p, false);
		partition_log(p, "partition %s stopped", p->name);
		return PARTITION_STOPPED;
	case END_RESET:
		return auto_restart(p, true);
	case END_RESTART:
		p->restart_at = arch_counter();
		p->reload_is_reset = true;
		return PARTITION_RESTARTING;
	case END_OFF:
	case END_STOP:
	default:
		partition_log(p, "partition %s off", p->name);
		return PARTITION_OFF;
	}
}

/* Everything of the partition's that outlives its vCPUs: console, DMA, interrupts, devices. */
static void take_down(struct partition *p)
{
	atomic_store(&p->paused, false); /* an operator's pause does not outlive the guest */
	vuart_flush(&p->uart);
	arch_partition_irqs_reset(p); /* its devices' interrupts stay quiet from now on */
	for (uint32_t r = 0; r < p->cfg->num_regions; r++)
		pci_quiesce_range(p->cfg->region[r].hpa, p->cfg->region[r].size);
	arch_iommu_poll_partition(p); /* its DMA faults are reported before its end */
}

/*
 * End the partition from `v`'s core: stop its other vCPUs (only its own cores are waited
 * for), take it down, and either leave it ended or hand it to vCPU 0's core for a restart.
 * `ending`: power_cpu_off already moved it to ENDING.
 */
static __attribute__((noreturn)) void partition_end(struct vcpu *v, enum end_reason why,
						    bool ending)
{
	struct partition *p = v->partition;
	uint32_t kick = 0;

	if (!ending && !power_begin_end(p, v, &kick))
		vcpu_leave(v); /* another of its cores is already ending it */
	for (; kick; kick &= kick - 1)
		arch_cpu_kick(p->vcpu[__builtin_ctz(kick)].pcpu);
	/* Its vCPUs on shared cores that are out of their guest leave at their core's look. */
	while (!power_others_off(p, v)) {
		shared_core_reap(p);
		arch_cpu_relax();
	}
	arch_vcpu_quiesce(v);
	take_down(p);
	enum partition_state to = outcome(p, why);
	shared_core_left(v);
	power_left(p, v);
	power_end(p, to);
	if (to == PARTITION_RESTARTING) {
		if (v->index != 0)
			arch_cpu_kick(p->vcpu[0].pcpu);
	} else {
		if (atomic_load(&p->request))
			arch_cpu_kick(p->vcpu[0].pcpu); /* a request that came meanwhile */
		partition_ended();
	}
	arch_cpu_return_to_idle();
}

/*
 * An operator's pause, on the vCPU's own core: the guest's registers stay where its exit put
 * them (this core's frame, its system registers), so it resumes exactly where it was.  What
 * ends the wait is looked at after every wake-up: unpause, the partition being ended (its
 * other core's stop), or a stop or restart request, which the caller then carries out.
 */
static void vcpu_pause(struct vcpu *v)
{
	struct partition *p = v->partition;

	atomic_store(&v->paused, true);
	while (atomic_load(&p->paused) && !atomic_load(&v->stop) &&
	       !(atomic_load(&p->request) & (PARTITION_REQ_STOP | PARTITION_REQ_RESTART))) {
		/* The console core goes on serving everyone's output and the operator's input. */
		if (v->pcpu == console_core() && console_drain())
			arch_cpu_kick(v->pcpu);
		arch_vcpu_wait(v);
	}
	atomic_store(&v->paused, false);
}

void vcpu_check_requests(struct vcpu *v)
{
	struct partition *p = v->partition;

	/* Most kicks carry interrupt state (arch's): each check here is a plain load first. */
	if (v->pcpu == console_core() && console_drain())
		arch_cpu_kick(v->pcpu); /* the rest after the guest had its turn */
	if (atomic_load_explicit(&p->paused, memory_order_relaxed) ||
	    atomic_load_explicit(&v->paused, memory_order_relaxed) || v->shared) {
		/* On a shared core its pause, and its core's other vCPUs, go through the scheduler. */
		if (v->shared)
			shared_core_kicked(v);
		else
			vcpu_pause(v);
	}
	if (atomic_load_explicit(&v->stop, memory_order_relaxed))
		vcpu_leave(v);
	/* Requests to an ending partition wait for vCPU 0's core to find it ended. */
	if (!atomic_load_explicit(&p->request, memory_order_relaxed) ||
	    state_of(p) != PARTITION_RUNNING)
		return;
	uint32_t request = atomic_exchange(&p->request, 0);
	if (request & PARTITION_REQ_VIRTIO)
		virtio_take_rung(v);
	if (request & PARTITION_REQ_STOP)
		partition_end(v, END_STOP, false); /* an operator's decision, not a containment */
	if (request & PARTITION_REQ_RESTART)
		partition_end(v, END_RESTART, false);
}

void vcpu_act_descheduled(struct vcpu *v)
{
	struct partition *p = v->partition;

	if (atomic_load(&v->stop) || state_of(p) != PARTITION_RUNNING) {
		shared_core_left(v);
		power_left(p, v);
		if (atomic_load(&p->request) && state_of(p) == PARTITION_RUNNING)
			partition_request(p, 0);
		return;
	}
	/* A VirtIO frontend's request is for a vCPU in its guest (and none is in a shared pool). */
	uint32_t request = atomic_fetch_and(&p->request, ~(PARTITION_REQ_STOP | PARTITION_REQ_RESTART));
	if (request & PARTITION_REQ_STOP)
		partition_end(v, END_STOP, false);
	if (request & PARTITION_REQ_RESTART)
		partition_end(v, END_RESTART, false);
}

void partition_request(struct partition *p, uint32_t request)
{
	struct vcpu *target = &p->vcpu[0];

	atomic_fetch_or(&p->request, request);
	/* A running vCPU acts on it at the kick; an ended partition's vCPU 0 core, when idle. */
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (atomic_load(&p->vcpu[i].power) == VCPU_ON) {
			target = &p->vcpu[i];
			break;
		}
	}
	arch_cpu_kick(target->pcpu);
}

void partition_pause(struct partition *p)
{
	atomic_store(&p->paused, true);
	/*
	 * An ON_PENDING vCPU's kick may find its core idle and be spent there: it then runs until
	 * its next kick, and the partition shows as pausing until a second pause kicks it again.
	 */
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (atomic_load(&p->vcpu[i].power) != VCPU_OFF)
			arch_cpu_kick(p->vcpu[i].pcpu);
	}
}

void partition_unpause(struct partition *p)
{
	atomic_store(&p->paused, false);
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (atomic_load(&p->vcpu[i].paused))
			arch_cpu_kick(p->vcpu[i].pcpu);
	}
}

bool partition_pause_complete(const struct partition *p)
{
	if (!atomic_load(&p->paused))
		return false;
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		const struct vcpu *v = &p->vcpu[i];
		if (atomic_load(&v->power) != VCPU_OFF && !atomic_load(&v->paused))
			return false;
	}
	return true;
}

enum power_result vcpu_cpu_on(struct vcpu *caller, uint32_t target, uint64_t entry,
			      uint64_t context)
{
	struct partition *p = caller->partition;
	struct vcpu *t = &p->vcpu[target];
	enum power_result result;

	if (entry < p->cfg->ram_ipa || entry - p->cfg->ram_ipa >= p->cfg->ram_size)
		return POWER_INVALID_ADDRESS;
	result = power_cpu_on(p, t, entry, context);
	if (result == POWER_OK)
		arch_cpu_kick(t->pcpu);
	return result;
}

enum vcpu_power vcpu_power_of(struct vcpu *caller, uint32_t target)
{
	return (enum vcpu_power)atomic_load(&caller->partition->vcpu[target].power);
}

void vcpu_cpu_off(struct vcpu *v)
{
	/* A partition whose every vCPU is off can never run again: it is off. */
	if (power_cpu_off(v->partition, v))
		partition_end(v, END_OFF, true);
	vcpu_leave(v);
}

void partition_system_off(struct vcpu *v)
{
	partition_end(v, END_OFF, false);
}

void partition_system_reset(struct vcpu *v)
{
	partition_end(v, END_RESET, false);
}

void partition_fault(struct vcpu *v, const char *fmt, ...)
{
	struct partition *p = v->partition;
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vcpu_count(v, STAT_FAULT);
	if (state_of(p) == PARTITION_RUNNING)
		partition_log(p, "fault partition=%s vcpu=%u %s", p->name, v->index, what);
	partition_end(v, END_FAULT, false);
}

/*
 * Reported per vCPU, not all: a guest that retries in a loop would otherwise fill its console
 * ring with these instead of its own lines. The counter says how many there were.
 */
#define FAULT_INJECTED_REPORTED 4u

bool partition_fault_to_guest(struct vcpu *v, const char *fmt, ...)
{
	struct partition *p = v->partition;

	if (p->cfg->fault_policy != TERN_FAULT_INJECT)
		return false;
	vcpu_count(v, STAT_FAULT_INJECTED);
	if (v->stats[STAT_FAULT_INJECTED] <= FAULT_INJECTED_REPORTED) {
		char what[160];
		va_list ap;

		va_start(ap, fmt);
		(void)vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		partition_log(p, "injected fault partition=%s vcpu=%u %s", p->name, v->index, what);
	}
	return true;
}

bool partition_maps(const struct partition *p, ipaddr_t ipa)
{
	const struct tern_config_partition *c = p->cfg;

	if (ipa - c->ram_ipa < c->ram_size || channel_maps(p, ipa))
		return true;
	for (uint32_t r = 0; r < c->num_regions; r++) {
		if (ipa - c->region[r].ipa < c->region[r].size)
			return true;
	}
	return false;
}

static void load_pristine(struct partition *p)
{
	const struct tern_config_partition *c = p->cfg;
	void *image = (void *)(uintptr_t)(c->ram_hpa + (c->image_ipa - c->ram_ipa));
	void *dtb = (void *)(uintptr_t)(c->ram_hpa + (c->dtb_ipa - c->ram_ipa));

	/* Guests expect RAM they did not load to start zeroed, as on a cold boot. */
	(void)memset((void *)(uintptr_t)c->ram_hpa, 0, c->ram_size);
	(void)memcpy(image, (const void *)(uintptr_t)c->pristine_image_hpa, c->image_size);
	(void)memcpy(dtb, (const void *)(uintptr_t)c->pristine_dtb_hpa, c->dtb_size);
	if (c->initrd_size)
		(void)memcpy((void *)(uintptr_t)(c->ram_hpa + (c->initrd_ipa - c->ram_ipa)),
			     (const void *)(uintptr_t)c->pristine_initrd_hpa, c->initrd_size);
	arch_sync_guest_memory(c->ram_hpa, c->ram_size);
}

/*
 * vCPU 0's core, idle: carry out what its partition waits for while no vCPU of it runs.
 * Returns the counter time to wake up at for a restart's back-off, or 0.
 */
uint64_t vcpu_housekeeping(struct vcpu *v)
{
	struct partition *p = v->partition;
	uint32_t state = state_of(p);
	uint32_t request = 0;

	if (state == PARTITION_OFF || state == PARTITION_STOPPED || state == PARTITION_RESTARTING)
		request = atomic_exchange(&p->request, 0);
	if ((request & PARTITION_REQ_RESTART) && power_begin_restart(p)) {
		atomic_fetch_add(&partitions_running, 1);
		p->restart_at = arch_counter();
		p->reload_is_reset = false;
		state = PARTITION_RESTARTING;
	} else if (state == PARTITION_RESTARTING) {
		if (request & PARTITION_REQ_STOP) {
			/* An operator's stop during a back-off: it stays down. */
			power_end(p, PARTITION_OFF);
			partition_log(p, "partition %s off", p->name);
			partition_ended();
			return 0;
		}
		if (request & PARTITION_REQ_RESTART)
			p->restart_at = arch_counter();
	}
	if (state != PARTITION_RESTARTING)
		return 0;
	uint64_t now = arch_counter();
	if (now < p->restart_at)
		return p->restart_at;
	load_pristine(p);
	vuart_reset(&p->uart);
	vpci_reset(&p->vpci);
	ivshmem_reset(p);
	virtio_reset(p);
	atomic_fetch_add(&p->restarts, 1);
	partition_log(p, "partition %s %s", p->name, p->reload_is_reset ? "reset" : "restarted");
	p->started = now;
	power_restarted(p, p->cfg->entry_ipa, p->cfg->dtb_ipa);
	return 0;
}

void cpu_idle(unsigned pcpu)
{
	struct vcpu *v = vcpu_of_cpu(pcpu);

	if (cpu_is_shared(pcpu))
		shared_core_loop(pcpu);

	for (;;) {
		uint64_t wake = 0;
		bool more = pcpu == console_core() && console_drain();

		if (v && v->index == 0)
			wake = vcpu_housekeeping(v);
		if (v && power_enter(v->partition, v)) {
			if (more)
				arch_cpu_kick(pcpu); /* the console's rest at the guest's first exit */
			arch_vcpu_run(v, v->entry, v->context);
		}
		if (!more)
			arch_cpu_idle_wait(wake);
	}
}

/* The partition's UART, at the board UART's address, with the board's register model. */
static enum mmio_result uart_access(struct vcpu *v, uint64_t offset, unsigned size, bool write,
				    uint64_t *value, const void *ctx)
{
	(void)ctx;
	return platform.uart_model->access(&v->partition->uart, offset, size, write, value);
}

/*
 * The devices the hypervisor emulates in the partition's map, looked up in this order on
 * every trapped access: the UART, the busiest, first.
 */
static bool partition_devices(struct partition *p, char *err, size_t errlen)
{
	return mmio_add(p, platform.uart_base, platform.uart_model->size, uart_access, NULL, err, errlen) &&
	       arch_partition_devices(p, err, errlen) && vpci_add(p, err, errlen);
}

/* The board's allow-lists, from the platform, for the config check. */
static void board_limits(struct config_limits *lim, struct config_device *devices,
			 uint32_t max_devices, struct config_irq *irqs, uint32_t max_irqs)
{
	uint32_t n = platform.num_devices < max_devices ? platform.num_devices : max_devices;
	uint32_t m = platform.num_device_irqs < max_irqs ? platform.num_device_irqs : max_irqs;

	for (uint32_t i = 0; i < n; i++) {
		devices[i].base = platform.devices[i].base;
		devices[i].size = platform.devices[i].size;
		devices[i].dma = platform.devices[i].flags & PLATFORM_DMA;
		devices[i].ecam = platform.devices[i].flags & PLATFORM_ECAM;
		devices[i].device = platform.devices[i].device;
	}
	for (uint32_t i = 0; i < m; i++)
		irqs[i] = (struct config_irq){ platform.device_irqs[i].id, platform.device_irqs[i].device };
	*lim = (struct config_limits){
		.max_cpus = platform.max_cpus < TERN_MAX_CPUS ? platform.max_cpus : TERN_MAX_CPUS,
		.ram = { platform.ram_base, platform.ram_max },
		.reserved = { platform.hyp_base, platform.hyp_size },
		.ram_ipa = platform.ram_base,
		.ipa_limit = arch_ipa_limit(),
		.devices = devices,
		.num_devices = n,
		.irqs = irqs,
		.num_irqs = m,
		.doorbell_irq_base = platform.doorbell_irq_base,
		.num_doorbell_irqs = platform.num_doorbell_irqs,
		.virtio_base = platform.virtio_base,
		.virtio_stride = platform.virtio_stride,
		.num_virtio_slots = platform.num_virtio_slots,
		.virtio_irq_base = platform.virtio_irq_base,
		.iommu = arch_iommu_present(),
		.direct_wfi_trap = arch_direct_wfi_trap(),
		.shared_direct_vcpus = arch_shared_direct_vcpus(),
	};
}

/*
 * The board's RAM from its base, as the firmware describes it (the tree in RAM, below
 * platform.ram_max: no more of it is read before its own size is checked).
 */
static int firmware_ram(paddr_t fdt, uint64_t *size, char *err, size_t errlen)
{
	paddr_t end = platform.ram_base + platform.ram_max;

	if (fdt < platform.ram_base || fdt >= end || !IS_ALIGNED(fdt, 8)) {
		(void)snprintf(err, errlen, "none in RAM (0x%llx)", (unsigned long long)fdt);
		return -1;
	}
	if (fdt_ram_from((const uint8_t *)(uintptr_t)fdt, end - fdt < FDT_MAX_SIZE ? end - fdt : FDT_MAX_SIZE,
			 platform.ram_base, size, err, errlen))
		return -1;
	if (*size == 0u) {
		(void)snprintf(err, errlen, "no memory node holds 0x%llx",
			       (unsigned long long)platform.ram_base);
		return -1;
	}
	return 0;
}

static void partition_create(struct partition *p, uint32_t index, const struct tern_config_partition *c)
{
	(void)memset(p, 0, offsetof(struct partition, arch));
	p->cfg = c;
	p->name = c->name;
	p->index = index;
	p->num_vcpus = c->num_vcpus;
	spin_lock_init(&p->lock);
	spin_lock_init(&p->vpci.lock);
	vpci_reset(&p->vpci);
	console_ring_add(&p->console, console_bufs[index]);
	vuart_init(&p->uart, p->name, &p->console);
	for (uint32_t j = 0; j < c->num_vcpus; j++) {
		struct vcpu *v = &p->vcpu[j];
		v->partition = p;
		v->index = j;
		v->pcpu = c->cpus[j];
		cpu_vcpu[v->pcpu] = v;
	}
}

void tern_main(paddr_t fdt)
{
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	struct config_device devices[8];
	struct config_irq irqs[16];
	struct config_limits limits;
	uint64_t ram_found;
	char err[160];

	tern_log("Tern hypervisor on %s", platform.name);
	/* Before anything else in RAM is written: the tree is where the firmware left it. */
	if (firmware_ram(fdt, &ram_found, err, sizeof(err))) {
		tern_log("error: the firmware's device tree: %s", err);
		arch_board_off();
	}
	board_limits(&limits, devices, ARRAY_SIZE(devices), irqs, ARRAY_SIZE(irqs));
	limits.ram_found = ram_found;
	if (config_validate(cfg, platform.config_max, &limits, err, sizeof(err))) {
		tern_log("error: system description: %s", err);
		arch_board_off();
	}
	if (!arch_iommu_init(cfg, err, sizeof(err))) {
		tern_log("error: %s", err);
		arch_board_off();
	}

	/* The hypervisor serves the VirtIO devices' channels (virtio_mmio.c): before any is created. */
	for (uint32_t i = 0; i < cfg->num_virtio; i++) {
		const struct tern_config_channel *ch = &config_channels(cfg)[config_virtio(cfg)[i].channel];
		if (!arch_hyp_map_shared(ch->hpa, ch->size)) {
			tern_log("error: channel %s cannot be mapped for the hypervisor", ch->name);
			arch_board_off();
		}
	}
	num_partitions = cfg->num_partitions;
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		const struct tern_config_partition *c = &cfg->partition[i];
		partition_create(p, i, c);
		if (!partition_devices(p, err, sizeof(err)) || !arch_partition_init(p, err, sizeof(err)) ||
		    !channel_partition_init(p, cfg, err, sizeof(err)) ||
		    !virtio_partition_init(p, cfg, err, sizeof(err))) {
			tern_log("error: partition %s: %s", p->name, err);
			arch_board_off();
		}
		arch_partition_irqs_reset(p);
		/* Every character costs boot time on the UART: the defaults go unsaid. */
		tern_log("partition %s: %u vCPU(s) from core %u, %llu MiB at 0x%llx, wfi %s%s%s",
			 p->name, p->num_vcpus, c->cpus[0], (unsigned long long)(c->ram_size >> 20),
			 (unsigned long long)c->ram_hpa,
			 (c->flags & TERN_PF_WFI_NATIVE) ? "native" : "trap",
			 (c->flags & TERN_PF_IRQ_DIRECT) ? ", irq direct" : "",
			 c->num_regions ? ", devices passed through" : "");
		p->created = arch_counter();
		p->started = p->created;
		atomic_store(&p->vcpu[0].power, VCPU_ON_PENDING);
		p->vcpu[0].entry = c->entry_ipa;
		p->vcpu[0].context = c->dtb_ipa;
		atomic_fetch_add(&partitions_running, 1);
	}

	if (shared_cores_init(cfg, err, sizeof(err))) {
		tern_log("error: %s", err);
		arch_board_off();
	}

	/* The console core drains from now on: before any other core can print. */
	console_input_start(cfg->board_cpus);
	unsigned self = arch_cpu_id();
	/* Every core a vCPU is pinned on, and the console core, which may be one no partition uses. */
	for (unsigned pcpu = 0; pcpu < cfg->board_cpus; pcpu++) {
		if (pcpu != self && (vcpu_of_cpu(pcpu) || pcpu == console_core()) &&
		    !arch_cpu_start(pcpu)) {
			tern_log("error: core %u did not come online", pcpu);
			console_flush();
			arch_board_off();
		}
	}
	boot_times.ready = arch_counter();
	cpu_idle(self);
}
