/* SPDX-License-Identifier: MIT */
#ifndef ARCH_PARTITION_H
#define ARCH_PARTITION_H

#include <arch/vaplic.h>
#include <tern/config_abi.h>

/*
 * The arch state core objects embed (struct partition.arch, struct vcpu.arch).  Included by
 * tern/partition.h: nothing here may need struct partition or struct vcpu complete.
 */

/*
 * The guest interrupt file each core gives the vCPU it runs (trap-less partitions): its
 * hart's first, mapped where the guest expects its S-level IMSIC file.  A core runs one vCPU
 * only, so one file a core is all it takes.
 */
#define VCPU_GUEST_FILE 1u
#define IMSIC_FILE_SIZE 0x1000u

/* A partition's address space (its G-stage (Sv39x4) root and the hgatp that selects it), its APLIC. */
struct arch_partition {
	uint64_t *gstage_root;
	uint64_t hgatp;
	struct vaplic vaplic;
};

struct arch_vcpu {
	struct vaplic_idc idc;   /* its interrupt delivery control (direct delivery mode) */
};

/* Where vCPU i's interrupt file is on the board: a guest file of its core. */
paddr_t riscv_vcpu_file_hpa(const struct tern_config_partition *c, uint32_t i);

#endif
