"""The real-time partition's core beside a busy Linux, instruction by instruction.

Emulated time cannot show it (QEMU runs the cores in turns under icount: docs/benchmarks.md),
so these runs are traced by QEMU and the trace says what rt's own core executed for each
interrupt. With Linux busy on the other cores it must be exactly what it is alone: the same
hypervisor instructions (none with direct delivery, the fast path with trap-and-inject), the
same guest vector, and no exception that rt alone does not take.
"""

from pathlib import Path

import pytest

from tern import bench, pathtrace, report

SYSTEMS = {s.name: s for s in bench.SYSTEMS}
VECTOR = pathtrace.COUNTER_READ_OFFSET // 4 + 1     # the vector slot's instructions to its read


def serial_tail(workdir, lines=60):
    log = Path(workdir or ".") / "serial.log"
    return "\n".join(log.read_text().splitlines()[-lines:]) if log.exists() else "(no serial log)"


@pytest.mark.parametrize("name, hyp", [("tern direct", 0), ("tern wfi=native", None)])
def test_rt_core_per_interrupt_beside_busy_linux_equals_alone(tmp_path, name, hyp):
    if hyp is None:        # trap-and-inject: the fast path, as disassembled
        hyp = len(report.interrupt_paths()["fast_path"])
    system = SYSTEMS[name]
    out = bench.run_rt_path(system, 4, bench.Runs(system, tmp_path, timeout=300))
    assert out.error is None, f"{out.error}\n{serial_tail(out.workdir)}"
    recs = [r for r in out.records if r["test"] != "setup"]
    assert [r["test"] for r in recs] == list(bench.TIMER_TESTS)
    for r in recs:
        alone, beside = r["alone"], r["beside"]
        assert beside["warm"] == alone["warm"] == bench.TRACE_SAMPLES - bench.LAT_WARMUP
        for summary in (alone, beside):
            assert (summary["hyp_min"], summary["hyp_max"]) == (hyp, hyp), (r["test"], summary)
            assert (summary["vector_min"], summary["vector_max"]) == (VECTOR, VECTOR)
        assert beside["exceptions"] == alone["exceptions"], r["test"]
        # Every sample took its interrupt on rt's core (physical, and virtual when injected).
        assert alone["exceptions"].get("IRQ") == alone["warm"]
