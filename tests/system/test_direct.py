"""Direct delivery: the guest takes its interrupts from the GIC itself, the hypervisor keeps control."""

from conftest import LAT, PROBE, partition, probe_record

from tern import run_native, run_system

SHORT_LAT = "lat.samples=20"



def test_direct_timer_interrupts_never_enter_the_hypervisor(system_file):
    path = system_file(partition("rt", [1], LAT, SHORT_LAT, irq="direct"), cpus=2)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    records = result.partitions["rt"].lat
    assert len(records) == 4 and all(r["samples"] == 20 for r in records), result.explain()
    stats = result.stats["rt"]
    assert stats["exit_irq"] == 0 and stats["irq_injected"] == 0, stats
    assert stats["exit_wfi"] == 0, stats
    # Same guest, same board: the direct partition reads exactly what the bare board reads.
    native = run_native(LAT, bootargs=SHORT_LAT, icount=4)
    assert native.ok, native.explain()
    assert [(r["test"], r["min"], r["max"]) for r in records] == \
        [(r["test"], r["min"], r["max"]) for r in native.lat]


def test_direct_sgis_priorities_and_isolation(system_file):
    path = system_file(
        partition("d", [1, 2], PROBE, "probe.tests=smp,prio,sgi-foreign,psci-foreign,gicd-foreign "
                  "probe.prio_runs=5", irq="direct"),
        partition("trap", [3], LAT, "lat.samples=10 lat.tests=vtimer-wfi,ptimer-busy"),
        cpus=4,
    )
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    for test in ("smp", "prio", "sgi-foreign", "psci-foreign", "gicd-foreign"):
        assert probe_record(result, "d", test)["pass"], probe_record(result, "d", test)
    stats = result.stats["d"]
    # SGIs between its own vCPUs go through the GIC: the sender's write is filtered (a trap),
    # the receiver is never entered.
    assert stats["sgi_sent"] >= 2 and stats["exit_sysreg"] >= stats["sgi_sent"], stats
    assert stats["exit_irq"] == 0 and stats["irq_injected"] == 0, stats
    assert stats["sgi_denied"] >= 2 and stats["gic_ignored"] >= 3, stats
    # The trap-and-inject neighbour is unaffected.
    assert len(result.partitions["trap"].lat) == 2, result.explain()
    assert result.stats["trap"]["irq_injected"] >= 20, result.stats


def test_control_path_stops_a_guest_spinning_with_everything_masked(system_file):
    # vCPU 1 spins with D, A, I and F masked; vCPU 0 then powers the partition off, which needs
    # the hypervisor to take vCPU 1's core back. No icount: a core spinning for ever starves the
    # others under the emulator's round-robin, which has nothing to do with the hypervisor.
    path = system_file(partition("d", [1, 2], PROBE, "probe.tests=spin-masked,psci", irq="direct"),
                       cpus=3)
    result = run_system(path, timeout=60)
    assert result.ok, result.explain()
    assert probe_record(result, "d", "spin-masked")["cpu1_spinning"], result.explain()
    assert result.partitions["d"].state == "off", result.explain()
    assert result.stats["d"]["exit_irq"] >= 1, result.stats  # the kick that stopped vCPU 1


def test_control_path_restarts_a_partition_spinning_with_everything_masked(system_file):
    # Each boot leaves vCPU 1 spinning masked, then vCPU 0 resets the partition while its uptime
    # is under 1 s: the hypervisor must take vCPU 1's core back for every reload. Each life
    # prints one line (probe.banner=0): every life's line fits the partition's share of the
    # board UART (a 16 KiB burst, then what the UART carries), so none is dropped.
    path = system_file(partition("d", [1, 2], PROBE,
                                 "probe.tests=spin-masked,reset probe.reset_until_us=1000000 "
                                 "probe.banner=0",
                                 irq="direct"), cpus=3)
    result = run_system(path, timeout=120)
    assert result.ok, result.explain()
    restarts = result.stats["d"]["restarts"]
    assert restarts >= 1, result.stats
    spins = [r for r in result.partitions["d"].probe if r.get("test") == "spin-masked"]
    assert len(spins) == restarts + 1 and all(r["cpu1_spinning"] for r in spins), result.explain()
    assert probe_record(result, "d", "reset")["pass"], result.explain()


def test_direct_sgis_between_cores_that_are_not_contiguous(system_file):
    # vCPU 0 on core 3, vCPU 1 on core 1: the vector's shift-the-target-list path cannot map
    # these, so the SGIs take the C filter; they must arrive all the same, and nothing else.
    path = system_file(partition("d", [3, 1], PROBE, "probe.tests=smp,sgi-foreign", irq="direct"),
                       cpus=4)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    assert probe_record(result, "d", "smp")["pass"], result.explain()
    assert probe_record(result, "d", "sgi-foreign")["pass"], result.explain()
    stats = result.stats["d"]
    assert stats["sgi_sent"] >= 2 and stats["exit_irq"] == 0, stats
