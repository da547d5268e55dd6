"""The shared-core bench rows (issue 29): Tern's pools beside Xen 4.17's boot-time cpupools, the
switch and window-start figures from the slices guests' gaps, and their report (no QEMU)."""

import re
import tomllib
from pathlib import Path

from tern import bench, config, report, runner, xen

REPO = Path(__file__).resolve().parents[2]


def system(name):
    return next(s for s in bench.SYSTEMS if s.name == name)


class FakeRuns:
    """bench.Runs without QEMU: keeps what a run was asked for, returns `result`."""

    def __init__(self, result, kind="tern wfi=trap"):
        self.system = system(kind)
        self.result = result
        self.seen = {}
        self.timeout = 10

    def _dir(self, label):
        return Path("/nonexistent") / label

    def tern_system(self, label, shift, partitions, board_cpus, console=None, pools=(),
                    arch="arm64"):
        self.seen.update(label=label, console=console,
                         text=bench._system_toml(board_cpus, *partitions, pools=pools, arch=arch))
        return self.result


def result(log, ok=True):
    return runner.RunResult(status=runner.STATUS_OK if ok else runner.STATUS_FAILED,
                            reason="" if ok else "failed", log=log, partitions={},
                            workdir=Path("/nonexistent"))


def test_shared_scenarios_pair_tern_with_xen_sched_only(monkeypatch):
    shared = [s for s in bench.SCENARIOS if s.report == "shared" and s.arch == "arm64"]
    assert sorted(s.name for s in shared) == sorted(
        f"shared-{what}-{sched}" for what in ("lat", "switch") for sched in bench.SHARED_SCHEDULERS)
    cells = []
    monkeypatch.setattr(bench.System, "available", lambda self: None)
    monkeypatch.setattr(bench, "run_scenario", lambda sc, sy, sh, plan, runs:
                        cells.append((sc.name, sy.name)) or bench.Outcome())
    plan = bench.Plan(samples=1, prio_runs=1, shifts=(4,))
    timer = bench.SCENARIO_BY_NAME["timer"]
    _, errors = bench.run_matrix(plan, scenarios=(timer, *shared), workdir=Path("/tmp/tern-fake"),
                                 progress=None)
    # The scheduler build runs the shared rows alone; the shared rows run no other system.
    assert ("timer", "xen sched") not in cells and ("timer", "xen credit2") in cells
    assert {sy for sc, sy in cells if sc.startswith("shared-")} == set(bench.SHARED_SYSTEMS)
    # Xen's ARINC 653 cannot run a dom0less domU: skipped, saying why.
    skipped = {(e["scenario"], e["system"]): e["error"] for e in errors if e.get("skipped")}
    for what in ("lat", "switch"):
        assert "toolstack" in skipped[(f"shared-{what}-arinc653", "xen sched")]
        assert (f"shared-{what}-arinc653", "tern wfi=trap") in cells


def test_tern_pool_is_one_core_with_xen_defaults_and_checks(tmp_path):
    runs = FakeRuns(result(["[rt] LAT-DONE"], ok=False))
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(4,))
    for sched in bench.SHARED_SCHEDULERS:
        outcome = bench.SCENARIO_BY_NAME[f"shared-lat-{sched}"].run(runs.system, 4, plan, runs)
        assert outcome.error == "failed" and not outcome.skipped
        doc = tomllib.loads(runs.seen["text"])
        assert doc["board"]["cpus"] == 2
        pool = doc["pool"][0]
        assert (pool["cpus"], pool["scheduler"]) == ([bench.TERN_SHARED_CORE], sched)
        assert [(p["name"], p["cpus"], p["pool"], p["wfi"]) for p in doc["partition"]] == \
            [("rt", [1], "shared", "trap"), ("noise", [1], "shared", "trap")]
        if sched == "rtds":
            assert all((p["budget_us"], p["period_us"]) == (xen.RTDS_DEFAULT_BUDGET_US,
                                                            xen.RTDS_DEFAULT_PERIOD_US)
                       for p in doc["partition"])
        if sched == "arinc653":
            assert pool["windows"] == [{"partition": "rt", "duration_us": 10000},
                                       {"partition": "noise", "duration_us": 10000}]
        # noise is stopped once rt is done; tern check takes the description.
        assert runs.seen["console"]("[rt] LAT-DONE") == "stop noise\r"
        image = tmp_path / "guest.img"     # the description's guests need not be built here
        image.write_bytes(b"\0" * 4096)
        for p in doc["partition"]:
            p["image"] = str(image)
        system_ = config.parse_system(doc, tmp_path, f"{sched}.toml")
        assert [q.scheduler for q in system_.pools] == [sched]


