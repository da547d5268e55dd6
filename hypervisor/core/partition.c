/* SPDX-License-Identifier: MIT */
/*
 * Partition and vCPU life cycle: boot, PSCI power state, stop after a fault,
 * restart from pristine images, board power-off when the last one ends.
 */
#include <tern/arch.h>
#include <tern/config.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>

/* PSCI return codes the generic side produces. */
#define PSCI_SUCCESS            0
#define PSCI_INVALID_PARAMETERS (-2)
#define PSCI_ALREADY_ON         (-4)
#define PSCI_ON_PENDING         (-5)
#define PSCI_INVALID_ADDRESS    (-9)

#define AFFINITY_ON         0
#define AFFINITY_OFF        1
#define AFFINITY_ON_PENDING 2

struct partition partitions[TERN_MAX_PARTITIONS];
uint32_t num_partitions;
static struct vcpu *cpu_vcpu[32];
static _Atomic uint32_t partitions_running;
struct boot_times boot_times;

struct vcpu *vcpu_of_cpu(unsigned pcpu)
{
	return pcpu < ARRAY_SIZE(cpu_vcpu) ? cpu_vcpu[pcpu] : NULL;
}

static void board_off_if_done(void)
{
	if (atomic_fetch_sub(&partitions_running, 1) != 1)
		return;
	arch_iommu_poll(); /* DMA refused since the last partition ended counts too */
	print_boot_times();
	for (uint32_t i = 0; i < num_partitions; i++)
		partition_print_stats(&partitions[i]);
	tern_log("all partitions ended, board off");
	arch_board_off();
}

/* Ask every other vCPU of `p` to leave its guest, and wait until each has. */
static void stop_other_vcpus(struct partition *p, struct vcpu *self)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vcpu *v = &p->vcpu[i];
		if (v == self)
			continue;
		atomic_store(&v->stop, true);
		arch_cpu_kick(v->pcpu);
	}
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vcpu *v = &p->vcpu[i];
		while (v != self && atomic_load(&v->power) != VCPU_OFF)
			arch_cpu_relax();
	}
}

/* Leave the guest on this core for good (until a CPU_ON or restart). */
static __attribute__((noreturn)) void vcpu_leave(struct vcpu *v)
{
	arch_vcpu_quiesce(v);
	atomic_store(&v->stop, false);
	atomic_store(&v->power, VCPU_OFF);
	arch_cpu_return_to_idle();
}

static __attribute__((noreturn)) void partition_end(struct vcpu *v, enum partition_state how)
{
	struct partition *p = v->partition;
	uint32_t running = PARTITION_RUNNING;

	if (!atomic_compare_exchange_strong(&p->state, &running, how))
		vcpu_leave(v); /* another vCPU is already ending it */
	vpl011_flush(&p->uart, p->name);
	arch_iommu_poll(); /* its DMA faults are reported before its end */
	tern_log("partition %s %s", p->name, how == PARTITION_OFF ? "off" : "stopped");
	stop_other_vcpus(p, v);
	arch_vcpu_quiesce(v);
	arch_partition_irqs_reset(p); /* its devices' interrupts stay quiet from now on */
	atomic_store(&v->power, VCPU_OFF);
	board_off_if_done();
	arch_cpu_return_to_idle();
}

