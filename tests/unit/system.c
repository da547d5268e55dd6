/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "system.h"

struct tern_config_partition *add_partition(const char *name, const char *cores, uint32_t flags)
{
	uint8_t cpus[TERN_MAX_VCPUS];
	uint32_t n = 0;

	for (const char *c = cores; *c && n < TERN_MAX_VCPUS; c++) {
		if (*c >= '0' && *c <= '9')
			cpus[n++] = (uint8_t)(*c - '0');
	}
	return fake_config_add(name, cpus, n, flags);
}

enum fake_exit boot_board(void)
{
	enum fake_exit e = fake_boot(0);

	fake_start_secondaries();
	fake_relax_hook = fake_deliver_kicks_while_waiting;
	return e;
}

struct partition *partition_named(const char *name)
{
	for (uint32_t i = 0; i < num_partitions; i++) {
		if (!strcmp(partitions[i].name, name))
			return &partitions[i];
	}
	abort();
}

bool console_has(const char *text)
{
	return strstr(fake_uart_out, text) != NULL;
}

bool console_ends_with(const char *line)
{
	size_t n = strlen(line);

	return fake_uart_len >= n + 2 && !memcmp(fake_uart_out + fake_uart_len - n - 2, line, n) &&
	       !strcmp(fake_uart_out + fake_uart_len - 2, "\r\n");
}

void start_vcpu(struct partition *p, uint32_t index)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vcpu *caller = &p->vcpu[i];
		if (atomic_load(&caller->power) != VCPU_ON)
			continue;
		CHECK_EQ(fw_cpu_on(caller->pcpu, index, p->cfg->entry_ipa + 0x100, 0x77), FAKE_RETURNED);
		CHECK_EQ(fw_error(caller->pcpu), 0);
		fake_deliver_all_kicks(16);
		CHECK_EQ(atomic_load(&p->vcpu[index].power), VCPU_ON);
		return;
	}
	CHECK(!"no vCPU on to start another");
}
