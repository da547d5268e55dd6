/* SPDX-License-Identifier: MIT */
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>

#define STAT_NAMES \
	"exit_irq", "exit_wfi", "exit_mmio", "exit_other", "irq_injected", "faults", "dma_faults", \
	"fault_injected", "doorbell_ring", "doorbell_refused", "virtio_notify", "virtio_request", \
	"virtio_completion", "virtio_refused_frontend", "virtio_refused_backend", "manager_calls", \
	"manager_denied", ARCH_STAT_NAMES

const char *const stat_names[STAT_COUNT] = { STAT_NAMES };
_Static_assert(sizeof((const char *const[]){ STAT_NAMES }) == sizeof(stat_names),
	       "every counter has a name, in tern/stats.h's order then the arch's");

static const char *const state_names[PARTITION_RESTARTING + 1] = {
	[PARTITION_RUNNING] = "running",
	[PARTITION_OFF] = "off",
	[PARTITION_STOPPED] = "stopped",
	[PARTITION_ENDING] = "ending",
	[PARTITION_RESTARTING] = "restarting",
};

const char *partition_state_name(uint32_t state)
{
	return state <= PARTITION_RESTARTING ? state_names[state] : "?";
}

void partition_print_stats(struct partition *p)
{
	char buf[1024];
	size_t n = 0;

	n += (size_t)snprintf(&buf[n], sizeof(buf) - n, "{\"partition\":\"%s\",\"state\":\"%s\",\"restarts\":%u,"
			      "\"console_dropped\":%llu", p->name, state_names[atomic_load(&p->state)],
			      atomic_load(&p->restarts), (unsigned long long)p->console.dropped);
	for (unsigned id = 0; id < STAT_COUNT && n < sizeof(buf); id++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < p->num_vcpus; i++)
			sum += p->vcpu[i].stats[id] + arch_vcpu_stat(&p->vcpu[i], id);
		n += (size_t)snprintf(&buf[n], sizeof(buf) - n, ",\"%s\":%llu", stat_names[id],
				      (unsigned long long)sum);
	}
	if (n < sizeof(buf))
		(void)snprintf(&buf[n], sizeof(buf) - n, "}");
	console_printf("tern-stats %s", buf);
}

void print_boot_times(void)
{
	char buf[512];
	size_t n = (size_t)snprintf(buf, sizeof(buf),
		"{\"freq_hz\":%llu,\"entry\":%llu,\"mmu_on\":%llu,\"ready\":%llu,\"partitions\":{",
		(unsigned long long)arch_counter_freq(), (unsigned long long)boot_times.entry,
		(unsigned long long)boot_times.mmu_on, (unsigned long long)boot_times.ready);
	for (uint32_t i = 0; i < num_partitions && n < sizeof(buf); i++) {
		const struct partition *p = &partitions[i];
		n += (size_t)snprintf(&buf[n], sizeof(buf) - n,
				      "%s\"%s\":{\"created\":%llu,\"first_entry\":%llu}", i ? "," : "",
				      p->name, (unsigned long long)p->created,
				      (unsigned long long)p->first_entry);
	}
	if (n < sizeof(buf))
		(void)snprintf(&buf[n], sizeof(buf) - n, "}}");
	console_printf("tern-boot %s", buf);
}

void print_memory_use(void)
{
	uint32_t used;
	uint32_t total;

	arch_table_pages(&used, &total);
	console_printf("tern-mem {\"table_pages_used\":%u,\"table_pages\":%u}", used, total);
}