def test_a_pool_the_hypervisor_refuses_is_a_skip_not_a_result():
    line = ("tern: error: system description: partition rt: pool shared: scheduler rtds is "
            "not built yet (only null pools run)")
    runs = FakeRuns(result(["tern: booting", line], ok=False))
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(4,))
    for name in ("shared-lat-rtds", "shared-switch-rtds"):
        outcome = bench.SCENARIO_BY_NAME[name].run(runs.system, 4, plan, runs)
        assert outcome.skipped and outcome.records == []
        assert outcome.error.startswith("shared cores not built")
        assert bench.SHARED_REFUSAL in outcome.error


def run_one(name, res, shift):
    """Scenario `name` run at icount `shift` on result `res`: its runs and its one record."""
    runs = FakeRuns(res)
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(shift,))
    outcome = bench.SCENARIO_BY_NAME[name].run(runs.system, shift, plan, runs)
    assert outcome.error is None, outcome.error
    [rec] = outcome.records
    return runs, rec


def tern_sched_lines(freq_hz, entry, arrival, entries):
    """A shared core's tern-sched and tern-sched-windows lines (core 1, ARINC 653): `entry` and
    `arrival` as (count, min, max), `entries` as [window, boundary, late]."""
    def lateness(c):
        return '{"count":%d,"min":%d,"max":%d}' % c
    return ['tern-sched {"cpu":1,"scheduler":"arinc653","freq_hz":%d,"window_entry":%s,'
            '"event_arrival":%s}' % (freq_hz, lateness(entry), lateness(arrival)),
            'tern-sched-windows {"cpu":1,"from":0,"entries":%s}' % str(entries).replace(" ", "")]


def lat_rows(prefix, lat, log, shift):
    """Each scheduler's latency scenario (`prefix`-SCHED) run on one latency result and log:
    the result, the plan, and (scheduler, its runs, its one record) for each."""
    res = result(log)
    res.partitions = {"rt": type("Part", (), {"lat": [lat]})()}
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(shift,))
    return res, plan, [(sched,) + run_one(f"{prefix}-{sched}", res, shift)
                       for sched in bench.SHARED_SCHEDULERS]


def test_lat_rows_carry_the_schedulers_bound():
    lat = {"test": "vtimer-wfi", "freq_hz": 62500000, "avg": 10.0, "min": 5, "max": 700000,
           "warm_max": 20, "p50": 6, "p99": 20, "p999": 20, "samples": 5}
    log = ["[noise] noise: mode spin, no periodic timer", "[rt] LAT-START {}", "[rt] LAT-DONE"]
    res, plan, rows = lat_rows("shared-lat", lat, log, 4)
    bounds = {}
    for sched, runs, rec in rows:
        assert rec["scheduler"] == sched and rec["warm_max"] == 20
        bounds[sched] = rec["bound_ticks"]
    # 62.5 ticks a microsecond: RTDS 10 ms - 4 ms, ARINC 653 the other 10 ms window, credit
    # Tern's 10 ms slice.
    assert bounds == {"rtds": 375000, "arinc653": 625000, "credit": 625000}
    assert bench.shared_bound_us("xen", "credit")[0] == 30000
    # noise must be busy before rt measures
    res.log = log[1:] + log[:1]
    outcome = bench.SCENARIO_BY_NAME["shared-lat-rtds"].run(runs.system, 4, plan, FakeRuns(res))
    assert outcome.records == [] and "not busy" in outcome.error


def test_tern_credit_slice_is_the_hypervisors():
    header = (REPO / "hypervisor" / "include" / "tern" / "sched.h").read_text()
    ns = int(re.search(r"#define SCHED_CREDIT_SLICE_NS\s+(\d+)ULL", header).group(1))
    assert bench.TERN_CREDIT_SLICE_US * 1000 == ns


