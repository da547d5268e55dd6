/* SPDX-License-Identifier: MIT */
/*
 * G-stage translation (Sv39x4): each partition's guest-physical map.  RAM in 2 MiB leaves,
 * device regions in 2 MiB or 4 KiB leaves; nothing else is mapped, so any other access is a
 * guest page fault the hypervisor sees.  Tables come from a static pool, at boot only.
 */
#include <arch/sysreg.h>
#include <arch/entry.h>
#include <arch/imsic.h>
#include <arch/partition.h>
#include <tern/partition.h>
#include <tern/arch.h>
#include <tern/lib.h>
#include <tern/pci.h>
#include <tern/platform.h>

#define PTE_V  BIT(0)
#define PTE_R  BIT(1)
#define PTE_W  BIT(2)
#define PTE_X  BIT(3)
#define PTE_U  BIT(4)   /* G-stage leaves must allow "user": guest accesses count as such */
#define PTE_A  BIT(6)
#define PTE_D  BIT(7)
#define PTE_LEAF_RAM    (PTE_V | PTE_R | PTE_W | PTE_X | PTE_U | PTE_A | PTE_D)
#define PTE_LEAF_DEVICE (PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D)
#define HGATP_SV39X4    (8ULL << 60)
#define ROOT_ENTRIES    2048u   /* Sv39x4: 41-bit guest-physical addresses, a 16 KiB root */
#define POOL_PAGES      64u


static uint64_t roots[TERN_MAX_PARTITIONS][ROOT_ENTRIES] __attribute__((aligned(16384), section(".noinit")));
static uint64_t pool[POOL_PAGES][512] __attribute__((aligned(4096), section(".noinit")));
static unsigned pool_used;

static uint64_t *table_alloc(void)
{
	if (pool_used == POOL_PAGES)
		return NULL;
	uint64_t *t = pool[pool_used++];
	(void)memset(t, 0, 4096);
	return t;
}

/* The next-level table an entry points to, made if there is none. */
static uint64_t *next_table(uint64_t *entry)
{
	if (!(*entry & PTE_V)) {
		uint64_t *t = table_alloc();
		if (!t)
			return NULL;
		*entry = (((uintptr_t)t >> 12) << 10) | PTE_V;
	}
	return (uint64_t *)(uintptr_t)((*entry >> 10) << 12);
}

static uint64_t leaf(paddr_t pa, uint64_t flags)
{
	return ((pa >> 12) << 10) | flags;
}

static bool gstage_map(uint64_t *root, ipaddr_t gpa, paddr_t pa, uint64_t size, uint64_t flags)
{
	uint64_t off = 0;

	while (off < size) {
		uint64_t *l1 = next_table(&root[((gpa + off) >> 30) & (ROOT_ENTRIES - 1)]);
		if (!l1)
			return false;
		uint64_t *l1e = &l1[((gpa + off) >> 21) & 511];
		if (IS_ALIGNED(gpa + off, MiB(2)) && IS_ALIGNED(pa + off, MiB(2)) && size - off >= MiB(2)) {
			*l1e = leaf(pa + off, flags);
			off += MiB(2);
			continue;
		}
		uint64_t *l0 = next_table(l1e);
		if (!l0)
			return false;
		l0[((gpa + off) >> 12) & 511] = leaf(pa + off, flags);
		off += KiB(4);
	}
	return true;
}

/* vCPU i's S-level IMSIC file, in the partition's map and on the board (a guest file of its core). */
static ipaddr_t vcpu_file_gpa(uint32_t i)
{
	return platform.arch.imsic_s_base + (uint64_t)i * platform.arch.imsic_vcpu_stride;
}

paddr_t riscv_vcpu_file_hpa(const struct tern_config_partition *c, uint32_t i)
{
	return riscv_imsic_hart_file(c->cpus[i]) + (uint64_t)VCPU_GUEST_FILE * IMSIC_FILE_SIZE;
}

/* A device MSI to vCPU i's file (only trap-less partitions have files) goes to the guest file backing it. */
bool arch_msi_target(const struct partition *p, uint64_t guest_addr, uint64_t *host_addr)
{
	const struct tern_config_partition *c = p->cfg;

	for (uint32_t i = 0; (c->flags & TERN_PF_IRQ_DIRECT) && i < c->num_vcpus; i++) {
		uint64_t offset = guest_addr - vcpu_file_gpa(i);
		if (offset < IMSIC_FILE_SIZE) {
			*host_addr = riscv_vcpu_file_hpa(c, i) + offset;
			return true;
		}
	}
	return false;
}

bool arch_partition_init(struct partition *p, char *err, size_t errlen)
{
	struct arch_partition *rp = &p->arch;
	const struct tern_config_partition *c = p->cfg;

	if ((c->flags & TERN_PF_IRQ_DIRECT) && riscv_guest_files() < VCPU_GUEST_FILE) {
		(void)snprintf(err, errlen, "irq = direct needs guest interrupt files "
			       "(QEMU: -M virt,aia=aplic-imsic,aia-guests=1 or more)");
		return false;
	}
	rp->gstage_root = roots[p->index];
	(void)memset(rp->gstage_root, 0, sizeof(roots[0]));
	bool mapped = gstage_map(rp->gstage_root, c->ram_ipa, c->ram_hpa, c->ram_size, PTE_LEAF_RAM);
	/* An emulated ECAM stays unmapped: its accesses trap to core/pci.c. */
	for (uint32_t r = 0; mapped && r < c->num_regions; r++) {
		if (!pci_ecam_emulated(c->region[r].hpa, c->region[r].size))
			mapped = gstage_map(rp->gstage_root, c->region[r].ipa, c->region[r].hpa,
					    c->region[r].size, PTE_LEAF_DEVICE);
	}
	/* Trap-less: vCPU i's S-level IMSIC file, where hart i's is on the board, is a guest file of its core. */
	for (uint32_t i = 0; mapped && (c->flags & TERN_PF_IRQ_DIRECT) && i < c->num_vcpus; i++)
		mapped = gstage_map(rp->gstage_root, vcpu_file_gpa(i), riscv_vcpu_file_hpa(c, i), IMSIC_FILE_SIZE,
				    PTE_LEAF_DEVICE);
	if (!mapped) {
		(void)snprintf(err, errlen, "out of G-stage table pages");
		return false;
	}
	if (!riscv_mmu_map_partition(c)) {
		(void)snprintf(err, errlen, "out of table pages for HS-mode's map of its memory");
		return false;
	}
	/* VMID = partition index + 1; each core serves one partition only. */
	rp->hgatp = HGATP_SV39X4 | ((uint64_t)(p->index + 1) << 44) | ((uintptr_t)rp->gstage_root >> 12);
	fence_rw_rw();
	return true;
}

void arch_table_pages(uint32_t *used, uint32_t *total)
{
	*used = pool_used;
	*total = POOL_PAGES;
}
