"""Xen 4.17 (make xen-sched) dom0less with two domUs sharing one core in a boot-time cpupool:
the peer of Tern's shared pools for `tern bench` (arm64 only: Xen 4.17 runs no riscv64 guests).

ARINC 653 is not here: without a toolstack it gives windows to domain 0's vCPUs only, and a
dom0less boot has no domain 0 (tools/tern/xen.py, docs/benchmarks.md "Method").
"""

import json

import pytest

from conftest import LAT, REPO
from tern import bench, xen

NOISE = REPO / "guests" / "build" / "arm64" / "noise.img"
# Xen's scheduler ids (public/domctl.h: XEN_SCHEDULER_*), as its boot log names a pool's.
SCHED_ID = {"credit": 5, "rtds": 8}
SAMPLES = 20
# Counter time (from the board's reset) the noise domU spins until: past Xen's boot (about
# 0.5 s of it under icount shift 4) and past the latency guest's 20 samples, so that the latency
# guest runs its whole test while the noise domU wants the core.
NOISE_UNTIL_US = 2_000_000

needs_xen_sched = pytest.mark.skipif(not xen.XEN_SCHED.is_file(),
                                     reason=f"no Xen with RTDS and boot-time cpupools at "
                                            f"{xen.XEN_SCHED} (make xen-sched)")


@needs_xen_sched
@pytest.mark.parametrize("sched", sorted(SCHED_ID))
def test_two_domus_share_one_core_in_a_boot_time_pool(sched, tmp_path):
    for image in (LAT, NOISE):
        assert xen.xen_variant(image).is_file(), f"missing {xen.xen_variant(image)} (make guests)"
    pools = [xen.Pool("shared", (0,), sched)]
    doms = [xen.Domain("rt", xen.xen_variant(LAT),
                       f"lat.samples={SAMPLES} lat.delta_us=320 lat.tests=vtimer-wfi",
                       pool="shared"),
            xen.Domain("noise", xen.xen_variant(NOISE),
                       f"noise.mode=spin noise.until_us={NOISE_UNTIL_US}", pool="shared")]
    assert xen.board_cpus(doms, pools) == 1
    result = xen.run_xen(doms, xen=xen.XEN_SCHED, icount=4, timeout=240, workdir=tmp_path,
                         pools=pools)
    assert result.ok, result.explain()
    # The pool holding the boot core is Pool-0: its scheduler is the pool's, not the default.
    assert f"(XEN) Logical CPU 0 in Pool-0 (Scheduler id: {SCHED_ID[sched]})." in result.log, \
        result.explain()
    rt, noise = result.partitions["rt"], result.partitions["noise"]
    assert [r["samples"] for r in rt.lat] == [SAMPLES], result.explain()
    stats = [json.loads(line.split(" ", 1)[1]) for line in noise.lines
             if line.startswith("NOISE-JSON ")]
    assert stats and stats[0]["bursts"] > 0, result.explain()
    # Both on the one core at once: the latency guest finished while noise was still spinning.
    order = [line for line in result.log if "LAT-DONE" in line or "NOISE-DONE" in line]
    assert len(order) == 2 and "LAT-DONE" in order[0], result.explain()


SWITCH_ROWS = tuple(bench.SCENARIO_BY_NAME[f"shared-switch-{s}"] for s in ("credit", "rtds"))
SMALL = bench.Plan(samples=SAMPLES, prio_runs=2, shifts=(4,), timeout=240)


@needs_xen_sched
def test_bench_switch_rows_on_xen_are_measured_and_identical_across_runs(tmp_path):
    """The bench's switch rows on Xen: two slices guests in one cpupool switch back and forth,
    every switch costs something, and icount makes the figures the same run to run."""
    xen_sched = next(s for s in bench.SYSTEMS if s.name == "xen sched")
    first, errors1 = bench.run_matrix(SMALL, systems=(xen_sched,), scenarios=SWITCH_ROWS,
                                      workdir=tmp_path / "a", progress=None)
    second, errors2 = bench.run_matrix(SMALL, systems=(xen_sched,), scenarios=SWITCH_ROWS,
                                       workdir=tmp_path / "b", progress=None)
    assert not errors1 and not errors2, (errors1, errors2)
    assert first == second
    assert sorted(r["scheduler"] for r in first) == ["credit", "rtds"]
    for r in first:
        # At least a switch each way every 30 ms slice (credit) or 10 ms period (RTDS).
        assert r["switch"]["n"] >= 10, r
        assert r["gap_ticks"] < r["switch"]["min"] <= r["switch"]["max"], r


def test_bench_tern_switch_cell_runs_or_says_shared_cores_are_not_built(tmp_path):
    tern = next(s for s in bench.SYSTEMS if s.name == "tern wfi=trap")
    records, errors = bench.run_matrix(SMALL, systems=(tern,), scenarios=SWITCH_ROWS[:1],
                                       workdir=tmp_path, progress=None)
    if errors:
        assert [e.get("skipped") for e in errors] == [True], errors
        assert errors[0]["error"].startswith("shared cores not built"), errors
        assert not records
    else:
        assert records and records[0]["switch"]["n"] > 0, records
