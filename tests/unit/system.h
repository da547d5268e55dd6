/* SPDX-License-Identifier: MIT */
/* Whole-board helpers for the tests that boot the hypervisor on the fake (fake/fake.h). */
#ifndef TERN_TEST_SYSTEM_H
#define TERN_TEST_SYSTEM_H

#include <arch/cpu.h>
#include <arch/psci.h>
#include <tern/config_abi.h>
#include <tern/partition.h>
#include "fake.h"


/* A partition on the cores listed ("1" or "2,3"), added to the blob fake_config_begin started. */
struct tern_config_partition *add_partition(const char *name, const char *cores, uint32_t flags);
/* Boot the blob on core 0, start the other cores; kicks arrive while a core waits. */
enum fake_exit boot_board(void);
/* The partition named `name` after boot. */
struct partition *partition_named(const char *name);
/* The board UART shows `text` (anywhere, or as the last line). */
bool console_has(const char *text);
bool console_ends_with(const char *line);
/* The vCPU on `cpu` makes an SMCCC call through HVC; its x0 afterwards is the result. */
enum fake_exit hvc(unsigned cpu, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3);
uint64_t x0_of(unsigned cpu);
/* A vCPU of partition `p` started on its core by a CPU_ON from a running one, and entered. */
void start_vcpu(struct partition *p, uint32_t index);

#endif
