/* SPDX-License-Identifier: MIT */
/*
 * The fake architecture and board the host tests and fuzzers run the hypervisor on.
 *
 * It lives here, under tests/, and not as hypervisor/arch/fake/: it is hosted C (setjmp,
 * pthreads, libc) that must never end up in a hypervisor image, and it is not another ISA.
 * It stands in for the files of an architecture that touch hardware, so that every file a
 * guest or a configuration can reach runs unchanged on the host: all of core/ and, compiled
 * with TERN_HOST, the arch code a guest reaches (its headers then route system registers or
 * CSRs, this_cpu() and MMIO here).  One binary per architecture: the generic files below, and
 * those of arm64/ or riscv64/ (host.mk's ARCH).
 *
 *   arch.c   tern/arch.h: cores, kicks, counter, the noreturn entry points (longjmp), IOMMU,
 *            partition memory
 *   board.c  the platform: ECAM, RAM and the config blob in host memory; the UART
 *   boot.c   config blobs for tests, booting through tern_main, delivering kicks
 *
 *   arm64/arm64.c     system registers (per core), list registers, the physical GIC's registers
 *                     (set/clear pairs act as on hardware, every write logged), cpus[]
 *   arm64/platform.c  cpu.c, vcpu.c's entry and mmu.c for partitions and vCPUs, the vectors' C entry points
 *   riscv64/riscv64.c CSRs (per core), the board's APLIC and IMSIC files, cpus[], what cpu.c
 *                     and boot.S do (riscv64/fake_riscv64.h)
 */
#ifndef TERN_TEST_FAKE_H
#define TERN_TEST_FAKE_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_CPUS 8u

struct vcpu;
struct partition;
struct guest_regs;
struct tern_config;
struct tern_config_partition;

/* ---- cores (arch.c) ---- */

/* The core the code under test runs as (each thread of a threaded test is a core). */
extern _Thread_local unsigned fake_cpu;
/* Kicks sent (bit per core) since the test last cleared them, and per-core totals. */
extern _Atomic uint32_t fake_kicks;
extern _Atomic uint32_t fake_kick_count[FAKE_CPUS];
/* arch_counter() and arch_counter_freq(). */
extern uint64_t fake_now;
extern uint64_t fake_freq;

/* How a call into the hypervisor ended (FAKE_ON). */
enum fake_exit {
	FAKE_RETURNED,       /* it returned */
	FAKE_EXIT_IDLE,      /* arch_cpu_return_to_idle() */
	FAKE_EXIT_RUN,       /* arch_vcpu_run(): the core entered a guest */
	FAKE_EXIT_WAIT,      /* arch_cpu_idle_wait(): the core went to sleep */
	FAKE_EXIT_BOARD_OFF, /* arch_board_off() */
	FAKE_EXIT_HANG,      /* a wait loop spun fake_spin_limit times: it would never end */
};

/* What the fake knows about each core. */
struct fake_core {
	bool online;               /* booted, or started by arch_cpu_start() */
	struct vcpu *running;      /* entered by arch_vcpu_run(), until it left */
	uint64_t entry, context;   /* the last arch_vcpu_run() */
	uint64_t deadline;         /* the last arch_cpu_idle_wait() */
	unsigned runs, leaves, waits, quiesces;
	unsigned resumes;          /* arch_vcpu_resume(): entered where its saved context left it */
	/* arch_vcpu_wait(): asleep in the hypervisor, its guest (running) kept; a kick goes on */
	unsigned vcpu_waits;
};
extern struct fake_core fake_cores[FAKE_CPUS];

/* Cores arch_cpu_start() refuses (bit per core). */
extern uint32_t fake_cpu_start_fails;
/* arch_iommu_init() fails with this message when set. */
extern const char *fake_iommu_error;
/* arch_partition_init() fails with this message when set. */
extern const char *fake_partition_init_error;
extern unsigned fake_iommu_polls, fake_iommu_partition_polls, fake_board_offs;
extern uint64_t fake_synced_pa, fake_synced_size;
extern unsigned fake_syncs;
/* arch_hyp_irq_route(): the board interrupt taken by the hypervisor, and on which core. */
extern uint32_t fake_hyp_irq, fake_hyp_irq_cpu;
/*
 * Board interrupts set pending as their device would (arch_irq_raise; riscv64: every write of
 * the APLIC's setipnum), in order: a ring of the last FAKE_RAISED_LOG, fake_raises in all.
 */
