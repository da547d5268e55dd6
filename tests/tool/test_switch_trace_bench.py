"""The ARINC 653 window switch by execution trace (bench.run_switch_trace): the runs it asks
for, its FIFO reader, its records and their report rows (no QEMU: fakes write the trace)."""

import re
import threading
import tomllib
from pathlib import Path

import pytest

from tern import bench, pathtrace, report, runner, xen

SCENARIO = bench.SCENARIO_BY_NAME[bench.SWITCH_TRACE_SCENARIO]
ENTRY, SAVE, OTHER = 0x40080000, 0x40081000, 0x40082000


def system(name):
    return next(s for s in bench.SYSTEMS if s.name == name)


def fake_symbols(elf, marker):
    return pathtrace.symbols_of([(ENTRY, "vectors"), (SAVE, marker), (OTHER, "other"),
                                 (OTHER + 0x1000, "end")], marker)


def trace_line(pc, el2=True, cpu=1):
    flags = 0x61 if el2 else 0x121
    return f"Trace {cpu}: 0x7f0000001000 [0000000000004000/{pc:016x}/{flags:08x}/ff020201] \n"


def switch(n_save, cpu=1):
    """A window's end on `cpu`: an IRQ from EL1, 2 + n_save EL2 instructions, eret to EL1."""
    return ([trace_line(0x1000, False, cpu), f"Taking exception 5 [IRQ] on CPU {cpu}\n",
             "...from EL1 to EL2\n", "...with ELR 0x1004\n", "...to EL2 PC 0x40080000\n",
             trace_line(ENTRY, cpu=cpu)]
            + [trace_line(SAVE + 4 * i, cpu=cpu) for i in range(n_save)]
            + [trace_line(ENTRY + 4, cpu=cpu),
               "Exception return from AArch64 EL2 to AArch64 EL1 PC 0x1004\n"])


def write_trace(args, lines):
    """What QEMU does with -D FIFO: open it, write, close."""
    with open(args[args.index("-D") + 1], "w") as f:
        f.writelines(lines)


def traced_run(args, console, lines):
    """A run as the reader sees it: both guests' mode lines, the trace, then (once the parser
    has read it all) the first guest's results."""
    console("[a] noise: mode slices, name a")
    console("(XEN) DOM2: noise: mode slices, name b")
    write_trace(args, lines)
    console.__self__.thread.join(10)
    console('[a] noise-slices {"name":"a"}')


def ok(workdir, log=("[a] NOISE-DONE", "[b] NOISE-DONE")):
    return runner.RunResult(status=runner.STATUS_OK, reason="", log=list(log), partitions={},
                            workdir=workdir)


class FakeRuns:
    def __init__(self, tmp_path, name, trace):
        self.system = system(name)
        self.timeout = 10
        self.tmp = tmp_path
        self.trace = trace
        self.seen = {}

    def _dir(self, label):
        d = self.tmp / label
        d.mkdir(parents=True, exist_ok=True)
        return d

    def tern_system(self, label, shift, partitions, board_cpus, console=None, pools=(),
                    qemu_args=(), arch="arm64"):
        self.seen.update(label=label, shift=shift, qemu_args=list(qemu_args),
                         text=bench._system_toml(board_cpus, *partitions, pools=pools))
        if self.trace is not None:
            traced_run(qemu_args, console, self.trace)
        return ok(self._dir(label))


@pytest.fixture(autouse=True)
def no_elf(monkeypatch):
    monkeypatch.setattr(pathtrace, "symbols", fake_symbols)


