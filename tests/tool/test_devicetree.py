"""A partition's device tree: its own view of the board, nothing else."""

import re
import shutil
import subprocess

import pytest
from tern.config import MiB
from tern.devicetree import compile_dts, partition_dts


@pytest.fixture
def dts():
    return partition_dts("rt", 2, "cortex-a53", 0x4000_0000, 64 * MiB, 'lat.samples=100 q="x"')


def node(text, name):
    """The body of the node called `name` (no nesting inside it)."""
    m = re.search(r"\b" + re.escape(name) + r" \{\n(.*?)\n\t*\};", text, re.S)
    assert m, f"no node {name}"
    return m.group(1)


def test_root(dts):
    root = dts.split("\n\tchosen", 1)[0]
    assert 'compatible = "linux,dummy-virt";' in root
    assert "#address-cells = <2>;" in root and "#size-cells = <2>;" in root
    assert "interrupt-parent = <1>;" in root


def test_two_vcpus(dts):
    for i in range(2):
        cpu = node(dts, f"cpu@{i}")
        assert f"reg = <{i}>;" in cpu
        assert 'compatible = "arm,cortex-a53";' in cpu
        assert 'device_type = "cpu";' in cpu
        assert 'enable-method = "psci";' in cpu
    assert "cpu@2" not in dts


def test_memory_psci_gic_timer_uart_chosen(dts):
    assert "reg = <0x0 0x40000000 0x0 0x4000000>;" in node(dts, "memory@40000000")
    psci = node(dts, "psci")
    assert 'compatible = "arm,psci-1.0", "arm,psci-0.2";' in psci and 'method = "smc";' in psci
    gic = node(dts, "intc@8000000")
    assert 'compatible = "arm,gic-v3";' in gic and "interrupt-controller;" in gic
    assert "#interrupt-cells = <3>;" in gic and "phandle = <1>;" in gic
    # One 128 KiB redistributor frame per vCPU.
    assert re.search(r"reg = <0x0 0x8000000 0x0 0x10000>,\s*<0x0 0x80a0000 0x0 0x40000>;", gic)
    timer = node(dts, "timer")
    assert ("interrupts = <0x1 0xd 0x4>, <0x1 0xe 0x4>, <0x1 0xb 0x4>, <0x1 0xa 0x4>;" in timer)
    assert "always-on;" in timer and 'compatible = "arm,armv8-timer";' in timer
    uart = node(dts, "pl011@9000000")
    assert 'compatible = "arm,pl011", "arm,primecell";' in uart
    assert "reg = <0x0 0x9000000 0x0 0x1000>;" in uart
    assert "interrupts = <0x0 0x1 0x4>;" in uart
    assert "clocks = <2>, <2>;" in uart and 'clock-names = "uartclk", "apb_pclk";' in uart
    clock = node(dts, "apb-pclk")
    assert "clock-frequency = <24000000>;" in clock and "phandle = <2>;" in clock
    chosen = node(dts, "chosen")
    assert 'stdout-path = "/pl011@9000000";' in chosen
    assert r'bootargs = "lat.samples=100 q=\"x\"";' in chosen


def test_nothing_else(dts):
    # No flash, RTC, virtio, PCIe or fw_cfg: the partition cannot reach them.
    top_level = re.findall(r"^\t([a-z0-9@,_-]+) \{$", dts, re.M)
    assert top_level == ["chosen", "cpus", "memory@40000000", "psci", "intc@8000000", "timer",
                         "apb-pclk", "pl011@9000000"]


def test_cpu_models():
    assert 'compatible = "arm,cortex-a57";' in partition_dts("a", 1, "cortex-a57", 0x4000_0000,
                                                              4 * MiB)
    assert 'compatible = "arm,armv8";' in partition_dts("a", 1, "max", 0x4000_0000, 4 * MiB)


@pytest.mark.skipif(shutil.which("dtc") is None, reason="dtc not installed")
def test_compiles_and_decompiles(dts, tmp_path):
    blob = compile_dts(dts, tmp_path / "rt.dtb")
    assert blob[:4] == bytes.fromhex("d00dfeed")
    assert (tmp_path / "rt.dts").read_text() == dts
    back = subprocess.run(["dtc", "-I", "dtb", "-O", "dts", str(tmp_path / "rt.dtb")],
                          capture_output=True, text=True, check=True).stdout
    assert "reg = <0x00 0x8000000 0x00 0x10000 0x00 0x80a0000 0x00 0x40000>;" in back
    assert "interrupt-parent = <0x01>;" in back
    assert "cpu@1 {" in back
