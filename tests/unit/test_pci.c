/* SPDX-License-Identifier: MIT */
/*
 * core/pci.c: a partition's PCI functions are silenced when it ends, and its MSIs steered to
 * the port's doorbells (system.h's msi_*), on a fake ECAM in host memory.
 */
#include <stdio.h>
#include <string.h>
#include <tern/mmio.h>
#include <tern/pci.h>
#include <tern/platform.h>
#include "check.h"
#include "system.h"
#include "tests.h"

#define BUS(b)          ((b) << 20)
#define FN(bus, dev, f) (fake_ecam + BUS(bus) + ((dev) << 15) + ((f) << 12))

static void put16(uint8_t *fn, uint32_t off, uint16_t v)
{
	memcpy(fn + off, &v, 2);
}

static uint16_t get16(const uint8_t *fn, uint32_t off)
{
	uint16_t v;

	memcpy(&v, fn + off, 2);
	return v;
}

/* A function with its command register all on and, if `caps`, MSI at 0x40 and MSI-X at 0x50. */
static uint8_t *function(unsigned bus, unsigned dev, unsigned f, bool multi, bool caps)
{
	uint8_t *fn = FN(bus, dev, f);

	memset(fn, 0, 4096);
	put16(fn, 0x00, 0x1234);            /* vendor */
	put16(fn, 0x04, 0x0007);            /* I/O, memory, bus master */
	fn[0x0e] = multi ? 0x80 : 0x00;
	if (caps) {
		put16(fn, 0x06, 1u << 4);   /* capability list */
		fn[0x34] = 0x40;
		fn[0x40] = 0x05;            /* MSI, enabled */
		fn[0x41] = 0x50;
		put16(fn, 0x42, 0x0081);
		fn[0x50] = 0x11;            /* MSI-X, enabled */
		fn[0x51] = 0x00;
		put16(fn, 0x52, 0x8003);
	}
	return fn;
}

static void empty_ecam(void)
{
	memset(fake_ecam, 0xff, FAKE_ECAM_SIZE); /* no device answers: all ones */
}

void test_pci_quiesce_functions(void)
{
	empty_ecam();
	uint8_t *a = function(0, 0, 0, false, true);
	uint8_t *b0 = function(0, 1, 0, true, false);
	uint8_t *b3 = function(0, 1, 3, false, true);
	uint8_t *hidden = function(0, 2, 1, false, false); /* function 0 absent: the slot is empty */
	uint8_t *single = function(0, 3, 0, false, false);
	uint8_t *ignored = function(0, 3, 1, false, false); /* not multi-function: not looked at */

	pci_quiesce_range((uintptr_t)fake_ecam, FAKE_ECAM_SIZE);
	CHECK_EQ(get16(a, 0x04), 1u << 10);                   /* decoding and DMA off, INTx disabled */
	CHECK_EQ(get16(a, 0x42), 0x0080);                     /* MSI off, the rest kept */
	CHECK_EQ(get16(a, 0x52), 0x0003);                     /* MSI-X off */
	CHECK_EQ(get16(b0, 0x04), 1u << 10);
	CHECK_EQ(get16(b3, 0x04), 1u << 10);
	CHECK_EQ(get16(b3, 0x42), 0x0080);
	CHECK_EQ(get16(hidden, 0x04), 0x0007);
	CHECK_EQ(get16(single, 0x04), 1u << 10);
	CHECK_EQ(get16(ignored, 0x04), 0x0007);
	CHECK_EQ(get16(FN(0, 1, 1), 0x04), 0xffff);           /* absent functions untouched */
}

/* A capability list that loops is followed a bounded number of steps. */
void test_pci_capability_loop(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 0, 0, false, true);
	fn[0x51] = 0x40;                                      /* MSI-X points back at MSI */
	fn[0x41] = 0x52 | 0x1;                                /* low bits of pointers are ignored */
	pci_quiesce_range((uintptr_t)fake_ecam, BUS(1));
	CHECK_EQ(get16(fn, 0x42), 0x0080);
	/* A pointer below the header's end ends the list. */
	fn = function(0, 0, 0, false, true);
	fn[0x34] = 0x3c;
	pci_quiesce_range((uintptr_t)fake_ecam, BUS(1));
	CHECK_EQ(get16(fn, 0x42), 0x0081);
}