#define FAKE_RAISED_LOG 64u
extern uint32_t fake_raised[FAKE_RAISED_LOG];
extern unsigned long fake_raises;
void fake_raised_record(uint32_t irq);

/*
 * arch_cpu_relax(): called in every wait loop.  The hook, if any, runs first (a test lets
 * other cores act there); after fake_spin_limit calls in one FAKE_ON the wait counts as
 * endless (FAKE_EXIT_HANG).  fake_threaded: yield the thread instead (threaded tests).
 */
extern _Thread_local void (*fake_relax_hook)(void);
extern unsigned long fake_spin_limit;
extern bool fake_threaded;

/* A call into the hypervisor on a core; the noreturn entry points come back here. */
struct fake_frame {
	jmp_buf jmp;
	enum fake_exit exit;
	unsigned saved_cpu;
	unsigned long saved_spins;
	struct fake_frame *prev;
};
void fake_frame_push(struct fake_frame *f, unsigned cpu);
enum fake_exit fake_frame_pop(struct fake_frame *f, bool returned);
__attribute__((noreturn)) void fake_exit_to_test(enum fake_exit why);

/*
 * Run the statements on core `cpu` and say how they ended: FAKE_ON(1, vcpu_cpu_off(v)).
 * Frames nest: code run from a relax hook exits to its own FAKE_ON.
 */
#define FAKE_ON(cpu, ...) __extension__({                                       \
	struct fake_frame _fake_f;                                              \
	bool _fake_returned = false;                                            \
	fake_frame_push(&_fake_f, (cpu));                                       \
	if (!setjmp(_fake_f.jmp)) {                                             \
		__VA_ARGS__;                                                    \
		_fake_returned = true;                                          \
	}                                                                       \
	fake_frame_pop(&_fake_f, _fake_returned);                               \
})

const char *fake_exit_name(enum fake_exit e);

/* ---- arm64: system registers, list registers, the physical GIC (arm64/arm64.c) ---- */

#define FAKE_MAX_LRS 16u

/* A system register of core `cpu`, as read_sysreg()/write_sysreg() there see it. */
uint64_t fake_sysreg(unsigned cpu, const char *name);
void fake_sysreg_set(unsigned cpu, const char *name, uint64_t value);
/* The fake's system registers by index, for tests that sweep them all. */
unsigned fake_sysreg_count(void);
const char *fake_sysreg_name(unsigned i);
/* Writes of ICC_DIR_EL1 (deactivations) per core, in order. */
#define FAKE_DIR_LOG 64u
extern uint32_t fake_dir_log[FAKE_CPUS][FAKE_DIR_LOG];
extern unsigned fake_dir_count[FAKE_CPUS];
/* Group 0 interrupts waiting for core `cpu` to read ICC_IAR0_EL1 (1023 once none). */
void fake_raise_group0(unsigned cpu, uint32_t intid);
extern unsigned fake_wfis[FAKE_CPUS];
/* TLBI VMALLE1 on each core: the guest's stage-1 entries of the VMID in its VTTBR_EL2. */
extern unsigned fake_tlbis[FAKE_CPUS];

/*
 * arch_partition_map_shared() (riscv64 builds its real G-stage instead): every map since the
 * test last cleared fake_shared_map_count.
 */
struct fake_shared_map {
	uint32_t partition;
	uint64_t ipa, pa, size;
	bool writable;
};
#define FAKE_SHARED_MAPS 32u
extern struct fake_shared_map fake_shared_maps[FAKE_SHARED_MAPS];
extern unsigned fake_shared_map_count;

/* List registers, per core, and how many the CPU interface has (gic_nr_lrs). */
extern uint64_t fake_lrs[FAKE_CPUS][FAKE_MAX_LRS];
extern uint64_t fake_fpregs[FAKE_CPUS][32][2];  /* Q0-Q31 (arch_vcpu_save/restore) */
/* Physical SGIs sent to guests (gic_send_sgi with an INTID other than the kick), per core. */
extern uint32_t fake_phys_sgis[FAKE_CPUS];