void vcpu_check_requests(struct vcpu *v)
{
	if (atomic_load(&v->stop))
		vcpu_leave(v);
	uint32_t request = atomic_exchange(&v->partition->request, 0);
	if (request & PARTITION_REQ_STOP)
		partition_end(v, PARTITION_OFF); /* an operator's decision, not a containment */
	if (request & PARTITION_REQ_RESTART)
		partition_system_reset(v);
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

static struct vcpu *target_vcpu(struct vcpu *caller, uint64_t mpidr)
{
	struct partition *p = caller->partition;
	uint64_t index = mpidr & 0xff;

	/* vCPU i is Aff0 = i; higher affinity levels are zero. */
	if ((mpidr & 0xff00ffff00ull) || index >= p->num_vcpus) {
		vcpu_count(caller, STAT_PSCI_DENIED);
		return NULL;
	}
	return &p->vcpu[index];
}

int32_t vcpu_cpu_on(struct vcpu *caller, uint64_t target_mpidr, uint64_t entry, uint64_t context)
{
	struct partition *p = caller->partition;
	struct vcpu *t = target_vcpu(caller, target_mpidr);

	if (!t)
		return PSCI_INVALID_PARAMETERS;
	if (entry < p->cfg->ram_ipa || entry - p->cfg->ram_ipa >= p->cfg->ram_size)
		return PSCI_INVALID_ADDRESS;

	spin_lock(&p->power_lock);
	uint32_t power = atomic_load(&t->power);
	if (power != VCPU_OFF) {
		spin_unlock(&p->power_lock);
		return power == VCPU_ON ? PSCI_ALREADY_ON : PSCI_ON_PENDING;
	}
	t->entry = entry;
	t->context = context;
	atomic_store(&t->power, VCPU_ON_PENDING);
	spin_unlock(&p->power_lock);
	arch_cpu_kick(t->pcpu);
	return PSCI_SUCCESS;
}

int32_t vcpu_affinity_info(struct vcpu *caller, uint64_t target_mpidr, uint32_t level)
{
	struct vcpu *t = target_vcpu(caller, target_mpidr);

	if (!t || level != 0)
		return PSCI_INVALID_PARAMETERS;
	switch (atomic_load(&t->power)) {
	case VCPU_ON:         return AFFINITY_ON;
	case VCPU_ON_PENDING: return AFFINITY_ON_PENDING;
	default:              return AFFINITY_OFF;
	}
}

void vcpu_cpu_off(struct vcpu *v)
{
	struct partition *p = v->partition;
	bool last = true;

	spin_lock(&p->power_lock);
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		if (&p->vcpu[i] != v && atomic_load(&p->vcpu[i].power) != VCPU_OFF)
			last = false;
	}
	spin_unlock(&p->power_lock);
	/* A partition whose every vCPU is off can never run again: it is off. */
	if (last)
		partition_end(v, PARTITION_OFF);
	vcpu_leave(v);
}

void partition_system_off(struct vcpu *v)
{
	partition_end(v, PARTITION_OFF);
}

static void load_pristine(struct partition *p)
{
	const struct tern_config_partition *c = p->cfg;
	void *image = (void *)(uintptr_t)(c->ram_hpa + (c->image_ipa - c->ram_ipa));
	void *dtb = (void *)(uintptr_t)(c->ram_hpa + (c->dtb_ipa - c->ram_ipa));

	/* Guests expect RAM they did not load to start zeroed, as on a cold boot. */
	memset((void *)(uintptr_t)c->ram_hpa, 0, c->ram_size);
	memcpy(image, (const void *)(uintptr_t)c->pristine_image_hpa, c->image_size);
	memcpy(dtb, (const void *)(uintptr_t)c->pristine_dtb_hpa, c->dtb_size);
	if (c->initrd_size)
		memcpy((void *)(uintptr_t)(c->ram_hpa + (c->initrd_ipa - c->ram_ipa)),
		       (const void *)(uintptr_t)c->pristine_initrd_hpa, c->initrd_size);
	arch_sync_guest_memory(c->ram_hpa, c->ram_size);
}

/* A restart asked of a partition that has ended (off or stopped): vCPU 0's idle core reloads it. */
static void restart_ended(struct vcpu *v)
{
	struct partition *p = v->partition;
	uint32_t request = atomic_exchange(&p->request, 0);
	uint32_t state = atomic_load(&p->state);

	if (!(request & PARTITION_REQ_RESTART) ||
	    (state != PARTITION_OFF && state != PARTITION_STOPPED) ||
	    !atomic_compare_exchange_strong(&p->state, &state, PARTITION_RESETTING))
		return;
	load_pristine(p);
	atomic_fetch_add(&p->generation, 1);
	atomic_fetch_add(&partitions_running, 1);
	tern_log("partition %s restarted", p->name);
	v->entry = p->cfg->entry_ipa;
	v->context = p->cfg->dtb_ipa;
	atomic_store(&v->power, VCPU_ON_PENDING);
	atomic_store(&p->state, PARTITION_RUNNING);
}

