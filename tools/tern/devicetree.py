"""A partition's device tree: exactly what the partition can see, at the board's
own addresses, so a guest written for QEMU virt needs no changes.

`partition_dts()` writes DTS text; `compile_dts()` turns it into a DTB with dtc.
"""

import shutil
import subprocess
from pathlib import Path

from . import layout
from .errors import ToolError

CPU_COMPATIBLE = {
    "cortex-a53": "arm,cortex-a53",
    "cortex-a57": "arm,cortex-a57",
    # QEMU's "max" is no real core; the generic binding says "an Armv8 CPU".
    "max": "arm,armv8",
}

GIC_PHANDLE = 1
CLOCK_PHANDLE = 2
UART_CLOCK_HZ = 24_000_000

# Generic timer PPIs as (type, number, flags): secure phys 29, non-secure
# phys 30, virtual 27, hypervisor 26, in the order the binding requires.
TIMER_PPIS = ((1, 13, 4), (1, 14, 4), (1, 11, 4), (1, 10, 4))


def _cells(*values):
    return "<" + " ".join(f"0x{v:x}" for v in values) + ">"


def _reg(base, size):
    """A reg entry with #address-cells = #size-cells = 2."""
    return _cells(base >> 32, base & 0xFFFF_FFFF, size >> 32, size & 0xFFFF_FFFF)


def _string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def partition_dts(name, num_vcpus, cpu_model, ram_ipa, ram_size, bootargs=""):
    """DTS source for a partition with `num_vcpus` vCPUs and RAM at `ram_ipa`."""
    uart = f"pl011@{layout.UART_BASE:x}"
    gicr_size = layout.GICR_STRIDE * num_vcpus
    lines = [
        "/dts-v1/;",
        "",
        f"/* Tern partition \"{name}\": {num_vcpus} vCPU(s), RAM 0x{ram_ipa:x}+0x{ram_size:x} */",
        "/ {",
        '\tcompatible = "linux,dummy-virt";',
        f'\tmodel = {_string("Tern partition " + name)};',
        "\t#address-cells = <2>;",
        "\t#size-cells = <2>;",
        f"\tinterrupt-parent = <{GIC_PHANDLE}>;",
        "",
        "\tchosen {",
        f'\t\tstdout-path = "/{uart}";',
        f"\t\tbootargs = {_string(bootargs)};",
        "\t};",
        "",
        "\tcpus {",
        "\t\t#address-cells = <1>;",
        "\t\t#size-cells = <0>;",
    ]
    for i in range(num_vcpus):
        lines += [
            "",
            f"\t\tcpu@{i} {{",
            '\t\t\tdevice_type = "cpu";',
            f'\t\t\tcompatible = "{CPU_COMPATIBLE[cpu_model]}";',
            f"\t\t\treg = <{i}>;",
            '\t\t\tenable-method = "psci";',
            "\t\t};",
        ]
    lines += [
        "\t};",
        "",
        f"\tmemory@{ram_ipa:x} {{",
        '\t\tdevice_type = "memory";',
        f"\t\treg = {_reg(ram_ipa, ram_size)};",
        "\t};",
        "",
        "\tpsci {",
        '\t\tcompatible = "arm,psci-1.0", "arm,psci-0.2";',
        '\t\tmethod = "smc";',
        "\t};",
        "",
        f"\tintc@{layout.GICD_BASE:x} {{",
        '\t\tcompatible = "arm,gic-v3";',
        "\t\t#interrupt-cells = <3>;",
        "\t\t#address-cells = <0>;         /* no children: no ITS */",
        "\t\tinterrupt-controller;",
        f"\t\treg = {_reg(layout.GICD_BASE, layout.GICD_SIZE)},",
        f"\t\t      {_reg(layout.GICR_BASE, gicr_size)};",
        f"\t\tphandle = <{GIC_PHANDLE}>;",
        "\t};",
        "",
        "\ttimer {",
        '\t\tcompatible = "arm,armv8-timer";',
        "\t\tinterrupts = " + ", ".join(_cells(*ppi) for ppi in TIMER_PPIS) + ";",
        "\t\talways-on;",
        "\t};",
        "",
        "\tapb-pclk {",
        '\t\tcompatible = "fixed-clock";',
        "\t\t#clock-cells = <0>;",
        f"\t\tclock-frequency = <{UART_CLOCK_HZ}>;",
        '\t\tclock-output-names = "clk24mhz";',
        f"\t\tphandle = <{CLOCK_PHANDLE}>;",
        "\t};",
        "",
        f"\t{uart} {{",
        '\t\tcompatible = "arm,pl011", "arm,primecell";',
        f"\t\treg = {_reg(layout.UART_BASE, layout.UART_SIZE)};",
        f"\t\tinterrupts = {_cells(0, layout.UART_SPI, 4)};",
        f"\t\tclocks = <{CLOCK_PHANDLE}>, <{CLOCK_PHANDLE}>;",
        '\t\tclock-names = "uartclk", "apb_pclk";',
        "\t};",
        "};",
        "",
    ]
    return "\n".join(lines)


def dtc_path():
    path = shutil.which("dtc")
    if not path:
        raise ToolError("dtc not found (install the device-tree-compiler package)")
    return path


def compile_dts(source, dtb_path):
    """Write `source` next to `dtb_path` as .dts, compile it, return the DTB bytes."""
    dtb_path = Path(dtb_path)
    dts_path = dtb_path.with_suffix(".dts")
    dts_path.write_text(source)
    proc = subprocess.run([dtc_path(), "-q", "-I", "dts", "-O", "dtb", "-o", str(dtb_path),
                           str(dts_path)], capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["no message"])[0]
        raise ToolError(f"dtc failed on {dts_path}: {first}")
    return dtb_path.read_bytes()
