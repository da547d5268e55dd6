"""Shared cores on riscv64 (issue 29, the port's side): trap-and-emulate partitions take turns
on one core of a credit pool, each vCPU's SBI timer and the core's scheduling event on the one
stimecmp, a guest's trapped WFI blocking it (sched_guest_waits), and SBI IPIs between two vCPUs
of one partition on that same core (a kick to the sender's own core, the IPI kept in the
target's posted state until it runs); and trap-less partitions there, each vCPU with a guest
interrupt file of its own on the core."""

from conftest import LAT_RISCV64, partition

from tern import run_system
from tern.config import dump_toml

TIMER = "lat.samples=10 lat.tests=sbi-timer-wfi,sbi-timer-busy"
IPI = "lat.samples=10 lat.tests=sbi-ipi-wfi,sbi-ipi-busy,sbi-timer-wfi"


def test_trapping_partitions_share_a_riscv64_core(tmp_path):
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"arch": "riscv64", "cpus": 3},
                               "pool": [{"name": "shared", "cpus": [2], "scheduler": "credit"}]})
                    + "\n" + partition("a", [2, 2], LAT_RISCV64, IPI, pool="shared")
                    + "\n" + partition("b", [2], LAT_RISCV64, TIMER, pool="shared"))
    result = run_system(path, icount=4, timeout=150, workdir=tmp_path / "work")
    assert result.ok, result.explain()
    for name, tests in (("a", {"sbi-ipi-wfi", "sbi-ipi-busy", "sbi-timer-wfi"}),
                        ("b", {"sbi-timer-wfi", "sbi-timer-busy"})):
        part = result.partitions[name]
        assert part.state == "off", result.explain()
        lat = {r["test"]: r for r in part.lat}
        assert set(lat) == tests, result.explain()
        assert all(r["samples"] == 10 for r in lat.values()), result.explain()
        # Its WFIs reached C (a shared core's fast path never takes them) and blocked it.
        stats = result.stats[name]
        assert stats["exit_wfi"] > 0 and stats["faults"] == 0, result.explain()
        assert stats["irq_injected"] > 0, result.explain()
    assert result.stats["a"]["sbi_ipi"] > 0, result.explain()


TRAPLESS_A = "lat.samples=10 lat.tests=ipi-wfi,ipi-busy,sstc-wfi"
TRAPLESS_B = "lat.samples=10 lat.tests=sstc-wfi,sstc-busy"


def test_trap_less_partitions_share_a_riscv64_core(tmp_path):
    """Two trap-less partitions (irq = "direct") on one credit core, each vCPU with a guest
    interrupt file of its own there: the running vCPU's Sstc timer and IMSIC IPIs arrive with no
    injection; an IPI to its sibling, descheduled on the same core, waits in the sibling's file
    (an SGEI wakes the core's loop) and is taken at the sibling's next run: every sample
    arrives."""
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"arch": "riscv64", "cpus": 3},
                               "pool": [{"name": "shared", "cpus": [2], "scheduler": "credit"}]})
                    + "\n" + partition("a", [2, 2], LAT_RISCV64, TRAPLESS_A, pool="shared",
                                       irq="direct", wfi="trap")
                    + "\n" + partition("b", [2], LAT_RISCV64, TRAPLESS_B, pool="shared",
                                       irq="direct", wfi="trap"))
    result = run_system(path, icount=4, timeout=150, workdir=tmp_path / "work")
    assert result.ok, result.explain()
    for name, tests in (("a", {"ipi-wfi", "ipi-busy", "sstc-wfi"}),
                        ("b", {"sstc-wfi", "sstc-busy"})):
        part = result.partitions[name]
        assert part.state == "off", result.explain()
        lat = {r["test"]: r for r in part.lat}
        assert set(lat) == tests, result.explain()
        assert all(r["samples"] == 10 for r in lat.values()), result.explain()
        stats = result.stats[name]
        # Nothing injected: every interrupt came from the vCPU's own file or vstimecmp.
        assert stats["irq_injected"] == 0 and stats["faults"] == 0, result.explain()
        assert stats["exit_wfi"] > 0, result.explain()
    # a's IPIs to its sibling, descheduled on the same core, took an SGEI each to the running vCPU.
    assert result.stats["a"]["exit_irq"] > 0, result.explain()
