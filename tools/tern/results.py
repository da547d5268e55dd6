"""Reading the board console (docs/design.md, "Console protocol") and tables.

`parse_log(lines)` sorts a serial log into partition output, LAT-JSON and
PROBE-JSON records, tern-stats counters, faults and panics.
"""

import json
import re
from dataclasses import dataclass, field

LAT_TAG = "LAT-JSON"
PROBE_TAG = "PROBE-JSON"
STATS_TAG = "tern-stats"
SCHED_TAG = "tern-sched"
SCHED_WINDOWS_TAG = "tern-sched-windows"
PANIC_PREFIX = "tern: PANIC"
FAULT_PREFIX = "tern: fault "
# A fault handed to the guest (on_fault = "inject"): the partition runs on.
INJECTED_PREFIX = "tern: injected fault "
ERROR_PREFIX = "tern: error:"

PARTITION_LINE = re.compile(r"\[([a-z0-9_-]{1,15})\] ?(.*)")
STATE_LINE = re.compile(r"tern: partition ([a-z0-9_-]{1,15}) (off|stopped)\s*")
NUMBER = re.compile(r"(0x[0-9a-fA-F]+|\d+)")
SIGNED_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")

LATENCY_COLUMNS = ("avg", "min", "max", "warm_max", "p99")


@dataclass
class PartitionOutput:
    """What one partition printed, and how it ended."""

    lines: list = field(default_factory=list)   # text after "[name] "
    lat: list = field(default_factory=list)     # LAT-JSON records
    probe: list = field(default_factory=list)   # PROBE-JSON records
    state: str = None                           # "off", "stopped" or None (never said)


@dataclass
class ParsedLog:
    partitions: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)   # partition name -> tern-stats record
    faults: list = field(default_factory=list)
    injected: list = field(default_factory=list)  # "tern: injected fault" lines, parsed
    panic: str = None
    errors: list = field(default_factory=list)  # "tern: error: ..." lines from the hypervisor
    lat: list = field(default_factory=list)     # records on lines without a [name] prefix
    probe: list = field(default_factory=list)


def json_record(text, tag):
    """The JSON object after `tag` on a line, or None if it is not such a line."""
    if not text.startswith(tag + " "):
        return None
    try:
        record = json.loads(text[len(tag) + 1:])
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def parse_fault(line, prefix=FAULT_PREFIX):
    """`tern: fault partition=p vcpu=0 ipa=0x.. ...` as a dict; numbers become ints.

    The whole line is kept under "line" for messages.
    """
    out = {"line": line}
    for token in line[len(prefix):].split():
        key, sep, value = token.partition("=")
        if not sep:
            continue
        out[key] = int(value, 0) if NUMBER.fullmatch(value) else value
    return out


def parse_log(lines, names=()):
    """Sort console lines; `names` pre-creates entries for partitions that stay silent."""
    log = ParsedLog(partitions={n: PartitionOutput() for n in names})
    unfinished = {}     # partition name -> start of a record split across lines
    for line in lines:
        m = PARTITION_LINE.fullmatch(line)
        if m:
            name, text = m.groups()
            out = log.partitions.setdefault(name, PartitionOutput())
            out.lines.append(text)
            _partition_record(out, name, text, unfinished)
            continue
        if line.startswith(PANIC_PREFIX):
            if log.panic is None:
                log.panic = line
            continue
        if line.startswith(FAULT_PREFIX):
            log.faults.append(parse_fault(line))
            continue
        if line.startswith(INJECTED_PREFIX):
            log.injected.append(parse_fault(line, INJECTED_PREFIX))
            continue
        if line.startswith(ERROR_PREFIX):
            log.errors.append(line)
            continue
        m = STATE_LINE.fullmatch(line)
        if m:
            log.partitions.setdefault(m.group(1), PartitionOutput()).state = m.group(2)
            continue
        stats = json_record(line, STATS_TAG)
        if stats is not None:
            log.stats[str(stats.get("partition", len(log.stats)))] = stats
            continue
        _add_records(log.lat, log.probe, line)
    return log


# The hypervisor forwards a partition's output in bounded chunks, so one long
# record line can arrive as several "[name] ..." lines; join them back.
MAX_RECORD_CHARS = 64 * 1024


def _partition_record(out, name, text, unfinished):
    if name in unfinished and not _is_record_start(text):
        joined = unfinished.pop(name) + text
        if _add_records(out.lat, out.probe, joined):
            return
        if len(joined) < MAX_RECORD_CHARS:
            unfinished[name] = joined
        return
    unfinished.pop(name, None)
    if not _add_records(out.lat, out.probe, text) and _is_record_start(text):
        unfinished[name] = text


def _is_record_start(text):
    return text.startswith((LAT_TAG + " {", PROBE_TAG + " {"))


def _add_records(lat, probe, text):
    """Append the record on `text` to lat or probe; False if there is none."""
    record = json_record(text, LAT_TAG)
    if record is not None:
        lat.append(record)
        return True
    record = json_record(text, PROBE_TAG)
    if record is not None:
        probe.append(record)
        return True
    return False


