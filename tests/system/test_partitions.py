"""Partitions side by side: isolation, containment, PSCI, SMP."""

from conftest import LAT, PROBE, partition

from tern import run_system

SHORT_LAT = "lat.samples=10 lat.tests=vtimer-wfi,ptimer-busy"


def probe_record(result, name, test):
    records = [r for r in result.partitions[name].probe if r.get("test") == test]
    assert records, result.explain()
    return records[-1]


def test_two_partitions_on_separate_cores_both_complete(system_file):
    path = system_file(
        partition("rt", [1], LAT, SHORT_LAT),
        partition("rt2", [2], LAT, SHORT_LAT, wfi="native"),
        cpus=3,
    )
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    for name in ("rt", "rt2"):
        assert result.partitions[name].state == "off", result.explain()
        assert len(result.partitions[name].lat) == 2, result.explain()


def test_two_vcpu_partition_cpu_on_and_sgis(system_file):
    path = system_file(partition("smp", [1, 2], PROBE, "probe.tests=smp,psci"), cpus=3)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    smp = probe_record(result, "smp", "smp")
    assert smp["pass"], smp
    assert smp["aff_before"] == 1 and smp["cpu_on_ret"] == 0 and smp["aff_after"] == 1, smp
    assert smp["sgi_to_1"] and smp["sgi_back"], smp
    psci = probe_record(result, "smp", "psci")
    assert psci["pass"], psci
    assert result.stats["smp"]["sgi_sent"] >= 2, result.stats


def test_fault_outside_memory_is_contained(system_file):
    path = system_file(
        partition("bad", [1], PROBE, "probe.tests=fault"),
        partition("good", [2], LAT, SHORT_LAT),
        cpus=3,
    )
    result = run_system(path, icount=4)
    assert result.status == 1, result.explain()
    assert result.panic is None, result.explain()
    assert result.partitions["bad"].state == "stopped", result.explain()
    assert [f["partition"] for f in result.faults] == ["bad"], result.explain()
    fault = result.faults[0]
    assert fault["ipa"] >= 0x40000000 + (32 << 20), fault
    # The faulting read never returned to the guest.
    assert not [r for r in result.partitions["bad"].probe if r.get("phase") == "after"], result.explain()
    assert result.stats["bad"]["faults"] == 1, result.stats
    assert result.partitions["good"].state == "off", result.explain()
    assert len(result.partitions["good"].lat) == 2, result.explain()


def test_gicd_writes_to_foreign_interrupt_are_ignored_and_counted(system_file):
    path = system_file(partition("hostile", [1], PROBE, "probe.tests=gicd-foreign"), cpus=2)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    record = probe_record(result, "hostile", "gicd-foreign")
    assert record["pass"], record
    assert result.stats["hostile"]["gic_ignored"] >= 3, result.stats


def test_timeout_reports_the_serial_log(system_file):
    path = system_file(partition("stuck", [1], PROBE, "probe.tests=spin"), cpus=2)
    result = run_system(path, timeout=5)
    assert result.status == 124, result.explain()
    assert any("spinning" in line for line in result.log), result.explain()
    assert "spinning" in result.explain()
