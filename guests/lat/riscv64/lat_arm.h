/* Shared by lat.c and lat_vectors.S: lat_arm's NOP slide covers periods up to this many cycles. */
#ifndef LAT_RISCV_ARM_H
#define LAT_RISCV_ARM_H

#define LAT_ARM_MAX_PERIOD 512

#endif
