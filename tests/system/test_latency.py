"""The latency guest, natively and inside partitions, from the same binary."""

import pytest
from conftest import LAT, SAMPLES, partition

from tern import run_native, run_system

TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy")
BOOTARGS = f"lat.samples={SAMPLES}"


def check_records(records, explain):
    assert [r["test"] for r in records] == list(TESTS), explain
    for r in records:
        assert r["samples"] == SAMPLES, explain
        assert r["unit"] == "ticks" and r["freq_hz"] > 0, explain
        assert 0 <= r["min"] <= r["avg"] <= r["max"], explain
        assert r["min"] <= r["p50"] <= r["p99"] <= r["max"], explain
        assert r["warm_max"] <= r["max"], explain
        assert sum(r["hist"]["counts"]) == SAMPLES, explain


def test_native_run_completes():
    result = run_native(LAT, bootargs=BOOTARGS, icount=4, timeout=120)
    assert result.ok, result.explain()
    check_records(result.lat, result.explain())


@pytest.mark.parametrize("wfi", ["trap", "native"])
def test_partition_run_completes(system_file, wfi):
    path = system_file(partition("rt", [1], LAT, BOOTARGS, wfi=wfi), cpus=2)
    result = run_system(path, icount=4, timeout=120)
    assert result.ok, result.explain()
    rt = result.partitions["rt"]
    assert rt.state == "off", result.explain()
    check_records(rt.lat, result.explain())
    stats = result.stats["rt"]
    # Every timer sample is one injected interrupt; nothing was refused or faulted.
    assert stats["irq_injected"] >= len(TESTS) * SAMPLES, stats
    assert stats["faults"] == 0 and stats["gic_ignored"] == 0, stats
    if wfi == "trap":
        assert stats["exit_wfi"] >= 2 * SAMPLES, stats
    else:
        assert stats["exit_wfi"] == 0, stats


def test_partition_adds_latency_over_native(system_file):
    """Under icount the partition cannot be faster than the bare board: a sanity check on the method."""
    native = run_native(LAT, bootargs=f"{BOOTARGS} lat.tests=vtimer-busy", icount=4)
    path = system_file(partition("rt", [1], LAT, f"{BOOTARGS} lat.tests=vtimer-busy"), cpus=2)
    tern = run_system(path, icount=4)
    assert native.ok, native.explain()
    assert tern.ok, tern.explain()
    assert tern.partitions["rt"].lat[0]["min"] > native.lat[0]["min"]


def test_runs_are_deterministic_under_icount(system_file):
    path = system_file(partition("rt", [1], LAT, f"lat.samples=10 lat.tests=ptimer-wfi"), cpus=2)
    first = run_system(path, icount=4)
    second = run_system(path, icount=4)
    assert first.ok and second.ok, first.explain() + second.explain()
    assert first.partitions["rt"].lat == second.partitions["rt"].lat
