/* SPDX-License-Identifier: MIT */
/* The riscv64 hardware on the host (fake_riscv64.h), and what cpu.c, imsic.c and the assembly define. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/sysreg.h>
#include <arch/entry.h>
#include <arch/imsic.h>
#include <arch/io.h>
#include <arch/partition.h>
#include <arch/vaplic.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include "fake_riscv64.h"

struct riscv_cpu cpus[MAX_CPUS];
uint8_t fake_aplic[FAKE_APLIC_SIZE] __attribute__((aligned(0x1000)));
uint32_t fake_aplic_input[4];
struct fake_aplic_write fake_aplic_log[FAKE_APLIC_LOG];
unsigned long fake_aplic_writes;
void (*fake_aplic_write_hook)(uint32_t offset, uint32_t value);
uint64_t fake_vsireg[FAKE_CPUS][256];
unsigned fake_guest_files = 4;

static uint8_t stacks[FAKE_CPUS][4096] __attribute__((aligned(16)));
static bool kicked[FAKE_CPUS];
static uint32_t eiids[FAKE_CPUS][16];
static unsigned eiid_count[FAKE_CPUS];

__attribute__((constructor)) static void map_imsic(void)
{
	void *at = mmap((void *)(uintptr_t)FAKE_IMSIC_BASE, FAKE_IMSIC_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (at != (void *)(uintptr_t)FAKE_IMSIC_BASE) {
		fprintf(stderr, "fake: cannot map the IMSIC at 0x%x\n", FAKE_IMSIC_BASE);
		abort();
	}
}

static unsigned cpu_checked(unsigned cpu)
{
	if (cpu >= FAKE_CPUS)
		abort();
	return cpu;
}

/* ---- CSRs ---- */

#define VS_INTERRUPTS (HVIP_VSSIP | HVIP_VSTIP | HVIP_VSEIP)

/* Every CSR the code under test may touch, as arch/sysreg.h's macros spell it; anything else is a test's bug. */
static const char *const csr_names[] = {
	"sstatus", "sie", "sip", "scause", "stval", "sepc",
	"hstatus", "hgatp", "hvip", "hie", "hip", "htval", "0x64a" /* htinst */, "0x60a" /* henvcfg */,
	"vsstatus", "vsie", "vstvec", "vsscratch", "vsepc", "vscause", "vstval", "vsatp",
	"0x14d" /* stimecmp */, "0x24d" /* vstimecmp */,
	"0x607" /* hgeie */, "0xe12" /* hgeip: the guest files with one pending and enabled (a test's) */,
	"0x250" /* vsiselect */, "0x251" /* vsireg */,
};
#define NUM_CSRS (sizeof(csr_names) / sizeof(csr_names[0]))
enum { VSISELECT = NUM_CSRS - 2, VSIREG = NUM_CSRS - 1 };
static uint64_t csrs[FAKE_CPUS][NUM_CSRS];

static unsigned csr_index(const char *name)
{
	for (unsigned i = 0; i < NUM_CSRS; i++) {
		if (!strcmp(csr_names[i], name))
			return i;
	}
	fprintf(stderr, "fake: CSR %s is not in tests/unit/fake/riscv64/riscv64.c\n", name);
	abort();
}

uint64_t fake_csr(unsigned cpu, const char *name)
{
	return csrs[cpu_checked(cpu)][csr_index(name)];
}

void fake_csr_put(unsigned cpu, const char *name, uint64_t value)
{
	csrs[cpu_checked(cpu)][csr_index(name)] = value;
}

uint64_t fake_csr_read(const char *csr)
{
	/* hip's VS bits hold hvip's, as on the hart, besides what a test or a WFI made pending. */
	if (!strcmp(csr, "hip"))
		return fake_csr(fake_cpu, csr) | (fake_csr(fake_cpu, "hvip") & VS_INTERRUPTS);
	return fake_csr(fake_cpu, csr);
}

