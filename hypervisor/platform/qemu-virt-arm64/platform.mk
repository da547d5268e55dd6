# QEMU `virt` for arm64 (virtualization=on, gic-version=3, highmem=off).
ARCH := arm64
DRIVERS := pl011
