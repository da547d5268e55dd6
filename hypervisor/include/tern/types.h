/* SPDX-License-Identifier: MIT */
#ifndef TERN_TYPES_H
#define TERN_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t paddr_t;   /* board (host) physical address */
typedef uint64_t ipaddr_t;  /* partition (intermediate) physical address */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((a) - 1)) == 0)
#define KiB(x) ((uint64_t)(x) << 10)
#define MiB(x) ((uint64_t)(x) << 20)
#define GiB(x) ((uint64_t)(x) << 30)
#define BIT(n) (1ULL << (n))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