void fake_csr_write(const char *csr, uint64_t value)
{
	unsigned cpu = cpu_checked(fake_cpu);
	unsigned i = csr_index(csr);

	csrs[cpu][i] = value;
	/*
	 * arch_vcpu_quiesce (vcpu.c) is the only writer of hie = 0: a vCPU stopped (counted as on
	 * arm64: arch_vcpu_run quiesces too, before it runs).
	 */
	if (!strcmp(csr, "hie") && value == 0u && fake_cores[cpu].running)
		fake_cores[cpu].quiesces++;
	/* The guest file's registers behind vsireg, by vsiselect (the AIA's indirect access). */
	if (i == VSIREG)
		fake_vsireg[cpu][csrs[cpu][VSISELECT] & 0xff] = value;
}

void fake_csr_set(const char *csr, uint64_t bits)
{
	fake_csr_write(csr, fake_csr_read(csr) | bits);
}

void fake_csr_clear(const char *csr, uint64_t bits)
{
	fake_csr_write(csr, fake_csr_read(csr) & ~bits);
}

uint64_t fake_csr_swap(const char *csr, uint64_t value)
{
	uint64_t old = fake_csr_read(csr);

	fake_csr_write(csr, value);
	return old;
}

const char *fake_csr_name(unsigned i)
{
	return i < NUM_CSRS ? csr_names[i] : NULL;
}

/* ---- FP: fp.S's, on the fake core's registers ---- */

struct riscv_fp fake_fp[FAKE_CPUS];

#define SSTATUS_FS_MASK (3ULL << 13)

/* As the hart: with sstatus.FS Off an FP instruction is illegal, the hypervisor's bug. */
static unsigned fp_core(void)
{
	unsigned cpu = cpu_checked(fake_cpu);

	if (!(fake_csr(cpu, "sstatus") & SSTATUS_FS_MASK)) {
		fprintf(stderr, "fake: FP registers touched with sstatus.FS Off\n");
		abort();
	}
	return cpu;
}

void riscv_fp_save(struct riscv_fp *fp)
{
	*fp = fake_fp[fp_core()];
}

void riscv_fp_restore(const struct riscv_fp *fp)
{
	fake_fp[fp_core()] = *fp;
}

/* ---- instructions ---- */

static const char *const insn_names[] = { "wfi", "hfence.gvma", "hfence.vvma", "fence rw, rw" };
#define NUM_INSNS (sizeof(insn_names) / sizeof(insn_names[0]))
static unsigned insns[FAKE_CPUS][NUM_INSNS];

static unsigned insn_index(const char *what)
{
	for (unsigned i = 0; i < NUM_INSNS; i++) {
		if (!strcmp(insn_names[i], what))
			return i;
	}
	fprintf(stderr, "fake: instruction %s is not in tests/unit/fake/riscv64/riscv64.c\n", what);
	abort();
}

/*
 * A WFI of a vCPU in SBI HSM suspend returns when something is pending: the lowest of the
 * guest's own enabled interrupts, as if it fired, or with none enabled the one thing left that
 * can end the wait, an operator's stop and its kick.  Other WFIs just return.
 */
static void suspend_wakes(unsigned cpu)
{
	struct riscv_cpu *c = fake_this_cpu();
	uint64_t enabled = fake_csr(cpu, "hie") & VS_INTERRUPTS;

	if (c->vcpu == NULL || !atomic_load(&c->vcpu->arch.suspended))
		return;
	if (enabled) {
		fake_csr_put(cpu, "hip", fake_csr(cpu, "hip") | (enabled & -enabled));
		return;
	}
	partition_request(c->vcpu->partition, PARTITION_REQ_STOP);
	kicked[cpu] = true;
	fake_csr_put(cpu, "sip", fake_csr(cpu, "sip") | SIP_SEIP);
}

void fake_insn(const char *what)
{
	unsigned i = insn_index(what);

	insns[cpu_checked(fake_cpu)][i]++;
	if (i == 0u) /* wfi */
		suspend_wakes(fake_cpu);
}

unsigned fake_insn_count(unsigned cpu, const char *what)
{
	return insns[cpu_checked(cpu)][insn_index(what)];
}

/* ---- the board's APLIC ---- */

#define APLIC_SETIP    0x1c00u
#define APLIC_SETIPNUM 0x1cdcu
#define APLIC_IN_CLRIP 0x1d00u
#define APLIC_CLRIPNUM 0x1ddcu
#define APLIC_SETIE    0x1e00u
#define APLIC_SETIENUM 0x1edcu
#define APLIC_CLRIENUM 0x1fdcu

