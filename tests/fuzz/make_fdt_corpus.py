#!/usr/bin/env python3
"""Write the device tree fuzzer's seed corpus (corpus/fdt/): the trees QEMU gives the hypervisor
on both boards (-M ...,dumpdtb=), and a few small ones compiled with dtc, packed by dtc.

    python3 tests/fuzz/make_fdt_corpus.py
"""

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from tern import qemu  # noqa: E402

OUT = HERE / "corpus" / "fdt"
GiB = 1 << 30

SMALL = {
    # One-cell addresses and sizes, RAM in two nodes that touch, a node that is not memory.
    "one-cell-two-nodes": """/dts-v1/;
/ {
	#address-cells = <1>;
	#size-cells = <1>;
	memory@80000000 { device_type = "memory"; reg = <0x80000000 0x10000000>; };
	memory@90000000 { device_type = "memory"; reg = <0x90000000 0x10000000>; };
	flash@0 { reg = <0x0 0x4000000>; };
};
""",
    # Two-cell sizes, several ranges in one reg, one with a gap, deeper nodes.
    "ranges-and-gap": """/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	cpus { #address-cells = <1>; #size-cells = <0>; cpu@0 { reg = <0>; }; };
	memory@40000000 {
		device_type = "memory";
		reg = <0x0 0x40000000 0x0 0x20000000>, <0x0 0x60000000 0x0 0x20000000>,
		      <0x1 0x0 0x0 0x10000000>;
	};
	chosen { bootargs = "console=ttyAMA0"; };
};
""",
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dumps = {
            "qemu-virt-arm64": qemu.board_args("cortex-a53", 2, GiB,
                                               machine_extra=qemu.SYSTEM_MACHINE_OPTIONS),
            "qemu-virt-riscv64": qemu.riscv64_board_args(2, GiB),
        }
        for name, args in dumps.items():
            raw = Path(tmp) / f"{name}.raw"
            args[2] += f",dumpdtb={raw}"
            subprocess.run(args, check=True, capture_output=True)
            # QEMU's tree fills its 1 MiB: dtc packs it.
            subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dtb", "-o", str(OUT / f"{name}.dtb"),
                            str(raw)], check=True)
        for name, source in SMALL.items():
            subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(OUT / f"{name}.dtb")],
                           input=source, text=True, check=True)


if __name__ == "__main__":
    main()
