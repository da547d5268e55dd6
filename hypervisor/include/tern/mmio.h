/* SPDX-License-Identifier: MIT */
#ifndef TERN_MMIO_H
#define TERN_MMIO_H

#include <tern/types.h>

struct vcpu;

/* An access the guest made to an unmapped IPA; false if nothing emulates it. */
bool mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write, uint64_t *value);

#endif
