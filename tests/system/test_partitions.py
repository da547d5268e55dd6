"""Partitions side by side: isolation, containment, PSCI, SMP."""

import pytest
from conftest import LAT, PROBE, partition, probe_record

from tern import run_system
from tern.config import dump_toml

SHORT_LAT = "lat.samples=10 lat.tests=vtimer-wfi,ptimer-busy"



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
        partition("bad", [1], PROBE, "probe.tests=fault", on_fault="stop"),
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


def test_priority_order_kept_beyond_list_registers(system_file):
    """Ten SGIs pending at once (the GIC has four list registers) arrive in priority order."""
    path = system_file(partition("prio", [1], PROBE, "probe.tests=prio probe.prio_runs=10"), cpus=2)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    record = probe_record(result, "prio", "prio")
    assert record["in_order"] == record["runs"] == 10, record
    # The overflow path really ran: some interrupts waited for a list register.
    assert result.stats["prio"]["irq_queued"] > 0, result.stats


def test_set_way_cache_maintenance_traps(system_file):
    """Set/way operations reach caches other partitions' cores share: they trap (HCR_EL2.TSW)
    and the hypervisor cleans the partition's own RAM by address instead; the guest sees
    nothing. (Before the trap they ran on the core, unseen: setway_ops stayed 0.)"""
    path = system_file(partition("sw", [1], PROBE, "probe.tests=setway"), cpus=2)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    record = probe_record(result, "sw", "setway")
    assert record["pass"] and record["exceptions"] == 0, record
    stats = result.stats["sw"]
    assert stats["setway_ops"] == record["ops"] and stats["undef_injected"] == 0, stats


def test_hostile_sgi_and_psci_stay_inside_the_partition(system_file):
    path = system_file(
        partition("hostile", [1, 2], PROBE, "probe.tests=sgi-foreign,psci-foreign,hvc-unknown"),
        partition("victim", [3], LAT, SHORT_LAT),
        cpus=4,
    )
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    for test in ("sgi-foreign", "psci-foreign", "hvc-unknown"):
        record = probe_record(result, "hostile", test)
        assert record["pass"], record
    hvc = probe_record(result, "hostile", "hvc-unknown")
    assert hvc["hvc"] == [-1, -1, -1] and hvc["smc"] == [-1, -1, -1], hvc
    stats = result.stats["hostile"]
    assert stats["sgi_denied"] >= 2 and stats["psci_denied"] >= 3, stats
    # The other partition neither saw nor suffered any of it.
    assert result.partitions["victim"].state == "off", result.explain()
    assert len(result.partitions["victim"].lat) == 2, result.explain()
    assert result.stats["victim"]["irq_injected"] >= 20, result.stats


def test_malformed_description_is_rejected_with_one_line(tmp_path):
    import subprocess

    from conftest import REPO

    bad = tmp_path / "bad.toml"
    bad.write_text(dump_toml({"partition": [{"name": "a", "cpus": [1, 1], "memory": "16MiB",
                                             "image": str(LAT)}]}))
    proc = subprocess.run([str(REPO / "tern"), "run", str(bad)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "partition[0].cpus" in lines[0] and "bad.toml" in lines[0], lines
    assert "Traceback" not in proc.stderr


def test_system_reset_restarts_only_the_caller_from_pristine_images(system_file):
    # The probe resets while its uptime is under 6 ms: once, since a reload takes longer.
    path = system_file(
        partition("rst", [1, 2], PROBE, "probe.tests=reset probe.reset_until_us=6000"),
        partition("victim", [3], LAT, SHORT_LAT),
        cpus=4,
    )
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    phases = [r["phase"] for r in result.partitions["rst"].probe if r.get("test") == "reset"]
    assert phases == ["resetting", "after"], result.explain()
    assert probe_record(result, "rst", "reset")["pass"], result.explain()
    assert "tern: partition rst reset" in result.log, result.explain()
    assert result.stats["rst"]["restarts"] == 1, result.stats
    assert result.stats["victim"]["restarts"] == 0, result.stats
    assert len(result.partitions["victim"].lat) == 2, result.explain()


def test_boot_timestamps_are_reported_in_order(system_file):
    import json

    path = system_file(partition("rt", [1], LAT, SHORT_LAT), partition("p2", [2], LAT, SHORT_LAT), cpus=3)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    lines = [l for l in result.log if l.startswith("tern-boot ")]
    assert len(lines) == 1, result.explain()
    boot = json.loads(lines[0][len("tern-boot "):])
    assert boot["freq_hz"] > 0
    assert 0 < boot["entry"] < boot["mmu_on"], boot
    for name in ("rt", "p2"):
        part = boot["partitions"][name]
        assert boot["mmu_on"] < part["created"] < part["first_entry"], boot


@pytest.mark.parametrize("cpu", ["cortex-a57", "max"])
def test_other_core_models(system_file, cpu):
    path = system_file(
        partition("rt", [1], LAT, SHORT_LAT),
        partition("smp", [0, 2], PROBE, "probe.tests=smp,prio probe.prio_runs=3"),
        cpus=3, cpu=cpu,
    )
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    assert len(result.partitions["rt"].lat) == 2, result.explain()
    assert probe_record(result, "smp", "smp")["pass"], result.explain()
    assert probe_record(result, "smp", "prio")["pass"], result.explain()
