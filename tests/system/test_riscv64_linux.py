"""Debian's riscv64 Linux in a trap-less riscv64 partition beside the latency guest (issue 13).

The kernel and initramfs come from `make linux` (build/linux-riscv64/: Debian 13's packages, or
sid's when trixie's indices do not verify). Linux runs on two vCPUs with irq = "direct", the
riscv64 default: its Sstc timer and its IMSIC IPIs need no hypervisor, its console is the
emulated ns16550 (polled: the partition has no wired interrupts yet). Real time, no icount, as
test_linux.py: cyclictest's figures are then the emulation's, so they are checked for being
consistent, not for being small.
"""

import re

import pytest
from conftest import LAT_RISCV64, REPO, partition

from tern import run_system

KERNEL = REPO / "build" / "linux-riscv64" / "Image"
INITRD = REPO / "build" / "linux-riscv64" / "initramfs.cpio.gz"
RT_TESTS = ["sstc-wfi", "sstc-busy"]
RT_SAMPLES = 100
LOOPS = 200
RT = partition("rt", [1], LAT_RISCV64, f"lat.samples={RT_SAMPLES} lat.tests={','.join(RT_TESTS)}",
               irq="direct")
READY = re.compile(r"TERN-LINUX: ready cpus=(\d+) kernel=(\S+)")
STATS = re.compile(r"TERN-LINUX: cyclictest min=(\d+) avg=(\d+) max=(\d+) samples=(\d+)")
HIST = re.compile(r"TERN-LINUX: cyclictest-hist (\d+) (\d+)")
OVERFLOWS = re.compile(r"TERN-LINUX: cyclictest-overflows (\d+)")
# A busy 2-core host runs the 4-hart board's emulation slowly; Linux is up in seconds when idle.
TIMEOUT = 180


@pytest.fixture(scope="module", autouse=True)
def linux_built():
    assert KERNEL.exists() and INITRD.exists(), \
        f"missing {KERNEL} or {INITRD}: run `make linux` first"


def linux(run):
    text = partition("linux", [2, 3], KERNEL, f"console=ttyS0 quiet tern.run={run}",
                     memory="256MiB", irq="direct")
    return text + f'initrd = "{INITRD}"\n'


def linux_lines(result):
    return [line[len("[linux] "):] for line in result.log if line.startswith("[linux] TERN-LINUX")]


def system(tmp_path, *parts):
    path = tmp_path / "system.toml"
    path.write_text('[board]\narch = "riscv64"\ncpus = 4\nmemory = "1GiB"\n\n' + "\n".join(parts))
    return path


def test_linux_runs_cyclictest_beside_the_latency_guest(tmp_path):
    result = run_system(system(tmp_path, RT, linux(f"cyclictest tern.loops={LOOPS}")),
                        timeout=TIMEOUT)
    assert result.ok, result.explain()
    lines = linux_lines(result)
    ready = [m for m in map(READY.fullmatch, lines) if m]
    assert ready and ready[0].group(1) == "2", result.explain()      # both harts online
    assert ready[0].group(2).endswith("-riscv64"), ready[0].group(2)
    assert lines[-1] == "TERN-LINUX: done", result.explain()         # all out before power-off

    stats = [m for m in map(STATS.fullmatch, lines) if m]
    assert len(stats) == 1, result.explain()
    low, avg, high, samples = map(int, stats[0].groups())
    assert samples == LOOPS, result.explain()
    assert 0 < low <= avg <= high, stats[0].group(0)
    hist = [tuple(map(int, m.groups())) for m in map(HIST.fullmatch, lines) if m]
    overflows = sum(int(m.group(1)) for m in map(OVERFLOWS.fullmatch, lines) if m)
    # The histogram (1 us buckets up to 10 ms) holds every sample but those past its end.
    assert sum(count for _, count in hist) + overflows == samples, (hist, overflows)
    assert all(count > 0 for _, count in hist)
    if not overflows:
        assert hist[0][0] == low and hist[-1][0] == high, (hist, stats[0].group(0))

    rt = result.partitions["rt"]
    assert [r["test"] for r in rt.lat] == RT_TESTS, result.explain()
    assert all(r["samples"] == RT_SAMPLES and "error" not in r for r in rt.lat), rt.lat
    for name in ("rt", "linux"):
        assert result.stats[name]["faults"] == 0, result.stats[name]
        assert result.partitions[name].state == "off", result.explain()
    # Trap-less: Linux's timer (Sstc) and IPIs (its IMSIC files) never went through the SBI,
    # and nothing was injected.
    stats = result.stats["linux"]
    assert stats["sbi_time"] == 0 and stats["sbi_ipi"] == 0, stats
    assert stats["irq_injected"] == 0, stats