/* The physical GIC's registers: host memory at platform.arch.gicd_base and platform.arch.gicr_base. */
extern uint8_t fake_gicd[0x10000];
extern uint8_t fake_gicr[FAKE_CPUS][0x20000];
/* Every GIC register write, in order (a ring: the last FAKE_MMIO_LOG). */
struct fake_mmio_write {
	uintptr_t addr;
	unsigned size;
	uint64_t value;
};
#define FAKE_MMIO_LOG 1024u
extern struct fake_mmio_write fake_mmio_log[FAKE_MMIO_LOG];
extern unsigned long fake_mmio_writes;
/* Called with every GIC register write before it takes effect (a fuzzer's oracle), if set. */
extern void (*fake_gic_write_hook)(uintptr_t addr, unsigned size, uint64_t value);
/* The GIC at reset as gicv3.c leaves it (distributor: 288 INTIDs), list registers empty. */
void fake_gic_reset(void);
/* A core as gicv3.c and cpu.c leave it once online: its struct arm64_cpu and CPU interface. */
void fake_cpu_init(unsigned cpu);

/* ---- shared cores: the port's calls into the core's loop (sched_wraps.c) ---- */

/*
 * sched_guest_waits and sched_timer_expired as either port calls them on a shared core
 * (host.mk wraps them): a test sees what the port hands them without running the core's
 * loop.  A hook, if set, runs instead (the guest's wait's must not return:
 * fake_exit_to_test), else the real one.
 */
extern void (*fake_sched_guest_waits)(struct vcpu *v);
extern void (*fake_sched_timer_expired)(struct vcpu *v);

/* ---- the board (board.c) ---- */

#define FAKE_RAM_SIZE   (32u << 20)
#define FAKE_HYP_SIZE   (2u << 20)
#define FAKE_PART_RAM   (2u << 20)         /* each test partition's RAM */
#define FAKE_ECAM_SIZE  (2u << 20)         /* two buses */
#define FAKE_MEM_WINDOW 0x10000000ull      /* a device window nothing dereferences */
/* arch_msi_target: vCPU i's doorbell at FAKE_MSI_GUEST + i * 4 KiB is the board's at
   FAKE_MSI_HOST + (its core) * 4 KiB. */
#define FAKE_MSI_GUEST  0x28000000ull
#define FAKE_MSI_HOST   0x2c000000ull
extern uint8_t fake_ram[FAKE_RAM_SIZE];
extern uint8_t fake_ecam[FAKE_ECAM_SIZE];
extern uint8_t fake_config[0x4000];

/* What the hypervisor wrote to the board UART. */
extern char fake_uart_out[65536];
extern size_t fake_uart_len;
void fake_uart_clear(void);
/* Called with every character before it is written (a test makes the UART busy there). */
extern void (*fake_uart_hook)(char c);
/* The UART's FIFO is full: uart_write() takes nothing until this is cleared ... */
extern bool fake_uart_full;
/* ... or it fills after this many more bytes ((size_t)-1: never). */
extern size_t fake_uart_room;
/* Characters for uart_getc() (the console's input). */
void fake_uart_type(const char *s);
extern bool fake_uart_rx_enabled;

/* ---- flattened device trees (fdt_build.c) ---- */

/* A tree being written: its structure block and strings, as dtc lays them out. */
struct fdtb {
	uint8_t st[4096];
	uint32_t len;
	char strings[512];
	uint32_t strings_len;
};
void fdtb_begin(struct fdtb *b);
void fdtb_node(struct fdtb *b, const char *name);
void fdtb_end_node(struct fdtb *b);
void fdtb_prop(struct fdtb *b, const char *name, const void *value, uint32_t len);
void fdtb_prop_u32(struct fdtb *b, const char *name, uint32_t v);
/* A property of `n` (at most 64) 64-bit values, each two cells. */
void fdtb_prop_cells64(struct fdtb *b, const char *name, const uint64_t *v, unsigned n);
/* The whole tree (header, empty reservation map, structure, strings) into out; its size, 0 if no room. */
size_t fdtb_finish(struct fdtb *b, uint8_t *out, size_t cap);
/* A board's tree as QEMU writes it, in outline: two-cell addresses and sizes, one memory node. */
size_t fake_fdt_board(uint8_t *out, size_t cap, uint64_t ram_base, uint64_t ram_size);

/* ---- config blobs, boot, kicks (boot.c) ---- */

/* The interrupt controller as the boot leaves it (arch part: arm64 the GIC, riscv64 the APLIC). */
void fake_board_reset(void);
/* A kick arrives at `cpu` while its vCPU runs: the arch's path for it (arm64: the FIQ). */
enum fake_exit fake_kick_running(unsigned cpu);