def test_tern_run_streams_its_trace_through_a_fifo_into_a_record(tmp_path):
    # The first switch after both guests' mode lines is dropped (it may be older).
    runs = FakeRuns(tmp_path, "tern wfi=trap",
                    switch(9) + switch(3) * 3 + switch(5) + switch(3, cpu=0))
    outcome = SCENARIO.run(runs.system, 4, bench.QUICK, runs)
    assert outcome.error is None, outcome.error
    [rec] = outcome.records
    assert (rec["system"], rec["scenario"], rec["test"], rec["shift"]) == \
        ("tern wfi=trap", bench.SWITCH_TRACE_SCENARIO, "switch-trace", 4)
    assert rec["hyp_instructions"] == {"n": 4, "min": 5, "avg": 5.5, "max": 7, "median": 5}
    assert rec["whole_run"] == {"n": 5, "min": 5, "avg": 6.6, "max": 11, "median": 5,
                                "others": 0}
    assert rec["other_paths"] == 0 and rec["marker"] == "arch_vcpu_save"
    assert rec["functions"] == [["arch_vcpu_save", 3], ["vectors", 2]]
    args = runs.seen["qemu_args"]
    assert args[:2] == ["-accel", "tcg,thread=single"] and "-singlestep" in args
    assert args[args.index("-dfilter") + 1] == f"{ENTRY:#x}+{OTHER + 0x2000 - ENTRY:#x}"
    assert not Path(args[args.index("-D") + 1]).exists()     # the FIFO is gone, no trace file
    doc = tomllib.loads(runs.seen["text"])
    assert all(f"noise.slices={bench.SWITCH_TRACE_SLICES['tern']} " in p["bootargs"]
               for p in doc["partition"])
    assert doc["pool"][0]["scheduler"] == "arinc653"
    assert doc["pool"][0]["cpus"] == [bench.SWITCH_TRACE_CORE]
    assert [w["duration_us"] for w in doc["pool"][0]["windows"]] == [bench.SHARED_WINDOW_US] * 2


def test_qemu_that_never_opens_the_fifo_does_not_hang_the_reader(tmp_path):
    runs = FakeRuns(tmp_path, "tern wfi=trap", None)
    outcome = SCENARIO.run(runs.system, 4, bench.QUICK, runs)
    assert outcome.records == []
    assert "no console line for the start and end" in outcome.error


def test_switches_outside_both_guests_spinning_are_not_counted(tmp_path):
    runs = FakeRuns(tmp_path, "tern wfi=trap", None)

    def tern_system(label, shift, partitions, board_cpus, console=None, qemu_args=(), **kw):
        args = qemu_args
        with open(args[args.index("-D") + 1], "w") as f:
            f.writelines(switch(20) * 2)           # boot and the first mode line
            f.flush()
            console("[a] noise: mode slices, name a")
            f.writelines(switch(30))                # the end: the second guest never started
        console.__self__.thread.join(10)
        console("[a] noise-gap {}")
        return ok(runs._dir(label))
    runs.tern_system = tern_system
    outcome = SCENARIO.run(runs.system, 4, bench.QUICK, runs)
    assert outcome.records == [] and "no console line for the start" in outcome.error


def test_failed_run_shows_its_serial_log(tmp_path):
    runs = FakeRuns(tmp_path, "tern wfi=trap", switch(3))
    runs.tern_system = lambda label, shift, *a, qemu_args=(), console=None, **k: (
        traced_run(qemu_args, console, switch(3)),
        runner.RunResult(status=runner.STATUS_TIMEOUT, reason="timed out after 10 s",
                         log=["tern: booting", "[a] noise: mode slices"], partitions={},
                         workdir=tmp_path))[1]
    outcome = SCENARIO.run(runs.system, 4, bench.QUICK, runs)
    assert outcome.records == []
    assert "timed out after 10 s" in outcome.error and "[a] noise: mode slices" in outcome.error


def test_xen_run_has_dom0_on_core_0_the_arinc_pool_on_core_1_and_no_icount(tmp_path,
                                                                          monkeypatch):
    seen = {}

    def run_xen(domains, xen_args="", **kw):
        seen.update(kw, domains=domains)
        traced_run(kw["qemu_args"], kw["console"], switch(9) * 3)
        return ok(kw["workdir"])
    monkeypatch.setattr(xen, "run_xen", run_xen)
    runs = FakeRuns(tmp_path, "xen sched", None)
    outcome = SCENARIO.run(runs.system, 4, bench.QUICK, runs)
    assert outcome.error is None, outcome.error
    [rec] = outcome.records
    assert rec["shift"] is None and rec["marker"] == "__context_switch"
    assert rec["hyp_instructions"]["avg"] == 11
    assert seen["icount"] is None
    assert [(p.cpus, p.sched) for p in seen["pools"]] == [((0,), "credit2"), ((1,), "arinc653")]
    assert all(d.pool == bench.SHARED_POOL for d in seen["domains"])
    assert all(f"noise.slices={bench.SWITCH_TRACE_SLICES['xen']} " in d.bootargs
               and "noise.max_gaps=0 " in d.bootargs for d in seen["domains"])
    assert "arinc.frame_us=20000" in seen["dom0"].bootargs
    assert "arinc.windows=1:10000,2:10000" in seen["dom0"].bootargs


