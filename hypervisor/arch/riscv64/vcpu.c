/* SPDX-License-Identifier: MIT */
/*
 * Entering a vCPU (VS-mode), and what brings it back: the SBI calls it makes, accesses outside
 * its G-stage map (emulated devices, or a fault that ends the partition), trapped
 * instructions, and the core's own interrupts (kicks, the SBI timer).
 */
#include <arch/cpu.h>
#include <arch/csr.h>
#include <arch/entry.h>
#include <arch/partition.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>

#define SBI_EXT_LEGACY_PUTCHAR 0x01u
#define SBI_EXT_BASE 0x10u
#define SBI_EXT_TIME 0x54494d45u
#define SBI_EXT_IPI  0x735049u
#define SBI_EXT_HSM  0x48534du
#define SBI_EXT_SRST 0x53525354u
#define SBI_EXT_DBCN 0x4442434eu

#define SBI_SUCCESS               0
#define SBI_ERR_FAILED            (-1)
#define SBI_ERR_NOT_SUPPORTED     (-2)
#define SBI_ERR_INVALID_PARAM     (-3)
#define SBI_ERR_DENIED            (-4)
#define SBI_ERR_INVALID_ADDRESS   (-5)
#define SBI_ERR_ALREADY_AVAILABLE (-6)

#define SBI_SPEC_VERSION   0x02000000u /* 2.0 (major << 24): DBCN is there */
#define SBI_IMPL_ID_TERN   0x5465726eu /* "Tern": not in the SBI's registry of implementations */

struct sbi_result {
	int64_t error;
	uint64_t value;
};

void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct riscv_cpu *c = this_cpu();
	const struct partition *p = v->partition;
	struct guest_regs *r = guest_frame(c);
	bool sstc = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	c->vcpu = v;
	csr_write(CSR_HENVCFG, sstc ? HENVCFG_STCE : 0);
	csr_write(CSR_VSTIMECMP, ~0ULL);
	arch_vcpu_quiesce(v); /* the SBI timer's stand-in disarmed (QEMU resets stimecmp to 0) */
	csr_write(vsstatus, 0);
	csr_write(vsie, 0);
	csr_write(vstvec, 0);
	csr_write(vsscratch, 0);
	csr_write(vsepc, 0);
	csr_write(vscause, 0);
	csr_write(vstval, 0);
	csr_write(vsatp, 0);
	csr_write(hgatp, riscv_part(p)->hgatp);
	/* A restarted partition must not see translations from its previous life. */
	__asm__ volatile(".word 0x62000073\n\tfence.i" ::: "memory"); /* HFENCE.GVMA zero, zero */
	csr_write(hstatus, HSTATUS_SPV | HSTATUS_SPVP |
			   ((p->cfg->flags & TERN_PF_WFI_NATIVE) ? 0 : HSTATUS_VTW));
	csr_set(sstatus, SSTATUS_SPP);
	/* While the guest runs, the core's kicks and its SBI timer reach the hypervisor. */
	csr_write(sie, SIE_SSIE | SIE_STIE);

	(void)memset(r, 0, sizeof(*r));
	if (!v->partition->first_entry)
		v->partition->first_entry = arch_counter();
	r->x[10] = v->index;  /* a0: hart id */
	r->x[11] = context;   /* a1: device tree, or HSM's opaque */
	r->sepc = entry;
	guest_enter(r);
}

/* Guest RAM as the hypervisor sees it, if [gpa, gpa + size) is the partition's RAM. */
static const char *guest_ram(const struct partition *p, uint64_t gpa, uint64_t size)
{
	const struct tern_config_partition *c = p->cfg;
	uint64_t off = gpa - c->ram_ipa;

	if (gpa < c->ram_ipa || off >= c->ram_size || size > c->ram_size - off)
		return NULL;
	return (const char *)(uintptr_t)(c->ram_hpa + off);
}

