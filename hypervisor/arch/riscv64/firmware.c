/* SPDX-License-Identifier: MIT */
/*
 * The SBI both ways: the calls the hypervisor makes into the board's firmware (OpenSBI) below
 * it, and the SBI it gives its guests (console, timer, IPIs, remote fences, harts as vCPUs,
 * reset), as the calls a guest's ecall makes.
 */
#include <arch/cpu.h>
#include <arch/entry.h>
#include <arch/firmware.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/manager.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/power.h>

#define SBI_SPEC_VERSION   0x02000000u /* 2.0 (major << 24): DBCN is there */
#define SBI_IMPL_ID_TERN   0x5465726eu /* "Tern": not in the SBI's registry of implementations */

/*
 * hart_suspend types (SBI v2.0): bit 31 says non-retentive; below it, 0 is the default state,
 * 1 - 0x0fffffff are reserved, from 0x10000000 on the platform's own (this one has none).
 */
#define HSM_SUSPEND_NON_RETENTIVE 0x80000000u
#define HSM_SUSPEND_PLATFORM      0x10000000u

#ifndef TERN_HOST
/* Host tests: the board's firmware is not theirs to call (cpu.c, its caller, is not built there). */
struct sbiret sbi_call(uint32_t ext, uint32_t fn, uint64_t a0, uint64_t a1, uint64_t a2)
{
	register uint64_t r0 __asm__("a0") = a0;
	register uint64_t r1 __asm__("a1") = a1;
	register uint64_t r2 __asm__("a2") = a2;
	register uint64_t r6 __asm__("a6") = fn;
	register uint64_t r7 __asm__("a7") = ext;

	__asm__ volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
	return (struct sbiret){ (int64_t)r0, r1 };
}
#endif

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

static struct sbiret result(int64_t error, uint64_t value)
{
	return (struct sbiret){ error, value };
}

/* DBCN write(num_bytes, base_lo, base_hi): at most a page a call, the guest loops for more. */
static struct sbiret dbcn_write(struct vcpu *v, const struct guest_regs *r)
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

