/*
 * The manager guest's one call into the hypervisor (each port's, manager/<arch>/call.c):
 * SUBMIT (fn 0) or REPLY (fn 1) of the console's commands (docs/management.md, "Hypercalls
 * for a manager partition").  Returns 0 or the port's error number; *value the reply's length.
 */
#ifndef GUEST_MANAGER_H
#define GUEST_MANAGER_H

#include <stdint.h>

#define MANAGER_SUBMIT 0u
#define MANAGER_REPLY  1u

long manager_call(unsigned fn, uint64_t addr, uint64_t len, uint64_t *value);
/* The port's error number as the documentation names it: "denied", "busy", ... */
const char *manager_error_name(long error);

#endif
