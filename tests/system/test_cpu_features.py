"""What the core's ID registers advertise works in a partition as on the bare board (SVE, SME,
pointer authentication on `cpu = "max"`), and no FP/SIMD, SVE or SME state crosses a restart."""

import pytest
from conftest import PROBE, partition, probe_record

from tern import run_native, run_system

# What must be the same natively and in a partition: the features and what using them gives.
SAME_AS_NATIVE = ("sve", "sve_vl", "sve_sum", "sme", "sme_svl", "pauth", "pac")


@pytest.mark.parametrize("cpu", ["cortex-a53", "max"])
def test_sve_sme_and_pauth_work_in_a_partition_as_natively(system_file, cpu):
    native = run_native(PROBE, bootargs="probe.tests=cpu-features", cpu=cpu, timeout=60)
    assert native.ok, native.explain()
    want = [r for r in native.probe if r.get("test") == "cpu-features"][-1]
    assert want["pass"], want
    if cpu == "max":
        assert want["sve"] and want["sme"] and want["pauth"], want

    path = system_file(partition("p", [1], PROBE, "probe.tests=cpu-features"), cpus=2, cpu=cpu)
    result = run_system(path, timeout=60)
    assert result.ok, result.explain()
    got = probe_record(result, "p", "cpu-features")
    assert got["pass"], got
    assert {k: got[k] for k in SAME_AS_NATIVE} == {k: want[k] for k in SAME_AS_NATIVE}
    assert result.stats["p"]["faults"] == 0, result.stats["p"]


@pytest.mark.parametrize("cpu", ["cortex-a53", "max"])
def test_no_register_state_survives_a_restart(system_file, cpu):
    # The first life fills every vector and predicate register, FFR, ZA, FPCR/FPSR, TPIDR2 and
    # the pointer authentication keys, then resets (once: the first life reaches the reset in a
    # few ms of uptime at shift 4, and reloading 32 MiB takes far longer than the 30 ms window).
    path = system_file(partition("p", [1], PROBE, "probe.tests=cpu-features,fp-reset "
                                 "probe.reset_until_us=30000"), cpus=2, cpu=cpu)
    result = run_system(path, icount=4, timeout=60)
    assert result.ok, result.explain()
    records = [r for r in result.partitions["p"].probe if r.get("test") == "cpu-features"]
    assert len(records) == 2, result.explain()          # the first life and the second
    assert all(r["pass"] for r in records), records
    phases = [r["phase"] for r in result.partitions["p"].probe if r.get("test") == "fp-reset"]
    assert phases == ["resetting", "after"], result.explain()
    assert result.stats["p"]["restarts"] == 1, result.stats["p"]
