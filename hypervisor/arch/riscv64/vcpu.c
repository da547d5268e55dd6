/* SPDX-License-Identifier: MIT */
/*
 * Entering a vCPU (VS-mode), and what brings it back: the SBI calls it makes, accesses outside
 * its G-stage map (emulated devices, or a fault that ends the partition), trapped
 * instructions, and the core's own interrupts (kicks, the SBI timer).
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/csr.h>
#include <arch/entry.h>
#include <arch/partition.h>
#include "insn.h"
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/power.h>

#define SBI_EXT_LEGACY_PUTCHAR 0x01u
#define SBI_EXT_BASE 0x10u
#define SBI_EXT_TIME 0x54494d45u
#define SBI_EXT_IPI  0x735049u
#define SBI_EXT_RFENCE 0x52464e43u
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

/*
 * sstatus.FS, HS-level: with V=1 the guest's FPU works only if both this and its own
 * vsstatus.FS are not Off.  The hypervisor has no FPU code (rv64imac), so Initial is left
 * for the guest, whose kernel keeps its own FS and saves its FP registers itself.
 */
#define SSTATUS_FS_INITIAL (1ULL << 13)

#define SBI_SPEC_VERSION   0x02000000u /* 2.0 (major << 24): DBCN is there */
#define SBI_IMPL_ID_TERN   0x5465726eu /* "Tern": not in the SBI's registry of implementations */

/* What the guest finds in a0 and a1: two registers, so that every call returns them in two. */
struct sbi_result {
	int64_t error;
	uint64_t value;
};

#define HSM_STATUS_SUSPENDED      4u
/*
 * hart_suspend types (SBI v2.0): bit 31 says non-retentive; below it, 0 is the default state,
 * 1 - 0x0fffffff are reserved, from 0x10000000 on the platform's own (this one has none).
 */
#define HSM_SUSPEND_NON_RETENTIVE 0x80000000u
#define HSM_SUSPEND_PLATFORM      0x10000000u

/* The guest interrupt file hstatus.VGEIN selects, as at power-on: nothing enabled or pending. */
static void guest_file_reset(void)
{
	csr_write(CSR_VSISELECT, IMSIC_EIDELIVERY);
	csr_write(CSR_VSIREG, 0);
	csr_write(CSR_VSISELECT, IMSIC_EITHRESHOLD);
	csr_write(CSR_VSIREG, 0);
	/* Only the registers of the identities the file has: QEMU refuses the rest. */
	for (unsigned i = 0; i * IMSIC_EIX_BITS <= platform.arch.imsic_num_ids; i += 2) {
		csr_write(CSR_VSISELECT, IMSIC_EIP0 + i);
		csr_write(CSR_VSIREG, 0);
		csr_write(CSR_VSISELECT, IMSIC_EIE0 + i);
		csr_write(CSR_VSIREG, 0);
	}
}

