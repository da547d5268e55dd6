/*
 * What the RISC-V guests assume of QEMU's riscv "virt" board, which a Tern partition also
 * shows at the same addresses. Everything else (RAM, the UART, the IMSIC, PCIe) is read from
 * the device tree.
 */
#ifndef GUEST_RISCV_BOARD_H
#define GUEST_RISCV_BOARD_H

#define MAX_CPUS        8               /* hart ids 0..7: one stack each */
#define STACK_SHIFT     14              /* 16 KiB per hart */

/* The ns16550 when the device tree names none (the board's own). */
#define UART_BASE_DEFAULT 0x10000000UL

#endif