void partition_system_reset(struct vcpu *v)
{
	struct partition *p = v->partition;
	uint32_t running = PARTITION_RUNNING;

	if (!p->cfg->pristine_image_hpa || !p->cfg->pristine_dtb_hpa ||
	    (p->cfg->initrd_size && !p->cfg->pristine_initrd_hpa)) {
		tern_log("partition %s: reset needs a pristine image, powering it off", p->name);
		partition_end(v, PARTITION_OFF);
	}
	/* One ending or reset at a time: a vCPU that loses the race just leaves. */
	if (!atomic_compare_exchange_strong(&p->state, &running, PARTITION_RESETTING))
		vcpu_leave(v);
	vpl011_flush(&p->uart, p->name);
	stop_other_vcpus(p, v);
	arch_vcpu_quiesce(v);
	arch_partition_irqs_reset(p);
	atomic_store(&v->power, VCPU_OFF);
	load_pristine(p);
	atomic_fetch_add(&p->generation, 1);
	tern_log("partition %s reset", p->name);

	struct vcpu *boot = &p->vcpu[0];
	boot->entry = p->cfg->entry_ipa;
	boot->context = p->cfg->dtb_ipa;
	atomic_store(&boot->power, VCPU_ON_PENDING);
	atomic_store(&p->state, PARTITION_RUNNING);
	if (boot != v)
		arch_cpu_kick(boot->pcpu);
	arch_cpu_return_to_idle();
}

void partition_fault(struct vcpu *v, const char *fmt, ...)
{
	struct partition *p = v->partition;
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vcpu_count(v, STAT_FAULT);
	if (atomic_load(&p->state) == PARTITION_RUNNING)
		tern_log("fault partition=%s vcpu=%u %s", p->name, v->index, what);
	partition_end(v, PARTITION_STOPPED);
}

void cpu_idle(unsigned pcpu)
{
	struct vcpu *v = vcpu_of_cpu(pcpu);

	for (;;) {
		if (v && v->index == 0 && atomic_load(&v->partition->request) &&
		    atomic_load(&v->partition->state) != PARTITION_RUNNING)
			restart_ended(v);
		if (v && atomic_exchange(&v->stop, false))
			atomic_store(&v->power, VCPU_OFF); /* a CPU_ON that lost to a stop */
		if (v && atomic_load(&v->power) == VCPU_ON_PENDING &&
		    atomic_load(&v->partition->state) == PARTITION_RUNNING) {
			atomic_store(&v->power, VCPU_ON);
			arch_vcpu_run(v, v->entry, v->context);
		}
		arch_cpu_idle_wait();
	}
}

void tern_main(void)
{
	const struct tern_config *cfg = (const struct tern_config *)(uintptr_t)platform.config_hpa;
	const struct config_limits limits = {
		.max_cpus = platform.max_cpus,
		.reserved_lo = platform.hyp_base,
		.reserved_hi = platform.hyp_base + platform.hyp_size,
		.ram_ipa = platform.ram_base,
		.ipa_limit = GiB(4),
		.device_window = { 0, platform.ram_base },
		.emulated = {
			{ platform.gicd_base, platform.gicd_size },
			{ platform.gicr_base, platform.gicr_stride * platform.max_cpus },
			{ platform.uart_base, VPL011_SIZE },
			{ platform.smmu_base, platform.smmu_size },
		},
		.max_intid = arch_irq_max_intid(),
		.hyp_intid = platform.uart_intid,
	};
	char err[160];

	tern_log("Tern hypervisor on %s", platform.name);
	if (config_validate(cfg, platform.config_max, &limits, err, sizeof(err))) {
		tern_log("error: system description: %s", err);
		arch_board_off();
	}
	if (!arch_iommu_init(cfg, err, sizeof(err))) {
		tern_log("error: %s", err);
		arch_board_off();
	}

	num_partitions = cfg->num_partitions;
	for (uint32_t i = 0; i < num_partitions; i++) {
		struct partition *p = &partitions[i];
		const struct tern_config_partition *c = &cfg->partition[i];
		p->cfg = c;
		p->name = c->name;
		p->index = i;
		p->num_vcpus = c->num_vcpus;
		for (uint32_t j = 0; j < c->num_vcpus; j++) {
			struct vcpu *v = &p->vcpu[j];
			v->partition = p;
			v->index = j;
			v->pcpu = c->cpus[j];
			cpu_vcpu[v->pcpu] = v;
		}
		if (!arch_partition_init(p, err, sizeof(err))) {
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
		p->vcpu[0].entry = c->entry_ipa;
		p->vcpu[0].context = c->dtb_ipa;
		atomic_store(&p->vcpu[0].power, VCPU_ON_PENDING);
		atomic_fetch_add(&partitions_running, 1);
	}

	unsigned self = arch_cpu_id();
	for (unsigned pcpu = 0; pcpu < cfg->board_cpus; pcpu++) {
		if (pcpu != self && vcpu_of_cpu(pcpu) && !arch_cpu_start(pcpu)) {
			tern_log("error: core %u did not come online", pcpu);
			arch_board_off();
		}
	}
	console_input_start(cfg->board_cpus);
	boot_times.ready = arch_counter();
	cpu_idle(self);
}
