/* SPDX-License-Identifier: MIT */
/* Everything that brings a guest into EL2 other than the interrupt fast path. */
#include <arch/gicv3.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>

/* PSCI 1.0 function IDs (SMC32 and SMC64 variants where both exist). */
#define PSCI_VERSION            0x84000000u
#define PSCI_CPU_OFF            0x84000002u
#define PSCI_CPU_ON_32          0x84000003u
#define PSCI_CPU_ON_64          0xc4000003u
#define PSCI_AFFINITY_INFO_32   0x84000004u
#define PSCI_AFFINITY_INFO_64   0xc4000004u
#define PSCI_MIGRATE_INFO_TYPE  0x84000006u
#define PSCI_SYSTEM_OFF         0x84000008u
#define PSCI_SYSTEM_RESET       0x84000009u
#define PSCI_FEATURES           0x8400000au
#define PSCI_NOT_SUPPORTED      (-1)
#define PSCI_MIGRATE_NOT_NEEDED 2          /* no Trusted OS to migrate */


static uint64_t reg_get(const struct guest_regs *r, unsigned n)
{
	return n == 31 ? 0 : r->x[n];
}

static void reg_set(struct guest_regs *r, unsigned n, uint64_t v)
{
	if (n != 31)
		r->x[n] = v;
}

static bool psci_supported(uint32_t fn)
{
	switch (fn) {
	case PSCI_VERSION: case PSCI_CPU_OFF: case PSCI_CPU_ON_32: case PSCI_CPU_ON_64:
	case PSCI_AFFINITY_INFO_32: case PSCI_AFFINITY_INFO_64: case PSCI_MIGRATE_INFO_TYPE:
	case PSCI_SYSTEM_OFF: case PSCI_SYSTEM_RESET: case PSCI_FEATURES:
		return true;
	default:
		return false;
	}
}

/* SMCCC call through HVC or SMC: PSCI on the caller's partition; anything else is not supported. */
static void handle_call(struct vcpu *v, struct guest_regs *r)
{
	uint32_t fn = (uint32_t)r->x[0];
	bool smc32 = !(fn & BIT(30));
	uint64_t a1 = smc32 ? (uint32_t)r->x[1] : r->x[1];
	uint64_t a2 = smc32 ? (uint32_t)r->x[2] : r->x[2];
	uint64_t a3 = smc32 ? (uint32_t)r->x[3] : r->x[3];
	int64_t ret;

	switch (fn) {
	case PSCI_VERSION:
		ret = 0x10000; /* 1.0 */
		break;
	case PSCI_CPU_ON_32:
	case PSCI_CPU_ON_64:
		ret = vcpu_cpu_on(v, a1, a2, a3);
		break;
	case PSCI_AFFINITY_INFO_32:
	case PSCI_AFFINITY_INFO_64:
		ret = vcpu_affinity_info(v, a1, (uint32_t)a2);
		break;
	case PSCI_MIGRATE_INFO_TYPE:
		ret = PSCI_MIGRATE_NOT_NEEDED;
		break;
	case PSCI_FEATURES:
		ret = psci_supported((uint32_t)a1) ? 0 : PSCI_NOT_SUPPORTED;
		break;
	case PSCI_CPU_OFF:
		vcpu_cpu_off(v);
	case PSCI_SYSTEM_OFF:
		partition_system_off(v);
	case PSCI_SYSTEM_RESET:
		partition_system_reset(v);
	default:
		ret = PSCI_NOT_SUPPORTED;
		break;
	}
	r->x[0] = (uint64_t)ret;
}

/* Deliver an Undefined Instruction exception to the guest, as the hardware would have. */
static void inject_undef(struct vcpu *v, struct guest_regs *r)
{
	uint64_t spsr = r->spsr;
	uint64_t vbar = read_sysreg(vbar_el1);
	uint64_t offset = (spsr & 0xf) == 0x4 ? 0x000 : ((spsr & 0xf) == 0x5 ? 0x200 : 0x400);

	write_sysreg(esr_el1, ((uint64_t)EC_UNKNOWN << 26) | ESR_IL);
	write_sysreg(elr_el1, r->elr);
	write_sysreg(spsr_el1, spsr);
	r->elr = vbar + offset;
	r->spsr = 0x3c5u /* EL1h, DAIF masked */;
	vcpu_count(v, STAT_UNDEF_INJECTED);
}

static void handle_sysreg(struct vcpu *v, struct guest_regs *r, uint64_t esr)
{
	uint32_t iss = (uint32_t)esr & 0x1ffffff;
	bool read = iss & 1;
	unsigned rt = (iss >> 5) & 0x1f;

	if (!read && (iss & SYSREG_ISS_MASK) == ISS_ICC_SGI1R) {
		vgic_send_sgi(v, reg_get(r, rt));
		r->elr += 4;
		return;
	}
	/* Group 0 / alias SGIs: guests run Group 1 only; refuse rather than forward. */
	if (!read && ((iss & SYSREG_ISS_MASK) == ISS_ICC_ASGI1R || (iss & SYSREG_ISS_MASK) == ISS_ICC_SGI0R)) {
		vcpu_count(v, STAT_SGI_DENIED);
		r->elr += 4;
		return;
	}
	inject_undef(v, r);
}

