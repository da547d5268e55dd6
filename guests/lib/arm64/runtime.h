/* What the library asks of a guest, and what it offers besides the drivers. */
#ifndef GUEST_RUNTIME_H
#define GUEST_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

/* Provided by the guest. */
extern const char guest_name[];
void guest_main(void);
/*
 * Optional: false keeps the library's two boot lines (entry, bootargs) off the console, for a
 * guest that must act before it prints much. Called once the bootargs are read.
 */
bool guest_banner(void) __attribute__((weak));

/* Exception level the CPU was entered at (1 inside Tern, 2 on the bare board). */
unsigned entry_el(void);
/* The physical counter at the image's first instruction (ticks since the board's reset). */
uint64_t entry_time(void);

/* RAM as the device tree describes it; 0/0 if it does not. */
uint64_t ram_base(void);
uint64_t ram_size(void);

/*
 * PSCI CPU_ON for CPU `cpu` (MPIDR Aff0 = cpu). It initialises its GIC CPU interface, then
 * runs fn(context_id) with IRQs masked; when fn returns the CPU calls CPU_OFF.
 */
typedef void (*secondary_fn)(uint64_t context_id);
int32_t cpu_start(unsigned cpu, secondary_fn fn, uint64_t context_id);

/*
 * As cpu_start, but fn runs before the CPU has touched its redistributor or GIC CPU interface
 * (to see them as another CPU left them); it calls gic_init_cpu() itself if it needs them.
 */
int32_t cpu_start_bare(unsigned cpu, secondary_fn fn, uint64_t context_id);

/* A CPU_ON entry point (start.S) that parks the CPU with no stack or memory access. */
extern char park_entry[];

void guest_exit(void) __attribute__((noreturn));

#endif
