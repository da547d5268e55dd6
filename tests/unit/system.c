/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <arch/sysreg.h>
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

enum fake_exit hvc(unsigned cpu, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3)
{
	struct guest_regs *r = fake_guest_regs(cpu);

	r->x[0] = x0;
	r->x[1] = x1;
	r->x[2] = x2;
	r->x[3] = x3;
	return fake_trap(cpu, ((uint64_t)EC_HVC64 << 26) | ESR_IL, 0, 0);
}

uint64_t x0_of(unsigned cpu)
{
	return fake_guest_regs(cpu)->x[0];
}

void start_vcpu(struct partition *p, uint32_t index)
{
	for (uint32_t i = 0; i < p->num_vcpus; i++) {
		struct vcpu *caller = &p->vcpu[i];
		if (atomic_load(&caller->power) != VCPU_ON)
			continue;
		CHECK_EQ(hvc(caller->pcpu, PSCI_CPU_ON_64, index, p->cfg->entry_ipa + 0x100, 0x77),
			 FAKE_RETURNED);
		CHECK_EQ(x0_of(caller->pcpu), 0);
		fake_deliver_all_kicks(16);
		CHECK_EQ(atomic_load(&p->vcpu[index].power), VCPU_ON);
		return;
	}
	CHECK(!"no vCPU on to start another");
}