void arch_vcpu_run(struct vcpu *v, uint64_t entry, uint64_t context)
{
	struct riscv_cpu *c = this_cpu();
	const struct partition *p = v->partition;
	struct guest_regs *r = guest_frame(c);
	bool trapless = p->cfg->flags & TERN_PF_IRQ_DIRECT;

	c->vcpu = v;
	atomic_store(&c->posted, 0); /* meant for the vCPU's previous life */
	atomic_store(&c->suspended, false); /* it may have left from a suspend */
	csr_write(CSR_HENVCFG, trapless ? HENVCFG_STCE : 0);
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
	csr_write(hgatp, p->arch.hgatp);
	/* A restarted partition must not see translations from its previous life. */
	hfence_gvma_all();
	csr_write(hstatus, HSTATUS_SPV | HSTATUS_SPVP |
			   ((p->cfg->flags & TERN_PF_WFI_NATIVE) ? 0 : HSTATUS_VTW) |
			   (trapless ? (uint64_t)VCPU_GUEST_FILE << HSTATUS_VGEIN_SHIFT : 0));
	if (trapless)
		guest_file_reset();
	else
		vaplic_update(v); /* what its APLIC holds for this hart, pending while it was off */
	csr_set(sstatus, SSTATUS_SPP | SSTATUS_FS_INITIAL);
	/*
	 * While the guest runs, the core's kicks reach the hypervisor, and a trap-and-emulate
	 * guest's SBI timer.  A trap-less guest's timer is its own: the core's only nudges QEMU.
	 */
	csr_write(sie, trapless ? SIE_SEIE : SIE_SEIE | SIE_STIE);

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

/* HSM hart_get_status: STARTED 0, STOPPED 1, START_PENDING 2 (SUSPENDED 4: hsm_get_status). */
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

static struct sbi_result hsm_get_status(struct vcpu *v, uint32_t hart)
{
	uint64_t status = hsm_status(vcpu_power_of(v, hart));

	if (status == 0u && atomic_load(&cpus[v->partition->vcpu[hart].pcpu].suspended))
		status = HSM_STATUS_SUSPENDED;
	return result(SBI_SUCCESS, status);
}

static void core_interrupts(struct vcpu *v, uint64_t pending);

/*
 * An interrupt of the guest's that is pending and that it enabled (vsie, whatever vsstatus.SIE
 * says, as for WFI): hip's VS bits hold hvip's, the guest file's (hstatus.VGEIN) and
 * vstimecmp's; hie's are the guest's enables.
 */
static bool guest_interrupt_pending(void)
{
	return (csr_read(hip) & csr_read(hie) & (HVIP_VSSIP | HVIP_VSTIP | HVIP_VSEIP)) != 0u;
}

/*
 * HSM hart_suspend(type, resume_addr, opaque), the default types: the vCPU waits on its core
 * until an interrupt of its own is pending and enabled.  The core's own interrupts end each
 * WFI and are taken on the way (the SBI timer's stand-in becomes VSTIP, a posted IPI VSSIP);
 * a kick asking the vCPU to stop leaves from there (vcpu_check_requests), so a guest that
 * suspends for ever still ends with its partition.  Retentive: the call returns.
 * Non-retentive: the guest resumes at resume_addr as hart_start enters it (a0 = hart id,
 * a1 = opaque, satp 0, interrupts off), its other registers as they were.
 */
static struct sbi_result hsm_suspend(struct vcpu *v, struct guest_regs *r)
{
	struct riscv_cpu *c = this_cpu();
	uint32_t type = (uint32_t)r->x[10];
	uint32_t base = type & ~HSM_SUSPEND_NON_RETENTIVE;
	bool retentive = (type & HSM_SUSPEND_NON_RETENTIVE) == 0u;

	if (base != 0u && base < HSM_SUSPEND_PLATFORM)
		return result(SBI_ERR_INVALID_PARAM, 0);
	if (!retentive && guest_ram(v->partition, r->x[11], 4) == NULL)
		return result(SBI_ERR_INVALID_ADDRESS, 0);
	if (base != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	atomic_store(&c->suspended, true);
	while (!guest_interrupt_pending()) {
		wfi();
		core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
	}
	atomic_store(&c->suspended, false);
	if (retentive)
		return result(SBI_SUCCESS, 0);
	csr_write(vsatp, 0);
	csr_clear(vsstatus, SSTATUS_SIE);
	/* The call's return is the resume: a0 = hart id, a1 = opaque, at resume_addr (the
	 * caller steps over the ecall's 4 bytes). */
	r->sepc = r->x[11] - 4u;
	return (struct sbi_result){ (int64_t)v->index, r->x[12] };
}

/* Harts are the partition's own vCPUs, named by index: hart id = vCPU index. */
static struct sbi_result sbi_hsm(struct vcpu *v, uint32_t fn, struct guest_regs *r)
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
		res = hsm_get_status(v, (uint32_t)hart);
	} else if (fn == 3u) {
		res = hsm_suspend(v, r);
	} else {
		/* anything newer: not offered */
	}
	return res;
}

/* The SBI IPI a vCPU of the partition posted to this core's vCPU, and RFENCEs, come with a kick. */
static void take_posted(struct riscv_cpu *c)
{
	uint32_t posted = atomic_exchange(&c->posted, 0);

	if (posted & POSTED_VSSIP)
		csr_set(hvip, HVIP_VSSIP);
	if (posted & POSTED_FENCE)
		hfence_vvma_all();
	if ((posted & POSTED_VAPLIC) && c->vcpu)
		vaplic_update(c->vcpu);
}

void riscv_post(const struct vcpu *target, uint32_t what)
{
	struct riscv_cpu *c = &cpus[target->pcpu];

	(void)atomic_fetch_or(&c->posted, what);
	if (c == this_cpu())
		take_posted(c);
	else
		arch_cpu_kick(target->pcpu);
}

