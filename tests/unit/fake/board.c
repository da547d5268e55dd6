/* SPDX-License-Identifier: MIT */
/*
 * The fake board: platform/qemu-virt-arm64/board.c's description with the GIC, the PCIe ECAM, the
 * RAM and the config blob in host memory, and a UART that records what it is given.
 */
#include <string.h>
#include <tern/console.h>
#include <tern/platform.h>
#include <tern/vuart.h>
#include "fake.h"
#include "fake_arch.h"

uint8_t fake_ram[FAKE_RAM_SIZE] __attribute__((aligned(2u << 20)));
uint8_t fake_ecam[FAKE_ECAM_SIZE] __attribute__((aligned(1u << 20)));
uint8_t fake_config[0x4000] __attribute__((aligned(8)));
/* The UART's and the config's addresses are only ever compared, never dereferenced by the core. */
static uint8_t uart_window[0x1000] __attribute__((aligned(0x1000)));
uint8_t fake_virtio_window[FAKE_VIRTIO_SLOTS * FAKE_VIRTIO_STRIDE] __attribute__((aligned(0x1000)));

static const struct platform_range devices[] = {
	{ FAKE_MEM_WINDOW, 0x01000000, PLATFORM_DMA | PLATFORM_PCI_MEM32, 0 },
	{ (uintptr_t)fake_ecam, FAKE_ECAM_SIZE, PLATFORM_DMA | PLATFORM_ECAM | PLATFORM_ECAM_EMULATED, 0 },
};

/* The bus's INTA, and three more devices of one line each: tests give SPIs to two partitions. */
static const struct platform_irq device_irqs[] = { { 35, 0 }, { 36, 1 }, { 37, 2 }, { 38, 3 } };

const struct platform_desc platform = {
	.name = "fake",
	.uart_base = (uintptr_t)uart_window,
	.uart_model = &FAKE_VUART_MODEL, /* the port's board's (fake/host.mk) */
	.uart_irq = 33,
	.uart_rate = 115200 / 10, /* 115200 baud, a start and a stop bit a byte */
	.ram_base = (uintptr_t)fake_ram,
	.ram_max = FAKE_RAM_SIZE,
	.hyp_base = (uintptr_t)fake_ram,
	.hyp_size = FAKE_HYP_SIZE,
	.config_hpa = (uintptr_t)fake_config,
	.config_max = sizeof(fake_config),
	.max_cpus = FAKE_CPUS,
	.devices = devices,
	.num_devices = sizeof(devices) / sizeof(devices[0]),
	.device_irqs = device_irqs,
	.num_device_irqs = sizeof(device_irqs) / sizeof(device_irqs[0]),
	.doorbell_irq_base = FAKE_DOORBELL_IRQ_BASE,
	.num_doorbell_irqs = FAKE_DOORBELL_IRQS,
	.virtio_base = (uintptr_t)fake_virtio_window,
	.virtio_stride = FAKE_VIRTIO_STRIDE,
	.num_virtio_slots = FAKE_VIRTIO_SLOTS,
	.virtio_irq_base = FAKE_VIRTIO_IRQ_BASE,
	.arch = FAKE_PLATFORM_ARCH,
};

/* ---- the board UART (drivers/pl011.c) ---- */

char fake_uart_out[65536];
size_t fake_uart_len;
bool fake_uart_rx_enabled;
void (*fake_uart_hook)(char c);
static char uart_in[1024];
static size_t uart_in_len, uart_in_pos;

void fake_uart_clear(void)
{
	fake_uart_len = 0;
	fake_uart_out[0] = 0;
}

bool fake_uart_full;
size_t fake_uart_room = (size_t)-1;

void uart_putc(char c)
{
	if (fake_uart_hook)
		fake_uart_hook(c);
	if (fake_uart_len + 1 < sizeof(fake_uart_out))
		fake_uart_out[fake_uart_len++] = c;
	fake_uart_out[fake_uart_len] = 0;
}

size_t uart_write(const char *s, size_t n)
{
	size_t done = 0;

	while (done < n && !fake_uart_full && fake_uart_room) {
		uart_putc(s[done++]);
		if (fake_uart_room != (size_t)-1 && !--fake_uart_room)
			fake_uart_full = true;
	}
	return done;
}

void fake_uart_type(const char *s)
{
	size_t n = strlen(s);

	if (uart_in_pos == uart_in_len)
		uart_in_pos = uart_in_len = 0;
	if (n > sizeof(uart_in) - uart_in_len)
		n = sizeof(uart_in) - uart_in_len;
	memcpy(uart_in + uart_in_len, s, n);
	uart_in_len += n;
}

void uart_rx_enable(void)
{
	fake_uart_rx_enabled = true;
}

int uart_getc(void)
{
	return uart_in_pos < uart_in_len ? (unsigned char)uart_in[uart_in_pos++] : -1;
}
