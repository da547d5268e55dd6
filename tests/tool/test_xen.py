"""The Xen peer's plumbing that needs no QEMU: console reassembly, device tree, image names."""

import subprocess
from pathlib import Path

import pytest

from tern import xen


def test_guest_lines_rejoin_xen_console_chunks():
    lines = xen.GuestLines(["rt", "noise"])
    first = "x" * xen.VPL011_CHUNK
    assert lines.feed(f"(XEN) DOM1: {first}") is None
    assert lines.feed("(XEN) DOM2: NOISE-DONE") == "[noise] NOISE-DONE"
    assert lines.feed("(XEN) DOM1: tail") == f"[rt] {first}tail"
    assert lines.feed("(XEN) Freed 344kB init memory.") is None
    assert lines.feed("(XEN) DOM7: who") == "[dom7] who"


def test_xen_variant_names():
    assert xen.xen_variant("guests/build/arm64/lat.img") == Path("guests/build/arm64/lat-xen.img")


@pytest.mark.skipif(subprocess.run(["which", "qemu-system-aarch64"], capture_output=True).returncode,
                    reason="needs qemu-system-aarch64 to dump the board's device tree")
def test_dom0less_device_tree_has_one_domain_per_guest(tmp_path):
    image = tmp_path / "g-xen.img"
    image.write_bytes(b"\0" * 4096)
    doms = [xen.Domain("a", image, "lat.samples=5", vcpus=1),
            xen.Domain("b", image, 'say "hi"', vcpus=2, memory_kib=32768)]
    xen.build_dtb(doms, "vwfi=native", cpus=3, cpu="cortex-a53", memory_mib=1024, workdir=tmp_path)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(tmp_path / "xen.dtb")],
                         capture_output=True, text=True, check=True).stdout
    assert dts.count('compatible = "xen,domain";') == 2
    assert "bootscrub=off vwfi=native" in dts
    assert f"module@{xen.DOMU_BASE + xen.DOMU_STRIDE:x}" in dts
    assert 'bootargs = "say \\"hi\\"";' in dts
    assert "cpus = <0x02>;" in dts and "memory = <0x00 0x8000>;" in dts
