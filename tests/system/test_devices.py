"""Device pass-through: QEMU's edu PCI device behind the PCIe host bridge, given to one partition.

The latency guest raises the device's interrupt through its own register and measures the time
to its handler, natively, with trap-and-inject and with direct delivery.
"""

import pytest
from conftest import LAT, PROBE, partition, probe_record

from tern import run_native, run_system

EDU_TESTS = ("edu-wfi", "edu-busy")
EDU_ARGS = "lat.samples=20 lat.tests=edu-wfi,edu-busy"
EDU_INTID = 37          # slot 2, pin A: SPI 5 through the host bridge's interrupt-map


def edu_records(records, explain):
    assert [r["test"] for r in records] == list(EDU_TESTS), explain
    for r in records:
        assert "error" not in r, (r, explain)
        assert r["timer"] == "edu" and r["intid"] == EDU_INTID and r["samples"] == 20, explain
        assert 0 <= r["min"] <= r["avg"] <= r["max"], explain
        assert sum(r["hist"]["counts"]) == 20, explain
    return records


@pytest.fixture(scope="module")
def native_edu():
    result = run_native(LAT, bootargs=EDU_ARGS, icount=4, pci=("edu",))
    assert result.ok, result.explain()
    return edu_records(result.lat, result.explain())


def test_device_interrupt_direct_equals_native(system_file, native_edu):
    path = system_file(partition("rt", [1], LAT, EDU_ARGS, irq="direct", devices=["pcie"]),
                       cpus=2, pci=["edu"])
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    records = edu_records(result.partitions["rt"].lat, result.explain())
    # The device's MMIO is mapped, its interrupt comes from the GIC: no hypervisor instruction.
    assert [(r["min"], r["max"], r["avg"]) for r in records] == \
        [(r["min"], r["max"], r["avg"]) for r in native_edu], (records, native_edu)
    stats = result.stats["rt"]
    assert stats["exit_irq"] == 0 and stats["irq_injected"] == 0 and stats["exit_mmio"] > 0, stats
    assert stats["gic_ignored"] == 0 and stats["faults"] == 0, stats


def test_device_interrupt_trap_and_inject(system_file, native_edu):
    path = system_file(partition("rt", [1], LAT, EDU_ARGS, devices=["pcie"]), cpus=2,
                       pci=["edu"])
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    records = edu_records(result.partitions["rt"].lat, result.explain())
    stats = result.stats["rt"]
    # Every sample is one interrupt injected through a list register.
    assert stats["irq_injected"] >= 2 * 20 and stats["gic_ignored"] == 0, stats
    for tern, native in zip(records, native_edu):
        assert tern["min"] > native["min"], (tern, native)


def test_device_belongs_to_its_partition_only(system_file):
    # "owner" has the host bridge and its SPIs; "other" tries to configure SPI 37 and to read the
    # ECAM. The owner's own attempts to route its SPI outside the partition are refused too.
    path = system_file(
        partition("owner", [1, 2], PROBE, f"probe.tests=spi-owned probe.spi={EDU_INTID}",
                  irq="direct", devices=["pcie"]),
        partition("other", [3], PROBE, f"probe.tests=gicd-foreign,fault probe.spi={EDU_INTID}",
                  on_fault="stop"),
        cpus=4, pci=["edu"])
    result = run_system(path, icount=4)
    assert result.partitions["owner"].state == "off", result.explain()
    owned = probe_record(result, "owner", "spi-owned")
    assert owned["pass"], owned
    assert owned["received"] == 1 and owned["router_after"] == 0, owned
    assert result.stats["owner"]["gic_ignored"] >= 3, result.stats
    assert result.stats["owner"]["gic_clamped"] >= 1, result.stats
    assert probe_record(result, "other", "gicd-foreign")["pass"], result.explain()
    assert result.stats["other"]["gic_ignored"] >= 3, result.stats
    # Reading outside its own RAM (the probe's fault test) stops "other" alone.
    assert result.partitions["other"].state == "stopped", result.explain()