def slices(start, end, gaps):
    return {"start": start, "end": end, "gaps": gaps, "kept": len(gaps), "count": len(gaps),
            "gap_ticks": 50}


def test_switch_costs_from_two_guests_gaps():
    # a runs [0,1000], b [1100,2000], a [2130,2500], a tick [2500,2540] of nobody, a
    # [2540,3000], b [3200,4000], a [4100,5000]: b measured from 1100 to 4000.
    a = slices(0, 5000, [(1000, 2130), (2500, 2540), (3000, 4100)])
    b = slices(1100, 4000, [(2000, 3200)])
    out = bench.switch_costs({"a": a, "b": b})
    # Only while both measured: b's start (1100) and end (4000) are no switch.
    assert out["switches"] == [130, 200]
    assert out["interruptions"] == [40]
    assert out["starts"] == {"a": [2130], "b": [3200]}


def test_window_jitter_is_the_spread_of_starts_within_their_frames():
    major = 1000
    assert bench.window_jitter([10, 1010, 3010], major) == 0
    assert bench.window_jitter([10, 1013, 2008], major) == 5
    assert bench.window_jitter([995, 2003], major) == 8          # across a frame's edge
    assert bench.window_jitter([10], major) is None


def test_report_shared_tables_and_goals():
    recs = [
        {"system": "xen sched", "scenario": "shared-switch-credit", "scheduler": "credit",
         "switch": {"n": 3, "min": 2990, "avg": 3000.0, "max": 3010},
         "interruption": {"n": 1, "max": 1800}},
        {"system": "tern wfi=trap", "scenario": "shared-switch-credit", "scheduler": "credit",
         "switch": {"n": 3, "min": 900, "avg": 1000.0, "max": 1100},
         "interruption": {"n": 0}},
        {"system": "tern wfi=trap", "scenario": "shared-switch-arinc653",
         "scheduler": "arinc653", "switch": {"n": 4, "min": 700, "avg": 700.0, "max": 700},
         "interruption": {"n": 0}, "window_jitter": {"a": 5, "b": 0},
         "window_start": {"n": 8, "min": 4379, "max": 4411, "jitter": 0}},
        {"system": "xen sched", "scenario": "shared-lat-rtds", "scheduler": "rtds", "avg": 9.5,
         "warm_max": 30, "p99": 30, "max": 375010, "bound_ticks": 375000,
         "bound": "RTDS: period - budget (+ the path)"},
    ]
    assert report.shared_lat_rows(recs) == [
        ("rtds", "xen sched", "9.5", 30, 30, 375010, 375000,
         "RTDS: period - budget (+ the path)", "+10")]
    rows = report.shared_switch_rows(recs)
    assert [r[:2] for r in rows] == [("credit", "tern wfi=trap"), ("credit", "xen sched"),
                                     ("arinc653", "tern wfi=trap")]
    assert rows[2][-1] == "hypervisor 0 (8 windows); guests a 5, b 0"
    goals = "\n".join(report._shared_goal_rows(recs))
    assert "context switch, credit pool" in goals
    assert "<= 1500.0 | 1000.0 | Xen 4.17 credit: 3000.0" in goals
    assert "ARINC 653 window switch: AVG | <= 1/3 of Xen's | 700.0" in goals
    assert "window start: jitter across major frames | exactly 0 | 0 | the hypervisor's" in goals
    # Without the hypervisor's figure (an older run), the guests' first reads.
    del recs[2]["window_start"]
    assert report.shared_switch_rows(recs)[2][-1] == "a 5, b 0"
    assert "frames | exactly 0 | 5 | the guests' first reads |" in \
        "\n".join(report._shared_goal_rows(recs))
    # The generic latency tables leave the shared rows to their own section.
    assert report.latency_rows(recs, "shared-lat-rtds", 4) == []
    data = {"records": recs}
    assert any("Shared cores" in line for line in report.shared_section(data))