/* Console output: the partition's UART line assembler, as if written to its data register. */
static void console_byte(struct vcpu *v, char ch)
{
	vuart_transmit(&v->partition->uart, (uint8_t)ch);
}

static void console_bytes(struct vcpu *v, const char *s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		console_byte(v, s[i]);
}

static struct sbi_result result(int64_t error, uint64_t value)
{
	return (struct sbi_result){ error, value };
}

/* DBCN write(num_bytes, base_lo, base_hi): at most a page a call, the guest loops for more. */
static struct sbi_result dbcn_write(struct vcpu *v, const struct guest_regs *r)
{
	uint64_t n = (r->x[10] < 4096u) ? r->x[10] : 4096u;
	const char *s = NULL;

	if (r->x[12] == 0u)
		s = guest_ram(v->partition, r->x[11], n);
	if (s == NULL)
		return result(SBI_ERR_INVALID_PARAM, 0);
	console_bytes(v, s, n);
	return result(SBI_SUCCESS, n);
}

static struct sbi_result sbi_dbcn(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	struct sbi_result res = result(SBI_ERR_NOT_SUPPORTED, 0);

	if (fn == 0u) {
		res = dbcn_write(v, r);
	} else if (fn == 2u) { /* write_byte */
		console_byte(v, (char)r->x[10]);
		res = result(SBI_SUCCESS, 0);
	} else {
		/* read (1): the console has no input for partitions */
	}
	return res;
}

static int64_t hsm_error(enum power_result power)
{
	int64_t error;

	switch (power) {
	case POWER_OK:
		error = SBI_SUCCESS;
		break;
	case POWER_ALREADY_ON:
	case POWER_ON_PENDING:
		error = SBI_ERR_ALREADY_AVAILABLE;
		break;
	case POWER_INVALID_ADDRESS:
		error = SBI_ERR_INVALID_ADDRESS;
		break;
	default:
		error = SBI_ERR_FAILED;
		break;
	}
	return error;
}

/* HSM hart_get_status: STARTED 0, STOPPED 1, START_PENDING 2. */
static uint64_t hsm_status(enum vcpu_power power)
{
	uint64_t status;

	switch (power) {
	case VCPU_ON:
		status = 0;
		break;
	case VCPU_ON_PENDING:
		status = 2;
		break;
	default:
		status = 1;
		break;
	}
	return status;
}

/* Harts are the partition's own vCPUs, named by index: hart id = vCPU index. */
static struct sbi_result sbi_hsm(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	uint64_t hart = r->x[10];
	bool own = hart < v->partition->num_vcpus;
	struct sbi_result res = result(SBI_ERR_NOT_SUPPORTED, 0);

	if (fn == 1u) /* hart_stop */
		vcpu_cpu_off(v);
	if (((fn == 0u) || (fn == 2u)) && !own) {
		res = result(SBI_ERR_INVALID_PARAM, 0);
	} else if (fn == 0u) { /* hart_start(hartid, start_addr, opaque) */
		res = result(hsm_error(vcpu_cpu_on(v, (uint32_t)hart, r->x[11], r->x[12])), 0);
	} else if (fn == 2u) {
		res = result(SBI_SUCCESS, hsm_status(vcpu_power_of(v, (uint32_t)hart)));
	} else {
		/* suspend (3) and anything newer: not offered */
	}
	return res;
}

static bool sbi_has(uint64_t ext)
{
	return (ext == SBI_EXT_BASE) || (ext == SBI_EXT_TIME) || (ext == SBI_EXT_HSM) ||
	       (ext == SBI_EXT_SRST) || (ext == SBI_EXT_DBCN) || (ext == SBI_EXT_LEGACY_PUTCHAR);
}

static struct sbi_result sbi_base(uint32_t fn, const struct guest_regs *r)
{
	struct sbi_result res = result(SBI_SUCCESS, 0); /* mvendorid, marchid, mimpid: 0 */

