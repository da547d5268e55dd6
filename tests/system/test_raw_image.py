"""A raw binary (no Image header, no ELF: what `llvm-objcopy -O binary` gives) boots as the
board's loader boots it: QEMU's -kernel puts one at RAM base + 0x80000 on arm64, 0x8020_0000
(after the firmware) on riscv64, and tern puts a partition's there too."""

import json
import subprocess
import sys

from conftest import REPO, SBI_SMOKE_RESULTS, partition

from tern import run_native, run_system
from tern.config import dump_toml

# The probe linked for 0x4008_0000 with no Image header (guests/Makefile); it refuses to run
# anywhere else, so its output says it was placed where it was linked.
PROBE_RAW = REPO / "guests" / "build" / "arm64" / "probe.bin"
SBI_SMOKE_RAW = REPO / "guests" / "build" / "riscv64" / "sbi-smoke.img"
TESTS = "probe.tests=cpu-features"


def test_a_raw_arm64_binary_boots_natively_and_in_a_partition_alike(system_file):
    assert PROBE_RAW.read_bytes()[56:60] != b"ARM\x64"              # no Image header
    native = run_native(PROBE_RAW, bootargs=TESTS, timeout=60)
    assert native.ok, native.explain()
    path = system_file(partition("raw", [1], PROBE_RAW, TESTS), cpus=2)
    result = run_system(path, timeout=60)
    assert result.ok, result.explain()
    got = [r for r in result.partitions["raw"].probe if r["test"] == "cpu-features"]
    want = [r for r in native.probe if r["test"] == "cpu-features"]
    assert got == want and len(got) == 1 and got[0]["pass"], (got, want)
    assert "[raw] PROBE-DONE" in result.log and "PROBE-DONE" in native.log
    assert result.stats["raw"]["faults"] == 0, result.stats["raw"]


def test_tern_run_boots_a_raw_riscv64_binary_at_the_kernel_start_address(tmp_path):
    # sbi-smoke is linked for 0x8020_0000 and its .img is flat: no RISC-V Image header.
    system = tmp_path / "system.toml"
    system.write_text(dump_toml({
        "board": {"arch": "riscv64", "cpus": 3, "memory": "1GiB"},
        "partition": [{"name": "rt", "cpus": [1, 2], "memory": "32MiB",
                       "image": str(SBI_SMOKE_RAW), "irq": "direct", "wfi": "native"}]}))
    check = subprocess.run([sys.executable, str(REPO / "tern"), "check", str(system)],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    rows = [line.split() for line in check.stdout.splitlines() if line.startswith("  raw ")]
    end = 0x8020_0000 + SBI_SMOKE_RAW.stat().st_size
    assert rows and f"0x80200000-0x{end:08x}" in rows[0], check.stdout
    assert "entry 0x80200000;" in " ".join(rows[0]), check.stdout
    result = run_system(system, timeout=60)
    prefix = "[rt] SBI-JSON "
    results = {r["check"]: (r["error"], r["value"])
               for r in (json.loads(line[len(prefix):]) for line in result.log
                         if line.startswith(prefix))}
    assert results == SBI_SMOKE_RESULTS, result.explain()
    assert "[rt] SBI-DONE" in result.log and result.ok, result.explain()
    # The bare board (`tern native --arch riscv64`) takes the same file: it prints nothing
    # there (its console is SBI DBCN, which QEMU 7.2's OpenSBI lacks) but powers the board off
    # through SRST once it has run.
    # One hart: with two, QEMU's OpenSBI boots either (its boot-hart lottery), and sbi-smoke
    # expects to start on hart 0.
    native = run_native(SBI_SMOKE_RAW, arch="riscv64", cpus=1, timeout=60)
    assert native.ok and not native.timed_out, native.explain()