def test_arinc_goal_row_compares_with_xens_arinc_figure_when_there_is_one():
    tern = {"system": "tern wfi=trap", "scenario": "shared-switch-arinc653",
            "scheduler": "arinc653", "switch": {"n": 4, "min": 700, "avg": 700.0, "max": 700},
            "interruption": {"n": 0}}
    rtds = {"system": "xen sched", "scenario": "shared-switch-rtds", "scheduler": "rtds",
            "switch": {"n": 3, "min": 3500, "avg": 3570.0, "max": 3600},
            "interruption": {"n": 0}}
    goals = "\n".join(report._shared_goal_rows([tern, rtds]))
    assert "| ARINC 653 window switch: AVG | <= 1/3 of Xen's | 700.0 | Xen 4.17's ARINC 653 " \
           "has no figure under icount (see *Method*); its context switch rtds 3570.0 |" in goals
    xen = dict(rtds, scenario="shared-switch-arinc653", scheduler="arinc653",
               switch={"n": 3, "min": 2900, "avg": 3000.0, "max": 3100})
    goals = "\n".join(report._shared_goal_rows([tern, rtds, xen]))
    assert "| ARINC 653 window switch: AVG | <= 1000.0 | 700.0 | Xen 4.17 ARINC 653: 3000.0 |" \
        in goals


def test_switch_rows_from_xen_console_lines():
    """The slices guests' lines as Xen prints them (`(XEN) DOMn:`), a and b alternating with a
    600-tick switch each way, and an ARINC 653-like frame: starts exact frame after frame."""
    major = bench.SHARED_MAJOR_FRAME_US * bench.ARM64_COUNTER_HZ // 1_000_000
    half = major // 2
    a_gaps = [(n * major + half - 300, (n + 1) * major + 300) for n in range(4)]
    b_gaps = [(n * major + major - 300, (n + 1) * major + half + 300) for n in range(3)]

    def lines(dom, name, start, end, gaps):
        out = [f'(XEN) DOM{dom}: noise-gap {{"name":"{name}","i":{i},"from":{f},"to":{t}}}'
               for i, (f, t) in enumerate(gaps)]
        ran = end - start - sum(t - f for f, t in gaps)
        out.append(f'(XEN) DOM{dom}: noise-slices {{"name":"{name}","start":{start},"end":{end},'
                   f'"gaps":{len(gaps)},"kept":{len(gaps)},"ran":{ran},"gap_ticks":50}}')
        return out + [f"(XEN) DOM{dom}: NOISE-DONE"]

    log = ["(XEN) Xen version 4.17"] + lines(1, "a", 300, 4 * major + half - 300, a_gaps) \
        + lines(2, "b", half + 300, 3 * major + major - 300, b_gaps)
    runs = FakeRuns(None, kind="xen sched")
    seen = {}

    def run_xen(domains, xen_args, **kw):
        seen.update(domains=domains, **kw)
        return result(log)

    plan = bench.Plan(samples=5, prio_runs=1, shifts=(4,))
    scenario = bench.SCENARIO_BY_NAME["shared-switch-arinc653"]
    original, xen.run_xen = xen.run_xen, run_xen
    try:
        outcome = scenario.run(runs.system, 4, plan, runs)
    finally:
        xen.run_xen = original
    assert [d.pool for d in seen["domains"]] == ["shared", "shared"]
    assert [p.sched for p in seen["pools"]] == ["arinc653"] and seen["finish"] == ("a", "b")
    assert all("noise.mode=slices" in d.bootargs and f"noise.name={d.name}" in d.bootargs
               for d in seen["domains"])
    assert outcome.error is None, outcome.error
    [rec] = outcome.records
    assert rec["switch"]["min"] == rec["switch"]["max"] == 600
    assert rec["switch"]["n"] == 6 and rec["interruption"]["n"] == 0
    assert rec["window_jitter"] == {"a": 0, "b": 0}


