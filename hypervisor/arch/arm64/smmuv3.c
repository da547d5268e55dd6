/* SPDX-License-Identifier: MIT */
/*
 * The board's SMMUv3, owned by the hypervisor and invisible to guests: it confines the DMA
 * of the devices on the PCIe root bus to the RAM of the partition that owns the bus.
 *
 * A partition programs its devices with its own addresses (IPAs), which are not where its
 * RAM lives on the board.  Stage 2 would be the natural translation, but QEMU 7.2's model
 * implements stage 1 only, so every stream of the owner's bus points at one context
 * descriptor whose stage-1 tables, built and kept here, map exactly the owner's RAM:
 * IPA ram_ipa.. in 2 MiB blocks to ram_hpa...  Any other address is a translation fault:
 * the transaction is aborted and an event recorded, which arch_iommu_poll() reports.
 * Streams of a bus nobody owns abort without an event.
 *
 * Everything is set up once at boot, before any partition runs, and never changes, so the
 * command queue only serves the initial invalidation and no STE is ever live-updated.
 */
#include <arch/sysreg.h>
#include <tern/arch.h>
#include <tern/console.h>
#include <tern/lib.h>
#include <tern/partition.h>
#include <tern/platform.h>
#include <tern/spinlock.h>

/* Registers (page 0, the event queue's indexes in page 1). */
#define SMMU_IDR0          0x00
#define SMMU_IDR1          0x04
#define SMMU_IDR5          0x14
#define SMMU_CR0           0x20
#define SMMU_CR0ACK        0x24
#define SMMU_CR1           0x28
#define SMMU_CR2           0x2c
#define SMMU_GERROR        0x60
#define SMMU_GERRORN       0x64
#define SMMU_STRTAB_BASE   0x80
#define SMMU_STRTAB_CFG    0x88
#define SMMU_CMDQ_BASE     0x90
#define SMMU_CMDQ_PROD     0x98
#define SMMU_CMDQ_CONS     0x9c
#define SMMU_EVTQ_BASE     0xa0
#define SMMU_EVTQ_PROD     0x100a8
#define SMMU_EVTQ_CONS     0x100ac

#define IDR0_S1P           BIT(1)
#define IDR0_TTF_AA64      BIT(3)      /* TTF 0b10 or 0b11 */
#define IDR0_COHACC        BIT(4)
#define IDR0_TTENDIAN(v)   (((v) >> 21) & 3)
#define TTENDIAN_BIG       3
#define IDR1_SIDSIZE(v)    ((v) & 0x3f)
#define IDR1_EVTQS(v)      (((v) >> 16) & 0x1f)
#define IDR1_CMDQS(v)      (((v) >> 21) & 0x1f)
#define IDR5_GRAN4K        BIT(4)
#define IDR5_OAS(v)        ((v) & 7)

#define CR0_SMMUEN         BIT(0)
#define CR0_EVTQEN         BIT(2)
#define CR0_CMDQEN         BIT(3)
/* Tables and queues: inner shareable, write-back cacheable, as the hypervisor maps its RAM. */
#define CR1_WB_ISH         (1u | 1u << 2 | 3u << 4 | 1u << 6 | (uint32_t)1 << 8 | (uint32_t)3 << 10)
#define CR2_RECINVSID      BIT(1)      /* record an event for a StreamID past the table */
#define CR2_PTM            BIT(2)      /* ignore the cores' broadcast TLB invalidations */
#define GERROR_CMDQ_ERR    BIT(0)
#define GERROR_EVTQ_ABT    BIT(2)      /* QEMU: an event found the queue full */
#define Q_BASE_ALLOC       BIT(62)     /* RA (command queue, tables) / WA (event queue) */
#define Q_OVFLG            BIT(31)     /* event queue PROD: records were lost */
#define CMDQ_CONS_ERR(v)   (((v) >> 24) & 0x7f)

/*
 * One STE per StreamID of bus 0 (requester ID = devfn): QEMU virt has no PCIe bridges, so
 * every device of the board is there.  A StreamID beyond (another bus) is refused by the
 * SMMU itself (C_BAD_STREAMID).
 */
#define STE_LOG2           8
#define STES               ((uint32_t)1 << STE_LOG2)
#define CMDQ_LOG2          4
#define EVTQ_LOG2          7

