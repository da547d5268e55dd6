/* SPDX-License-Identifier: MIT */
/* What boot.S, vectors.S and C call across the assembly boundary. */
#ifndef ARCH_ENTRY_H
#define ARCH_ENTRY_H

#include <arch/cpu.h>
#include <tern/config_abi.h>

extern struct core_stack cpu_stacks[MAX_CPUS];
extern uint8_t panic_stacks[MAX_CPUS][PANIC_STACK_SIZE];
/* hyp.ld: where the image, its text and its read-only data begin and end (addresses only). */
extern const char hyp_image_start;
extern const char hyp_text_end;
extern const char hyp_rodata_end;
extern const char hyp_image_end;
/* satp for HS-mode's own map (mmu.c), written by the boot core before any other starts. */
extern uint64_t riscv_hyp_satp;
/* Set by the boot core before it starts a core, which may wait for it instead (boot.S). */
extern uint8_t riscv_cpu_released[MAX_CPUS];

/* boot.S, vectors.S */
void secondary_entry(void);
void trap_entry(void);
/* stvec while the doorbell path reads the guest's store (vectors.S): a fault there goes to C. */
void doorbell_fetch_fault(void);
/* fp.S: the FP registers and fcsr into `fp`, and back; sstatus.FS must not be Off. */
void riscv_fp_save(struct riscv_fp *fp);
void riscv_fp_restore(const struct riscv_fp *fp);
/* Resume the guest from `r` (sscratch = this core, sret to VS-mode). */
__attribute__((noreturn)) void guest_enter(struct guest_regs *r);

/* C entry points the assembly branches to. */
__attribute__((noreturn)) void riscv_boot_primary(unsigned id, uint64_t entry_time, paddr_t fdt);
__attribute__((noreturn)) void riscv_boot_secondary(unsigned id);
__attribute__((noreturn)) void riscv_hyp_panic(const uint64_t *regs);
/*
 * The instruction at the guest's virtual address `gva`, as its fetch translates it; false if
 * that faults (its page tables changed meanwhile).
 */
bool riscv_fetch_guest_insn(uint64_t gva, uint32_t *insn);
/*
 * What HS-mode's map lets the hypervisor do at `va`, tried with the trap caught locally:
 * 0 if a load, a store (an AMO that ORs zero: nothing changes) or a call (to a `ret` there)
 * went through, else the trap's scause.
 */
uint64_t riscv_probe_load(uintptr_t va);
uint64_t riscv_probe_store(uintptr_t va);
uint64_t riscv_probe_exec(uintptr_t va);
/* mmu.c: HS-mode's map of the hypervisor itself and the devices it drives; on, on this core. */
bool riscv_mmu_init(paddr_t fdt);
void riscv_mmu_enable(void);
/* ... and of a partition's RAM and pristine copies (after the config blob is checked). */
bool riscv_mmu_map_partition(const struct tern_config_partition *c);
/* The page of HS-mode's map that a store must reach (the boot check). */
uintptr_t riscv_mmu_root(void);
/* A trap from the guest, its registers in `r`; returning resumes it from `r`. */
void riscv_guest_trap(struct guest_regs *r);

#endif