def test_riscv64_shared_ipi_puts_both_trap_less_vcpus_on_one_credit_core():
    class Runs(FakeRuns):
        def tern_system(self, label, shift, partitions, board_cpus, console=None, pools=(),
                        arch="arm64"):
            self.seen.update(label=label, text=bench._system_toml(
                board_cpus, *partitions, pools=pools, arch=arch))
            return self.result

    scenario = bench.SCENARIO_BY_NAME["riscv64-shared-ipi"]
    assert scenario.kinds == ("tern",) and scenario.shifts == (0,) and scenario.arch == "riscv64"
    assert scenario.systems == ("tern direct",) and scenario.report == "latency"
    runs = Runs(result([], ok=False), kind="tern direct")
    plan = bench.Plan(samples=7, prio_runs=1, shifts=(0,))
    outcome = scenario.run(runs.system, 0, plan, runs)
    assert outcome.error == "failed" and outcome.records == []
    doc = tomllib.loads(runs.seen["text"])
    assert doc["board"]["arch"] == "riscv64"
    assert doc["pool"] == [{"name": bench.SHARED_POOL, "cpus": [bench.TERN_SHARED_CORE],
                            "scheduler": "credit"}]
    (part,) = doc["partition"]
    assert part["cpus"] == [bench.TERN_SHARED_CORE] * 2
    assert (part["irq"], part["wfi"], part["pool"]) == ("direct", "trap", bench.SHARED_POOL)
    assert "lat.tests=ipi-wfi" in part["bootargs"] and "lat.samples=7" in part["bootargs"]


def slices_lines(name, start, end, gaps, gap_ticks):
    """A Tern slices guest's output as the log has it: its gaps, then its summary."""
    out = [f'[{name}] noise-gap {{"name":"{name}","i":{i},"from":{f},"to":{t}}}'
           for i, (f, t) in enumerate(gaps)]
    ran = end - start - sum(t - f for f, t in gaps)
    return out + [f'[{name}] noise-slices {{"name":"{name}","start":{start},"end":{end},'
                  f'"gaps":{len(gaps)},"kept":{len(gaps)},"ran":{ran},"gap_ticks":{gap_ticks}}}']


def test_tern_arinc653_row_takes_the_hypervisors_window_starts():
    """Tern's run: the slices guests' lines and the hypervisor's tern-sched lines; the row's
    window_start holds the windows that start while both guests measure, each window's spread
    frame to frame (window 1's 4411 twice, window 0's 4379 and 4380: 1)."""
    major = bench.SHARED_MAJOR_FRAME_US * bench.ARM64_COUNTER_HZ // 1_000_000
    half = major // 2
    a_gaps = [(n * major + half - 300, (n + 1) * major + 300) for n in range(4)]
    b_gaps = [(n * major + major - 300, (n + 1) * major + half + 300) for n in range(3)]

    def lines(name, start, end, gaps):
        return slices_lines(name, start, end, gaps, gap_ticks=50)

    a_end, b_start = 4 * major + half - 300, half + 300
    # Entries before b's start and after a's end (the guests' console lines) are left out.
    entries = [[1, half, 9000], [0, major, 4379], [1, major + half, 4411], [0, 2 * major, 4380],
               [1, 2 * major + half, 4411], [0, 3 * major, 4379], [1, 5 * major, 2500]]
    log = lines("a", 300, a_end, a_gaps) + lines("b", b_start, 3 * major + major - 300, b_gaps) \
        + tern_sched_lines(62500000, (7, 2500, 9000), (7, 60, 60), entries)
    _, rec = run_one("shared-switch-arinc653", result(log), 4)
    assert rec["window_start"] == {"n": 5, "min": 4379, "max": 4411, "jitter": 1}


# ---- The riscv64 board's rows (bench.run_riscv64_shared_*): Tern only, icount shift 0 ----

RISCV64_SHARED = [f"riscv64-shared-{what}-{sched}" for what in ("lat", "switch")
                  for sched in bench.SHARED_SCHEDULERS]


def test_riscv64_shared_scenarios_run_tern_trap_at_shift_0_only(monkeypatch):
    for name in RISCV64_SHARED:
        sc = bench.SCENARIO_BY_NAME[name]
        assert (sc.arch, sc.kinds, sc.shifts, sc.report) == ("riscv64", ("tern",), (0,), "shared")
        assert sc.systems == ("tern wfi=trap",)
        assert bench.NOISE_RISCV64 in sc.images
    cells = []
    monkeypatch.setattr(bench.System, "available", lambda self: None)
    monkeypatch.setattr(bench, "run_scenario", lambda sc, sy, sh, plan, runs:
                        cells.append((sc.name, sy.name, sh)) or bench.Outcome())
    plan = bench.Plan(samples=1, prio_runs=1, shifts=(4, 0))
    bench.run_matrix(plan, scenarios=[bench.SCENARIO_BY_NAME[n] for n in RISCV64_SHARED],
                     workdir=Path("/tmp/tern-fake"), progress=None)
    assert sorted(cells) == sorted((n, "tern wfi=trap", 0) for n in RISCV64_SHARED)


