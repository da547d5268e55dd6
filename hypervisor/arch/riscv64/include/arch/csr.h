/* SPDX-License-Identifier: MIT */
/*
 * Control and status registers.  Clang 14 knows neither the Sstc nor the AIA names, so those
 * go by number.
 */
#ifndef ARCH_CSR_H
#define ARCH_CSR_H

#include <tern/types.h>

#define CSR_STIMECMP  0x14d
#define CSR_VSTIMECMP 0x24d
#define CSR_HENVCFG   0x60a

#define SIE_SSIE  BIT(1)
#define SIE_STIE  BIT(5)
#define SIP_SSIP  BIT(1)
#define HENVCFG_STCE BIT(63)  /* the guest's stimecmp writes go to vstimecmp */

#define STR_(x) #x
#define STR(x) STR_(x)

#define csr_read(csr) ({ uint64_t v_; __asm__ volatile("csrr %0, " STR(csr) : "=r"(v_)); v_; })
#define csr_write(csr, val) __asm__ volatile("csrw " STR(csr) ", %0" : : "rK"((uint64_t)(val)) : "memory")
#define csr_set(csr, bits) __asm__ volatile("csrs " STR(csr) ", %0" : : "rK"((uint64_t)(bits)) : "memory")
#define csr_clear(csr, bits) __asm__ volatile("csrc " STR(csr) ", %0" : : "rK"((uint64_t)(bits)) : "memory")

#endif