#define STE0_V             BIT(0)
#define STE0_S1_TRANS      (5ULL << 1) /* Config: stage 1 translate, stage 2 bypass */
#define STE1_S1_WB_ISH     (1ULL << 2 | 1ULL << 4 | 3ULL << 6) /* CD fetch: S1CIR, S1COR, S1CSH */
#define STE1_SHCFG_INCOMING (1ULL << 44)

#define CD0_T0SZ           32ULL       /* 32-bit input: the partition map (below 4 GiB) */
#define CD0_TT0_WB_ISH     (1ULL << 8 | 1ULL << 10 | 3ULL << 12) /* walks: IR0, OR0, SH0; TG0 4 KiB */
#define CD0_EPD1           BIT(30)     /* no TTB1 */
#define CD0_V              BIT(31)
#define CD0_IPS(oas)       ((uint64_t)(oas) << 32)
#define CD0_AA64           BIT(41)
#define CD0_R              BIT(45)     /* record faults as events */
#define CD0_A              BIT(46)     /* abort faulting transactions */
#define CD0_ASET           BIT(47)     /* the ASID is the SMMU's own, not a core's */
#define CD0_ASID           (1ULL << 48)
#define MAIR_NORMAL_WB     0xffULL     /* attribute index 0 */

#define PTE_TABLE          3ULL
#define PTE_BLOCK          1ULL        /* level 1-2 block; AttrIndx 0 */
#define PTE_AP_RW_ANY      (1ULL << 6) /* read/write, privileged or not (PCIe requests are not) */
#define PTE_SH_INNER       (3ULL << 8)
#define PTE_AF             BIT(10)
#define PTE_XN             (BIT(53) | BIT(54)) /* devices fetch no instructions */
#define PTE_ADDR           0x0000fffffffff000ULL

#define CMD_CFGI_ALL       0x04ULL     /* CFGI_STE_RANGE ... */
#define CMD_CFGI_ALL_RANGE 31ULL       /* ... over every StreamID */
#define CMD_TLBI_NSNH_ALL  0x30ULL
#define CMD_SYNC           0x46ULL     /* completion: CONS passes it */

#define EVT_F_TRANSLATION  0x10
#define DMA_FAULT_LOG_MAX  4u          /* log lines; further faults are only counted */
#define ACK_TIMEOUT_US     10000u

/* Not cleared at boot: init writes every entry the SMMU reads before enabling it. */
static uint64_t strtab[STES][8] __attribute__((aligned(STES * 64), section(".noinit")));
static uint64_t cmdq[1u << CMDQ_LOG2][2] __attribute__((aligned(4096), section(".noinit")));
static uint64_t evtq[1u << EVTQ_LOG2][4] __attribute__((aligned(4096), section(".noinit")));
static uint64_t ctx_desc[8] __attribute__((aligned(64), section(".noinit")));
/* Stage-1 root (4 x 1 GiB) and one level-2 table per GiB of the 32-bit input space. */
static uint64_t s1_tables[5][512] __attribute__((aligned(4096), section(".noinit")));

static struct {
	bool on;
	int owner;                  /* index of the partition owning the bus, -1: none */
	uint32_t logged;
	/*
	 * The event queue: taken by the bus owner's cores when it ends, by the console core
	 * (`stats`) and at board power-off.  Worst wait: one drain of 128 events.
	 */
	struct spinlock lock;
} smmu = { .owner = -1, .lock = SPINLOCK_INIT };

static uint32_t rd32(uint32_t off)
{
	return *(volatile uint32_t *)(uintptr_t)(platform.arch.smmu_base + off);
}

static void wr32(uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)(platform.arch.smmu_base + off) = v;
}

static void wr64(uint32_t off, uint64_t v)
{
	*(volatile uint64_t *)(uintptr_t)(platform.arch.smmu_base + off) = v;
}

static bool wait_reg(uint32_t off, uint32_t want)
{
	uint64_t deadline = arch_counter() + arch_counter_freq() * ACK_TIMEOUT_US / 1000000;

	while (rd32(off) != want)
		if (arch_counter() > deadline)
			return false;
	return true;
}

static bool set_cr0(uint32_t v)
{
	dsb(sy); /* tables and queues written before the SMMU may read them */
	wr32(SMMU_CR0, v);
	return wait_reg(SMMU_CR0ACK, v);
}

