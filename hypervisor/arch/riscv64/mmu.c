/* SPDX-License-Identifier: MIT */
/*
 * HS-mode's own map (Sv39).  Identity (VA = PA), so every pointer stays what it was with satp
 * bare, and W^X: text read-only and executable, read-only data read-only, everything else
 * writable and never executable.  Only what the hypervisor touches is mapped, so that a bug
 * in it faults instead of reaching OpenSBI's memory, unassigned RAM or another device: its
 * image but the guard page below each core's stack, the config blob (read-only), the devices
 * it drives, and, once the config is checked, each partition's RAM (it reloads it, and reads
 * DBCN strings there) and pristine copies (read-only: it only copies from them).
 */
#include <arch/aplic.h>
#include <arch/sysreg.h>
#include <arch/entry.h>
#include <arch/imsic.h>
#include <arch/pte.h>
#include <tern/arch.h>
#include <tern/fdt.h>
#include <tern/lib.h>
#include <tern/platform.h>

/* Accessed and dirty already set: no walker ever writes them back (nor faults for them). */
#define PTE_LEAF (PTE_V | PTE_G | PTE_A | PTE_D)
#define MAP_RX (PTE_R | PTE_X)
#define MAP_R  PTE_R
#define MAP_RW (PTE_R | PTE_W)
#define SATP_SV39 (8ULL << 60)

/*
 * A table per GiB touched (devices; RAM: two), one per 2 MiB range mapped in part (the UART,
 * the APLIC, the IMSIC files, the image, the config blob, the firmware's device tree), and
 * each partition's pristine copies' ragged ends (its RAM is in 2 MiB blocks).
 */
#define HYP_POOL_PAGES (8u + 6u * TERN_MAX_PARTITIONS)

static uint64_t hyp_root[512] __attribute__((aligned(4096), section(".bss.page")));
/* Each page is cleared when handed out. */
static uint64_t hyp_pool[HYP_POOL_PAGES][512] __attribute__((aligned(4096), section(".noinit")));
static unsigned hyp_pool_used;
uint64_t riscv_hyp_satp;

/*
 * Eight stores a step, as boot.S clears bss: the tables are made while the board boots, where
 * every instruction is boot time.
 */
static void table_clear(uint64_t *t)
{
	for (unsigned i = 0; i < 512u; i += 8u) {
		t[i] = 0;
		t[i + 1u] = 0;
		t[i + 2u] = 0;
		t[i + 3u] = 0;
		t[i + 4u] = 0;
		t[i + 5u] = 0;
		t[i + 6u] = 0;
		t[i + 7u] = 0;
	}
}

/* The table behind a non-leaf entry, made on first use; NULL if the pool is empty or it is a leaf. */
static uint64_t *table_below(uint64_t *entry)
{
	if (!(*entry & PTE_V)) {
		if (hyp_pool_used == HYP_POOL_PAGES)
			return NULL;
		uint64_t *t = hyp_pool[hyp_pool_used++];
		table_clear(t);
		*entry = (((uintptr_t)t >> 12) << 10) | PTE_V;
	}
	if (*entry & MAP_RW)
		return NULL; /* a 2 MiB leaf already: ranges the config checks never overlap */
	return (uint64_t *)(uintptr_t)((*entry >> 10) << 12);
}

/* [pa, pa + size), rounded out to whole pages, at the same address: 2 MiB leaves where aligned. */
static bool map(uint64_t pa, uint64_t size, uint64_t perms)
{
	uint64_t a = pa & ~(KiB(4) - 1u);
	uint64_t end = ALIGN_UP(pa + size, KiB(4));

	while (a < end) {
		uint64_t *mid = table_below(&hyp_root[(a >> 30) & 511u]);
		if (mid == NULL)
			return false;
		uint64_t *e = &mid[(a >> 21) & 511u];
		uint64_t block_end = (a | (MiB(2) - 1u)) + 1u;
		if (IS_ALIGNED(a, MiB(2)) && end >= block_end && !(*e & PTE_V)) {
			*e = ((a >> 12) << 10) | PTE_LEAF | perms;
			a = block_end;
			continue;
		}
		uint64_t *leaf = table_below(e);
		if (leaf == NULL)
			return false;
		uint64_t stop = end < block_end ? end : block_end;
		for (; a < stop; a += KiB(4))
			leaf[(a >> 12) & 511u] = ((a >> 12) << 10) | PTE_LEAF | perms;
	}
	return true;
}