/* Hart mask and base as the calls name them: a base of -1 names all the partition's harts. */
static void harts_named(const struct partition *p, uint64_t *mask, uint64_t *base)
{
	uint32_t n = p->num_vcpus;

	if (*base == ~0ULL) {
		*mask = (n < 64u) ? (BIT(n) - 1u) : ~0ULL;
		*base = 0;
	}
}

/*
 * The harts hart_mask names from hart_mask_base, each sent `what`; SBI_ERR_INVALID_PARAM, and
 * nothing sent, if one is not the partition's.  Nothing is live after the loop: a wait for the
 * harts (wait_taken) is its caller's, else its registers spill on every SBI IPI's way.
 */
static int64_t post_to_harts(const struct vcpu *v, uint64_t mask, uint64_t base, uint32_t what)
{
	const struct partition *p = v->partition;
	uint32_t n = p->num_vcpus;

	harts_named(p, &mask, &base);
	/* Harts base .. base + 63 that are not the partition's: none may be named. */
	uint64_t outside = (base >= n) ? ~0ULL : ((n - base >= 64u) ? 0 : ~(BIT(n - base) - 1u));
	if (mask & outside)
		return SBI_ERR_INVALID_PARAM;
	for (uint64_t m = mask; m != 0u; m &= m - 1u)
		riscv_post(&p->vcpu[base + (unsigned)__builtin_ctzll(m)], what);
	return SBI_SUCCESS;
}

/*
 * Until each of the harts post_to_harts sent `what` has taken it or is not on: only the
 * partition's own cores are waited for, and only while this vCPU has no reason to leave: the
 * core ending the partition takes no posted work, so a wait for it would never end.  Never
 * inlined: in riscv_guest_trap its registers would be saved and restored on every trap.
 */
static __attribute__((noinline)) void wait_taken(const struct vcpu *v, uint64_t mask, uint64_t base, uint32_t what)
{
	const struct partition *p = v->partition;

	harts_named(p, &mask, &base);
	for (uint64_t m = mask; m != 0u; m &= m - 1u) {
		const struct vcpu *t = &p->vcpu[base + (unsigned)__builtin_ctzll(m)];
		while ((atomic_load(&cpus[t->pcpu].posted) & what) && atomic_load(&t->power) == VCPU_ON &&
		       !power_must_leave(p, v)) {
			take_posted(this_cpu()); /* two harts fencing each other both get through */
			arch_cpu_relax();
		}
	}
}

/* send_ipi(hart_mask, hart_mask_base): the guest's supervisor software interrupt on each. */
static struct sbi_result sbi_ipi(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	return result(post_to_harts(v, r->x[10], r->x[11], POSTED_VSSIP), 0);
}

/*
 * remote_fence_i, remote_sfence_vma(_asid): done when the call returns, as the guest's
 * kernel expects; each hart drops all its guest translations (no range is worth the trap).
 * The HFENCE calls are for guests with their own guests: not offered.
 */
static struct sbi_result sbi_rfence(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn > 2u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	int64_t error = post_to_harts(v, r->x[10], r->x[11], POSTED_FENCE);

	if (error == SBI_SUCCESS)
		wait_taken(v, r->x[10], r->x[11], POSTED_FENCE);
	return result(error, 0);
}

