"""The noise guest's slices lines (results.parse_slices) and the shared-core checks
tests/system/test_shared_cores.py makes of them (tern.slices), on recorded and synthetic logs:
a right schedule passes, each kind of wrong one fails with its reason."""

import json

import pytest

from tern import slices
from tern.results import parse_slices

# Recorded: guests/build/arm64/noise.img on the bare board, icount shift 4,
# "noise.mode=slices noise.gap_ticks=1 noise.slices=3 noise.max_gaps=2" (a gap at every
# step: three seen, two kept), then riscv64's at shift 0 with the defaults (none).
RECORDED_ARM64 = """\
noise: mode slices, name noise, gaps above 1 ticks, 2 kept, 3 gaps
noise-gap {"name":"noise","i":0,"from":74104,"to":74116}
noise-gap {"name":"noise","i":1,"from":74116,"to":74134}
noise-slices {"name":"noise","start":74104,"end":74152,"gaps":3,"kept":2,"ran":18,"gap_ticks":1}
NOISE-DONE
"""
RECORDED_RISCV64 = """\
noise: mode slices, name noise, gaps above 50 ticks, 256 kept, until time 600000
noise-slices {"name":"noise","start":249304,"end":600000,"gaps":0,"kept":0,"ran":350696,"gap_ticks":50}
NOISE-DONE
"""


def test_recorded_bare_board_lines():
    arm = parse_slices(RECORDED_ARM64)["noise"]
    assert arm["gaps"] == [(74104, 74116), (74116, 74134)]
    assert (arm["count"], arm["kept"], arm["ran"], arm["gap_ticks"]) == (3, 2, 18, 1)
    assert arm["partition"] is None and arm["complete"]
    rv = parse_slices(RECORDED_RISCV64.splitlines())["noise"]
    assert rv["gaps"] == [] and rv["ran"] == rv["end"] - rv["start"] == 350696
    assert rv["complete"]
    # More gaps seen than kept is no schedule's record: the checks refuse to judge it.
    assert slices.incomplete({"noise": arm}, ["noise"]) == [
        "noise: its noise-gap lines do not add up to its noise-slices line (a line lost, or "
        "more gaps than it kept: 3 seen, 2 kept)"]
    assert slices.incomplete({"noise": rv}, ["noise"]) == []


def gap_line(name, i, a, b, prefix=True):
    text = "noise-gap " + json.dumps({"name": name, "i": i, "from": a, "to": b},
                                     separators=(",", ":"))
    return f"[{name}] {text}" if prefix else text


def summary_line(name, start, end, gaps, ran, kept=None, gap_ticks=50, prefix=True):
    record = {"name": name, "start": start, "end": end, "gaps": gaps,
              "kept": gaps if kept is None else kept, "ran": ran, "gap_ticks": gap_ticks}
    text = "noise-slices " + json.dumps(record, separators=(",", ":"))
    return f"[{name}] {text}" if prefix else text


def serial(intervals, prefix=True, gap_ticks=50):
    """The lines guests print for runs [(name, first read, last read)]: each guest's gaps
    between its runs, then its summary, in the order the guests finish."""
    by_name = {}
    for name, first, last in sorted(intervals, key=lambda r: r[1]):
        by_name.setdefault(name, []).append((first, last))
    lines = ["tern: partition x: 1 vCPU(s)", "[x] unrelated", "[a] noise-gap {broken"]
    for name, runs in sorted(by_name.items(), key=lambda kv: kv[1][-1][1]):
        gaps = [(runs[i][1], runs[i + 1][0]) for i in range(len(runs) - 1)]
        start, end = runs[0][0], runs[-1][1]
        ran = end - start - sum(b - a for a, b in gaps)
        lines += [gap_line(name, i, a, b, prefix) for i, (a, b) in enumerate(gaps)]
        lines.append(summary_line(name, start, end, len(gaps), ran, gap_ticks=gap_ticks,
                                  prefix=prefix))
    return lines


def test_parse_prefixed_lines_keyed_by_the_guests_name():
    lines = serial([("a", 100, 200), ("b", 210, 300), ("a", 310, 400)])
    records = parse_slices("\n".join(lines))
    assert sorted(records) == ["a", "b"]
    a = records["a"]
    assert a["gaps"] == [(200, 310)] and a["partition"] == "a"
    assert (a["start"], a["end"], a["count"], a["kept"], a["ran"]) == (100, 400, 1, 1, 190)
    assert a["complete"] and records["b"]["complete"] and records["b"]["gaps"] == []
    assert parse_slices(serial([("a", 1, 2)], prefix=False))["a"]["partition"] is None


