/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arch/pte.h>
#include <tern/platform.h>
#include <tern/stats.h>
#include "check.h"
#include "rv.h"
#include "system.h"

static void own(struct tern_config_partition *c, uint32_t source)
{
	c->irqs[source / 32] |= 1u << (source % 32);
}

enum fake_exit rv_boot(void)
{
	static const uint8_t trap[] = { 1, 2 }, direct[] = { 3, 4 }, none[] = { 5 };

	fake_config_begin(6);
	struct tern_config_partition *t = fake_config_add("trap", trap, 2, 0);
	own(t, 35);
	own(t, 37);
	own(fake_config_add("direct", direct, 2, TERN_PF_IRQ_DIRECT), 36);
	fake_config_add("none", none, 1, 0);
	enum fake_exit e = fake_boot(0);
	fake_start_secondaries();
	fake_relax_hook = fake_deliver_kicks_while_waiting;
	return e;
}

struct partition *rv_part(uint32_t index)
{
	if (index >= num_partitions) {
		fprintf(stderr, "rv_part(%u): the board has %u partitions (booted?)\n", index, num_partitions);
		abort();
	}
	return &partitions[index];
}

enum fake_exit sbi(unsigned cpu, uint64_t ext, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct guest_regs *r = fake_guest_regs(cpu);

	r->x[10] = a0;
	r->x[11] = a1;
	r->x[12] = a2;
	r->x[16] = fn;
	r->x[17] = ext;
	return fake_rv_trap(cpu, EXC_VS_ECALL, 0, 0, 0);
}

uint64_t a0_of(unsigned cpu)
{
	return fake_guest_regs(cpu)->x[10];
}

uint64_t a1_of(unsigned cpu)
{
	return fake_guest_regs(cpu)->x[11];
}

#define HTINST_LW_A0 0x00002503u /* lw a0, 0(x0), bit 0 set: a transformed 32-bit access */
#define HTINST_SW_A0 0x00a02023u /* sw a0, 0(x0) */

enum fake_exit rv_load(unsigned cpu, uint64_t gpa)
{
	return fake_rv_trap(cpu, EXC_LOAD_GUEST_PAGE_FAULT, gpa, gpa >> 2, HTINST_LW_A0);
}

enum fake_exit rv_store(unsigned cpu, uint64_t gpa, uint32_t value)
{
	fake_guest_regs(cpu)->x[10] = value;
	return fake_rv_trap(cpu, EXC_STORE_GUEST_PAGE_FAULT, gpa, gpa >> 2, HTINST_SW_A0);
}

uint32_t vaplic_read(unsigned cpu, uint32_t offset)
{
	fake_guest_regs(cpu)->x[10] = 0xdeadbeef;
	CHECK_EQ(rv_load(cpu, platform.arch.aplic_s_base + offset), FAKE_RETURNED);
	return (uint32_t)a0_of(cpu);
}

void vaplic_write(unsigned cpu, uint32_t offset, uint32_t value)
{
	CHECK_EQ(rv_store(cpu, platform.arch.aplic_s_base + offset, value), FAKE_RETURNED);
}

uint64_t stat_of(unsigned cpu, enum stat_id id)
{
	const struct vcpu *v = cpus[cpu].vcpu;

	return v ? v->stats[id] : 0;
}

bool rv_console_has(const char *text)
{
	return strstr(fake_uart_out, text) != NULL;
}

/* ---- system.h's firmware calls: the SBI's HSM and SRST ---- */

const struct fw_codes fw = {
	.success = 0,
	.invalid_address = SBI_ERR_INVALID_ADDRESS,
	.already_on = SBI_ERR_ALREADY_AVAILABLE,
	.on_pending = SBI_ERR_ALREADY_AVAILABLE,
	.denied = (uint64_t)-1, /* SBI_ERR_FAILED */
	.system_off_stat = "sbi_srst",
};

enum fake_exit fw_cpu_on(unsigned cpu, uint64_t target, uint64_t entry, uint64_t context)
{
	return sbi(cpu, SBI_HSM, 0, target, entry, context);
}

enum fake_exit fw_cpu_off(unsigned cpu)
{
	return sbi(cpu, SBI_HSM, 1, 0, 0, 0);
}

enum fake_exit fw_cpu_status(unsigned cpu, uint64_t target)
{
	return sbi(cpu, SBI_HSM, 2, target, 0, 0);
}

enum fake_exit fw_system_off(unsigned cpu)
{
	return sbi(cpu, SBI_SRST, 0, 0, 0, 0);
}

enum fake_exit fw_system_reset(unsigned cpu)
{
	return sbi(cpu, SBI_SRST, 0, 1, 0, 0);
}

uint64_t fw_error(unsigned cpu)
{
	return a0_of(cpu);
}