def _riscv64_description(runs, tmp_path):
    doc = tomllib.loads(runs.seen["text"])
    image = tmp_path / "guest.img"
    image.write_bytes(b"\0" * 4096)
    checked = tomllib.loads(runs.seen["text"])
    for p in checked["partition"]:
        p["image"] = str(image)
    return doc, config.parse_system(checked, tmp_path, "riscv64.toml")


def test_riscv64_shared_lat_pool_guests_and_bound_in_cycles(tmp_path):
    lat = {"test": "sbi-timer-wfi", "freq_hz": 1_000_000_000, "avg": 2166.3, "min": 2107,
           "max": 2201, "warm_max": 2201, "p50": 2199, "p99": 2201, "p999": 2201, "samples": 5}
    log = ["[noise] noise: mode slices, name noise, gaps above 50 ticks, 0 kept, until time 1",
           "[rt] LAT-START {}", "[rt] LAT-DONE"]
    res, plan, rows = lat_rows("riscv64-shared-lat", lat, log, 0)
    bounds = {}
    for sched, runs, rec in rows:
        assert (rec["arch"], rec["scheduler"], rec["warm_max"]) == ("riscv64", sched, 2201)
        bounds[sched] = rec["bound_ticks"]
        doc, parsed = _riscv64_description(runs, tmp_path)
        assert doc["board"] == {"arch": "riscv64", "cpus": 2, "pci": []}
        assert doc["pool"][0]["cpus"] == [bench.TERN_SHARED_CORE]
        assert doc["pool"][0]["scheduler"] == sched
        assert [(p["name"], p["cpus"], p["pool"], p["irq"], p["wfi"]) for p in doc["partition"]] \
            == [("rt", [1], "shared", "trap", "trap"), ("noise", [1], "shared", "trap", "trap")]
        rt, noise = doc["partition"]
        assert rt["image"] == str(bench.LAT_RISCV64)
        assert "lat.tests=sbi-timer-wfi" in rt["bootargs"] and "lat.samples=5" in rt["bootargs"]
        assert "lat.delta_us=20" in rt["bootargs"]   # shift 0's budget
        # riscv64's noise has only the slices mode: spinning, with no gap to print.
        assert noise["image"] == str(bench.NOISE_RISCV64)
        assert "noise.mode=slices" in noise["bootargs"] and "noise.max_gaps=0" in noise["bootargs"]
        assert runs.seen["console"]("[rt] LAT-DONE") == "stop noise\r"
        assert [q.scheduler for q in parsed.pools] == [sched]
    # `cycle` at shift 0 is 1 GHz, an instruction a tick: RTDS 10 ms - 4 ms, ARINC 653 the
    # other 10 ms window, credit the 10 ms slice.
    assert bounds == {"rtds": 6_000_000, "arinc653": 10_000_000, "credit": 10_000_000}
    res.log = log[1:] + log[:1]
    outcome = bench.SCENARIO_BY_NAME["riscv64-shared-lat-rtds"].run(runs.system, 0, plan,
                                                                    FakeRuns(res))
    assert outcome.records == [] and "not busy" in outcome.error


def test_riscv64_shared_switch_description(tmp_path):
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(0,))
    for sched in bench.SHARED_SCHEDULERS:
        runs = FakeRuns(result([], ok=False))
        outcome = bench.SCENARIO_BY_NAME[f"riscv64-shared-switch-{sched}"].run(runs.system, 0,
                                                                              plan, runs)
        assert outcome.error == "failed" and outcome.records == []
        doc, parsed = _riscv64_description(runs, tmp_path)
        assert doc["board"]["arch"] == "riscv64" and doc["pool"][0]["scheduler"] == sched
        assert [p["name"] for p in doc["partition"]] == ["a", "b"]
        for p in doc["partition"]:
            assert p["image"] == str(bench.NOISE_RISCV64)
            assert f"noise.name={p['name']}" in p["bootargs"]
            assert f"noise.gap_ticks={bench.RISCV64_SWITCH_GAP_TICKS}" in p["bootargs"]
            assert f"noise.until_us={bench.RISCV64_SWITCH_UNTIL_US}" in p["bootargs"]
            if sched == "rtds":
                assert (p["budget_us"], p["period_us"]) == (5000, 10000)
        if sched == "arinc653":
            assert doc["pool"][0]["windows"] == [{"partition": "a", "duration_us": 10000},
                                                 {"partition": "b", "duration_us": 10000}]
        assert runs.seen["console"] is None      # both guests end by themselves


