/* SPDX-License-Identifier: MIT */
/*
 * G-stage translation (Sv39x4): each partition's guest-physical map, built by core/pagetable.c
 * from this format and <arch/pte.h>'s encoders.  RAM in 2 MiB leaves, device regions in 2 MiB or 4 KiB
 * leaves; nothing else is mapped, so any other access is a guest page fault the hypervisor
 * sees.  Tables come from a static pool, at boot only.
 */
#include <arch/sysreg.h>
#include <arch/entry.h>
#include <arch/imsic.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <arch/pte.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/pagetable.h>
#include <tern/pci.h>
#include <tern/platform.h>

/* G-stage leaves must allow "user" (PTE_U): guest accesses count as such. */
#define PTE_LEAF_RAM    (PTE_V | PTE_R | PTE_W | PTE_X | PTE_U | PTE_A | PTE_D)
#define PTE_LEAF_DEVICE (PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D)
/* A channel's memory: never executable. */
#define PTE_LEAF_SHARED_RW (PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D)
#define PTE_LEAF_SHARED_RO (PTE_V | PTE_R | PTE_U | PTE_A)
#define HGATP_SV39X4    (8ULL << 60)
#define ROOT_BITS       11u     /* Sv39x4: 41-bit guest-physical addresses, a 16 KiB root */
#define POOL_PAGES      64u

/* Leaves of 2 MiB at most: gigapages would change every map the tests count. */
static const struct pt_format gstage_format = {
	.levels = 3,
	.bits = { ROOT_BITS, 9, 9, 0 },
	.page_shift = 12,
	.block_levels = 1u << 1,
};


static pte_t roots[TERN_MAX_PARTITIONS][1ULL << ROOT_BITS] __attribute__((aligned(16384), section(".noinit")));
/* Each page is cleared when handed out (pt_alloc). */
static pte_t pool_pages[POOL_PAGES][PT_PAGE_ENTRIES] __attribute__((aligned(4096), section(".noinit")));
static struct pt_pool pool = { pool_pages, POOL_PAGES, 0 };

/* vCPU i's S-level IMSIC file, in the partition's map and on the board (a guest file of its core). */
static ipaddr_t vcpu_file_gpa(uint32_t i)
{
	return platform.arch.imsic_s_base + (uint64_t)i * platform.arch.imsic_vcpu_stride;
}

/*
 * Each trap-less vCPU's guest file on its core, and how many each core has given.  Partitions
 * are created in index order at boot (partition_boot): the first one starts the count again.
 * A vCPU keeps its file: vcpu-pin and pool-migrate leave trap-less vCPUs where they are
 * (arch_vcpu_can_move).
 */
static uint8_t vcpu_files[TERN_MAX_PARTITIONS][TERN_MAX_VCPUS];
static uint8_t files_given[TERN_MAX_CPUS];

uint32_t riscv_vcpu_file(const struct partition *p, uint32_t i)
{
	return vcpu_files[p->index][i];
}

paddr_t riscv_vcpu_file_hpa(const struct partition *p, uint32_t i)
{
	return riscv_imsic_hart_file(p->cfg->cpus[i]) + (uint64_t)riscv_vcpu_file(p, i) * IMSIC_FILE_SIZE;
}

/* A file for each of the partition's vCPUs on its core; false if a core has none left. */
static bool give_files(const struct partition *p, char *err, size_t errlen)
{
	const struct tern_config_partition *c = p->cfg;
	unsigned most = riscv_guest_files();

	if (p->index == 0u)
		(void)memset(files_given, 0, sizeof(files_given));
	for (uint32_t i = 0; i < c->num_vcpus; i++) {
		uint32_t core = c->cpus[i];
		if (core >= TERN_MAX_CPUS || files_given[core] >= most) {
			(void)snprintf(err, errlen, "core %u has no guest interrupt file left for vCPU %u "
				       "(it has %u)", core, i, most);
			return false;
		}
		vcpu_files[p->index][i] = ++files_given[core];
	}
	return true;
}

