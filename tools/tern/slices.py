"""What the noise guest's slices mode says of a shared core (issue 29): the checks of
tests/system/test_shared_cores.py, kept here so that tests/tool can hold them to synthetic
logs (a right schedule passes, a wrong one fails with a reason).

Input: parse_slices' records (results.py), one per guest on the core, in ticks of the board's
physical counter.  A guest's *runs* are the stretches between its gaps, [first read after,
last read before]; the first starts at its measurement's start and the last ends at its end,
so only the *interior* runs (a gap on both sides) begin and end at a switch.  Each check
returns a list of problems (empty: it holds), each a sentence naming the guest and ticks.
"""

from collections import namedtuple

# after_gap / before_gap: the run starts / ends at a switch (a gap of the guest's own), not at
# its measurement's (or the common interval's) start or end.
Run = namedtuple("Run", "name start end after_gap before_gap")


def runs(record):
    """[(start, end, after_gap, before_gap)] of one record, in order."""
    points = [record["start"]] + [x for gap in record["gaps"] for x in gap] + [record["end"]]
    last = len(record["gaps"])
    return [(points[2 * i], points[2 * i + 1], i > 0, i < last) for i in range(last + 1)]


def common_interval(records):
    """(lo, hi): the time every guest was measuring."""
    return (max(r["start"] for r in records.values()), min(r["end"] for r in records.values()))


def core_runs(records):
    """Every guest's runs inside the common interval, clipped to it, in time order (a clipped
    end is no switch)."""
    lo, hi = common_interval(records)
    out = []
    for name, record in records.items():
        for start, end, after_gap, before_gap in runs(record):
            if end < lo or start > hi:
                continue
            out.append(Run(name, max(start, lo), min(end, hi), after_gap and start >= lo,
                           before_gap and end <= hi))
    return sorted(out, key=lambda r: (r.start, r.end))


def ran_between(record, lo, hi):
    """Ticks the guest ran in [lo, hi)."""
    return sum(max(0, min(end, hi) - max(start, lo)) for start, end, _, _ in runs(record))


def incomplete(records, names):
    """Problems of the records themselves: a guest missing, or its lines not all there."""
    problems = [f"{n}: no noise-slices line" for n in names if n not in records]
    problems += [f"{n}: its noise-gap lines do not add up to its noise-slices line (a line "
                 f"lost, or more gaps than it kept: {records[n]['count']} seen, "
                 f"{records[n]['kept']} kept)"
                 for n in names if n in records and (not records[n]["complete"]
                                                     or records[n]["count"] != records[n]["kept"])]
    if not problems and common_interval({n: records[n] for n in names})[0] >= \
            common_interval({n: records[n] for n in names})[1]:
        problems.append("the guests' measurements do not overlap")
    return problems


def overlapping(ordered):
    """Problems: two guests' runs that overlap (one core runs one vCPU at a time)."""
    return [f"{a.name}'s run [{a.start}, {a.end}] overlaps {b.name}'s [{b.start}, {b.end}]"
            for a, b in zip(ordered, ordered[1:]) if b.start <= a.end]


def _centred(value, modulus):
    """value mod modulus as the nearest distance to 0: in (-modulus/2, modulus/2]."""
    value %= modulus
    return value - modulus if value > modulus // 2 else value