/* Only whole buses of an ECAM the board lists; anything else is no ECAM. */
void test_pci_ranges(void)
{
	empty_ecam();
	uint8_t *bus0 = function(0, 0, 0, false, false), *bus1 = function(1, 0, 0, false, false);

	pci_quiesce_range((uintptr_t)fake_ecam + BUS(1), BUS(1));
	CHECK_EQ(get16(bus0, 0x04), 0x0007);
	CHECK_EQ(get16(bus1, 0x04), 1u << 10);
	bus1 = function(1, 0, 0, false, false);
	pci_quiesce_range((uintptr_t)fake_ecam + 0x1000, BUS(1));   /* part of bus 0 only */
	CHECK_EQ(get16(bus0, 0x04), 0x0007);
	CHECK_EQ(get16(bus1, 0x04), 0x0007);
	pci_quiesce_range((uintptr_t)fake_ecam + 0x1000, ~0ull);    /* bus 1 to the ECAM's end */
	CHECK_EQ(get16(bus0, 0x04), 0x0007);
	CHECK_EQ(get16(bus1, 0x04), 1u << 10);
	bus1 = function(1, 0, 0, false, false);
	pci_quiesce_range(FAKE_MEM_WINDOW, 0x1000000);              /* a memory window: no ECAM */
	pci_quiesce_range((uintptr_t)fake_ecam - BUS(1), BUS(1));   /* before it */
	pci_quiesce_range((uintptr_t)fake_ecam + FAKE_ECAM_SIZE, BUS(1));
	CHECK_EQ(get16(bus0, 0x04), 0x0007);
	CHECK_EQ(get16(bus1, 0x04), 0x0007);
}

/*
 * A board of `cpus` cores: "rt" on `rt_cores` owns the whole fake ECAM and may be sent MSIs,
 * "other" on `other_cores`.
 */
static struct partition *boot_ecam_owner(unsigned cpus, const char *rt_cores, const char *other_cores)
{
	fake_config_begin(cpus);
	struct tern_config_partition *c = add_partition("rt", rt_cores, msi_flags);
	add_partition("other", other_cores, 0);
	c->num_regions = 1;
	c->region[0] = (struct tern_config_region){ (uintptr_t)fake_ecam, (uintptr_t)fake_ecam,
						    FAKE_ECAM_SIZE, TERN_RF_DEVICE, 0 };
	enum fake_exit e = boot_board();
	if (e != FAKE_EXIT_RUN)
		fprintf(stderr, "%s\n", fake_uart_out);
	CHECK_EQ(e, FAKE_EXIT_RUN);
	return partition_named("rt");
}

/* A partition given the ECAM ends: its functions are silenced before its RAM can be reloaded. */
void test_pci_owner_ends(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 2, 0, false, true);
	boot_ecam_owner(2, "0", "1");
	CHECK_EQ(get16(fn, 0x04), 0x0007);
	CHECK_EQ(fw_system_off(0), FAKE_EXIT_IDLE);
	CHECK_EQ(get16(fn, 0x04), 1u << 10);
	CHECK_EQ(get16(fn, 0x42), 0x0080);
}

/* ---- the emulated ECAM (vpci_access): config accesses of the partition that owns it ---- */

/* rt's vCPU i runs on core i + 1, so a doorbell's vCPU and the core behind it differ. */
static struct vcpu *ecam_owner(void)
{
	return &boot_ecam_owner(3, "1,2", "0")->vcpu[0];
}

static enum mmio_result cfg(struct vcpu *v, uint32_t offset, unsigned size, bool write,
			    uint64_t *value)
{
	return mmio_emulate(v, (uintptr_t)fake_ecam + offset, size, write, value);
}

static uint32_t get32(const uint8_t *fn, uint32_t off)
{
	uint32_t v;

	memcpy(&v, fn + off, 4);
	return v;
}

static uint64_t get64(const uint8_t *fn, uint32_t off)
{
	return get32(fn, off) | (uint64_t)get32(fn, off + 4) << 32;
}

/* A 64-bit MSI address written as the guest does, a dword at a time; the second write's result. */
static enum mmio_result set_msi_address(struct vcpu *v, uint32_t at, uint64_t addr)
{
	uint64_t value = (uint32_t)addr;

