/* SPDX-License-Identifier: MIT */
/* The emulated GICv3 (vgicv3.c): what the traps, the vCPU's entry and its stop call. */
#ifndef ARCH_VGICV3_H
#define ARCH_VGICV3_H

#include <arch/cpu.h>

struct vcpu;
struct arch_vcpu_context;

/* A distributor register access, decoded: which register, and the first INTID it names. */
struct gicd_access {
	uint32_t reg;               /* GICD_* of the register's first instance */
	uint32_t intid;
	uint32_t byte;              /* the access's byte within the interrupt's field */
};

bool vgic_gicd_decode(uint32_t off, struct gicd_access *a);
void vgic_vcpu_reset(struct arm64_cpu *c, struct vcpu *v);
void vgic_quiesce(struct arm64_cpu *c);
/* A vCPU switch's halves (arch_vcpu_save/restore): not for direct vCPUs. */
void vgic_save(struct arm64_cpu *c, struct arch_vcpu_context *x);
void vgic_restore(struct arm64_cpu *c, struct vcpu *v, struct arch_vcpu_context *x);
void vgic_inject(struct arm64_cpu *c, uint32_t intid);
void vgic_maintenance(struct arm64_cpu *c);
void vgic_kicked(struct arm64_cpu *c);
void vgic_send_sgi(struct vcpu *v, uint64_t sgi1r);
bool vgic_lrs_pending(void);
/* Would a WFI of the running vCPU on `c` end on what other vCPUs posted to it (SGIs)? */
bool vgic_posted_pending(const struct arm64_cpu *c);
/* Would a WFI of saved vCPU v end on its vGIC state: what its restore would deliver at once? */
bool vgic_saved_pending(const struct vcpu *v);
bool vgic_owned_hw(const struct arm64_cpu *c, uint32_t intid);
bool vgic_hyp_first(const struct arm64_cpu *c, uint32_t intid);

#endif