static bool sbi_has(uint64_t ext)
{
	return (ext == SBI_EXT_BASE) || (ext == SBI_EXT_TIME) || (ext == SBI_EXT_HSM) ||
	       (ext == SBI_EXT_IPI) || (ext == SBI_EXT_RFENCE) ||
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

/*
 * A trap-less vCPU's SBI timer fires through vstimecmp, with no trap.  QEMU 7.2 can lose it:
 * every return to VS-mode re-evaluates the core's pending interrupts with the VS timer's
 * state read before taking QEMU's global lock, so a VS timer that fires meanwhile (its
 * callback holds that lock) is cleared again as "nothing pending", and a guest waiting in a
 * native WFI, or spinning, never takes it (docs/design.md, "QEMU 7.2 and the VS timer").  The
 * core's own timer, armed a while after the guest's deadline with its interrupt left disabled,
 * makes QEMU evaluate again once the VS timer has fired: no trap, nothing pending for the
 * hypervisor, and a lost VS timer interrupt arrives then.  The guest's next set_timer moves it.
 */
#define VSTIMER_NUDGE_US 1000u

static uint64_t vstimer_nudge(uint64_t deadline)
{
	uint64_t after = VSTIMER_NUDGE_US * arch_counter_freq() / 1000000u;

	return (deadline > ~0ULL - after) ? ~0ULL : deadline + after;
}

/*
 * Trap-and-emulate: the core's own timer stands in for the guest's, and its interrupt sets
 * VSTIP (boot.S's fast path).  Trap-less partitions have Sstc: the call sets their vstimecmp.
 */
/* cppcheck-suppress misra-c2012-2.7 ; `r` is read by csr_write's asm operand, which the addon does not see */
static struct sbi_result sbi_time(const struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	if (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT) {
		csr_write(CSR_VSTIMECMP, r->x[10]); /* trap-less: the guest's own timer fires */
		csr_write(CSR_STIMECMP, vstimer_nudge(r->x[10]));
		csr_clear(hvip, HVIP_VSTIP); /* set only if a trapped WFI found the nudge due */
	} else {
		csr_clear(hvip, HVIP_VSTIP);
		csr_write(CSR_STIMECMP, r->x[10]);
	}
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

/* The counter of an SBI extension's calls. */
static enum stat_id sbi_stat(uint64_t ext)
{
	static const struct {
		uint32_t ext;
		enum stat_id stat;
	} stats[] = {
		{ SBI_EXT_BASE, STAT_SBI_BASE }, { SBI_EXT_TIME, STAT_SBI_TIME },
		{ SBI_EXT_IPI, STAT_SBI_IPI },   { SBI_EXT_RFENCE, STAT_SBI_RFENCE },
		{ SBI_EXT_HSM, STAT_SBI_HSM },   { SBI_EXT_SRST, STAT_SBI_SRST },
		{ SBI_EXT_DBCN, STAT_SBI_DBCN },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(stats); i++) {
		if (stats[i].ext == ext)
			return stats[i].stat;
	}
	return STAT_SBI_OTHER;
}

static struct sbi_result guest_sbi_call(struct vcpu *v, struct guest_regs *r)
{
	uint64_t ext = r->x[17];
	uint32_t fn = (uint32_t)r->x[16];
	struct sbi_result res;

	vcpu_count(v, sbi_stat(ext));
	switch (ext) {
	case SBI_EXT_BASE:
		res = sbi_base(fn, r);
		break;
	case SBI_EXT_TIME:
		res = sbi_time(v, fn, r);
		break;
	case SBI_EXT_IPI:
		res = sbi_ipi(v, fn, r);
		break;
	case SBI_EXT_RFENCE:
		res = sbi_rfence(v, fn, r);
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

/* The core's own interrupts: a kick (requests, posted IPIs), the SBI timer's stand-in. */
static void core_interrupts(struct vcpu *v, uint64_t pending)
{
	if (pending & SIP_STIP) {
		csr_write(CSR_STIMECMP, ~0ULL);
		csr_set(hvip, HVIP_VSTIP);
		vcpu_count(v, STAT_IRQ_INJECTED);
	}
	if ((pending & SIP_SEIP) && riscv_take_kicks()) {
		take_posted(this_cpu());
		vcpu_check_requests(v);
	}
}

static void guest_interrupt(struct vcpu *v, uint64_t irq)
{
	vcpu_count(v, STAT_EXIT_IRQ);
	if (irq == IRQ_S_EXT)
		core_interrupts(v, SIP_SEIP);
	else if (irq == IRQ_S_TIMER)
		core_interrupts(v, SIP_STIP);
	else
		partition_fault(v, "unexpected interrupt %llu", (unsigned long long)irq);
}

/*
 * An exception for the guest's own handler, as the board would raise it: the guest's trap
 * registers (vs*) set, its handler entered in VS-mode with interrupts off.
 */
/* cppcheck-suppress misra-c2012-2.7 ; `tval` is read by csr_write's asm operand, which the addon does not see */
static void inject_exception(struct vcpu *v, struct guest_regs *r, uint64_t cause, uint64_t tval)
{
	uint64_t vsstatus = csr_read(vsstatus);
	bool from_vs = (csr_read(sstatus) & SSTATUS_SPP) != 0u;

	vsstatus &= ~(SSTATUS_SPP | SSTATUS_SPIE | SSTATUS_SIE);
	vsstatus |= (from_vs ? SSTATUS_SPP : 0) | ((csr_read(vsstatus) & SSTATUS_SIE) ? SSTATUS_SPIE : 0);
	csr_write(vsstatus, vsstatus);
	csr_write(vscause, cause);
	csr_write(vstval, tval);
	csr_write(vsepc, r->sepc);
	csr_set(sstatus, SSTATUS_SPP);
	r->sepc = csr_read(vstvec) & ~3ULL;
	vcpu_count(v, STAT_EXCEPTION_INJECTED);
}

/*
 * A guest page fault on nothing the partition has (no RAM, device region or emulated device):
 * the access fault the board's bus raises (cause 1, 5 or 7, the address in vstval), taken by
 * the guest's own handler if its fault policy says so. Not when what failed is the fetch of
 * that handler itself: it would repeat for ever.
 */
static bool inject_outside_access(struct vcpu *v, struct guest_regs *r, uint64_t cause,
				  uint64_t gpa)
{
	uint64_t gva = csr_read(stval);
	uint64_t access = cause == EXC_INST_GUEST_PAGE_FAULT ? (uint64_t)EXC_INST_ACCESS :
			  cause == EXC_STORE_GUEST_PAGE_FAULT ? (uint64_t)EXC_STORE_ACCESS :
			  (uint64_t)EXC_LOAD_ACCESS;

	if (mmio_claimed(v->partition, gpa) || partition_maps(v->partition, gpa) ||
	    r->sepc == (csr_read(vstvec) & ~3ULL) ||
	    !partition_fault_to_guest(v, "gpa=0x%llx pc=0x%llx scause=%llu",
				      (unsigned long long)gpa, (unsigned long long)r->sepc,
				      (unsigned long long)cause))
		return false;
	inject_exception(v, r, access, gva);
	return true;
}

/*
 * A load or store outside the partition's G-stage map: an emulated device's register, or a
 * fault that ends the partition.  The instruction comes decoded in htinst when the core
 * provides it, else it is read from the guest (QEMU 7.2 leaves htinst 0).  A pseudoinstruction
 * there says the access was the guest's own page-table walk reading a PTE outside its memory
 * (htval names the PTE): the partition's fault, whatever device sits at that address.
 */
static void guest_page_fault(struct vcpu *v, struct guest_regs *r, uint64_t cause)
{
	uint64_t gva = csr_read(stval);
	uint64_t gpa = (csr_read(htval) << 2) | (gva & 3u);
	bool store = cause == EXC_STORE_GUEST_PAGE_FAULT;
	struct mmio_insn m;
	uint32_t insn = 0;
	bool decoded;

	if (cause == EXC_INST_GUEST_PAGE_FAULT) {
		if (inject_outside_access(v, r, cause, gpa))
			return;
		partition_fault(v, "fetch outside its memory: gpa=0x%llx pc=0x%llx",
				(unsigned long long)gpa, (unsigned long long)r->sepc);
	}
	/*
	 * htinst is read again where it is decoded: held across these calls, it took one more
	 * saved register in riscv_guest_trap, which every trap pays for (SBI IPI +4 instructions
	 * in the bench).  Nothing between the reads can trap.
	 */
	switch (riscv_tinst_kind(csr_read(CSR_HTINST))) {
	case TINST_ACCESS:
		decoded = riscv_decode_transformed(csr_read(CSR_HTINST), &m);
		break;
	case TINST_NONE:
		decoded = riscv_fetch_guest_insn(r->sepc, &insn) && riscv_decode_mmio(insn, &m);
		break;
	case TINST_PAGE_WALK:
		partition_fault(v, "page-table walk outside its memory: gpa=0x%llx va=0x%llx pc=0x%llx",
				(unsigned long long)(gpa & ~3ULL), (unsigned long long)gva,
				(unsigned long long)r->sepc);
		break;
	default:
		decoded = false;
		break;
	}
	if (!decoded || m.write != store) {
		if (inject_outside_access(v, r, cause, gpa))
			return;
		partition_fault(v, "%s outside its memory: gpa=0x%llx pc=0x%llx insn=0x%x",
				store ? "store" : "load", (unsigned long long)gpa,
				(unsigned long long)r->sepc, insn);
	}
	struct mmio_access a = { .ipa = gpa, .value = store ? r->x[m.reg] : 0, .size = m.size,
				 .write = store };
	(void)memcpy(&a.insn, &m, sizeof(m));
	mmio_trap(v, &a);
}

/* The trapped access's frame and decode (mmio_trap's hooks come back with the access only). */
void arch_mmio_complete(struct vcpu *v, const struct mmio_access *a)
{
	struct guest_regs *r = guest_frame(this_cpu());
	struct mmio_insn m;

	(void)v;
	(void)memcpy(&m, &a->insn, sizeof(m));
	if (!a->write && m.reg != 0u)
		r->x[m.reg] = riscv_load_result(&m, a->value);
	r->sepc += m.length;
}

void arch_mmio_bus_fault(struct vcpu *v, const struct mmio_access *a, enum mmio_result why)
{
	uint64_t cause = why == MMIO_MISALIGNED ?
			 (a->write ? (uint64_t)EXC_STORE_MISALIGNED : (uint64_t)EXC_LOAD_MISALIGNED) :
			 (a->write ? (uint64_t)EXC_STORE_ACCESS : (uint64_t)EXC_LOAD_ACCESS);

	inject_exception(v, guest_frame(this_cpu()), cause, csr_read(stval));
}

void arch_mmio_outside(struct vcpu *v, const struct mmio_access *a)
{
	struct guest_regs *r = guest_frame(this_cpu());

	if (!inject_outside_access(v, r, a->write ? EXC_STORE_GUEST_PAGE_FAULT : EXC_LOAD_GUEST_PAGE_FAULT,
				   a->ipa))
		partition_fault(v, "%s outside its memory: gpa=0x%llx pc=0x%llx",
				a->write ? "store" : "load", (unsigned long long)a->ipa,
				(unsigned long long)r->sepc);
}

/*
 * A trapped WFI (wfi = "trap": hstatus.VTW): the core waits for what would wake the guest's.
 * Its enables are hie's VS bits (vsie is their view), so WFI here wakes on the guest's timer
 * (vstimecmp), its interrupt file (hstatus.VGEIN still selects it: the fallback the guest
 * file needs no SGEI for, the vCPU never leaves its core) and hvip; and on the core's own kick
 * and SBI timer stand-in, taken here rather than by a trap after the return.
 */
static void guest_wfi(struct vcpu *v, struct guest_regs *r)
{
	vcpu_count(v, STAT_EXIT_WFI);
	r->sepc += 4u;
	wfi();
	core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
}

/*
 * A virtual instruction exception: a trapped WFI, or what a guest may not do (an illegal one for
 * it).  A WFI from the guest's user mode traps whatever hstatus.VTW says; on the board the same
 * WFI (mstatus.TW = 0) is an illegal instruction for the kernel, never a wait.
 */
static void guest_virtual_instruction(struct vcpu *v, struct guest_regs *r)
{
	uint32_t insn = (uint32_t)csr_read(stval);
	bool from_vs = (csr_read(sstatus) & SSTATUS_SPP) != 0u;

	if (insn == 0u && !riscv_fetch_guest_insn(r->sepc, &insn))
		insn = 0;
	if (insn == INSN_WFI && from_vs) {
		guest_wfi(v, r);
		return;
	}
	vcpu_count(v, STAT_EXIT_VIRTUAL_INSN);
	inject_exception(v, r, EXC_ILLEGAL_INSTRUCTION, insn);
}

void riscv_guest_trap(struct guest_regs *r)
{
	struct vcpu *v = this_cpu()->vcpu;
	uint64_t cause = csr_read(scause);

	switch (cause) {
	case EXC_VS_ECALL:
		if (r->x[17] == SBI_EXT_LEGACY_PUTCHAR) {
			vcpu_count(v, STAT_SBI_DBCN);
			console_byte(v, (char)r->x[10]);
			r->x[10] = 0;
			r->sepc += 4u;
		} else {
			struct sbi_result res = guest_sbi_call(v, r);
			r->x[10] = (uint64_t)res.error;
			r->x[11] = res.value;
			r->sepc += 4u;
		}
		break;
	case EXC_INST_GUEST_PAGE_FAULT:
	case EXC_LOAD_GUEST_PAGE_FAULT:
	case EXC_STORE_GUEST_PAGE_FAULT:
		guest_page_fault(v, r, cause);
		break;
	case EXC_VIRTUAL_INSTRUCTION:
		guest_virtual_instruction(v, r);
		break;
	default:
		if (cause & SCAUSE_IRQ) {
			guest_interrupt(v, cause & ~SCAUSE_IRQ);
			break;
		}
		vcpu_count(v, STAT_EXIT_OTHER);
		partition_fault(v, "pc=0x%llx scause=%llu stval=0x%llx", (unsigned long long)r->sepc,
				(unsigned long long)cause, (unsigned long long)csr_read(stval));
		break;
	}
}