	CHECK_EQ(cfg(v, at + 0x44, 4, true, &value), MMIO_DONE);
	value = addr >> 32;
	return cfg(v, at + 0x48, 4, true, &value);
}

/* The guest writes its own doorbell's address; the device gets the board's, the guest reads its own. */
void test_vpci_steers_msi_addresses(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 2, 0, false, true);
	put16(fn, 0x42, 0x0080);                              /* MSI off, 64-bit */
	put16(fn, 0x52, 0x0000);                              /* MSI-X off */
	struct vcpu *v = ecam_owner();
	uint32_t at = 2u << 15;                               /* 00:02.0 */
	uint64_t guest = msi_guest_doorbell(1), host = msi_host_doorbell(2); /* vCPU 1, on core 2 */
	uint64_t value;

	CHECK_EQ(set_msi_address(v, at, guest), MMIO_DONE);
	CHECK_EQ(get64(fn, 0x44), host);
	CHECK_EQ(cfg(v, at + 0x44, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, (uint32_t)guest);
	CHECK_EQ(cfg(v, at + 0x48, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, guest >> 32);
	CHECK_EQ(cfg(v, at + 0x45, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, guest >> 8 & 0xff);
	/* Enable, with the dword the control is in (read, modified, written): the device takes it. */
	CHECK_EQ(cfg(v, at + 0x40, 4, false, &value), MMIO_DONE);
	value |= (uint64_t)0x0001 << 16;
	CHECK_EQ(cfg(v, at + 0x40, 4, true, &value), MMIO_DONE);
	CHECK_EQ(get16(fn, 0x42), 0x0081);
	/* A byte of the address changes: the board's follows. */
	value = 0x10;
	CHECK_EQ(cfg(v, at + 0x44, 1, true, &value), MMIO_DONE);
	CHECK_EQ(get64(fn, 0x44), host + 0x10);
	/* Live, aimed at something not its own: refused, and the device keeps the old address. */
	value = (uint32_t)msi_host_doorbell(0);               /* the board's, behind another's core */
	CHECK_EQ(cfg(v, at + 0x44, 4, true, &value), MMIO_UNHANDLED);
	CHECK_EQ(get64(fn, 0x44), host + 0x10);
	CHECK(console_has("partition rt: PCI 00:02.0: MSI aimed at none of its interrupt files:"));
	value = (uint32_t)msi_guest_doorbell(2);              /* a vCPU rt does not have */
	CHECK_EQ(cfg(v, at + 0x44, 4, true, &value), MMIO_UNHANDLED);
	CHECK_EQ(get64(fn, 0x44), host + 0x10);
	/* ... and the guest's own copy is the last one accepted (found by the vpci fuzzer). */
	CHECK_EQ(cfg(v, at + 0x44, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, (uint32_t)guest + 0x10);
	/* Its other vCPU's doorbell, behind the other core: the device follows. */
	CHECK_EQ(set_msi_address(v, at, msi_guest_doorbell(0) + 0x20), MMIO_DONE);
	CHECK_EQ(get64(fn, 0x44), msi_host_doorbell(1) + 0x20);
	/* Other registers go through unchanged, whatever the size; 8-byte accesses do not exist. */
	value = 0x0006;
	CHECK_EQ(cfg(v, at + 0x04, 2, true, &value), MMIO_DONE);
	CHECK_EQ(get16(fn, 0x04), 0x0006);
	fn[0x04] = 0x02;
	CHECK_EQ(cfg(v, at + 0x04, 2, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x0002u);
	value = 0x40;                                         /* the latency timer */
	CHECK_EQ(cfg(v, at + 0x0d, 1, true, &value), MMIO_DONE);
	CHECK_EQ(fn[0x0d], 0x40);
	CHECK_EQ(cfg(v, at + 0x00, 8, false, &value), MMIO_ABORT);
}

/* MSI is enabled only aimed at one of the partition's doorbells; a fresh start forgets the address. */
void test_vpci_msi_enable_needs_an_address(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 3, 0, false, true);
	put16(fn, 0x42, 0x0000);                              /* MSI off, 32-bit */
	struct vcpu *v = ecam_owner();
	uint32_t at = 3u << 15;
	uint64_t value = 0x0001;

	CHECK_EQ(cfg(v, at + 0x42, 2, true, &value), MMIO_UNHANDLED);      /* no address yet */
	CHECK_EQ(get16(fn, 0x42), 0x0000);
	value = 0x1234;                                       /* not a doorbell: kept off the device */
	CHECK_EQ(cfg(v, at + 0x44, 4, true, &value), MMIO_DONE);
	CHECK_EQ(get32(fn, 0x44), 0u);
	value = 0x0001;
	CHECK_EQ(cfg(v, at + 0x42, 2, true, &value), MMIO_UNHANDLED);
	value = msi_guest_doorbell(0);                        /* below 4 GiB on both boards */
	CHECK_EQ(cfg(v, at + 0x44, 4, true, &value), MMIO_DONE);
	CHECK_EQ(get32(fn, 0x44), msi_host_doorbell(1));
	CHECK_EQ(get32(fn, 0x48), 0u);                        /* 32-bit: the data stays the guest's */
	value = 0x0001;
	CHECK_EQ(cfg(v, at + 0x42, 2, true, &value), MMIO_DONE);
	CHECK_EQ(get16(fn, 0x42), 0x0001);
	vpci_reset(&v->partition->vpci);
	CHECK_EQ(cfg(v, at + 0x44, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0u);
}

/* MSI-X is not shown (its table is out of reach) and may not be touched. */
void test_vpci_hides_msix(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 2, 0, false, true);         /* MSI at 0x40 -> MSI-X at 0x50 */
	fn[0x51] = 0x60;
	fn[0x60] = 0x10;                                      /* PCI Express, the list's end */
	struct vcpu *v = ecam_owner();
	uint32_t at = 2u << 15;
	uint64_t value;

	CHECK_EQ(cfg(v, at + 0x40, 4, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x00816005u);                         /* MSI's next skips MSI-X */
	CHECK_EQ(cfg(v, at + 0x41, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x60u);
	value = 0;
	CHECK_EQ(cfg(v, at + 0x52, 2, true, &value), MMIO_UNHANDLED);
	CHECK_EQ(get16(fn, 0x52), 0x8003);
	CHECK(console_has("MSI-X is not offered on this board"));
	/* MSI-X first in the list: the list head skips it. */
	fn[0x34] = 0x50;
	fn[0x51] = 0x40;
	fn[0x41] = 0x00;
	CHECK_EQ(cfg(v, at + 0x34, 1, false, &value), MMIO_DONE);
	CHECK_EQ(value, 0x40u);
}

/* Only its owner reaches the ECAM; at most VPCI_MAX_MSI functions are steered. */
void test_vpci_owner_and_limits(void)
{
	empty_ecam();
	for (unsigned d = 0; d <= VPCI_MAX_MSI; d++)
		put16(function(0, d, 0, false, true), 0x42, 0x0000);
	struct vcpu *v = ecam_owner();
	struct vcpu *other = &partition_named("other")->vcpu[0];
	uint64_t value = msi_guest_doorbell(0);

	CHECK_EQ(cfg(other, 0x00, 4, false, &value), MMIO_UNHANDLED);
	for (unsigned d = 0; d < VPCI_MAX_MSI; d++)
		CHECK_EQ(cfg(v, (d << 15) + 0x44, 4, true, &value), MMIO_DONE);
	CHECK_EQ(cfg(v, (VPCI_MAX_MSI << 15) + 0x44, 4, true, &value), MMIO_UNHANDLED);
	CHECK(console_has("MSI on more functions than the hypervisor steers"));
	CHECK(pci_ecam_emulated((uintptr_t)fake_ecam, FAKE_ECAM_SIZE));
	CHECK(!pci_ecam_emulated(FAKE_MEM_WINDOW, 0x1000));
	/* Any part of it stays unmapped, not only a range from its base. */
	CHECK(pci_ecam_emulated((uintptr_t)fake_ecam + (1u << 20), 1u << 20));
	CHECK(pci_ecam_emulated((uintptr_t)fake_ecam - 0x1000, 0x2000));
	CHECK(!pci_ecam_emulated((uintptr_t)fake_ecam + FAKE_ECAM_SIZE, 0x1000));
	CHECK(!pci_ecam_emulated((uintptr_t)fake_ecam - 0x1000, 0x1000));
}