def check_arinc653(records, windows, major, switch_max, jitter=0):
    """ARINC 653 on one core.  windows: [(partition, ticks)] in the frame's order, partition
    None for an idle window (what is left after the last is idle too); each guest one window.
    switch_max: the most ticks a switch may take (the previous guest's last read to the next
    one's first).  Holds when: runs never overlap; every interior run's first read is the same
    offset after its window's boundary (the starts are exactly congruent modulo the major frame:
    no jitter at all), its last read within one loop step (gap_ticks) of the same place; a run
    is its window less at most switch_max; and each run follows the previous one in the
    frame's order, after exactly the idle windows between them plus at most switch_max.
    jitter: ticks a first read may come late beyond that (a neighbour's trap the hypervisor
    finishes before it switches), taken off the run too; 0: none at all.
    Returns (problems, measured): measured[name] = {"runs", "switch_in": [ticks]}."""
    names = [w for w, _ in windows if w is not None]
    problems = incomplete(records, names)
    if problems:
        return problems, {}
    if len(set(names)) != len(names):
        raise ValueError("one window per guest")
    idle_tail = major - sum(ticks for _, ticks in windows)
    if idle_tail < 0:
        raise ValueError("the windows are longer than the major frame")
    frame = list(windows) + ([(None, idle_tail)] if idle_tail else [])
    duration, position = {}, {}
    for i, (name, ticks) in enumerate(frame):
        if name is not None:
            duration[name], position[name] = ticks, i
    ordered = core_runs({n: records[n] for n in names})
    problems += overlapping(ordered)
    measured = {}
    for name in names:
        mine = [r for r in ordered if r.name == name and r.after_gap and r.before_gap]
        measured[name] = {"runs": [(r.start, r.end) for r in mine], "switch_in": []}
        if len(mine) < 2:
            problems.append(f"{name}: {len(mine)} whole windows measured (at least 2 needed)")
            continue
        first = mine[0]
        earliest = min(mine, key=lambda r: _centred(r.start - first.start, major))
        for r in mine:
            if _centred(r.start - earliest.start, major) > jitter:
                problems.append(f"{name}: its window's first read at {r.start} is "
                                f"{_centred(r.start - earliest.start, major)} ticks off the "
                                f"frame from the one at {earliest.start} (jitter; at most "
                                f"{jitter})")
            if abs(_centred(r.end - first.end, major)) > records[name]["gap_ticks"]:
                problems.append(f"{name}: its window's last read at {r.end} is "
                                f"{_centred(r.end - first.end, major)} ticks off the frame "
                                f"from the one at {first.end}")
        for r in mine:
            length = r.end - r.start
            if not duration[name] - switch_max - jitter <= length <= duration[name]:
                problems.append(f"{name}: ran {length} ticks in one window [{r.start}, {r.end}] "
                                f"(its window: {duration[name]}, switches at most {switch_max}"
                                f", jitter at most {jitter})")
    for prev, nxt in zip(ordered, ordered[1:]):
        if not (prev.before_gap and nxt.after_gap):
            continue
        # Windows passed from the end of prev's to the start of nxt's, in frame order.
        i = (position[prev.name] + 1) % len(frame)
        idle = 0
        while frame[i][0] is None:
            idle += frame[i][1]
            i = (i + 1) % len(frame)
        if frame[i][0] != nxt.name:
            problems.append(f"{nxt.name} ran after {prev.name} at {nxt.start}: {frame[i][0]}'s "
                            f"window comes next")
            continue
        switch = nxt.start - prev.end - idle
        measured[nxt.name]["switch_in"].append(switch)
        if not 0 <= switch <= switch_max + jitter:
            problems.append(f"{prev.name}'s last read {prev.end} to {nxt.name}'s first "
                            f"{nxt.start}: {nxt.start - prev.end} ticks, the idle windows "
                            f"between are {idle}, a switch at most {switch_max} and jitter "
                            f"{jitter}")
    return problems, measured


