"""`tern run` on the riscv64 board: a description with `[board] arch = "riscv64"` boots the
riscv64 hypervisor under OpenSBI with a partition running guests/sbi-smoke, through the `tern`
command as a user runs it (its layout, device tree, config blob and QEMU command line), and
examples/riscv64-rt.toml runs the latency guest.

sbi-smoke runs without icount: under icount QEMU's round-robin gives a spinning hart (its hart
0, polling HSM status) the CPU until a timer deadline, of which nothing sets one here, so the
hart it waits for would never run (see test_riscv64.py).  The latency guest's timer tests use
one hart and set deadlines: they run at icount shift 0, as the bench does.
"""

import json
import subprocess
import sys

import pytest

from conftest import REPO, SBI_SMOKE_RESULTS

sys.path.insert(0, str(REPO / "tools"))
from tern import abi  # noqa: E402
from tern.config import dump_toml  # noqa: E402

TERN = REPO / "tern"
HYPERVISOR = REPO / "hypervisor" / "build" / "riscv64" / "tern.img"
SBI_SMOKE = REPO / "guests" / "build" / "riscv64" / "sbi-smoke.elf"
LAT = REPO / "guests" / "build" / "riscv64" / "lat.img"
EXAMPLE = REPO / "examples" / "riscv64-rt.toml"
RAM_BASE = 0x8000_0000
TIMEOUT = 60                      # tern's own --timeout; the test gives it a little longer


def tern_run(system, workdir, *options):
    """`tern run SYSTEM`: (exit status, console lines, all that tern printed, for assertion
    messages)."""
    for path in (HYPERVISOR, SBI_SMOKE, LAT):
        assert path.exists(), f"missing {path}: run `make all` first"
    command = [sys.executable, str(TERN), "run", str(system), "--workdir", str(workdir),
               "--timeout", str(TIMEOUT), *options]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT + 30,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        pytest.fail(f"tern run did not end within {TIMEOUT + 30} s; console:\n{out or ''}")
    lines = [line.replace("\0", "") for line in done.stdout.splitlines()]
    shown = f"tern run: status {done.returncode}\n{done.stderr}console:\n{done.stdout}"
    return done.returncode, lines, shown


def sbi_results(lines, name):
    prefix = f"[{name}] SBI-JSON "
    return {r["check"]: (r["error"], r["value"])
            for r in (json.loads(line[len(prefix):]) for line in lines if line.startswith(prefix))}


@pytest.mark.parametrize("irq", ["direct", "trap"])
def test_tern_run_boots_a_riscv64_partition(tmp_path, irq):
    guest = SBI_SMOKE
    system = tmp_path / "system.toml"
    system.write_text(dump_toml({
        "board": {"arch": "riscv64", "cpus": 3, "memory": "1GiB"},
        "partition": [{"name": "rt", "cpus": [1, 2], "memory": "32MiB", "image": str(guest),
                       "irq": irq, "wfi": "native"}]}))
    workdir = tmp_path / "work"
    status, lines, shown = tern_run(system, workdir)
    assert sbi_results(lines, "rt") == SBI_SMOKE_RESULTS, shown
    assert "[rt] SBI-DONE" in lines, shown
    tern = [line for line in lines if line.startswith("tern:")]
    assert tern[-2:] == ["tern: partition rt off", "tern: all partitions ended, board off"], shown
    assert status == 0, shown

    # What tern gave the board: the riscv64 hypervisor on the riscv board, no icount, and the
    # partition at the riscv boot protocol's addresses, RAM from the hypervisor's 64 MiB on.
    command = (workdir / "qemu.sh").read_text()
    assert "qemu-system-riscv64 -M virt,aia=aplic-imsic,aia-guests=4" in command, command
    assert f"-kernel {HYPERVISOR}" in command and "-icount" not in command, command
    blob = abi.unpack((workdir / "config.bin").read_bytes())
    assert blob.flags == 0 and blob.ram_size == 1 << 30 and blob.board_cpus == 3
    (rt,) = blob.partitions
    assert (rt.ram_ipa, rt.ram_hpa, rt.entry_ipa, rt.dtb_ipa) == \
        (RAM_BASE, 0x8400_0000, 0x8020_0000, 0x81E0_0000)
    direct = abi.PF_IRQ_DIRECT if irq == "direct" else 0
    assert rt.flags == abi.PF_WFI_NATIVE | direct and rt.cpus == (1, 2)
    dts = (workdir / "rt.dts").read_text()
    assert ("imsics@28000000" in dts) == (irq == "direct"), dts


def test_the_riscv64_example_runs(tmp_path):
    # The latency guest in a direct partition, as examples/riscv64-rt.toml has it: its Sstc
    # timer tests, one record each, every sample taken.  (The figures are the bench's.)
    status, lines, shown = tern_run(EXAMPLE, tmp_path / "work", "--icount", "0")
    prefix = "[rt] LAT-JSON "
    records = [json.loads(line[len(prefix):]) for line in lines if line.startswith(prefix)]
    assert [(r["test"], r.get("error"), r["samples"]) for r in records] == \
        [("sstc-wfi", None, 200), ("sstc-busy", None, 200)], shown
    assert "[rt] LAT-DONE" in lines and "tern: partition rt off" in lines, shown
    assert status == 0, shown