struct sbiret sbi_dbcn(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	struct sbiret res = result(SBI_ERR_NOT_SUPPORTED, 0);

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

/*
 * A manager's call (tern/manager.h).  Busy is SBI_ERR_ALREADY_STARTED: a command was started
 * and its reply is not read yet (what the caller does about it, poll, is what that error asks
 * of a caller elsewhere too); a reply asked for with nothing submitted is SBI_ERR_INVALID_STATE.
 */
static struct sbiret sbi_tern_manager(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	enum manager_result res;
	uint64_t full = 0;
	int64_t error;

	if (fn == SBI_TERN_SUBMIT)
		res = manager_submit(v, r->x[10], r->x[11]);
	else if (fn == SBI_TERN_REPLY)
		res = manager_reply(v, r->x[10], r->x[11], &full);
	else
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	switch (res) {
	case MANAGER_OK:          error = SBI_SUCCESS; break;
	case MANAGER_DENIED:      error = SBI_ERR_DENIED; break;
	case MANAGER_INVALID:     error = SBI_ERR_INVALID_PARAM; break;
	case MANAGER_BAD_ADDRESS: error = SBI_ERR_INVALID_ADDRESS; break;
	case MANAGER_BUSY:        error = SBI_ERR_ALREADY_STARTED; break;
	case MANAGER_NO_COMMAND:
	default:                  error = SBI_ERR_INVALID_STATE; break;
	}
	return result(error, full);
}

struct sbiret sbi_other(struct vcpu *v, uint64_t ext, uint32_t fn, const struct guest_regs *r)
{
	if (ext != SBI_EXT_TERN_MANAGER)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	/* The dispatch counted it as unsupported (traps.c's sbi_stat knows the SBI's own only). */
	v->stats[STAT_SBI_OTHER]--;
	vcpu_count(v, STAT_MANAGER_CALL);
	return sbi_tern_manager(v, fn, r);
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

/* HSM hart_get_status's state of a vCPU (SUSPENDED: hsm_get_status). */
static uint64_t hsm_status(enum vcpu_power power)
{
	uint64_t status;

	switch (power) {
	case VCPU_ON:
		status = SBI_HSM_STARTED;
		break;
	case VCPU_ON_PENDING:
		status = SBI_HSM_START_PENDING;
		break;
	default:
		status = SBI_HSM_STOPPED;
		break;
	}
	return status;
}

static struct sbiret hsm_get_status(struct vcpu *v, uint32_t hart)
{
	uint64_t status = hsm_status(vcpu_power_of(v, hart));

	if (status == SBI_HSM_STARTED && atomic_load(&v->partition->vcpu[hart].arch.suspended))
		status = SBI_HSM_SUSPENDED;
	return result(SBI_SUCCESS, status);
}

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
 * hart_suspend on a shared core: the core is not the vCPU's to wait on.  What the core has
 * pending is taken (either may switch); if that leaves one of the vCPU's own interrupts pending
 * this returns, and the call returns as the caller's loop would; else the frame is made the
 * call's return (the ecall stepped over; non-retentive, at resume_addr as below) and the vCPU
 * waits blocked, `suspended` until arch_vcpu_resume.
 */
static __attribute__((noinline)) void shared_suspend(struct vcpu *v, struct guest_regs *r,
						     bool retentive)
{
	riscv_core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
	if (guest_interrupt_pending())
		return;
	if (retentive) {
		r->x[10] = SBI_SUCCESS;
		r->x[11] = 0;
		r->sepc += 4u;
	} else {
		csr_write(vsatp, 0);
		csr_clear(vsstatus, SSTATUS_SIE);
		r->sepc = r->x[11];
		r->x[10] = v->index;
		r->x[11] = r->x[12];
	}
	sched_guest_waits(v);
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
static struct sbiret hsm_suspend(struct vcpu *v, struct guest_regs *r)
{
	uint32_t type = (uint32_t)r->x[10];
	uint32_t base = type & ~HSM_SUSPEND_NON_RETENTIVE;
	bool retentive = (type & HSM_SUSPEND_NON_RETENTIVE) == 0u;

	if (base != 0u && base < HSM_SUSPEND_PLATFORM)
		return result(SBI_ERR_INVALID_PARAM, 0);
	if (!retentive && guest_ram(v->partition, r->x[11], 4) == NULL)
		return result(SBI_ERR_INVALID_ADDRESS, 0);
	if (base != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	atomic_store(&v->arch.suspended, true);
	if (this_cpu()->shared)
		shared_suspend(v, r, retentive);
	while (!guest_interrupt_pending()) {
		wfi();
		riscv_core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
	}
	atomic_store(&v->arch.suspended, false);
	if (retentive)
		return result(SBI_SUCCESS, 0);
	csr_write(vsatp, 0);
	csr_clear(vsstatus, SSTATUS_SIE);
	/* The call's return is the resume: a0 = hart id, a1 = opaque, at resume_addr (the
	 * caller steps over the ecall's 4 bytes). */
	r->sepc = r->x[11] - 4u;
	return (struct sbiret){ (int64_t)v->index, r->x[12] };
}

/* Harts are the partition's own vCPUs, named by index: hart id = vCPU index. */
struct sbiret sbi_hsm(struct vcpu *v, uint32_t fn, struct guest_regs *r)
{
	uint64_t hart = r->x[10];
	bool own = hart < v->partition->num_vcpus;
	struct sbiret res = result(SBI_ERR_NOT_SUPPORTED, 0);

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
	struct partition *p = v->partition;
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
 * A vCPU its shared core has switched out (arch_vcpu_save): it takes what was posted to it
 * before it runs again (arch_vcpu_resume), so a fence for it is as good as done.  Waiting
 * would never end for one on the caller's own core.  The post was made before this look, and
 * a resume sets the core's vCPU before it takes the posts.
 */
static bool switched_out(const struct vcpu *t)
{
	const struct riscv_cpu *c = &cpus[t->pcpu];

	return c->shared && __atomic_load_n(&c->vcpu, __ATOMIC_SEQ_CST) != t;
}

/*
 * Until each of the harts post_to_harts sent `what` has taken it or is not on: only the
 * partition's own cores are waited for, and only while this vCPU has no reason to leave: the
 * core ending the partition takes no posted work, so a wait for it would never end.  Never
 * inlined: where the SBI calls were dispatched, its registers were saved and restored on every trap.
 */
static __attribute__((noinline)) void wait_taken(struct vcpu *v, uint64_t mask, uint64_t base, uint32_t what)
{
	const struct partition *p = v->partition;

	harts_named(p, &mask, &base);
	for (uint64_t m = mask; m != 0u; m &= m - 1u) {
		const struct vcpu *t = &p->vcpu[base + (unsigned)__builtin_ctzll(m)];
		while ((atomic_load(&t->arch.posted) & what) && atomic_load(&t->power) == VCPU_ON &&
		       !power_must_leave(p, v) && !switched_out(t)) {
			riscv_take_posted(v); /* two harts fencing each other both get through */
			arch_cpu_relax();
		}
	}
}

/* send_ipi(hart_mask, hart_mask_base): the guest's supervisor software interrupt on each. */
struct sbiret sbi_ipi(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
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
struct sbiret sbi_rfence(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
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
	       (ext == SBI_EXT_SRST) || (ext == SBI_EXT_DBCN) || (ext == SBI_EXT_LEGACY_PUTCHAR) ||
	       (ext == SBI_EXT_TERN_MANAGER); /* every partition's probe: a call says who may */
}

struct sbiret sbi_base(uint32_t fn, const struct guest_regs *r)
{
	struct sbiret res = result(SBI_SUCCESS, 0); /* mvendorid, marchid, mimpid: 0 */

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
 * VSTIP (vectors.S's fast path).  Trap-less partitions have Sstc: the call sets their vstimecmp.
 */
/* cppcheck-suppress misra-c2012-2.7 ; `r` is read by csr_write's asm operand, which the addon does not see */
struct sbiret sbi_time(const struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	if (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT) {
		csr_write(CSR_VSTIMECMP, r->x[10]); /* trap-less: the guest's own timer fires */
		/* A shared core's stimecmp is its scheduler's, whose events make QEMU look again anyway. */
		if (!this_cpu()->shared)
			csr_write(CSR_STIMECMP, vstimer_nudge(r->x[10]));
		csr_clear(hvip, HVIP_VSTIP); /* set only if a trapped WFI found the nudge due */
	} else if (this_cpu()->shared) {
		csr_clear(hvip, HVIP_VSTIP);
		riscv_shared_guest_timer(r->x[10]); /* the core's scheduling event shares stimecmp */
	} else {
		csr_clear(hvip, HVIP_VSTIP);
		csr_write(CSR_STIMECMP, r->x[10]);
	}
	return result(SBI_SUCCESS, 0);
}

/* SRST system_reset(type, reason): shutdown or reboot this partition, never the board. */
struct sbiret sbi_srst(struct vcpu *v, uint32_t fn, const struct guest_regs *r)
{
	if (fn != 0u)
		return result(SBI_ERR_NOT_SUPPORTED, 0);
	if (r->x[10] == 0u)
		partition_system_off(v);
	if (r->x[10] <= 2u) /* cold or warm reboot */
		partition_system_reset(v);
	return result(SBI_ERR_INVALID_PARAM, 0);
}

/* The legacy console putchar (extension 0x01): its one result in a0. */
void sbi_legacy_putchar(struct vcpu *v, struct guest_regs *r)
{
	vcpu_count(v, STAT_SBI_DBCN);
	console_byte(v, (char)r->x[10]);
	r->x[10] = 0;
	r->sepc += 4u;
}
