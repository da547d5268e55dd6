/* MMIO accessors of the architecture being built for, for the library's shared drivers. */
#ifndef GUEST_MMIO_H
#define GUEST_MMIO_H

#if defined(__aarch64__)
#include "arm64.h"
#elif defined(__riscv)
#include "riscv.h"
#else
#error "unsupported architecture"
#endif

#endif