def test_the_scenario_runs_xen_sched_and_tern_trap_only(monkeypatch):
    cells = []
    monkeypatch.setattr(bench.System, "available", lambda self: None)
    monkeypatch.setattr(bench, "run_scenario", lambda sc, sy, sh, plan, runs:
                        cells.append((sc.name, sy.name, sh)) or bench.Outcome())
    _, errors = bench.run_matrix(bench.QUICK, scenarios=(SCENARIO,),
                                 workdir=Path("/tmp/tern-fake"), progress=None)
    assert sorted(cells) == [(SCENARIO.name, "tern wfi=trap", 4), (SCENARIO.name, "xen sched", 4)]
    assert not errors


def test_trace_reader_drains_while_the_writer_writes(tmp_path):
    reader = bench.TraceReader(tmp_path / "t.fifo", fake_symbols(None, "arch_vcpu_save"))
    writer = threading.Thread(target=traced_run,
                              args=(["-D", str(reader.fifo)], reader.console, switch(2) * 5000))
    writer.start()
    writer.join(30)
    spinning, whole = reader.finish()
    assert whole.counts == [4] * 5000 and spinning.counts == [4] * 4999


def records(tern_avg=1314, xen_avg=3041):
    def rec(name, avg):
        return {"system": name, "scenario": bench.SWITCH_TRACE_SCENARIO, "test": "switch-trace",
                "shift": 4 if name.startswith("tern") else None, "unit": "instructions",
                "hyp_instructions": {"n": 8, "min": avg, "avg": avg, "max": avg + 13,
                                     "median": avg},
                "other_paths": 0, "functions": [["do_schedule", 160]]}
    return [rec("tern wfi=trap", tern_avg), rec("xen sched", xen_avg)]


def test_report_table_and_goal_row_say_the_goal_is_not_met():
    data = {"records": records(), "errors": []}
    text = "\n".join(report.shared_section(data))
    assert "hypervisor instructions per arinc 653 window switch" in text.lower()
    assert "| tern wfi=trap | 8 | 1314 | 1314 | 1327 | 0.43 | 0 |" in text
    assert "| xen sched | 8 | 3041 | 3041 | 3054 | 1.00 | 0 |" in text
    assert "icount" in text and "does not depend" in text
    rows = report._switch_trace_goal_rows(data["records"])
    assert rows == ["| ARINC 653 window switch: hypervisor instructions per switch, AVG (execution "
                    "trace) | <= 1013.7 | 1314 | Xen 4.17 ARINC 653: 3041 (0.43 of Xen's: not "
                    "met) |"]


def test_goal_row_met_and_missing_xen():
    assert "met) |" in report._switch_trace_goal_rows(records(900))[0]
    assert "not met" not in report._switch_trace_goal_rows(records(900))[0]
    tern_only = records()[:1]
    assert report._switch_trace_goal_rows(tern_only) == [
        "| ARINC 653 window switch: hypervisor instructions per switch, AVG (execution trace) "
        "| <= 1/3 of Xen's | 1314 | Xen 4.17 ARINC 653: not run |"]
    assert report._switch_trace_goal_rows([]) == []


def test_traced_row_replaces_the_timed_arinc_goal_row_and_the_terminal_shows_the_table():
    timed = {"system": "tern wfi=trap", "scenario": "shared-switch-arinc653",
             "scheduler": "arinc653", "switch": {"n": 4, "min": 700, "avg": 700.0, "max": 700},
             "interruption": {"n": 0}}
    goals = report._shared_goal_rows([timed] + records())
    assert [g for g in goals if "window switch" in g] == report._switch_trace_goal_rows(records())
    # The traced records are no timed switch rows.
    assert [r[1] for r in report.shared_switch_rows([timed] + records())] == ["tern wfi=trap"]
    text = report.terminal_report({"records": records(), "errors": [], "scenarios": [],
                                   "plan": {"shifts": [4]}})
    assert "ARINC 653 window switch by execution trace" in text
    assert re.search(r"xen sched\s+8\s+3041\s+3041\s+3054\s+1\.00", text)