@pytest.mark.parametrize("damage", ["drop-gap", "twice", "no-summary", "ran", "order"])
def test_a_damaged_record_is_not_complete(damage):
    lines = serial([("a", 100, 200), ("b", 210, 300), ("a", 310, 400), ("a", 500, 600)])
    gaps = [i for i, line in enumerate(lines) if line.startswith("[a] noise-gap {\"")]
    summary = next(i for i, line in enumerate(lines) if line.startswith("[a] noise-slices"))
    if damage == "drop-gap":
        del lines[gaps[0]]
    elif damage == "twice":
        lines.insert(gaps[1], lines[gaps[0]])
    elif damage == "no-summary":
        del lines[summary]
    elif damage == "ran":
        lines[summary] = lines[summary].replace('"ran":290', '"ran":291')
    else:
        lines[gaps[0]], lines[gaps[1]] = lines[gaps[1]], lines[gaps[0]]
    record = parse_slices(lines)["a"]
    assert not record["complete"]
    assert slices.incomplete(parse_slices(lines), ["a", "b"])
    assert parse_slices(serial([("a", 100, 200), ("a", 310, 400)]))["a"]["complete"]


# -- ARINC 653 ---------------------------------------------------------------------------

MAJOR = 20_000
SWITCH_MAX = 400


def arinc(frame, frames=6, epoch=7_000, switch_in=120, last_before=(5,), major=MAJOR):
    """Runs of an exact ARINC 653 core: each window's guest reads from switch_in after its
    boundary to last_before[n % len] before its end (a loop step's worth of jitter)."""
    out = []
    for n in range(frames):
        at = epoch + n * major
        late = last_before[n % len(last_before)]
        for name, duration in frame:
            if name is not None:
                out.append((name, at + switch_in, at + duration - late))
            at += duration
    return out


TWO = [("a", 10_000), ("b", 10_000)]
THREE_IDLE = [("a", 5_000), ("b", 5_000), ("c", 5_000)]


@pytest.mark.parametrize("frame", [TWO, THREE_IDLE], ids=["two", "three-and-idle"])
def test_arinc653_an_exact_schedule_holds(frame):
    records = parse_slices(serial(arinc(frame, last_before=(5, 9, 2))))
    problems, measured = slices.check_arinc653(records, frame, MAJOR, SWITCH_MAX)
    assert problems == []
    for name, _ in frame:
        assert len(measured[name]["runs"]) >= 4
        # the previous guest's last read to this one's first: 120 + 5, 9 or 2 ticks
        assert set(measured[name]["switch_in"]) <= {125, 129, 122}


def test_arinc653_one_guest_beside_a_window_it_does_not_see():
    # The hostile case: only rt measures; the neighbour's window is idle from its side.
    runs = [r for r in arinc(TWO) if r[0] == "a"]
    records = parse_slices(serial(runs))
    assert slices.check_arinc653(records, [("a", 10_000), (None, 10_000)], MAJOR,
                                 SWITCH_MAX)[0] == []
    # ... but not if the neighbour kept the core past its window.
    late = [(n, s + (500 if i == 3 else 0), e) for i, (n, s, e) in enumerate(runs)]
    problems, _ = slices.check_arinc653(parse_slices(serial(late)),
                                        [("a", 10_000), (None, 10_000)], MAJOR, SWITCH_MAX)
    assert any("jitter" in p for p in problems), problems
    assert any("ran 9375 ticks in one window" in p for p in problems), problems


def test_arinc653_one_tick_of_jitter_fails():
    runs = arinc(TWO)
    i = next(k for k, r in enumerate(runs) if r[0] == "b" and r[1] > 3 * MAJOR)
    runs[i] = ("b", runs[i][1] + 1, runs[i][2])
    problems, _ = slices.check_arinc653(parse_slices(serial(runs)), TWO, MAJOR, SWITCH_MAX)
    assert any("b: its window's first read" in p and "1 ticks off the frame" in p
               for p in problems), problems


