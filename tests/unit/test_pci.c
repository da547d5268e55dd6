/* SPDX-License-Identifier: MIT */
/* core/pci.c: a partition's PCI functions are silenced when it ends (fake ECAM in host memory). */
#include <string.h>
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

/* A partition given the ECAM ends: its functions are silenced before its RAM can be reloaded. */
void test_pci_owner_ends(void)
{
	empty_ecam();
	uint8_t *fn = function(0, 2, 0, false, true);
	fake_config_begin(2);
	struct tern_config_partition *c = add_partition("rt", "0", 0);
	add_partition("other", "1", 0);
	c->num_regions = 1;
	c->region[0] = (struct tern_config_region){ (uintptr_t)fake_ecam, (uintptr_t)fake_ecam,
						    FAKE_ECAM_SIZE, TERN_RF_DEVICE, 0 };
	CHECK_EQ(boot_board(), FAKE_EXIT_RUN);
	CHECK_EQ(get16(fn, 0x04), 0x0007);
	CHECK_EQ(hvc(0, PSCI_SYSTEM_OFF, 0, 0, 0), FAKE_EXIT_IDLE);
	CHECK_EQ(get16(fn, 0x04), 1u << 10);
	CHECK_EQ(get16(fn, 0x42), 0x0080);
}