static void put32(uint32_t offset, uint32_t value)
{
	memcpy(fake_aplic + offset, &value, 4);
}

uint32_t fake_aplic_reg(uint32_t offset)
{
	uint32_t v;

	memcpy(&v, fake_aplic + offset, 4);
	return v;
}

/* One source's bit in a word register (setip, setie), as the *num registers change it. */
static void source_bit(uint32_t base, uint32_t s, bool on)
{
	uint32_t off = base + 4u * (s / 32u);
	uint32_t v = fake_aplic_reg(off);

	if (s == 0 || s >= FAKE_APLIC_SOURCES)
		return; /* no such source: the board ignores it */
	put32(off, on ? v | (1u << (s % 32u)) : v & ~(1u << (s % 32u)));
}

static uint32_t aplic_offset(paddr_t addr)
{
	paddr_t base = (uintptr_t)fake_aplic;

	if (addr < base || addr - base > FAKE_APLIC_SIZE - 4 || (addr & 3)) {
		fprintf(stderr, "fake: access at 0x%llx is not the fake APLIC's\n", (unsigned long long)addr);
		abort();
	}
	return (uint32_t)(addr - base);
}

uint32_t io_read32(paddr_t addr)
{
	uint32_t off = aplic_offset(addr);

	if (off >= APLIC_IN_CLRIP && off < APLIC_IN_CLRIP + 16)
		return fake_aplic_input[(off - APLIC_IN_CLRIP) / 4];
	return fake_aplic_reg(off);
}

void io_write32(paddr_t addr, uint32_t value)
{
	uint32_t off = aplic_offset(addr);

	if (fake_aplic_write_hook)
		fake_aplic_write_hook(off, value);
	fake_aplic_log[fake_aplic_writes++ % FAKE_APLIC_LOG] = (struct fake_aplic_write){ off, value };
	if (off == APLIC_SETIPNUM)
		fake_raised_record(value);
	if (off == APLIC_SETIPNUM || off == APLIC_CLRIPNUM)
		source_bit(APLIC_SETIP, value, off == APLIC_SETIPNUM);
	else if (off == APLIC_SETIENUM || off == APLIC_CLRIENUM)
		source_bit(APLIC_SETIE, value, off == APLIC_SETIENUM);
	else
		put32(off, value);
}

uint32_t fake_imsic_seteipnum(unsigned cpu, unsigned file)
{
	uint32_t v;

	memcpy(&v, &fake_imsic[cpu_checked(cpu)][file * IMSIC_FILE_SIZE], 4);
	return v;
}

/* ---- cores: what cpu.c, imsic.c and the assembly do ---- */

struct riscv_cpu *fake_this_cpu(void)
{
	return &cpus[cpu_checked(fake_cpu)];
}

void fake_cpu_init(unsigned cpu)
{
	struct riscv_cpu *c = &cpus[cpu_checked(cpu)];

	c->id = cpu;
	c->stack_top = (uintptr_t)stacks[cpu] + sizeof(stacks[cpu]);
	fake_cores[cpu].online = true;
}

void fake_board_reset(void)
{
	memset(fake_aplic, 0, sizeof(fake_aplic));
	memset(fake_aplic_input, 0, sizeof(fake_aplic_input));
	memset(fake_imsic, 0, FAKE_IMSIC_SIZE);
	fake_aplic_writes = 0;
	unsigned saved = fake_cpu;
	fake_cpu = 0;
	aplic_init(); /* as riscv_boot_primary does */
	fake_cpu = saved;
}

struct guest_regs *fake_guest_regs(unsigned cpu)
{
	return guest_frame(&cpus[cpu_checked(cpu)]);
}

void fake_raise_eiid(unsigned cpu, uint32_t eiid)
{
	cpu_checked(cpu);
	if (eiid_count[cpu] < 16)
		eiids[cpu][eiid_count[cpu]++] = eiid;
}