def test_arinc653_jitter_within_a_stated_bound():
    # A neighbour's trap the hypervisor finishes before it switches: the window starts late
    # by at most `jitter`, and is that much shorter.
    runs = [r for r in arinc(TWO) if r[0] == "a"]
    i = 3
    runs[i] = ("a", runs[i][1] + 150, runs[i][2])
    frame = [("a", 10_000), (None, 10_000)]
    records = parse_slices(serial(runs))
    assert slices.check_arinc653(records, frame, MAJOR, SWITCH_MAX, jitter=150)[0] == []
    problems, _ = slices.check_arinc653(records, frame, MAJOR, SWITCH_MAX, jitter=149)
    assert any("150 ticks off the frame" in p for p in problems), problems


def test_arinc653_a_guest_running_into_the_next_window_fails():
    runs = arinc(TWO)
    i = next(k for k, r in enumerate(runs) if r[0] == "a" and r[1] > 2 * MAJOR)
    runs[i] = ("a", runs[i][1], runs[i][2] + 300)          # a still reads in b's window
    problems, _ = slices.check_arinc653(parse_slices(serial(runs)), TWO, MAJOR, SWITCH_MAX)
    assert any("overlaps b's" in p for p in problems), problems
    assert any("a: its window's last read" in p for p in problems), problems


def test_arinc653_a_window_cut_short_fails():
    runs = arinc(TWO)
    i = next(k for k, r in enumerate(runs) if r[0] == "b" and r[1] > 2 * MAJOR)
    runs[i] = ("b", runs[i][1], runs[i][2] - 2_000)        # b lost the end of its window
    problems, _ = slices.check_arinc653(parse_slices(serial(runs)), TWO, MAJOR, SWITCH_MAX)
    assert any(p.startswith("b: ran ") for p in problems), problems


def test_arinc653_the_idle_window_given_to_someone_fails():
    runs = arinc(THREE_IDLE)
    # c keeps the core through the idle window of one frame
    i = next(k for k, r in enumerate(runs) if r[0] == "c" and r[1] > 2 * MAJOR)
    runs[i] = ("c", runs[i][1], runs[i][2] + 4_000)
    problems, _ = slices.check_arinc653(parse_slices(serial(runs)), THREE_IDLE, MAJOR,
                                        SWITCH_MAX)
    assert any(p.startswith("c: ran ") for p in problems), problems


def test_arinc653_a_window_nobody_ran_fails():
    runs = arinc(TWO)
    i = next(k for k, r in enumerate(runs) if r[0] == "b" and r[1] > 2 * MAJOR)
    del runs[i]                                            # a's gap with nobody in it
    problems, _ = slices.check_arinc653(parse_slices(serial(runs)), TWO, MAJOR, SWITCH_MAX)
    assert any("a ran after a" in p and "b's window comes next" in p for p in problems), problems


def test_arinc653_windows_out_of_order_fail():
    swapped = [(n, s, e) for n, s, e in arinc([("a", 5_000), ("c", 5_000), ("b", 5_000)])]
    problems, _ = slices.check_arinc653(parse_slices(serial(swapped)), THREE_IDLE, MAJOR,
                                        SWITCH_MAX)
    assert any("window comes next" in p for p in problems), problems


def test_arinc653_too_few_frames_or_a_missing_guest():
    records = parse_slices(serial(arinc(TWO, frames=2)))
    problems, _ = slices.check_arinc653(records, TWO, MAJOR, SWITCH_MAX)
    assert any("whole windows measured" in p for p in problems), problems
    only_a = parse_slices(serial([r for r in arinc(TWO) if r[0] == "a"]))
    assert slices.check_arinc653(only_a, TWO, MAJOR, SWITCH_MAX)[0] == [
        "b: no noise-slices line"]


# -- RTDS ------------------------------------------------------------------------------

PERIOD = 10_000
SERVERS = {"a": (2_000, PERIOD), "b": (6_000, PERIOD)}


def edf(periods=8, anchor=3_000, switch=40, extra=None):
    """Both servers queued together: a (earlier deadline by its place) runs its budget, b its
    own, then the core idles; extra {(name, n): ticks} lengthens one run."""
    extra = extra or {}
    out = []
    for n in range(periods):
        at = anchor + n * PERIOD
        a_end = at + 2_000 + extra.get(("a", n), 0)
        out.append(("a", at + switch, a_end))
        out.append(("b", a_end + switch, at + 2_000 + 6_000 + extra.get(("b", n), 0)))
    return out


