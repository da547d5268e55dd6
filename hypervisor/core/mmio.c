/* SPDX-License-Identifier: MIT */
#include <tern/arch.h>
#include <tern/mmio.h>
#include <tern/partition.h>
#include <tern/platform.h>

bool mmio_emulate(struct vcpu *v, ipaddr_t ipa, unsigned size, bool write, uint64_t *value)
{
	struct partition *p = v->partition;

	if (ipa >= platform.uart_base && ipa < platform.uart_base + VPL011_SIZE) {
		uint32_t offset = (uint32_t)(ipa - platform.uart_base);
		if (size > 4)
			return false;
		if (write)
			vpl011_write(&p->uart, p->name, offset & ~3u, (uint32_t)*value);
		else
			*value = vpl011_read(&p->uart, offset & ~3u);
		return true;
	}
	return arch_vgic_mmio(v, ipa, size, write, value);
}