/* A trapped WFI that vectors.S could not settle alone: virtual interrupts are in flight. */
void arm64_guest_wfi(struct guest_regs *r)
{
	(void)r;
	vcpu_count(this_cpu()->vcpu, STAT_EXIT_WFI);
	if (!vgic_lrs_pending())
		wfi(); /* the interrupt that ends it is taken after the return to the guest */
}

static void handle_abort(struct vcpu *v, struct guest_regs *r, uint64_t esr, bool data)
{
	uint64_t far = read_sysreg(far_el2);
	uint64_t ipa = ((read_sysreg(hpfar_el2) >> 4) << 12) | (far & 0xfff);
	uint32_t iss = (uint32_t)esr & 0x1ffffff;
	bool isv = iss & BIT(24);

	if (data && isv) {
		unsigned size = 1u << ((iss >> 22) & 3);
		bool write = iss & BIT(6);
		unsigned rt = (iss >> 16) & 0x1f;
		uint64_t value = write ? reg_get(r, rt) : 0;

		if (size < 8 && write)
			value &= BIT(size * 8) - 1;
		if (mmio_emulate(v, ipa, size, write, &value)) {
			vcpu_count(v, STAT_EXIT_MMIO);
			if (!write) {
				if (size < 8)
					value &= BIT(size * 8) - 1;
				if ((iss & BIT(21)) && size < 8 && (value & BIT(size * 8 - 1)))
					value |= ~(BIT(size * 8) - 1); /* SSE: sign-extend */
				if (!(iss & BIT(15)))
					value &= 0xffffffffull; /* SF clear: a W register */
				reg_set(r, rt, value);
			}
			r->elr += 4;
			return;
		}
	}
	partition_fault(v, "ipa=0x%llx pc=0x%llx esr=0x%llx%s", (unsigned long long)ipa,
			(unsigned long long)r->elr, (unsigned long long)esr,
			data ? (isv ? "" : " (not emulatable: no syndrome)") : " (instruction fetch)");
}

void arm64_guest_sync(struct guest_regs *r)
{
	struct vcpu *v = this_cpu()->vcpu;
	uint64_t esr = read_sysreg(esr_el2);

	switch (ESR_EC(esr)) {
	case EC_HVC64:
		vcpu_count(v, STAT_EXIT_HVC);
		handle_call(v, r);
		return;
	case EC_SMC64:
		vcpu_count(v, STAT_EXIT_SMC);
		r->elr += 4; /* a trapped SMC returns to itself */
		handle_call(v, r);
		return;
	case EC_SYSREG:
		vcpu_count(v, STAT_EXIT_SYSREG);
		handle_sysreg(v, r, esr);
		return;
	case EC_DABT_LOW:
		handle_abort(v, r, esr, true);
		return;
	case EC_IABT_LOW:
		handle_abort(v, r, esr, false);
		return;
	default:
		vcpu_count(v, STAT_EXIT_OTHER);
		partition_fault(v, "unhandled exception class 0x%llx pc=0x%llx esr=0x%llx",
				(unsigned long long)ESR_EC(esr), (unsigned long long)r->elr,
				(unsigned long long)esr);
	}
}

void arm64_guest_irq(uint32_t intid, struct guest_regs *r)
{
	struct arm64_cpu *c = this_cpu();
	struct vcpu *v = c->vcpu;

	(void)r;
	if (intid >= 1020)
		return; /* spurious */
	vcpu_count(v, STAT_EXIT_IRQ);
	write_sysreg(icc_eoir1_el1, intid);
	if (vgic_owned_hw(c, intid)) {
		vgic_inject(c, intid); /* deactivated later by the guest's EOI */
		return;
	}
	write_sysreg(icc_dir_el1, intid);
	if (intid == PPI_MAINTENANCE)
		vgic_maintenance(c);
}

/*
 * The control path: a kick from another core (stop, restart, SGIs for a trapping guest), or
 * the console's input.
 */
void arm64_guest_fiq(struct guest_regs *r)
{
	struct arm64_cpu *c = this_cpu();
	uint64_t intid = read_sysreg(icc_iar0_el1);

	(void)r;
	if (intid >= 1020)
		return;
	if (intid == platform.uart_intid)
		console_rx(); /* drained before the EOI: the UART's line is level-sensitive */
	write_sysreg(icc_eoir0_el1, intid);
	if (!c->direct)
		write_sysreg(icc_dir_el1, intid); /* EOImode 1 on a trap-and-inject core */
	vcpu_count(c->vcpu, STAT_EXIT_IRQ);
	if (intid == SGI_KICK) {
		vgic_take_incoming(c);
		vcpu_check_requests(c->vcpu);
	}
}

void arm64_guest_async_abort(struct guest_regs *r, int kind)
{
	struct vcpu *v = this_cpu()->vcpu;

	partition_fault(v, "%s pc=0x%llx esr=0x%llx", kind == 1 ? "unexpected exception" : "SError",
			(unsigned long long)r->elr, (unsigned long long)read_sysreg(esr_el2));
}