def test_riscv64_arinc653_row_in_time_ticks_with_the_hypervisors_window_starts():
    """The slices guests' and the hypervisor's lines in `time` ticks (10 MHz: 200000 a major
    frame); the record keeps ticks and says what a tick is in instructions at shift 0."""
    major = bench.SHARED_MAJOR_FRAME_US * bench.RISCV64_TIMEBASE_HZ // 1_000_000
    assert major == 200_000
    half = major // 2
    a_gaps = [(n * major + half - 15, (n + 1) * major + 15) for n in range(4)]
    b_gaps = [(n * major + major - 16, (n + 1) * major + half + 14) for n in range(3)]

    def lines(name, start, end, gaps):
        return slices_lines(name, start, end, gaps, gap_ticks=1)

    entries = [[1, half, 40], [0, major, 14], [1, major + half, 15], [0, 2 * major, 14],
               [1, 2 * major + half, 14], [0, 3 * major, 15], [1, 5 * major, 30]]
    log = lines("a", 15, 4 * major + half - 15, a_gaps) \
        + lines("b", half + 14, 3 * major + major - 16, b_gaps) \
        + tern_sched_lines(10000000, (7, 14, 40), (7, 1, 4), entries)
    _, rec = run_one("riscv64-shared-switch-arinc653", result(log), 0)
    assert (rec["arch"], rec["freq_hz"], rec["instructions_per_tick"]) == \
        ("riscv64", 10_000_000, 100)
    assert rec["switch"]["min"] == 29 and rec["switch"]["max"] == 31
    assert rec["window_start"] == {"n": 5, "min": 14, "max": 15, "jitter": 1}
    assert rec["window_jitter"] == {"a": 0, "b": 0}


def riscv64_records():
    return [
        {"system": "tern wfi=trap", "scenario": "riscv64-shared-lat-credit", "shift": 0,
         "scheduler": "credit", "avg": 2166.27, "warm_max": 2201, "p99": 2201, "max": 2201,
         "bound_ticks": 10_000_000, "bound": "credit: the slice", "test": "sbi-timer-wfi"},
        {"system": "tern wfi=trap", "scenario": "riscv64-shared-switch-credit", "shift": 0,
         "scheduler": "credit", "instructions_per_tick": 100,
         "switch": {"n": 90, "min": 15, "avg": 15.31, "max": 16},
         "interruption": {"n": 2, "max": 6}},
        {"system": "tern wfi=trap", "scenario": "riscv64-shared-switch-arinc653", "shift": 0,
         "scheduler": "arinc653", "instructions_per_tick": 100,
         "switch": {"n": 96, "min": 15, "avg": 15.0, "max": 16},
         "interruption": {"n": 0}, "window_jitter": {"a": 1, "b": None},
         "window_start": {"n": 96, "min": 14, "max": 15, "jitter": 1}},
    ]