bool riscv_mmu_init(paddr_t fdt)
{
	paddr_t ram_end = platform.ram_base + platform.ram_max;
	uintptr_t text = (uintptr_t)&hyp_image_start;
	uintptr_t text_end = (uintptr_t)&hyp_text_end;
	uintptr_t rodata_end = (uintptr_t)&hyp_rodata_end;
	uintptr_t stacks = (uintptr_t)&cpu_stacks[0];
	uintptr_t stacks_end = stacks + sizeof(cpu_stacks);
	/* hyp.ld puts page boundaries between text, read-only data and the rest. */
	bool ok = map(text, text_end - text, MAP_RX) && map(text_end, rodata_end - text_end, MAP_R) &&
		  map(rodata_end, stacks - rodata_end, MAP_RW) &&
		  map(stacks_end, (uintptr_t)&hyp_image_end - stacks_end, MAP_RW);

	for (unsigned i = 0; ok && i < MAX_CPUS; i++)
		ok = map((uintptr_t)cpu_stacks[i].stack, STACK_SIZE, MAP_RW);
	/* The devices: its console, its interrupt controller (the APLIC's domain, every hart's IMSIC files). */
	ok = ok && map(platform.config_hpa, platform.config_max, MAP_R) &&
	     map(platform.uart_base, KiB(4), MAP_RW) &&
	     map(platform.arch.aplic_s_base, APLIC_DOMAIN_SIZE(platform.max_cpus), MAP_RW) &&
	     map(platform.arch.imsic_s_base,
		 riscv_imsic_hart_file(platform.max_cpus) - platform.arch.imsic_s_base, MAP_RW);
	/* PCIe configuration space: emulated for its owner, and silenced when the owner ends (core/pci.c). */
	for (uint32_t d = 0; ok && d < platform.num_devices; d++) {
		if (platform.devices[d].flags & PLATFORM_ECAM)
			ok = map(platform.devices[d].base, platform.devices[d].size, MAP_RW);
	}
	/* The firmware's device tree, read-only: tern_main reads the board's RAM size from it. */
	if (ok && fdt >= platform.ram_base && fdt < ram_end)
		ok = map(fdt, (ram_end - fdt < FDT_MAX_SIZE) ? ram_end - fdt : FDT_MAX_SIZE, MAP_R);
	riscv_hyp_satp = SATP_SV39 | ((uintptr_t)hyp_root >> 12);
	return ok;
}

void riscv_mmu_enable(void)
{
	/* The tables' stores before the walks that read them. */
	__asm__ volatile("sfence.vma" ::: "memory");
	csr_write(satp, riscv_hyp_satp);
	__asm__ volatile("sfence.vma" ::: "memory");
}

bool riscv_mmu_map_partition(const struct tern_config_partition *c)
{
	/* A copy at 0 is no copy (the partition is not restartable). */
	bool ok = map(c->ram_hpa, c->ram_size, MAP_RW) &&
		  (!c->pristine_image_hpa || map(c->pristine_image_hpa, c->image_size, MAP_R)) &&
		  (!c->pristine_dtb_hpa || map(c->pristine_dtb_hpa, c->dtb_size, MAP_R)) &&
		  (!c->pristine_initrd_hpa || map(c->pristine_initrd_hpa, c->initrd_size, MAP_R));

	/* Only the boot core runs yet; the others write satp and fence when they start. */
	__asm__ volatile("sfence.vma" ::: "memory");
	return ok;
}

bool arch_hyp_map_shared(paddr_t pa, uint64_t size)
{
	bool ok = map(pa, size, MAP_RW);

	/* Only the boot core runs yet, as for a partition's RAM. */
	__asm__ volatile("sfence.vma" ::: "memory");
	return ok;
}

uintptr_t riscv_mmu_root(void)
{
	return (uintptr_t)hyp_root;
}