static const char *check_features(uint32_t idr0, uint32_t idr1, uint32_t idr5)
{
	if (!(idr0 & IDR0_S1P) || !(idr0 & IDR0_TTF_AA64) || !(idr5 & IDR5_GRAN4K))
		return "no stage 1 with AArch64 4 KiB tables";
	if (!(idr0 & IDR0_COHACC))
		return "not coherent (tables would need cache maintenance)";
	if (IDR0_TTENDIAN(idr0) == TTENDIAN_BIG)
		return "big-endian tables only";
	if (IDR1_SIDSIZE(idr1) < STE_LOG2 || IDR1_CMDQS(idr1) < CMDQ_LOG2 ||
	    IDR1_EVTQS(idr1) < EVTQ_LOG2)
		return "stream IDs or queues too small";
	return NULL;
}

/* The partition given the ECAM of the bus behind the SMMU, or -1. */
static int bus_owner(const struct tern_config *cfg)
{
	for (uint32_t i = 0; i < cfg->num_partitions; i++) {
		const struct tern_config_partition *p = &cfg->partition[i];
		for (uint32_t r = 0; r < p->num_regions; r++)
			if (platform.arch.smmu_ecam - p->region[r].hpa < p->region[r].size)
				return (int)i;
	}
	return -1;
}

/* Stage 1 for the owner's devices: its RAM, IPA to board address, in 2 MiB blocks. */
static void build_context(const struct tern_config_partition *p, uint32_t oas)
{
	uint64_t *root = s1_tables[0];

	(void)memset(root, 0, 4096);
	for (uint64_t off = 0; off < p->ram_size; off += MiB(2)) {
		uint64_t ipa = p->ram_ipa + off;
		uint64_t gib = ipa >> 30;
		uint64_t *l2 = s1_tables[1 + gib];
		if (!root[gib]) {
			(void)memset(l2, 0, 4096);
			root[gib] = (uintptr_t)l2 | PTE_TABLE;
		}
		l2[(ipa >> 21) & 511] = ((p->ram_hpa + off) & PTE_ADDR) | PTE_BLOCK |
					PTE_AP_RW_ANY | PTE_SH_INNER | PTE_AF | PTE_XN;
	}
	(void)memset(ctx_desc, 0, sizeof(ctx_desc));
	ctx_desc[0] = CD0_T0SZ | CD0_TT0_WB_ISH | CD0_EPD1 | CD0_V | CD0_IPS(oas) | CD0_AA64 |
		      CD0_R | CD0_A | CD0_ASET | CD0_ASID;
	ctx_desc[1] = (uintptr_t)root;
	ctx_desc[3] = MAIR_NORMAL_WB;
}

/* Drop whatever the SMMU cached before it was ours (configuration and TLB). */
static const char *invalidate_all(void)
{
	static const uint64_t cmds[][2] = {
		{ CMD_CFGI_ALL, CMD_CFGI_ALL_RANGE },
		{ CMD_TLBI_NSNH_ALL, 0 },
		{ CMD_SYNC, 0 },
	};

	(void)memcpy(cmdq, cmds, sizeof(cmds));
	dsb(sy);
	wr32(SMMU_CMDQ_PROD, ARRAY_SIZE(cmds));
	if (wait_reg(SMMU_CMDQ_CONS, ARRAY_SIZE(cmds)))
		return NULL;
	if (CMDQ_CONS_ERR(rd32(SMMU_CMDQ_CONS)) ||
	    ((rd32(SMMU_GERROR) ^ rd32(SMMU_GERRORN)) & GERROR_CMDQ_ERR))
		return "command refused";
	return "commands not consumed";
}