def test_report_gives_riscv64_its_own_section_in_instructions():
    recs = riscv64_records()
    # Not in arm64's tables, nor in the generic latency tables.
    assert report.shared_tables(recs) == [] and report.shared_section({"records": recs}) == []
    assert report.latency_rows(recs, "riscv64-shared-lat-credit", 0) == []
    tables = report.riscv64_shared_tables(recs)
    assert len(tables) == 2
    (lat_title, _, lat_rows), (sw_title, _, sw_rows) = tables
    assert "QEMU virt riscv64" in lat_title and "shift 0" in lat_title
    assert lat_rows == [("credit", "tern wfi=trap", "2166.3", 2201, 2201, 2201, 10_000_000,
                         "credit: the slice", "-9997799")]
    assert "instructions" in sw_title and "to within 100" in sw_title
    # ticks of `time` x 100
    assert sw_rows[0][2:8] == (90, "1500", "1531.0", "1600", 2, "600")
    assert sw_rows[1][-1] == "hypervisor 100 (96 windows); guests a 100, b -"
    section = "\n".join(report.riscv64_shared_section({"records": recs}))
    assert section.startswith("## Shared cores on the RISC-V board (QEMU virt riscv64, shift 0)")
    assert "10 MHz" in section and "a tick is 100 instructions" in section
    assert "a jitter of 1 tick is a spread of 1 to 199 instructions" in section
    assert "| credit | tern wfi=trap | 2166.3 | 2201 |" in section
    terminal = report.terminal_report({"records": recs, "scenarios": [],
                                       "plan": {"shifts": [0]}, "errors": []})
    assert "on QEMU virt riscv64: switches" in terminal


def test_goal_rows_keep_the_boards_apart():
    arm = [{"system": "tern wfi=trap", "scenario": "shared-switch-credit", "scheduler": "credit",
            "shift": 4, "test": "switch",
            "switch": {"n": 3, "min": 1400, "avg": 1470.0, "max": 1500},
            "interruption": {"n": 0}}]
    riscv = riscv64_records()
    # riscv64's figures never stand in for arm64's goal rows.
    assert report._shared_goal_rows(riscv) == []
    arm_rows = report._shared_goal_rows(arm + riscv)
    assert arm_rows == report._shared_goal_rows(arm)
    assert not any("riscv64" in row for row in arm_rows)
    rows = report._riscv64_shared_goal_rows(arm + riscv)
    assert rows and all(row.startswith("| riscv64: ") for row in rows)
    joined = "\n".join(rows)
    assert "riscv64: context switch, credit pool: AVG, instructions (to within 100) | " \
        "<= 1/2 of Xen's (no Xen on riscv64) | 1531.0 | arm64 Tern 1470.0 (shift 4) |" in joined
    assert "riscv64: context switch, rtds pool" in joined and "| not run |" in joined
    assert "riscv64: ARINC 653 window switch: AVG, instructions (to within 100) | <= 1/3 of " \
        "Xen's (no Xen on riscv64) | 1500.0 | - |" in joined
    assert "window start: jitter across major frames, instructions (to within 100) | " \
        "exactly 0 | 100 | the hypervisor's entries |" in joined
    assert report._riscv64_shared_goal_rows(arm) == []
    section = report._goals_section(arm + riscv, None)
    assert "; the riscv64 rows QEMU virt riscv64, shift 0)" in section[0]


def test_riscv64_switch_row_says_a_guest_lost_its_lines_to_its_console_share():
    log = ['[b] noise-slices {"name":"b","start":10,"end":20,"gaps":0,"kept":0,"ran":10,'
           '"gap_ticks":1}', '[a] noise-gap {"name":"a","i":0,"from":12,"to":15}']
    res = result(log)
    res.stats = {"a": {"console_dropped": 1904}, "b": {"console_dropped": 0}}
    runs = FakeRuns(res)
    plan = bench.Plan(samples=5, prio_runs=1, shifts=(0,))
    outcome = bench.SCENARIO_BY_NAME["riscv64-shared-switch-rtds"].run(runs.system, 0, plan, runs)
    assert outcome.records == []
    assert outcome.error == "no complete noise-slices output from a (its console dropped 1904 bytes)"


def test_riscv64_switch_run_fits_each_guests_console_burst():
    """At shift 0 the guests print their gaps in almost no counter time: every line must fit
    the console's burst (hypervisor/include/tern/console.h), at RTDS's measured 2.6 gaps a
    period (about 64 bytes a line) with room to spare."""
    header = (REPO / "hypervisor" / "include" / "tern" / "console.h").read_text()
    burst = int(re.search(r"#define CONSOLE_BURST\s+(\d+)u", header).group(1))
    periods = bench.RISCV64_SWITCH_UNTIL_US / bench.SHARED_RTDS_PERIOD_US
    assert periods * 2.6 * 64 < 0.75 * burst
    # and long enough for as many turns as a measurement wants
    assert bench.RISCV64_SWITCH_UNTIL_US // bench.SHARED_WINDOW_US >= 50
