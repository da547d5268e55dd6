# QEMU `virt` for riscv64 (aia=aplic-imsic, H and Sstc), under OpenSBI.
ARCH := riscv64
DRIVERS := ns16550
