/* SPDX-License-Identifier: MIT */
/*
 * The board's IMSIC: each core's own S-level file (kicks, the console's input, trap-and-emulate
 * partitions' wired sources), the guest files trap-less vCPUs are given, where they all are.
 */
#include <arch/aplic.h>
#include <arch/cpu.h>
#include <arch/imsic.h>
#include <arch/partition.h>
#include <arch/sysreg.h>
#include <arch/vaplic.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/platform.h>

/*
 * Kicks are MSIs: a store of KICK_ID into the core's S-level IMSIC file (one store, where an
 * SBI IPI is an ecall into OpenSBI and its M-mode IPI to the target).
 */
#define KICK_ID 1u

/* cppcheck-suppress misra-c2012-2.7 ; both are read by csr_write's asm operands, which the addon does not see */
static void imsic_write(unsigned reg, uint64_t value)
{
	csr_write(CSR_SISELECT, reg);
	csr_write(CSR_SIREG, value);
}

/*
 * This core's S-level file: interrupts delivered; the kick's, the console's and the wired
 * sources' identities enabled (only what the APLIC is told to send here arrives).
 */
void riscv_imsic_init(void)
{
	uint64_t wired_last = EIID_WIRED_BASE + APLIC_MAX_SOURCES - 1u;

	_Static_assert(EIID_WIRED_BASE >= 32u && EIID_WIRED_BASE + APLIC_MAX_SOURCES <= 192u,
		       "the wired identities are eie0's upper half, eie2 and part of eie4");
	imsic_write(IMSIC_EITHRESHOLD, 0);
	imsic_write(IMSIC_EIE0, BIT(KICK_ID) | BIT(EIID_CONSOLE) | (~0ULL << EIID_WIRED_BASE));
	imsic_write(IMSIC_EIE0 + 2u, ~0ULL);
	imsic_write(IMSIC_EIE0 + 4u, BIT(wired_last - 128u + 1u) - 1u);
	imsic_write(IMSIC_EIDELIVERY, 1);
}

/* How many guest interrupt files each hart has (GEILEN: the hgeie bits that stick). */
unsigned riscv_guest_files(void)
{
	csr_write(CSR_HGEIE, ~0ULL);
	uint64_t files = csr_read(CSR_HGEIE);
	csr_write(CSR_HGEIE, 0);
	return (unsigned)__builtin_popcountll(files);
}

/*
 * QEMU virt gives each hart its S-level file and its guest files in a power-of-two number of
 * pages (aia-guests=1: 2 pages, 2 or 3: 4, 4 to 7: 8).  The base is copied next to the stride so
 * that a kick reads both from one address: the base from `platform` and the stride from a
 * variable of its own took two more instructions a kick.  Not static for the same reason: clang
 * gives each field of a static object its own address computation.
 */
struct riscv_imsic_harts riscv_imsic_harts;

/* The board's IMSIC files as every core finds them (riscv_imsic_harts), from the guest files a hart has. */
void riscv_imsic_harts_init(unsigned guest_files)
{
	riscv_imsic_harts.base = platform.arch.imsic_s_base;
	riscv_imsic_harts.stride = IMSIC_FILE_SIZE;
	while (riscv_imsic_harts.stride < ((uint64_t)guest_files + 1u) * IMSIC_FILE_SIZE)
		riscv_imsic_harts.stride <<= 1;
}

paddr_t riscv_imsic_hart_file(unsigned hart)
{
	return riscv_imsic_harts.base + (uint64_t)hart * riscv_imsic_harts.stride;
}

void arch_cpu_kick(unsigned pcpu)
{
	volatile uint32_t *seteipnum = (volatile uint32_t *)(uintptr_t)riscv_imsic_hart_file(pcpu);

	__asm__ volatile("fence w, o" ::: "memory"); /* what the kick is about is visible first */
	*seteipnum = KICK_ID;
}

bool riscv_take_kicks(void)
{
	bool kicked = false;

	for (;;) {
		/* identity << 16 | priority, or 0 */
		uint32_t id = (uint32_t)(csr_swap(CSR_STOPEI, 0) >> 16);
		if (id == 0u)
			break;
		if (id == KICK_ID) {
			kicked = true;
		} else if (id == EIID_CONSOLE) {
			console_rx();
			aplic_console_retrigger();
		} else {
			vaplic_host_interrupt(id);
		}
	}
	return kicked;
}

