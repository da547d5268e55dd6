/* SPDX-License-Identifier: MIT */
/*
 * What brings a vCPU back to the hypervisor: the SBI calls it makes (firmware.c), accesses
 * outside its G-stage map (emulated devices, or a fault that ends the partition), trapped
 * instructions, and the core's own interrupts (kicks with what was posted to its vCPU, the
 * SBI timer); and the exceptions the hypervisor raises in the guest.
 */
#include <arch/cpu.h>
#include <arch/decode.h>
#include <arch/entry.h>
#include <arch/firmware.h>
#include <arch/imsic.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vaplic.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>

/* The SBI IPI a vCPU of the partition posted to this core's vCPU, and RFENCEs, come with a kick. */
void riscv_take_posted(struct vcpu *v)
{
	uint32_t posted = atomic_exchange(&v->arch.posted, 0);

	if (posted & POSTED_VSSIP)
		csr_set(hvip, HVIP_VSSIP);
	if (posted & POSTED_FENCE)
		hfence_vvma_all();
	if (posted & POSTED_VAPLIC)
		vaplic_update(v);
}

void riscv_post(struct vcpu *target, uint32_t what)
{
	(void)atomic_fetch_or(&target->arch.posted, what);
	if (target == this_cpu()->vcpu)
		riscv_take_posted(target);
	else
		arch_cpu_kick(target->pcpu);
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

/*
 * The guest's SBI call, to its extension's handler (firmware.c).  The dispatch is here, in
 * the trap's own frame: as a function of firmware.c's it was a frame more on every call
 * (SBI IPI +6 instructions in the bench).
 */
static struct sbiret guest_sbi_call(struct vcpu *v, struct guest_regs *r)
{
	uint64_t ext = r->x[17];
	uint32_t fn = (uint32_t)r->x[16];
	struct sbiret res;

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
		/* Out of line: the SBI's own extensions' dispatch stays as it was, instruction for instruction. */
		res = sbi_other(v, ext, fn, r);
		break;
	}
	return res;
}


/* The core's own interrupts: a kick (requests, posted IPIs), the SBI timer's stand-in. */
/* A kick: what was posted to v, then the requests (which may leave). */
static inline __attribute__((always_inline)) void take_kick(struct vcpu *v, uint64_t pending)
{
	if ((pending & SIP_SEIP) && riscv_take_kicks()) {
		riscv_take_posted(v);
		vcpu_check_requests(v);
	}
}

static __attribute__((noinline)) void shared_core_interrupts(struct vcpu *v, uint64_t pending);

void riscv_core_interrupts(struct vcpu *v, uint64_t pending)
{
	if ((pending & SIP_STIP) && this_cpu()->shared) {
		shared_core_interrupts(v, pending); /* out of line: the kick's path stays as it was */
		return;
	}
	if (pending & SIP_STIP) {
		csr_write(CSR_STIMECMP, ~0ULL);
		csr_set(hvip, HVIP_VSTIP);
		vcpu_count(v, STAT_IRQ_INJECTED);
	}
	take_kick(v, pending);
}

/* A shared core's timer: two deadlines on one stimecmp (riscv_shared_timer: may switch), then the rest. */
static void shared_core_interrupts(struct vcpu *v, uint64_t pending)
{
	riscv_shared_timer(v);
	take_kick(v, pending);
}

/* A sibling's guest file on a shared core (SGEI): the loop decides, as for a kick. */
static __attribute__((noinline)) void shared_guest_files(struct vcpu *v)
{
	riscv_guest_files_raised();
	vcpu_check_requests(v);
}

static void guest_interrupt(struct vcpu *v, uint64_t irq)
{
	vcpu_count(v, STAT_EXIT_IRQ);
	if (irq == IRQ_S_EXT)
		riscv_core_interrupts(v, SIP_SEIP);
	else if (irq == IRQ_S_TIMER)
		riscv_core_interrupts(v, SIP_STIP);
	else if (irq == IRQ_S_GEXT && v->shared)
		shared_guest_files(v);
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
	_Static_assert(sizeof(m) <= sizeof(a.insn), "the decode travels in mmio_access.insn");
	/* cppcheck-suppress misra-c2012-21.15 ; the decode's bytes travel in the core's opaque `insn`, and come back whole (arch_mmio_complete) */
	(void)memcpy(&a.insn, &m, sizeof(m));
	mmio_trap(v, &a);
}

/* The trapped access's frame and decode (mmio_trap's hooks come back with the access only). */
void arch_mmio_complete(struct vcpu *v, const struct mmio_access *a)
{
	struct guest_regs *r = guest_frame(this_cpu());
	struct mmio_insn m;

	(void)v;
	/* cppcheck-suppress misra-c2012-21.15 ; guest_page_fault's decode, back from the core's opaque `insn` */
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
 * On a shared core the core is the scheduler's, not v's to wait on: what the core has pending
 * is taken (a kick, a deadline: either may switch), then if none of v's own interrupts is
 * pending and enabled, v waits as blocked (sched_guest_waits) and another runs.  One that
 * arrives after this look comes with a kick, which the core's loop takes.
 */
static __attribute__((noinline)) void shared_wfi(struct vcpu *v)
{
	riscv_core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
	if ((csr_read(hip) & csr_read(hie) & HIDELEG_GUEST) == 0u)
		sched_guest_waits(v);
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
	if (this_cpu()->shared) {
		shared_wfi(v);
		return;
	}
	wfi();
	riscv_core_interrupts(v, csr_read(sip) & (SIP_SEIP | SIP_STIP));
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

/*
 * A trap-less vCPU of a shared core has a guest interrupt file of its own there (VGEIN while it
 * runs, hgeie's SGEI while it is saved): as many as the hart has.
 */
uint32_t arch_shared_direct_vcpus(void)
{
	return riscv_guest_files();
}

/*
 * A trap-less vCPU stays on its core: its file, the G-stage page that maps it and the APLIC
 * targets that name it are that hart's, and nothing moves them yet.
 */
const char *arch_vcpu_can_move(const struct vcpu *v)
{
	if (v->partition->cfg->flags & TERN_PF_IRQ_DIRECT)
		return "a trap-less vCPU (irq = \"direct\") keeps its guest interrupt file on its core";
	return NULL;
}

bool arch_direct_wfi_trap(void)
{
	return true;
}


void riscv_guest_trap(struct guest_regs *r)
{
	struct vcpu *v = this_cpu()->vcpu;
	uint64_t cause = csr_read(scause);

	switch (cause) {
	case EXC_VS_ECALL:
		if (r->x[17] == SBI_EXT_LEGACY_PUTCHAR) {
			sbi_legacy_putchar(v, r);
		} else {
			struct sbiret res = guest_sbi_call(v, r);
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