def test_rtds_budgets_served_every_period_hold():
    problems, per_period = slices.check_rtds(parse_slices(serial(edf())), SERVERS, 100)
    assert problems == []
    assert per_period["a"] and all(1_900 <= x <= 2_001 for x in per_period["a"])
    assert all(5_900 <= x <= 6_001 for x in per_period["b"])


def test_rtds_a_server_overrunning_its_budget_fails():
    runs = edf(extra={("b", 4): 1_500})                    # b takes the idle time once
    problems, _ = slices.check_rtds(parse_slices(serial(runs)), SERVERS, 100)
    assert any(p.startswith("b: no period anchor") for p in problems), problems


def test_rtds_a_server_short_of_its_budget_fails():
    runs = [r for r in edf() if not (r[0] == "a" and 5 * PERIOD < r[1] < 6 * PERIOD)]
    problems, _ = slices.check_rtds(parse_slices(serial(runs)), SERVERS, 100)
    assert any(p.startswith("a: no period anchor") for p in problems), problems


# -- credit ----------------------------------------------------------------------------

def weighted(shares, rounds=40, unit=100, switch=10):
    """Round robin, each guest running shares[name] units a round."""
    out, at = [], 1_000
    for _ in range(rounds):
        for name, share in shares.items():
            out.append((name, at + switch, at + share * unit))
            at += share * unit
    return out


WEIGHTS = {"a": 256, "b": 512, "c": 1024}


def test_credit_shares_as_the_weights_hold():
    records = parse_slices(serial(weighted({"a": 1, "b": 2, "c": 4})))
    problems, got = slices.check_credit(records, WEIGHTS, min_ticks=20_000)
    assert problems == []
    assert got["c"] == pytest.approx(4 / 7, rel=0.05)


def test_credit_shares_off_the_weights_fail():
    records = parse_slices(serial(weighted({"a": 1, "b": 1, "c": 1}, rounds=80)))
    problems, _ = slices.check_credit(records, WEIGHTS, min_ticks=20_000)
    assert [p.split(":")[0] for p in problems] == ["a", "b", "c"]
    problems, _ = slices.check_credit(parse_slices(serial(weighted({"a": 1, "b": 2, "c": 4}))),
                                      WEIGHTS, min_ticks=10 ** 9)
    assert any("less than" in p for p in problems), problems


def test_credit_cap():
    def capped_run(capped_units):
        return parse_slices(serial(weighted({"capped": capped_units, "free": 4 - capped_units},
                                            switch=5)))
    assert slices.check_cap(capped_run(1), "capped", 25, ["free"], 10_000)[0] == []
    problems, fraction = slices.check_cap(capped_run(2), "capped", 25, ["free"], 10_000)
    assert any(p.startswith("capped: ran 0.48") for p in problems), (problems, fraction)


# -- pause -----------------------------------------------------------------------------

def paused_core(pause=(20_000, 60_000), b_end=50_000, b_gaps_while_paused=False):
    """a and b alternate 1000-tick slices until a is paused; then b alone (or, wrongly, b
    still switched out half the time) to its end; a reads once more after its pause."""
    out, at = [], 1_000
    while at + 2_000 <= pause[0]:
        out += [("a", at + 10, at + 1_000), ("b", at + 1_010, at + 2_000)]
        at += 2_000
    if b_gaps_while_paused:
        while at + 2_000 <= b_end:
            out.append(("b", at + 1_010, at + 2_000))
            at += 2_000
    else:
        out.append(("b", at + 10, b_end))
    out.append(("a", pause[1], pause[1]))
    return out


def test_pause_gives_the_other_the_core():
    problems, seen = slices.check_paused(parse_slices(serial(paused_core())), "a", "b",
                                         min_alone=20_000)
    assert problems == [] and seen["pause"] == (18_000, 60_000)
    assert seen["rate"] > 0.99 and 0.45 < seen["rate_before"] < 0.55


def test_pause_that_left_the_other_sharing_fails():
    problems, _ = slices.check_paused(parse_slices(serial(paused_core(b_gaps_while_paused=True))),
                                      "a", "b", min_alone=20_000)
    assert any(p.startswith("b: ran 0.51") for p in problems), problems


def test_pause_after_the_others_end_fails():
    problems, _ = slices.check_paused(
        parse_slices(serial(paused_core(pause=(48_000, 60_000)))), "a", "b", min_alone=20_000)
    assert any("less than 20000" in p for p in problems), problems