bool riscv_take_kicks(void)
{
	unsigned cpu = cpu_checked(fake_cpu);
	bool k = kicked[cpu];

	kicked[cpu] = false;
	fake_csr_put(cpu, "sip", fake_csr(cpu, "sip") & ~SIP_SEIP); /* the file has nothing left */
	while (eiid_count[cpu]) {
		uint32_t id = eiids[cpu][0];
		memmove(&eiids[cpu][0], &eiids[cpu][1], --eiid_count[cpu] * sizeof(eiids[0][0]));
		/* As imsic.c's: the console's input, or a trap-and-emulate partition's source. */
		if (id == EIID_CONSOLE) {
			console_rx();
			aplic_console_retrigger();
		} else {
			vaplic_host_interrupt(id);
		}
	}
	return k;
}

unsigned riscv_guest_files(void)
{
	return fake_guest_files;
}

/* The guest runs with its MMU off in these tests: its virtual addresses are its RAM's. */
bool riscv_fetch_guest_insn(uint64_t gva, uint32_t *insn)
{
	const struct tern_config_partition *c = fake_this_cpu()->vcpu->partition->cfg;
	uint16_t half[2];

	if (gva < c->ram_ipa || gva - c->ram_ipa > c->ram_size - 2)
		return false;
	memcpy(&half[0], (const void *)(uintptr_t)(c->ram_hpa + (gva - c->ram_ipa)), 2);
	*insn = half[0];
	if ((half[0] & 3) != 3)
		return true;
	if (gva - c->ram_ipa > c->ram_size - 4)
		return false;
	memcpy(&half[1], (const void *)(uintptr_t)(c->ram_hpa + (gva - c->ram_ipa) + 2), 2);
	*insn |= (uint32_t)half[1] << 16;
	return true;
}

void guest_enter(struct guest_regs *r)
{
	struct fake_core *fc = &fake_cores[fake_cpu];

	fc->running = fake_this_cpu()->vcpu;
	fc->entry = r->sepc;
	fc->context = r->x[11];
	fc->runs++;
	fake_exit_to_test(FAKE_EXIT_RUN);
}

void fake_kick_pending(unsigned cpu)
{
	kicked[cpu_checked(cpu)] = true;
	fake_csr_put(cpu, "sip", fake_csr(cpu, "sip") | SIP_SEIP);
}

enum fake_exit fake_kick_running(unsigned cpu)
{
	kicked[cpu_checked(cpu)] = true;
	return fake_rv_trap(cpu, SCAUSE_IRQ | IRQ_S_EXT, 0, 0, 0);
}

enum fake_exit fake_rv_trap(unsigned cpu, uint64_t scause, uint64_t stval, uint64_t htval,
			    uint64_t htinst)
{
	fake_csr_put(cpu, "scause", scause);
	fake_csr_put(cpu, "stval", stval);
	fake_csr_put(cpu, "htval", htval);
	fake_csr_put(cpu, "0x64a", htinst);
	return FAKE_ON(cpu, riscv_guest_trap(fake_guest_regs(cpu)));
}

/* imsic.c's: the board's harts' files are FAKE_IMSIC_STRIDE apart, as a partition's vCPUs'. */
paddr_t riscv_imsic_hart_file(unsigned hart)
{
	return platform.arch.imsic_s_base + (paddr_t)hart * FAKE_IMSIC_STRIDE;
}

/* mmu.c's: the host's memory needs no HS-mode map. */
bool riscv_mmu_map_partition(const struct tern_config_partition *c)
{
	(void)c;
	return true;
}

/* The host's memory is all reachable. */
bool arch_hyp_map_shared(paddr_t pa, uint64_t size)
{
	(void)pa;
	(void)size;
	return true;
}

/* ---- shared cores: the port's calls into the core's loop (host.mk wraps them) ---- */

uint32_t fake_shared_cores;
void (*fake_vcpu_check_requests)(struct vcpu *v);

bool __real_cpu_is_shared(unsigned pcpu);
void __real_vcpu_check_requests(struct vcpu *v);
void __wrap_vcpu_check_requests(struct vcpu *v);
bool __wrap_cpu_is_shared(unsigned pcpu);

bool __wrap_cpu_is_shared(unsigned pcpu)
{
	return (pcpu < 32u && (fake_shared_cores & (1u << pcpu))) || __real_cpu_is_shared(pcpu);
}

void __wrap_vcpu_check_requests(struct vcpu *v)
{
	if (fake_vcpu_check_requests)
		fake_vcpu_check_requests(v);
	else
		__real_vcpu_check_requests(v);
}