def test_direct_guest_cannot_take_group_0_or_outrank_the_control_path(system_file):
    # SGIs and PPIs moved to Group 0 would be FIQs taken by the hypervisor, priority 0x00 would
    # tie with its control interrupt: the writes are ignored or clamped, and counted. The
    # control path then still stops vCPU 1 spinning with everything masked. No icount: a core
    # spinning for ever starves the others under the emulator's round-robin.
    path = system_file(partition("d", [1, 2], PROBE, "probe.tests=gicr-group,spin-masked,psci",
                                 irq="direct"), cpus=3)
    result = run_system(path, timeout=60)
    assert result.ok, result.explain()
    group = probe_record(result, "d", "gicr-group")
    assert group["pass"] and group["received"] == 1, group
    stats = result.stats["d"]
    assert stats["gic_ignored"] >= 1 and stats["gic_clamped"] >= 1, stats
    assert probe_record(result, "d", "spin-masked")["cpu1_spinning"], result.explain()
    assert result.partitions["d"].state == "off", result.explain()


@pytest.mark.parametrize("irq", ["trap", "direct"])
def test_spi_for_a_vcpu_that_is_off_waits_for_it(system_file, irq):
    # SPI 37 routed to vCPU 1 while it is off and made pending: the core it is pinned on idles
    # in the hypervisor, which must leave it pending in the GIC until vCPU 1 runs and takes it.
    path = system_file(partition("p", [1, 2], PROBE, f"probe.tests=spi-offline probe.spi={EDU_INTID}",
                                 irq=irq, devices=["pcie"]), cpus=3, pci=["edu"])
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    record = probe_record(result, "p", "spi-offline")
    assert record["pass"] and record["received"] == 1 and record["taken_while_off"] == 0, record


def test_device_dma_is_confined_to_its_partition(system_file):
    # "dma" owns the host bridge and programs edu's DMA with its own addresses. The SMMU
    # translates them to where its RAM is on the board (a round trip works, though IPA is not
    # HPA) and refuses the rest: past its RAM (other partitions, the hypervisor) and the GIC.
    # The hypervisor drains the SMMU's fault events and counts them for the owner. No icount:
    # edu ends a DMA 100 ms of virtual time after its start, millions of polling instructions.
    path = system_file(partition("dma", [1], PROBE, "probe.tests=edu-dma", devices=["pcie"]),
                       partition("other", [2], PROBE, "probe.tests=psci"), cpus=3, pci=["edu"])
    result = run_system(path)
    assert result.ok, result.explain()
    record = probe_record(result, "dma", "edu-dma")
    assert record["completed"] and record["round_trip"], record
    assert record["foreign_ram_refused"] and record["gic_refused"] and record["pass"], record
    assert record["foreign"] == "0x42200000" and record["requester_id"] == "0x10", record
    assert result.stats["dma"]["dma_faults"] >= 1 and result.stats["dma"]["faults"] == 0, \
        result.stats
    assert any(line.startswith("tern: dma fault partition=dma sid=0x10 addr=0x42200000 ")
               for line in result.log), result.explain()
    assert result.stats["other"]["dma_faults"] == 0, result.stats
    assert result.partitions["other"].state == "off", result.explain()
    assert probe_record(result, "other", "psci")["pass"], result.explain()


def test_devices_are_silenced_before_their_partition_is_reloaded(system_file):
    """Each boot turns edu's memory decoding and bus mastering on and resets the partition:
    the next boot must find them off. Left on, a device could write into the RAM the
    hypervisor reloads (QEMU does not reset a PCI device when one partition resets)."""
    path = system_file(partition("dev", [1], PROBE, "probe.tests=pci-reset "
                                 "probe.reset_until_us=20000", devices=["pcie"]),
                       cpus=2, pci=["edu"])
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    records = [r for r in result.partitions["dev"].probe if r.get("test") == "pci-reset"]
    assert [r["phase"] for r in records][-1] == "after" and len(records) >= 2, result.explain()
    assert result.stats["dev"]["restarts"] == len(records) - 1, result.stats
    # The first boot finds the device as firmware left it; every later one, silenced.
    assert all(r["quiet"] and int(r["command"], 16) & 0x400 for r in records[1:]), records
