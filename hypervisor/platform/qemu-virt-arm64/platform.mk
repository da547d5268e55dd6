# QEMU `virt` for arm64 (virtualization=on, gic-version=3, highmem=off).
ARCH := arm64
DRIVERS := pl011
# The partitions' UART: the board's own kind (devices/pl011/).
VUART := pl011