	if (fn == 0u)
		res.value = SBI_SPEC_VERSION;
	else if (fn == 1u)
		res.value = SBI_IMPL_ID_TERN;
	else if (fn == 2u)
		res.value = 1;
	else if (fn == 3u)
		res.value = sbi_has(r->x[10]) ? 1u : 0u;
	else if (fn > 6u)
		res.error = SBI_ERR_NOT_SUPPORTED;
	else
		res.value = 0;
	return res;
}

/* The core's own timer stands in for the guest's; its interrupt sets VSTIP. */
/* cppcheck-suppress misra-c2012-2.7 ; `r` is read by csr_write's asm operand, which the addon does not see */
static struct sbi_result sbi_time(uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	csr_clear(hvip, HVIP_VSTIP);
	csr_write(CSR_STIMECMP, r->x[10]);
	return result(SBI_SUCCESS, 0);
}

/* SRST system_reset(type, reason): shutdown or reboot this partition, never the board. */
static struct sbi_result sbi_srst(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	if (r->x[10] == 0u)
		partition_system_off(v);
	if (r->x[10] <= 2u) /* cold or warm reboot */
		partition_system_reset(v);
	return result(SBI_ERR_INVALID_PARAM, 0);
}

static struct sbi_result guest_sbi_call(struct vcpu *v, const struct guest_regs *r)
{
	uint64_t ext = r->x[17];
	uint32_t fn = (uint32_t)r->x[16];
	struct sbi_result res;

	switch (ext) {
	case SBI_EXT_BASE:
		res = sbi_base(fn, r);
		break;
	case SBI_EXT_TIME:
		res = sbi_time(fn, r);
		break;
	case SBI_EXT_HSM:
		res = sbi_hsm(v, fn, r);
		break;
	case SBI_EXT_SRST:
		res = sbi_srst(v, fn, r);
		break;
	case SBI_EXT_DBCN:
		res = sbi_dbcn(v, fn, r);
		break;
	default:
		res = result(SBI_ERR_NOT_SUPPORTED, 0);
		break;
	}
	return res;
}

static void guest_interrupt(struct vcpu *v, uint64_t irq)
{
	if (irq == IRQ_S_SOFT) {
		csr_clear(sip, SIP_SSIP);
		vcpu_check_requests(v);
	} else if (irq == IRQ_S_TIMER) {
		csr_write(CSR_STIMECMP, ~0ULL);
		csr_set(hvip, HVIP_VSTIP);
	} else {
		partition_fault(v, "unexpected interrupt %llu", (unsigned long long)irq);
	}
}

void riscv_guest_trap(struct guest_regs *r)
{
	struct vcpu *v = this_cpu()->vcpu;
	uint64_t cause = csr_read(scause);

	if ((cause & SCAUSE_IRQ) != 0u) {
		guest_interrupt(v, cause & ~SCAUSE_IRQ);
		return;
	}
	if (cause == EXC_VS_ECALL) {
		if (r->x[17] == SBI_EXT_LEGACY_PUTCHAR) {
			console_byte(v, (char)r->x[10]);
			r->x[10] = 0;
		} else {
			struct sbi_result res = guest_sbi_call(v, r);
			r->x[10] = (uint64_t)res.error;
			r->x[11] = res.value;
		}
		r->sepc += 4u;
		return;
	}
	if ((cause == EXC_INST_GUEST_PAGE_FAULT) || (cause == EXC_LOAD_GUEST_PAGE_FAULT) ||
	    (cause == EXC_STORE_GUEST_PAGE_FAULT))
		partition_fault(v, "gpa=0x%llx pc=0x%llx scause=%llu",
				(unsigned long long)((csr_read(htval) << 2) | (csr_read(stval) & 3u)),
				(unsigned long long)r->sepc, (unsigned long long)cause);
	partition_fault(v, "pc=0x%llx scause=%llu stval=0x%llx", (unsigned long long)r->sepc,
			(unsigned long long)cause, (unsigned long long)csr_read(stval));
}
