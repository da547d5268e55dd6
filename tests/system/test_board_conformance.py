"""A partition behaves like the bare board where a conformance suite looks (issue 26).

The probe guest runs the same checks natively and in a partition of each delivery mode; the
records must agree field for field.
"""

import pytest

from conftest import PROBE, partition, probe_record

from tern import run_native, run_system

TESTS = "probe.tests=timer-pending,psci"
# The PSCI fields a guest sees of the firmware; the conduit differs (QEMU's device tree: hvc).
PSCI_FIELDS = ("version", "features_cpu_on", "features_bogus", "unknown_call",
               "features_system_reset2", "features_mem_protect",
               "features_mem_protect_check_range")


@pytest.fixture(scope="module")
def native():
    result = run_native(PROBE, bootargs=TESTS, icount=4)
    assert result.ok, result.explain()
    records = {r["test"]: r for r in result.probe}
    # The board itself: a disabled timer PPI whose line is high is pending; PSCI 1.1.
    assert records["timer-pending"]["pass"], records
    assert records["psci"]["version"] == "1.1", records
    return records


@pytest.mark.parametrize("irq", ["trap", "direct"])
def test_timer_pending_and_psci_as_on_the_board(system_file, native, irq):
    path = system_file(partition("p", [1], PROBE, TESTS, irq=irq), cpus=2)
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    timer = probe_record(result, "p", "timer-pending")
    assert timer == native["timer-pending"], (timer, native["timer-pending"])
    psci = probe_record(result, "p", "psci")
    assert {k: psci[k] for k in PSCI_FIELDS} == {k: native["psci"][k] for k in PSCI_FIELDS}, \
        (psci, native["psci"])