/* A device MSI to vCPU i's file (only trap-less partitions have files) goes to the guest file backing it. */
bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr)
{
	const struct tern_config_partition *c = p->cfg;

	for (uint32_t i = 0; (c->flags & TERN_PF_IRQ_DIRECT) && i < c->num_vcpus; i++) {
		uint64_t offset = guest_addr - vcpu_file_gpa(i);
		if (offset < IMSIC_FILE_SIZE) {
			*host_addr = riscv_vcpu_file_hpa(p, i) + offset;
			return true;
		}
	}
	return false;
}

bool arch_partition_init(struct partition *p, char *err, size_t errlen)
{
	struct arch_partition *rp = &p->arch;
	const struct tern_config_partition *c = p->cfg;
	pte_t *root = roots[p->index];

	if ((c->flags & TERN_PF_IRQ_DIRECT) && riscv_guest_files() < VCPU_GUEST_FILE) {
		(void)snprintf(err, errlen, "irq = direct needs guest interrupt files "
			       "(QEMU: -M virt,aia=aplic-imsic,aia-guests=1 or more)");
		return false;
	}
	if ((c->flags & TERN_PF_IRQ_DIRECT) && !give_files(p, err, errlen))
		return false;
	(void)memset(root, 0, sizeof(roots[0]));
	bool mapped = pt_map(&gstage_format, &pool, root, c->ram_ipa, c->ram_hpa, c->ram_size, PTE_LEAF_RAM);
	/*
	 * An emulated ECAM stays unmapped: its accesses trap to core/pci.c.  A trusted backend's
	 * window onto its frontend's RAM (TERN_RF_PARTITION_RAM) takes the same leaf, read-write
	 * and never executable: the G-stage has no memory types, the board's PMAs make it RAM.
	 */
	for (uint32_t r = 0; mapped && r < c->num_regions; r++) {
		if (!pci_ecam_emulated(c->region[r].hpa, c->region[r].size))
			mapped = pt_map(&gstage_format, &pool, root, c->region[r].ipa, c->region[r].hpa,
					c->region[r].size, PTE_LEAF_DEVICE);
	}
	/* Trap-less: vCPU i's S-level IMSIC file, where hart i's is on the board, is a guest file of its core. */
	for (uint32_t i = 0; mapped && (c->flags & TERN_PF_IRQ_DIRECT) && i < c->num_vcpus; i++)
		mapped = pt_map(&gstage_format, &pool, root, vcpu_file_gpa(i), riscv_vcpu_file_hpa(p, i),
				IMSIC_FILE_SIZE, PTE_LEAF_DEVICE);
	if (!mapped) {
		(void)snprintf(err, errlen, "out of G-stage table pages");
		return false;
	}
	if (!riscv_mmu_map_partition(c)) {
		(void)snprintf(err, errlen, "out of table pages for HS-mode's map of its memory");
		return false;
	}
	rp->gstage_root = root;
	/* VMID = partition index + 1; each core serves one partition only. */
	rp->hgatp = HGATP_SV39X4 | ((uint64_t)(p->index + 1) << 44) | ((uintptr_t)root >> 12);
	fence_rw_rw();
	return true;
}

bool arch_partition_map_shared(struct partition *p, ipaddr_t ipa, paddr_t pa, uint64_t size,
			       bool writable, char *err, size_t errlen)
{
	if (!pt_map(&gstage_format, &pool, p->arch.gstage_root, ipa, pa, size,
		    writable ? PTE_LEAF_SHARED_RW : PTE_LEAF_SHARED_RO)) {
		(void)snprintf(err, errlen, "out of G-stage table pages for shared memory at 0x%llx",
			       (unsigned long long)ipa);
		return false;
	}
	fence_rw_rw();
	return true;
}

void arch_table_pages(uint32_t *used, uint32_t *total)
{
	*used = pool.used;
	*total = pool.total;
}