static const char *smmu_enable(const struct tern_config *cfg)
{
	uint32_t idr0 = rd32(SMMU_IDR0);
	uint32_t idr5 = rd32(SMMU_IDR5);
	const char *why = check_features(idr0, rd32(SMMU_IDR1), idr5);

	if (why)
		return why;
	if (!set_cr0(0)) /* a warm boot may find it on */
		return "CR0 not acknowledged";

	smmu.owner = bus_owner(cfg);
	if (smmu.owner >= 0)
		build_context(&cfg->partition[smmu.owner], IDR5_OAS(idr5));
	for (uint32_t sid = 0; sid < STES; sid++) {
		(void)memset(strtab[sid], 0, sizeof(strtab[sid]));
		if (smmu.owner >= 0) {
			strtab[sid][0] = STE0_V | STE0_S1_TRANS | (uintptr_t)ctx_desc;
			strtab[sid][1] = STE1_S1_WB_ISH | STE1_SHCFG_INCOMING;
		} else {
			strtab[sid][0] = STE0_V; /* Config 0: abort */
		}
	}

	wr32(SMMU_CR1, CR1_WB_ISH);
	wr32(SMMU_CR2, CR2_RECINVSID | CR2_PTM);
	wr64(SMMU_STRTAB_BASE, Q_BASE_ALLOC | (uintptr_t)strtab);
	wr32(SMMU_STRTAB_CFG, STE_LOG2); /* linear */
	wr64(SMMU_CMDQ_BASE, Q_BASE_ALLOC | (uintptr_t)cmdq | CMDQ_LOG2);
	wr32(SMMU_CMDQ_PROD, 0);
	wr32(SMMU_CMDQ_CONS, 0);
	wr64(SMMU_EVTQ_BASE, Q_BASE_ALLOC | (uintptr_t)evtq | EVTQ_LOG2);
	wr32(SMMU_EVTQ_PROD, 0);
	wr32(SMMU_EVTQ_CONS, 0);
	if (!set_cr0(CR0_CMDQEN | CR0_EVTQEN))
		return "queues not enabled";
	why = invalidate_all();
	if (why)
		return why;
	if (!set_cr0(CR0_CMDQEN | CR0_EVTQEN | CR0_SMMUEN))
		return "translation not enabled";
	smmu.on = true;
	return NULL;
}

bool arch_iommu_init(const struct tern_config *cfg, char *err, size_t errlen)
{
	const char *why;

	if (!(cfg->flags & TERN_CF_IOMMU))
		return true;
	/* Promised and missing: refuse to boot rather than leave DMA unconfined. */
	why = platform.arch.smmu_base ? smmu_enable(cfg) : "this board has none";
	if (why)
		(void)snprintf(err, errlen, "SMMUv3 at 0x%llx: %s",
			       (unsigned long long)platform.arch.smmu_base, why);
	return !why;
}

static void report(const uint64_t *evt)
{
	struct partition *p = smmu.owner >= 0 ? &partitions[smmu.owner] : NULL;
	uint32_t type = evt[0] & 0xff;
	const char *name = "translation";
	char other[8];

	/* Every device behind the bridge is the owner's, whatever its StreamID. */
	if (p)
		vcpu_count(&p->vcpu[0], STAT_DMA_FAULT); /* the partition's total lives on vCPU 0 */
	if (!p || smmu.logged == DMA_FAULT_LOG_MAX)
		return;
	smmu.logged++;
	if (type != EVT_F_TRANSLATION) {
		(void)snprintf(other, sizeof(other), "0x%02x", type);
		name = other;
	}
	partition_log(p, "dma fault partition=%s sid=0x%x addr=0x%llx type=%s%s", p->name,
		 (uint32_t)(evt[0] >> 32), (unsigned long long)evt[2], name,
		 smmu.logged == DMA_FAULT_LOG_MAX ? " (further ones only counted)" : "");
}

bool arch_iommu_present(void)
{
	return platform.arch.smmu_base != 0;
}

void arch_iommu_poll_partition(struct partition *p)
{
	/* Only the bus owner's end takes the event queue's lock: others have nothing there. */
	if (smmu.on && smmu.owner == (int)p->index)
		arch_iommu_poll();
}

void arch_iommu_poll(void)
{
	const uint32_t wrap_index = (2u << EVTQ_LOG2) - 1;

	if (!smmu.on)
		return;
	spin_lock(&smmu.lock);
	uint32_t prod = rd32(SMMU_EVTQ_PROD);
	uint32_t cons = rd32(SMMU_EVTQ_CONS);
	uint32_t gerror = rd32(SMMU_GERROR);
	bool lost = ((prod ^ cons) & Q_OVFLG) || ((gerror ^ rd32(SMMU_GERRORN)) & GERROR_EVTQ_ABT);

	dsb(ld); /* the records PROD announces, not older contents */
	while ((prod ^ cons) & wrap_index) {
		report(evtq[cons & (wrap_index >> 1)]);
		cons = (cons & ~wrap_index) | ((cons + 1) & wrap_index);
	}
	dsb(sy); /* records read before the SMMU may reuse their slots */
	wr32(SMMU_EVTQ_CONS, (cons & ~Q_OVFLG) | (prod & Q_OVFLG));
	wr32(SMMU_GERRORN, gerror);
	spin_unlock(&smmu.lock);
	if (lost && smmu.owner >= 0)
		partition_log(&partitions[smmu.owner], "dma faults lost: the SMMU event queue was full");
}