def per_period(record, anchor, period, lo, hi):
    """Ticks run in each whole period [anchor + n * period, ...) inside [lo, hi]."""
    first = anchor + -(-(lo - anchor) // period) * period
    out = []
    while first + period <= hi:
        out.append(ran_between(record, first, first + period))
        first += period
    return out


def check_rtds(records, servers, switch_max, tick=1, min_periods=3):
    """RTDS on one core: servers {name: (budget, period)} in ticks.  Each guest runs, in every
    whole period of its server inside the common interval, at least its budget less
    switch_max and at most its budget plus one tick (the scheduler's event, rounded to the
    counter).  A server's periods are anchored where its vCPU was queued, which the guest
    cannot see: a period boundary is a refill, where the scheduler switches, so the anchor
    tried is each interior run's first read on the core; one must fit every period.
    Returns (problems, measured): measured[name] = the per-period ticks at the anchor that
    fitted, or at the first tried."""
    problems = incomplete(records, list(servers))
    if problems:
        return problems, {}
    mine = {n: records[n] for n in servers}
    lo, hi = common_interval(mine)
    ordered = core_runs(mine)
    problems += overlapping(ordered)
    anchors = [r.start for r in ordered if r.after_gap]
    measured = {}
    for name, (budget, period) in servers.items():
        fits = None
        tried = None
        for anchor in anchors:
            got = per_period(records[name], anchor, period, lo, hi)
            tried = tried or got
            if len(got) >= min_periods and all(budget - switch_max <= g <= budget + tick
                                               for g in got):
                fits = got
                break
        measured[name] = fits or tried or []
        if fits is None:
            problems.append(f"{name}: no period anchor gives it its budget of {budget} ticks "
                            f"(less at most {switch_max}, plus at most {tick}) in each of at "
                            f"least {min_periods} periods of {period}: per period {tried}")
    return problems, measured


def shares(records, names):
    """{name: fraction of the guests' run} over the common interval, and its length."""
    mine = {n: records[n] for n in names}
    lo, hi = common_interval(mine)
    ran = {n: ran_between(records[n], lo, hi) for n in names}
    total = sum(ran.values())
    return {n: (ran[n] / total if total else 0.0) for n in names}, hi - lo


def check_credit(records, weights, min_ticks, tolerance=0.10):
    """Credit on one core: over a common interval of at least min_ticks (10 accounting
    periods), each guest's share of what they ran together is within `tolerance` (relative)
    of its weight's share.  Returns (problems, measured shares)."""
    problems = incomplete(records, list(weights))
    if problems:
        return problems, {}
    problems += overlapping(core_runs({n: records[n] for n in weights}))
    got, length = shares(records, list(weights))
    if length < min_ticks:
        problems.append(f"measured together for {length} ticks, less than {min_ticks}")
    total = sum(weights.values())
    for name, weight in weights.items():
        want = weight / total
        if abs(got[name] / want - 1) > tolerance:
            problems.append(f"{name}: {got[name]:.3f} of the core, its weight {weight} asks "
                            f"{want:.3f} (within {tolerance:.0%})")
    return problems, got


def check_cap(records, capped, cap_percent, others, min_ticks, tolerance=0.10):
    """A credit cap: over the common interval, `capped` runs its cap's fraction of the core's
    time (within `tolerance` relative: it spins, so it would use more), and the `others`
    together take the rest but the switches (at least (1 - cap) less `tolerance`)."""
    names = [capped] + list(others)
    problems = incomplete(records, names)
    if problems:
        return problems, {}
    lo, hi = common_interval({n: records[n] for n in names})
    if hi - lo < min_ticks:
        problems.append(f"measured together for {hi - lo} ticks, less than {min_ticks}")
    fraction = {n: ran_between(records[n], lo, hi) / (hi - lo) for n in names}
    cap = cap_percent / 100
    if abs(fraction[capped] / cap - 1) > tolerance:
        problems.append(f"{capped}: ran {fraction[capped]:.3f} of the core with a cap of "
                        f"{cap_percent} % (within {tolerance:.0%})")
    rest = sum(fraction[n] for n in others)
    if rest < (1 - cap) * (1 - tolerance):
        problems.append(f"{', '.join(others)}: ran {rest:.3f} of the core beside a cap of "
                        f"{cap_percent} %")
    return problems, fraction


def longest_run(record):
    """(start, end) of the guest's longest run."""
    start, end, _, _ = max(runs(record), key=lambda r: r[1] - r[0])
    return start, end


def check_paused(records, paused, other, min_alone, alone_rate=0.95, shared_rate=0.75):
    """Pause on a shared core: `paused`'s longest gap is its pause.  While it lasts (from its
    start to its end or `other`'s end, at least min_alone ticks) `other` has the whole core:
    it runs at least alone_rate of that time (a scheduler's event may still take a few ticks),
    where before it, sharing, it ran at most shared_rate.  And `paused` measured before the
    pause and read the counter again after it, in the same measurement (the pause's gap ends
    at that read: it resumed where it was)."""
    problems = incomplete(records, [paused, other])
    if problems:
        return problems, {}
    gaps = records[paused]["gaps"]
    if not gaps:
        return [f"{paused}: no gap at all: it was never paused"], {}
    began, ended = max(gaps, key=lambda g: g[1] - g[0])
    start = records[other]["start"]
    stop = min(ended, records[other]["end"])
    measured = {"pause": (began, ended), "alone": stop - began}
    if began <= start or stop - began < min_alone:
        overlap = max(0, stop - max(began, start))
        problems.append(f"{paused}'s pause [{began}, {ended}] overlapped {other}'s measurement "
                        f"[{start}, {records[other]['end']}] for {overlap} ticks, less than "
                        f"{min_alone} (or {other} began within it)")
        return problems, measured
    measured["rate"] = ran_between(records[other], began, stop) / (stop - began)
    measured["rate_before"] = ran_between(records[other], start, began) / (began - start)
    if measured["rate"] < alone_rate:
        problems.append(f"{other}: ran {measured['rate']:.3f} of the core while {paused} was "
                        f"paused ({began} to {ended}), less than {alone_rate}")
    if measured["rate_before"] > shared_rate:
        problems.append(f"{other}: ran {measured['rate_before']:.3f} of the core before the "
                        f"pause, more than {shared_rate}: the core was not shared")
    if began == records[paused]["start"]:
        problems.append(f"{paused}: paused before it measured anything")
    return problems, measured