def format_table(headers, rows):
    """Plain-text table; columns whose cells are all numbers are right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, v in enumerate(row):
            widths[i] = max(widths[i], len(v))
    numeric = [all(_is_number(row[i]) for row in rows) and rows != [] for i in range(len(headers))]

    def line(values):
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in cells]
    return "\n".join(out)


def _is_number(value):
    if isinstance(value, str):
        return SIGNED_NUMBER.fullmatch(value) is not None
    return value is None or isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def latency_value(record, key):
    """One latency figure from a LAT-JSON record (None if the guest did not give it)."""
    value = record.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def latency_table(runs, tests=None):
    """Rows comparing LAT-JSON records of several runs of the same guest.

    runs: {system label: [LAT-JSON records]}, the first label being the baseline
    ("+ over native" is each row's average minus the baseline's for that test).
    """
    labels = list(runs)
    by_run = {label: {r.get("test"): r for r in records} for label, records in runs.items()}
    if tests is None:
        tests = []
        for records in runs.values():
            for r in records:
                if r.get("test") not in tests:
                    tests.append(r.get("test"))
    baseline = by_run[labels[0]] if labels else {}
    headers = ("TEST", "SYSTEM", "AVG", "MIN", "MAX", "WARM_MAX", "p99", "+ over native")
    rows = []
    for test in tests:
        base_avg = latency_value(baseline.get(test, {}), "avg")
        for label in labels:
            record = by_run[label].get(test)
            if record is None:
                rows.append((test, label) + (None,) * 6)
                continue
            values = tuple(latency_value(record, k) for k in LATENCY_COLUMNS)
            extra = None
            if label != labels[0] and base_avg is not None and values[0] is not None:
                extra = values[0] - base_avg
                extra = f"{extra:+.1f}" if isinstance(extra, float) else f"{extra:+d}"
            rows.append((test, label) + values + (extra,))
    return headers, rows


# The noise guest's slices mode (guests/README.md, "noise.mode=slices"): the times a vCPU did
# not run, as gaps in the board's physical counter.
SLICES_GAP_TAG = "noise-gap"
SLICES_TAG = "noise-slices"
SLICES_FIELDS = ("start", "end", "gaps", "kept", "ran", "gap_ticks")


def parse_slices(serial):
    """{name: record} from the noise-gap and noise-slices lines of a serial log (text or
    lines; lines prefixed with a partition's `[name] ` or not), name being the guest's own
    (noise.name).

    A record: "gaps" [(from, to), ...] in the guest's order, "count" (the gaps it saw, kept or
    not), "start", "end", "kept", "ran", "gap_ticks" (None until its noise-slices line),
    "partition" (the prefix its lines came with, None on the bare board) and "complete": its
    summary arrived and every kept gap with it, in order, none twice, and its ran adds up (a
    console that dropped a line, or a guest that has not finished, leaves it False)."""
    lines = serial.splitlines() if isinstance(serial, str) else serial
    out = {}
    for line in lines:
        partition = None
        m = PARTITION_LINE.fullmatch(line)
        if m:
            partition, line = m.groups()
        gap = json_record(line, SLICES_GAP_TAG)
        summary = json_record(line, SLICES_TAG)
        record = gap if gap is not None else summary
        if record is None or not isinstance(record.get("name"), str):
            continue
        entry = out.setdefault(record["name"], {
            "gaps": [], "indices": [], "count": None, "partition": partition,
            **{k: None for k in SLICES_FIELDS if k != "gaps"}})
        if gap is not None:
            if all(_whole(gap.get(k)) for k in ("i", "from", "to")):
                entry["gaps"].append((gap["from"], gap["to"]))
                entry["indices"].append(gap["i"])
            continue
        for key in SLICES_FIELDS:
            value = summary.get(key)
            entry["count" if key == "gaps" else key] = value if _whole(value) else None
    for entry in out.values():
        indices = entry.pop("indices")
        entry["complete"] = (entry["kept"] is not None and entry["end"] is not None
                             and entry["start"] is not None and entry["ran"] is not None
                             and indices == list(range(entry["kept"]))
                             and entry["ran"] == entry["end"] - entry["start"]
                             - sum(to - fr for fr, to in entry["gaps"]))
    return out


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_sched(serial):
    """{core: record} from a serial log's `tern-sched` lines (text or lines), the last per core
    (`stats` prints them as the board goes on, power-off once more).  A record: "cpu",
    "scheduler", "freq_hz", and "window_entry" and "event_arrival", each {"count", "min",
    "max"} in counter ticks: how late each ARINC 653 window's first guest entry was after its
    boundary, and each scheduling event's interrupt after its deadline; "entries": the first
    window entries one by one from the power-off's `tern-sched-windows` lines, in order,
    [(window index, boundary tick, ticks late)]."""
    lines = serial.splitlines() if isinstance(serial, str) else serial
    out, entries = {}, {}
    for line in lines:
        record = json_record(line, SCHED_TAG)
        if record is not None and _whole(record.get("cpu")):
            out[record["cpu"]] = record
            continue
        record = json_record(line, SCHED_WINDOWS_TAG)
        if record is None or not _whole(record.get("cpu")) or not _whole(record.get("from")) \
                or not isinstance(record.get("entries"), list):
            continue
        chunks = entries.setdefault(record["cpu"], {})
        chunks[record["from"]] = [tuple(e) for e in record["entries"]
                                  if isinstance(e, list) and len(e) == 3
                                  and all(_whole(x) for x in e)]
    for cpu, record in out.items():
        chunks = entries.get(cpu, {})
        record["entries"] = [e for start in sorted(chunks) for e in chunks[start]]
    return out


def window_lateness(record, lo, hi):
    """{window index: [ticks late, ...]} of a tern-sched record's entries whose boundary is in
    [lo, hi] (counter ticks), in order."""
    out = {}
    for window, boundary, late in record.get("entries", []):
        if lo <= boundary <= hi:
            out.setdefault(window, []).append(late)
    return out
