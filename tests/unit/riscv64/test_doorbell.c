/* SPDX-License-Identifier: MIT */
/*
 * The doorbell path's cache in the core's struct riscv_cpu (arch/riscv64/vcpu.c), which
 * vectors.S rings from without C: filled at a member vCPU's entry with its channel's page (as
 * htval gives it), each member's APLIC source and gate, and a closed gate for every k that is
 * no member; none at all for a partition that is in no channel.
 */
#include <stdatomic.h>
#include <arch/aplic.h>
#include <tern/arch.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

void test_rv_doorbell_fast_path_cache(void)
{
	static const uint32_t members[] = { 0, 1, 2 };

	fake_config_begin(4);
	add_partition("a", "0", 0);
	add_partition("b", "1", TERN_PF_WFI_NATIVE | TERN_PF_IRQ_DIRECT);
	add_partition("ro", "2", 0);
	add_partition("other", "3", 0);
	const struct tern_config_channel *ch = fake_config_add_channel("msg", 0x10000, members, 3, 2);
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);

	for (unsigned cpu = 0; cpu < 3; cpu++) {
		const struct riscv_cpu *c = &cpus[cpu];
		CHECK_EQ(c->doorbell_htval, ch->doorbell_ipa >> 2);
		CHECK_EQ(c->doorbell_setipnum, platform.arch.aplic_s_base + SETIPNUM);
		for (uint32_t k = 0; k < DOORBELL_MEMBERS; k++) {
			const _Atomic uint32_t *gate = c->doorbell_gate[k];
			CHECK(gate != NULL);
			if (k < 3u) {
				CHECK_EQ(c->doorbell_irq[k], ch->member[k].irq);
				CHECK_EQ(atomic_load(gate) & BIT(DOORBELL_GATE_BIT), 0u);
			} else {
				CHECK(atomic_load(gate) & BIT(DOORBELL_GATE_BIT));
			}
		}
	}
	CHECK_EQ(cpus[3].doorbell_htval, (uint64_t)DOORBELL_NONE);
}
