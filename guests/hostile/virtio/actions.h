/*
 * The hostile guest's VirtIO actions, the same on both ports (guests/hostile/hostile.c and
 * guests/hostile/riscv64/hostile.c choose them with hostile.action=virtio-...).
 */
#ifndef HOSTILE_VIRTIO_ACTIONS_H
#define HOSTILE_VIRTIO_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "bootargs.h"

/*
 * Run the VirtIO action `name` if it is one (false if not). `pause(us)` is the port's sleep (WFI
 * until its timer, us microseconds ahead): every wait sleeps hostile.poll_us (default 50)
 * between its looks, so that a waiting core does not hold QEMU's one icount thread.
 */
bool vio_hostile_action(struct strview name, void (*pause)(uint64_t us));

#endif