/* A blob at platform.config_hpa with `board_cpus` cores and no partitions yet. */
struct tern_config *fake_config_begin(uint32_t board_cpus);
/*
 * Add partition `name` on `ncpus` cores (vCPU i on cpus[i]) with FAKE_PART_RAM of RAM, an
 * image and device tree whose pristine copies hold recognisable bytes.
 */
struct tern_config_partition *fake_config_add(const char *name, const uint8_t *cpus,
					      uint32_t ncpus, uint32_t flags);
/*
 * Add channel `name` (after every partition is added) of `size` bytes between the partitions
 * named in `members` (indices in the blob, `num` of them; the first `writable` map it
 * read-write): its memory at FAKE_CHANNEL_RAM + c x 1 MiB, its IPA 2 MiB above the members' RAM
 * (+ c x 2 MiB), its doorbells the board's spare interrupts in order.
 */
#define FAKE_CHANNEL_RAM (24u << 20)  /* offset in fake_ram: past the partitions and pristine copies */
struct tern_config_channel *fake_config_add_channel(const char *name, uint64_t size,
						    const uint32_t *members, uint32_t num,
						    uint32_t writable);
/*
 * Add VirtIO device `name` (after every channel), frontend and backend indices in the blob, at
 * the board's virtio-mmio slot `slot`: its channel (`channel_size` bytes, the backend member 0
 * read-write with the next doorbell, the frontend member 1 with the slot's interrupt) and its
 * record.
 */
struct tern_config_virtio;
/*
 * A pool of the cores in `cpus` (bit n: core n) with `scheduler` (TERN_SCHED_*), after every
 * other record: added last.
 */
struct tern_config_pool;
struct tern_config_pool *fake_config_add_pool(const char *name, uint32_t cpus, uint32_t scheduler);
struct tern_config_virtio *fake_config_add_virtio(const char *name, uint32_t device_id,
						  uint32_t frontend, uint32_t backend, uint32_t slot,
						  uint64_t channel_size);
/* The board's virtio-mmio slots (platform.virtio_base). */
extern uint8_t fake_virtio_window[];
/* The RAM of a configured partition, as the hypervisor addresses it (ram_hpa). */
uint8_t *fake_partition_ram(const struct tern_config_partition *c);
/* The byte pattern fake_config_add puts in partition `index`'s pristine image. */
uint8_t fake_image_byte(uint32_t index, uint64_t offset);

/*
 * tern_main() on core `cpu` (the boot core), given the board's device tree (fake_fdt_board:
 * all of fake_ram, in the hypervisor's part of it); how it ended (FAKE_EXIT_RUN or _WAIT if it
 * booted).
 */
enum fake_exit fake_boot(unsigned cpu);
/* The same with the tree at `fdt` (anything: the firmware's word is checked). */
enum fake_exit fake_boot_with_fdt(unsigned cpu, uintptr_t fdt);
/* Every other online core's first cpu_idle(), as arm64_boot_secondary runs it. */
void fake_start_secondaries(void);
/* cpu_idle(cpu) until it enters a guest or sleeps. */
enum fake_exit fake_idle(unsigned cpu);
/*
 * A kick arrives at `cpu`: the FIQ path if a guest runs there (arm64_guest_fiq), else
 * the core wakes in cpu_idle.  Clears its bit in fake_kicks.  A core the kick makes leave
 * its vCPU goes on in cpu_idle (fake_settle).
 */
enum fake_exit fake_deliver_kick(unsigned cpu);
/* Deliver every pending kick until none is left (at most `rounds` rounds); the kicks seen. */
uint32_t fake_deliver_all_kicks(unsigned rounds);
/* The same for the cores in `mask` only (a core waiting with interrupts masked takes none). */
uint32_t fake_deliver_kicks(uint32_t mask, unsigned rounds);
/* A core that left its vCPU (FAKE_EXIT_IDLE) goes on in cpu_idle, as on the board. */
enum fake_exit fake_settle(unsigned cpu, enum fake_exit e);
/*
 * A relax hook (fake_relax_hook): while a core waits for others, the kicks it sent to other
 * cores arrive there, as they would on the board.
 */
void fake_deliver_kicks_while_waiting(void);
/* arm64: the vCPU on `cpu` traps with syndrome `esr` (far, hpfar for aborts): arm64_guest_sync. */
enum fake_exit fake_trap(unsigned cpu, uint64_t esr, uint64_t far, uint64_t hpfar);
/* The registers the guest on `cpu` left in its frame. */
struct guest_regs *fake_guest_regs(unsigned cpu);

#endif
