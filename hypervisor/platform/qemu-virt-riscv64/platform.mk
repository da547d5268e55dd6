# QEMU `virt` for riscv64 (aia=aplic-imsic, H and Sstc), under OpenSBI.
ARCH := riscv64
DRIVERS := ns16550
# The partitions' UART: the board's own kind (devices/ns16550/).
VUART := ns16550
