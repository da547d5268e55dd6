"""The latency guest for riscv64 on QEMU's riscv virt board, natively under OpenSBI.

Under icount shift 0 the guest's samples are `cycle` counts of virtual nanoseconds, one per
instruction, so the figures below are instructions: from the timer deadline, or from just
before the store, ecall or device write that sends, to the second instruction of the trap
vector. (Tern's RISC-V port runs the same image in a partition later.)
"""

import pytest
from conftest import LAT_RISCV64

from tern import results, run_native

TIMER_TESTS = ("sstc-wfi", "sstc-busy", "sbi-timer-wfi", "sbi-timer-busy")
IPI_TESTS = ("ipi-wfi", "ipi-busy", "sbi-ipi-wfi", "sbi-ipi-busy")
EDU_TESTS = ("edu-wfi", "edu-busy")
ALL_TESTS = TIMER_TESTS + IPI_TESTS + EDU_TESTS
SAMPLES = 20
# Instructions at most, natively (measured: 3 and 2; 8 and 7; 842 and 841; 13 and 11). The
# SBI IPI goes through OpenSBI on both harts; everything else is a handful of instructions.
BOUNDS = {"sstc": 10, "sbi": 10, "imsic": 20, "sbi-ipi": 2000, "edu": 30}


def check_stats(r, explain):
    assert "error" not in r, (r, explain)
    assert r["samples"] == SAMPLES and sum(r["hist"]["counts"]) == SAMPLES, explain
    assert r["arch"] == "riscv64" and r["counter"] == "cycle", r
    # Cycles are QEMU's virtual nanoseconds under icount: 1 GHz, whatever the shift.
    assert r["unit"] == "ticks" and r["freq_hz"] == 1_000_000_000, r
    assert 0 < r["min"] <= r["avg"] <= r["max"], r
    assert r["min"] <= r["p50"] <= r["p99"] <= r["p999"] <= r["max"], r
    assert r["warm_max"] <= r["max"], r


@pytest.fixture(scope="module")
def native():
    """Every test once, on the board with edu: one boot, well under a second of QEMU."""
    result = run_native(LAT_RISCV64, bootargs=f"lat.samples={SAMPLES} lat.tests="
                        + ",".join(ALL_TESTS), icount=0, pci=("edu",), timeout=60)
    assert result.ok, result.explain()
    assert result.log[-1] == "LAT-DONE", result.explain()
    assert "riscv64" in result.command[0], result.command
    return {r["test"]: r for r in result.lat}, result.explain()


def test_every_test_reports(native):
    records, explain = native
    assert list(records) == list(ALL_TESTS), explain
    for r in records.values():
        check_stats(r, explain)
        assert r["max"] <= BOUNDS[r["timer"]], r


def test_samples_are_exact_under_icount(native):
    # One instruction per cycle and the timer's write locked to the tick edge: every sample of
    # a test is the same instruction count. (Written mid-tick, QEMU would fire up to 99 late.)
    records, _ = native
    for r in records.values():
        assert r["min"] == r["max"], r


def test_sbi_set_timer_is_sstc_natively(native):
    # With Sstc, OpenSBI's set_timer writes stimecmp for the guest: delivery is the same; only
    # in a partition (trap-and-emulate) do they differ.
    records, _ = native
    for wait in ("wfi", "busy"):
        assert records[f"sbi-timer-{wait}"]["avg"] == records[f"sstc-{wait}"]["avg"]
    assert records["sstc-busy"]["avg"] <= records["sstc-wfi"]["avg"]


def test_ipis_and_device(native):
    records, _ = native
    for wait in ("wfi", "busy"):
        imsic, sbi = records[f"ipi-{wait}"], records[f"sbi-ipi-{wait}"]
        # A store into the receiver's IMSIC file costs the sender two reads and the store;
        # SBI send_ipi is a trip through OpenSBI on both harts.
        assert imsic["sender"]["max"] <= 5 and sbi["sender"]["min"] > 10 * imsic["sender"]["max"]
        assert sbi["min"] > imsic["max"]
        edu = records[f"edu-{wait}"]
        assert edu["bdf"] == "00:02.0" and edu["intid"] == 2 and edu["sender"]["max"] <= 5, edu


def test_records_fit_the_result_tables(native):
    records, _ = native
    headers, rows = results.latency_table({"native": list(records.values())})
    assert [row[0] for row in rows] == list(ALL_TESTS)
    assert all(row[2] is not None for row in rows), rows


def test_missing_hart_and_device_are_reported():
    result = run_native(LAT_RISCV64, bootargs="lat.samples=5 lat.tests=ipi-wfi,sbi-ipi-busy,"
                        "edu-wfi,sstc-wfi", cpus=1, icount=0, timeout=60)
    assert result.ok, result.explain()
    errors = [(r["test"], r.get("error"), r.get("done")) for r in result.lat]
    assert errors == [("ipi-wfi", "no second hart", 0), ("sbi-ipi-busy", "no second hart", 0),
                      ("edu-wfi", "edu device not found", 0), ("sstc-wfi", None, None)], errors
    assert result.lat[-1]["min"] == result.lat[-1]["max"], result.lat[-1]


def test_runs_without_icount():
    # Real time: figures follow the host (cycles count its TSC), but every test completes.
    result = run_native(LAT_RISCV64, bootargs="lat.samples=10 lat.tests=" + ",".join(ALL_TESTS),
                        pci=("edu",), timeout=60)
    assert result.ok, result.explain()
    assert [r["test"] for r in result.lat] == list(ALL_TESTS), result.explain()
    for r in result.lat:
        assert "error" not in r and r["samples"] == 10 and r["min"] <= r["max"], r
