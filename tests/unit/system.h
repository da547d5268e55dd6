/* SPDX-License-Identifier: MIT */
/* Whole-board helpers for the tests that boot the hypervisor on the fake (fake/fake.h). */
#ifndef TERN_TEST_SYSTEM_H
#define TERN_TEST_SYSTEM_H

#include <arch/cpu.h>
#include <tern/config_abi.h>
#include <tern/partition.h>
#include "fake.h"


/* A partition on the cores listed ("1" or "2,3"), added to the blob fake_config_begin started. */
struct tern_config_partition *add_partition(const char *name, const char *cores, uint32_t flags);
/* Boot the blob on core 0, start the other cores; kicks arrive while a core waits. */
enum fake_exit boot_board(void);
/* The partition named `name` after boot. */
struct partition *partition_named(const char *name);
/* The board UART shows `text` (anywhere, or as the last line). */
bool console_has(const char *text);
bool console_ends_with(const char *line);
/*
 * The vCPU on `cpu` makes a manager call (tern/manager.h) the port's way, fn 0 submit, 1 reply
 * (arm64: SMCCC through HVC; riscv64: the SBI extension); its error (0: none) and value (a
 * reply's length) afterwards, and the port's error codes.
 */
enum fake_exit manager_call(unsigned cpu, unsigned fn, uint64_t gpa, uint64_t len);
int64_t manager_error(unsigned cpu);
uint64_t manager_value(unsigned cpu);
struct manager_codes {
	int64_t not_supported, invalid, denied, bad_address, busy, no_command;
};
extern const struct manager_codes mgr;
/* arm64 (arm64/system.c): the vCPU on `cpu` makes an SMCCC call through HVC; x0 afterwards. */
enum fake_exit hvc(unsigned cpu, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3);
uint64_t x0_of(unsigned cpu);

/*
 * The vCPU on `cpu` asks its firmware to power vCPUs and its partition (arm64: PSCI through
 * HVC, system_arm64.c; riscv64: the SBI's HSM and SRST, riscv64/rv.c), and what it answered:
 * fw_error() the call's return code (one of fw's), fw_status() a status call's answer
 * (0 on, 1 off, 2 on pending: PSCI's AFFINITY_INFO and the SBI's hart_get_status agree).
 */
enum fake_exit fw_cpu_on(unsigned cpu, uint64_t target, uint64_t entry, uint64_t context);
enum fake_exit fw_cpu_off(unsigned cpu);
enum fake_exit fw_cpu_status(unsigned cpu, uint64_t target);
enum fake_exit fw_system_off(unsigned cpu);
enum fake_exit fw_system_reset(unsigned cpu);
uint64_t fw_error(unsigned cpu);
uint64_t fw_status(unsigned cpu);
/* The return codes (the SBI has one code for PSCI's ALREADY_ON and ON_PENDING, none for DENIED). */
struct fw_codes {
	uint64_t success, invalid_address, already_on, on_pending, denied;
	const char *system_off_stat; /* the counter of a SYSTEM_OFF call, as tern-stats names it */
};
extern const struct fw_codes fw;
/* The register a vCPU started with a context finds it in (arm64 x0, riscv64 a1). */
uint64_t guest_context(unsigned cpu);
/* The interrupts the port's fast path handed the vCPU on `cpu` (arch_vcpu_stat's counters). */
void set_fast_path_irqs(unsigned cpu, uint64_t n);
/* Make the port refuse to build partition `c` at boot; what it will say. */
const char *break_partition_init(struct tern_config_partition *c);
void mend_partition_init(void);
/* The console's input interrupt arrives at core `cpu` while its guest runs; and it was completed
   (arm64: its EOI and deactivation; riscv64: the line, still high, sent again). */
enum fake_exit console_input_interrupt(unsigned cpu);
bool console_input_completed(unsigned cpu);
/* The console's input interrupt goes to core `cpu`. */
bool console_irq_goes_to(unsigned cpu);
/*
 * Where a device's MSI reaches a vCPU (arch_msi_target): the doorbell vCPU `vcpu` of a
 * partition with `msi_flags` sees (arm64: the fake's doorbell pages; riscv64: its IMSIC file,
 * where hart `vcpu`'s is on the board), and the board's address behind it on core `core`
 * (riscv64: the guest file of that hart that backs it).
 */
uint64_t msi_guest_doorbell(uint32_t vcpu);
uint64_t msi_host_doorbell(unsigned core);
extern const uint32_t msi_flags;
/*
 * What partition p's map holds at `ipa`: its board address and whether it is writable and
 * executable there; false if nothing is mapped there.  arm64: memory it shares only (the
 * fake's record of arch_partition_map_shared); riscv64: its real G-stage, whatever it maps.
 */
bool shared_map_of(const struct partition *p, uint64_t ipa, uint64_t *pa, bool *writable, bool *executable);
/* A vCPU of partition `p` started on its core by a CPU_ON from a running one, and entered. */
void start_vcpu(struct partition *p, uint32_t index);
/*
 * IPIs between the vCPUs of a partition, for the tests of shared cores: the vCPU on `cpu`
 * enables its IPI at its virtual interrupt controller (arm64: SGI 6 in its redistributor;
 * riscv64: the VS software interrupt in hie); it sends one to its partition's vCPU `vcpu`
 * (arm64: ICC_SGI1R_EL1; riscv64: the SBI's IPI); the vCPU on `cpu` has one pending (arm64: in
 * a list register; riscv64: hvip.VSSIP).  guest_wfi: the vCPU on `cpu` executes a trapped WFI.
 */
void guest_enables_ipi(unsigned cpu);
enum fake_exit send_ipi(unsigned cpu, uint32_t vcpu);
bool ipi_pending(unsigned cpu);
enum fake_exit guest_wfi(unsigned cpu);

#endif
