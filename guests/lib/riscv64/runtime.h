/* What the RISC-V library asks of a guest, and what it offers besides the drivers. */
#ifndef GUEST_RISCV_RUNTIME_H
#define GUEST_RISCV_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

/* Provided by the guest. */
extern const char guest_name[];
void guest_main(void);
/*
 * Optional: false keeps the library's two boot lines off the console. (The library's default
 * is a weak definition, not an undefined weak symbol: address 0 is out of reach of medany's
 * PC-relative references from 0x8020_0000.)
 */
bool guest_banner(void);

/* `time` at the image's first instruction. */
uint64_t entry_time(void);
/* `cycle` there: under QEMU's icount virtual nanoseconds since the board's reset, so at
 * shift 0 the instructions every hart ran before it. */
uint64_t entry_cycle(void);

/* RAM as the device tree describes it; 0/0 if it does not. */
uint64_t ram_base(void);
uint64_t ram_size(void);

/* Hart ids of the device tree's CPUs (status okay), in its order; returns how many. */
unsigned cpu_harts(unsigned *harts, unsigned max);

/*
 * Run fn(context) on hart `hart`, with interrupts masked and disabled (sie 0). A hart that is
 * stopped is started with SBI HSM hart_start; one waiting in the library's idle loop is woken
 * by IMSIC_ID_WAKE in its IMSIC file (or an SBI IPI where it has none). When fn returns, the
 * hart goes back to that loop (WFI with nothing but the wake-up enabled) rather than to HSM
 * hart_stop: a stopped hart may wait in the firmware by spinning, which under QEMU's icount
 * takes the running hart's turns. Returns an SBI error: 0, or -7 (ALREADY_STARTED) while it
 * still runs an earlier fn.
 */
typedef void (*secondary_fn)(uint64_t context);
long cpu_start(unsigned hart, secondary_fn fn, uint64_t context);

/* True once `hart`'s fn has returned (or it never had one). */
bool cpu_idle(unsigned hart);

/* The console: the first ns16550 of the device tree. */
void uart_init(void);
uintptr_t uart_address(void);

void guest_exit(void) __attribute__((noreturn));

#endif
