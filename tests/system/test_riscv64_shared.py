"""Shared cores on riscv64 (issue 29, the port's side): trap-and-emulate partitions take turns
on one core of a credit pool, each vCPU's SBI timer and the core's scheduling event on the one
stimecmp, a guest's trapped WFI blocking it (sched_guest_waits), and SBI IPIs between two vCPUs
of one partition on that same core (a kick to the sender's own core, the IPI kept in the
target's posted state until it runs); and trap-less partitions there, each vCPU with a guest
interrupt file of its own on the core."""

from conftest import LAT_RISCV64, partition

from tern import run_system
from tern.config import dump_toml

SAMPLES = 10


def run_shared(tmp_path, tests, **keys):
    """Partitions a (two vCPUs) and b (one) in a credit pool on core 2 of a 3-core board, each
    running its lat `tests` (name -> list), more partition keys in `keys`: both must take
    every test's samples and end off."""
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"arch": "riscv64", "cpus": 3},
                               "pool": [{"name": "shared", "cpus": [2], "scheduler": "credit"}]})
                    + "".join("\n" + partition(name, [2] * vcpus, LAT_RISCV64,
                                                f"lat.samples={SAMPLES} lat.tests="
                                                + ",".join(tests[name]), pool="shared", **keys)
                              for name, vcpus in (("a", 2), ("b", 1))))
    result = run_system(path, icount=4, timeout=150, workdir=tmp_path / "work")
    assert result.ok, result.explain()
    for name in ("a", "b"):
        part = result.partitions[name]
        assert part.state == "off", result.explain()
        lat = {r["test"]: r for r in part.lat}
        assert set(lat) == set(tests[name]), result.explain()
        assert all(r["samples"] == SAMPLES for r in lat.values()), result.explain()
    return result


def test_trapping_partitions_share_a_riscv64_core(tmp_path):
    result = run_shared(tmp_path, {"a": ["sbi-ipi-wfi", "sbi-ipi-busy", "sbi-timer-wfi"],
                                   "b": ["sbi-timer-wfi", "sbi-timer-busy"]})
    for name in ("a", "b"):
        # Its WFIs reached C (a shared core's fast path never takes them) and blocked it.
        stats = result.stats[name]
        assert stats["exit_wfi"] > 0 and stats["faults"] == 0, result.explain()
        assert stats["irq_injected"] > 0, result.explain()
    assert result.stats["a"]["sbi_ipi"] > 0, result.explain()


def test_trap_less_partitions_share_a_riscv64_core(tmp_path):
    """Two trap-less partitions (irq = "direct") on one credit core, each vCPU with a guest
    interrupt file of its own there: the running vCPU's Sstc timer and IMSIC IPIs arrive with no
    injection; an IPI to its sibling, descheduled on the same core, waits in the sibling's file
    (an SGEI wakes the core's loop) and is taken at the sibling's next run: every sample
    arrives."""
    result = run_shared(tmp_path, {"a": ["ipi-wfi", "ipi-busy", "sstc-wfi"],
                                   "b": ["sstc-wfi", "sstc-busy"]}, irq="direct", wfi="trap")
    for name in ("a", "b"):
        stats = result.stats[name]
        # Nothing injected: every interrupt came from the vCPU's own file or vstimecmp.
        assert stats["irq_injected"] == 0 and stats["faults"] == 0, result.explain()
        assert stats["exit_wfi"] > 0, result.explain()
    # a's IPIs to its sibling, descheduled on the same core, took an SGEI each to the running vCPU.
    assert result.stats["a"]["exit_irq"] > 0, result.explain()