uint64_t fw_status(unsigned cpu)
{
	return a1_of(cpu);
}

uint64_t guest_context(unsigned cpu)
{
	return a1_of(cpu);
}

void set_fast_path_irqs(unsigned cpu, uint64_t n)
{
	cpus[cpu].fast_timer = n;
}

/* Level-high, into the console core's own file with the console's identity. */
bool console_irq_goes_to(unsigned cpu)
{
	uint32_t s = platform.uart_irq;

	return fake_aplic_reg(0x4 + 4 * (s - 1)) == 6 &&
	       fake_aplic_reg(0x3004 + 4 * (s - 1)) == ((cpu << 18) | EIID_CONSOLE);
}

/* A trap-less partition on a board without guest interrupt files. */
const char *break_partition_init(struct tern_config_partition *c)
{
	c->flags |= TERN_PF_IRQ_DIRECT;
	fake_guest_files = 0;
	return "irq = direct needs guest interrupt files (QEMU: -M virt,aia=aplic-imsic,aia-guests=1 or more)";
}

void mend_partition_init(void)
{
	fake_guest_files = 4;
}

/* Its identity in the console core's own file; the line stays high, so the board sends it again. */
enum fake_exit console_input_interrupt(unsigned cpu)
{
	uint32_t s = platform.uart_irq;

	fake_aplic_input[s / 32] |= 1u << (s % 32);
	fake_raise_eiid(cpu, EIID_CONSOLE);
	return fake_rv_trap(cpu, SCAUSE_IRQ | IRQ_S_EXT, 0, 0, 0);
}

bool console_input_completed(unsigned cpu)
{
	uint32_t s = platform.uart_irq;

	(void)cpu;
	return (fake_aplic_reg(0x1c00 + 4 * (s / 32)) >> (s % 32)) & 1u;
}

/* Only a trap-less partition has interrupt files of its own. */
const uint32_t msi_flags = TERN_PF_IRQ_DIRECT;

uint64_t msi_guest_doorbell(uint32_t vcpu)
{
	return platform.arch.imsic_s_base + (uint64_t)vcpu * platform.arch.imsic_vcpu_stride;
}

uint64_t msi_host_doorbell(unsigned core)
{
	return (uintptr_t)fake_imsic[core] + (uint64_t)VCPU_GUEST_FILE * IMSIC_FILE_SIZE;
}

/* A walk of the partition's G-stage (Sv39x4: an 11-bit root, then 9 bits a level). */
bool shared_map_of(const struct partition *p, uint64_t ipa, uint64_t *pa, bool *writable, bool *executable)
{
	const uint64_t *table = p->arch.gstage_root;
	unsigned shift = 30;
	uint64_t e = table[(ipa >> shift) & 0x7ff];

	for (;;) {
		if (!(e & PTE_V))
			return false;
		if (e & (PTE_R | PTE_W | PTE_X))
			break;
		if (shift == 12)
			return false;
		table = (const uint64_t *)(uintptr_t)((e >> 10) << 12);
		shift -= 9;
		e = table[(ipa >> shift) & 0x1ff];
	}
	*pa = ((e >> 10) << 12) + (ipa & ((1ull << shift) - 1));
	*writable = e & PTE_W;
	*executable = e & PTE_X;
	return true;
}

void guest_enables_ipi(unsigned cpu)
{
	fake_csr_put(cpu, "hie", fake_csr(cpu, "hie") | HVIP_VSSIP);
}

enum fake_exit send_ipi(unsigned cpu, uint32_t vcpu)
{
	return sbi(cpu, SBI_IPI, 0, 1ull << vcpu, 0, 0);
}

bool ipi_pending(unsigned cpu)
{
	return (fake_csr(cpu, "hvip") & HVIP_VSSIP) != 0;
}

enum fake_exit guest_wfi(unsigned cpu)
{
	return fake_rv_trap(cpu, EXC_VIRTUAL_INSTRUCTION, INSN_WFI, 0, 0);
}

enum fake_exit manager_call(unsigned cpu, unsigned fn, uint64_t gpa, uint64_t len)
{
	return sbi(cpu, 0x0a54524eu, fn, gpa, len, 0); /* docs/management.md's numbers */
}

int64_t manager_error(unsigned cpu)
{
	return (int64_t)a0_of(cpu);
}

uint64_t manager_value(unsigned cpu)
{
	return a1_of(cpu);
}

/* SBI's DENIED (-4), ALREADY_STARTED (-7) for busy, INVALID_STATE (-10): docs/management.md. */
const struct manager_codes mgr = { .not_supported = SBI_ERR_NOT_SUPPORTED,
				   .invalid = SBI_ERR_INVALID_PARAM, .denied = -4,
				   .bad_address = SBI_ERR_INVALID_ADDRESS, .busy = -7, .no_command = -10 };
