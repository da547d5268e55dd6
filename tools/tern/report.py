"""Benchmark reports: the terminal table, plots and docs/benchmarks.md, all from results.json."""

import datetime
import re
import subprocess
from pathlib import Path

from . import layout
from . import results as results_fmt
from .bench import (BESIDE_SCENARIOS, NATIVE_PARTITION_DT, NATIVE_PARTITION_DT_NO_SEED,
                    SCENARIOS, SHARED_SCENARIOS, TRACE_NOTICE_US, TRAP_SAMPLES)
from . import bench
from .runner import REPO_ROOT

HYPERVISOR_ELF = REPO_ROOT / "hypervisor" / "build" / "arm64" / "tern.elf"
TIMER_TICK_NS = 16  # QEMU virt's 62.5 MHz generic timer

# Goals from the issues, in instructions over native (icount shift 4).
GOAL_TRAP_AND_INJECT = 50
GOAL_WFI_TRAPPED = 150
GOAL_BOOT_US = 1000
# The real-time partition beside a busy Linux: its WARM_MAX equals its WARM_MAX alone with
# direct delivery, and stays within this many instructions of it with trap-and-inject (the
# trap-and-inject goal: the bound on what the hypervisor may add to the path).
BESIDE_TRAP_BOUND = GOAL_TRAP_AND_INJECT
# Scenarios whose records get their own tables rather than the latency table.
VIRTIO_SCENARIOS = tuple(s.name for s in SCENARIOS if s.report == "virtio")
OWN_TABLES = BESIDE_SCENARIOS + ("cyclictest", "rt-path") + VIRTIO_SCENARIOS


def first_line(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def tool_versions():
    return {"qemu": first_line(["qemu-system-aarch64", "--version"]),
            "clang": first_line(["clang", "--version"])}


def disassemble(symbol, stop):
    """The hypervisor's instructions from `symbol` up to and including the first `stop`."""
    try:
        dump = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(HYPERVISOR_ELF)],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    body, inside = [], False
    for line in dump.splitlines():
        if line.endswith(f"<{symbol}>:"):
            inside = True
            continue
        match = re.match(r"\s*[0-9a-f]+:\s+(\S.*)", line) if inside else None
        if match:
            body.append(match.group(1).strip())
            if body[-1].split()[0] == stop:
                break
    return body


def interrupt_paths():
    fast = disassemble("guest_irq", "eret")
    wfx = disassemble("guest_wfx", "b")
    wake = wfx[wfx.index("wfi") + 1:] if "wfi" in wfx else []
    return {"fast_path": fast, "wfi_wake": wake}


def _num(value, digits=1):
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def trap_cells(record):
    """traps/interrupt and its causes (riscv64: bench.count_traps), "-" where not counted."""
    if "traps_per_interrupt" not in record:
        return ("-", "-")
    causes = record.get("traps_by_cause") or {}
    return (_num(record["traps_per_interrupt"], 2),
            ", ".join(f"{k} {_num(v, 2)}" for k, v in causes.items()) or "none")


def latency_rows(records, scenario, shift):
    """(test, system, AVG, MIN, MAX, WARM_MAX, p99, p99.9, extra) rows of one scenario, and
    the traps per interrupt and their causes for the scenarios that count them."""
    rows = []
    if scenario in SHARED_SCENARIOS:    # shared_section's, with the scheduler's bound
        return rows
    chosen = [r for r in records if r["scenario"] == scenario and r["shift"] == shift
              and "warm_max" in r and "alone" not in r]
    tests = list(dict.fromkeys(r["test"] for r in chosen))
    for r in sorted(chosen, key=lambda r: tests.index(r["test"])):
        extra = r.get("extra_avg")
        row = (r["test"], r["system"], _num(r["avg"]), r["min"], r["max"], r["warm_max"],
               r["p99"], r.get("p999", "-"), "-" if extra is None else f"{extra:+.1f}")
        rows.append(row + trap_cells(r) if scenario in TRAP_SCENARIOS else row)
    return rows


HEADERS = ("TEST", "SYSTEM", "AVG", "MIN", "MAX", "WARM_MAX", "p99", "p99.9", "+AVG over native")
# Scenarios whose tables also say the hypervisor's entries per interrupt, by cause.
TRAP_SCENARIOS = ("riscv64",)
TRAP_HEADERS = ("traps/interrupt", "by cause")


def latency_headers(scenario):
    return HEADERS + TRAP_HEADERS if scenario in TRAP_SCENARIOS else HEADERS


def markdown_rule(headers):
    """A Markdown table's rule: the first two columns and a trailing "by cause" left-aligned."""
    cells = ["---" if i < 2 or h == "by cause" else "---:" for i, h in enumerate(headers)]
    return "|" + "|".join(cells) + "|"

BESIDE_HEADERS = ("TEST", "SYSTEM", "WARM_MAX alone", "WARM_MAX beside", "difference",
                  "AVG alone", "AVG beside", "p50 beside", "p99 beside", "bound", "met")


def beside_bound(record):
    """The most WARM_MAX beside the neighbours may exceed WARM_MAX alone."""
    return 0 if record.get("irq") == "direct" else BESIDE_TRAP_BOUND


def beside_records(records, scenario):
    if scenario not in BESIDE_SCENARIOS:
        return []
    chosen = [r for r in records if r["scenario"] == scenario and "alone" in r]
    tests = list(dict.fromkeys(r["test"] for r in chosen))
    return sorted(chosen, key=lambda r: tests.index(r["test"]))


def beside_rows(records, scenario):
    """One row per (test, system) of a "beside" scenario: alone, beside, and the bound."""
    rows = []
    for r in beside_records(records, scenario):
        bound = beside_bound(r)
        diff = r["extra_warm_max_over_alone"]
        rows.append((r["test"], r["system"], r["alone"]["warm_max"], r["warm_max"], f"{diff:+d}",
                     _num(r["alone"]["avg"]), _num(r["avg"]), r["p50"], r["p99"],
                     "= alone" if bound == 0 else f"<= alone +{bound}",
                     "yes" if diff <= bound else "no"))
    return rows


PATH_HEADERS = ("TEST", "SYSTEM", "hypervisor alone", "hypervisor beside", "vector alone",
                "vector beside", "exceptions alone", "exceptions beside", "difference", "bound",
                "met")


def path_records(records):
    return [r for r in records if r["scenario"] == "rt-path" and "alone" in r]


def path_difference(r):
    """Instructions on rt's core per interrupt (worst), beside Linux minus alone."""
    return r["extra_hyp_max_over_alone"] + r["extra_vector_max_over_alone"]


def path_met(r):
    return path_difference(r) <= beside_bound(r) and r["extra_exceptions_over_alone"] == 0


def _census(summary):
    return ", ".join(f"{k} {v}" for k, v in summary["exceptions"].items()) or "none"


def _span(summary, key):
    lo, hi = summary[f"{key}_min"], summary[f"{key}_max"]
    return str(lo) if lo == hi else f"{lo}-{hi}"


def path_rows(records):
    """One row per (test, system) of rt-path: rt's core per interrupt, alone and beside Linux."""
    rows = []
    for r in sorted(path_records(records), key=lambda r: (TIMER_ORDER.index(r["test"]),
                                                           r["system"])):
        a, b = r["alone"], r["beside"]
        bound = beside_bound(r)
        rows.append((r["test"], r["system"], _span(a, "hyp"), _span(b, "hyp"), _span(a, "vector"),
                     _span(b, "vector"), _census(a), _census(b), f"{path_difference(r):+d}",
                     "= alone" if bound == 0 else f"<= alone +{bound}",
                     "yes" if path_met(r) else "no"))
    return rows


TIMER_ORDER = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy")

CYCLICTEST_HEADERS = ("SYSTEM", "MIN", "AVG", "MAX", "p50", "p99", "samples",
                      "AVG - native", "AVG - native (partition's DT)", "AVG / native (partition's DT)")


def cyclictest_records(records):
    return [r for r in records if r["scenario"] == "cyclictest" and "avg" in r]


def cyclictest_rows(records):
    """cyclictest's statistics per system, with differences from the native runs of the bench."""
    chosen = cyclictest_records(records)
    native = next((r for r in chosen if r["system"] == "native"), None)
    same_dt = next((r for r in chosen if r["system"] == NATIVE_PARTITION_DT), None)
    rows = []
    for r in chosen:
        rows.append((r["system"], r["min"], r["avg"], r["max"], _num(r.get("p50")),
                     _num(r.get("p99")) if r.get("p99") is not None else "overflow",
                     r["samples"],
                     "-" if native is None or r is native else f"{r['avg'] - native['avg']:+d}",
                     "-" if same_dt is None or r is same_dt else f"{r['avg'] - same_dt['avg']:+d}",
                     "-" if same_dt is None or r is same_dt or not same_dt["avg"]
                     else f"{r['avg'] / same_dt['avg']:.2f}"))
    return rows


def cyclictest_buckets(records, max_rows=12):
    """Histogram rows (range, count per system) over common buckets of a round width."""
    chosen = cyclictest_records(records)
    if not chosen:
        return [], []
    lo = min(r["min"] for r in chosen)
    hi = max(r["max"] for r in chosen)
    width = next((w for w in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)
                  if (hi - lo) // w < max_rows), 10000)
    start = lo // width * width
    count = (hi - start) // width + 1
    rows = []
    for i in range(count):
        a, b = start + i * width, start + (i + 1) * width - 1
        cells = [sum(c for us, c in r["hist_us"] if a <= us <= b) for r in chosen]
        if any(cells):
            rows.append((f"{a}-{b}", *cells))
    if any(r.get("overflows") for r in chosen):
        rows.append(("over 10000 (overflows)", *[r.get("overflows", 0) for r in chosen]))
    return ["us (emulated)"] + [r["system"] for r in chosen], rows


def terminal_report(data):
    lines = []
    for scenario in data["scenarios"]:
        for shift in data["plan"]["shifts"]:
            rows = latency_rows(data["records"], scenario["name"], shift)
            if not rows:
                continue
            lines.append(f"\n{scenario['title']} - icount shift {shift}, ticks")
            lines.append(results_fmt.format_table(latency_headers(scenario["name"]), rows))
        rows = beside_rows(data["records"], scenario["name"])
        if rows:
            lines.append(f"\n{scenario['title']} - icount shift 4, ticks")
            lines.append(results_fmt.format_table(BESIDE_HEADERS, rows))
    rows = path_rows(data["records"])
    if rows:
        lines.append("\nrt's core per interrupt, alone and beside busy Linux (execution trace), "
                     "instructions")
        lines.append(results_fmt.format_table(PATH_HEADERS, rows))
    rows = cyclictest_rows(data["records"])
    if rows:
        lines.append("\ncyclictest inside Linux - icount shift 4, emulated (icount) us")
        lines.append(results_fmt.format_table(CYCLICTEST_HEADERS, rows))
    lines += virtio_terminal(data["records"])
    for title, headers, rows in shared_tables(data["records"]) + \
            riscv64_shared_tables(data["records"]):
        lines.append(f"\n{title}")
        lines.append(results_fmt.format_table(headers, rows))
    rows = switch_trace_rows(data["records"])
    if rows:
        lines.append("\nARINC 653 window switch by execution trace: hypervisor instructions per "
                     "switch (Tern icount shift 4, Xen no icount)")
        lines.append(results_fmt.format_table(SWITCH_TRACE_HEADERS, rows))
    prio = [r for r in data["records"] if r["scenario"] == "prio"]
    if prio:
        lines.append("\npriority order: runs served in priority order")
        lines += [f"  {r['system']:<16} {r['in_order']}/{r['runs']}" for r in prio]
    boots = [r for r in data["records"] if r["scenario"] == "boot"]
    if boots:
        lines.append("\nboot: board reset to the guest's first instruction")
        lines += [f"  {r['system']:<32} {r['first_instruction']:>10} ticks = "
                  f"{r['first_instruction'] * 1e6 / r['freq_hz']:9.0f} us emulated" for r in boots]
    boots = [r for r in data["records"] if r["scenario"] == "riscv64-boot"]
    if boots:
        lines.append("\nboot on the RISC-V board (icount shift 0): board reset to the guest's "
                     "first instruction, instructions (OpenSBI included); the hypervisor's own part")
        lines += [f"  {r['system']:<32} {r['first_instruction']:>10}" +
                  (f"   hypervisor entry to it: {r['hypervisor_part']}" if "hypervisor_part" in r
                   else "") for r in boots]
    for e in data["errors"]:
        what = "SKIPPED" if e.get("skipped") else "FAILED"
        lines.append(f"\n{what}: {e['scenario']} on {e['system']} (shift {e['shift']}): "
                     f"{e['error']}" + (f" [{e['workdir']}]" if e.get("workdir") else ""))
    return "\n".join(lines)


# ---- plots ----

def _hist_points(hist):
    """(upper bound, cumulative fraction) steps of a guest histogram."""
    counts = hist["counts"]
    total = sum(counts) or 1
    points, acc = [], 0
    for i, c in enumerate(counts):
        acc += c
        points.append((hist["lo"] + (i + 1) * hist["width"] - 1, acc / total))
    return points


def _save(plt, fig, stem):
    """`stem`.png and `stem`.svg, the SVG without a date so that equal results give equal files."""
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0])
    fig.savefig(paths[1], metadata={"Date": None})
    plt.close(fig)
    return paths


def write_plots(data, out_dir):
    """PNG and SVG: a CDF per latency test (shift 4) and the extra-over-native bar chart."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "tern"  # same results, same files
    import matplotlib.pyplot as plt

    written = []
    records = [r for r in data["records"] if r["shift"] == 4 and r.get("hist")]
    tests = []
    for r in records:
        key = (r["scenario"], r["test"])
        if key not in tests:
            tests.append(key)
    for scenario, test in tests:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for r in records:
            if (r["scenario"], r["test"]) != (scenario, test):
                continue
            pts = _hist_points(r["hist"])
            xs = [r["min"]] + [p[0] for p in pts]
            ys = [0.0] + [p[1] for p in pts]
            ax.step(xs, ys, where="post", label=r["system"])
        ax.set_xscale("symlog")
        ax.set_xlabel("latency, instructions (icount shift 4)")
        ax.set_ylabel("fraction of samples")
        ax.set_title(f"{scenario}: {test} (emulated, icount)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        written += _save(plt, fig, out_dir / f"cdf-{scenario}-{test}")

    cyclic = [r for r in cyclictest_records(data["records"]) if r.get("hist_us")]
    if cyclic:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for r in cyclic:
            total = r["samples"] or 1
            xs, ys, acc = [r["min"]], [0.0], 0
            for us, count in r["hist_us"]:
                acc += count
                xs.append(us)
                ys.append(acc / total)
            ax.step(xs, ys, where="post", label=r["system"])
        ax.set_xscale("log")
        ax.set_xlabel("cyclictest latency, us (emulated, icount shift 4)")
        ax.set_ylabel("fraction of wake-ups")
        ax.set_title("cyclictest inside Linux (emulated, icount)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        written += _save(plt, fig, out_dir / "cdf-cyclictest")

    extra = {}
    for r in data["records"]:
        if r["shift"] == 4 and r["scenario"] == "timer" and "extra_avg" in r:
            extra.setdefault(r["system"], []).append(r["extra_avg"])
    if extra:
        names = list(extra)
        worst = [max(v) for v in extra.values()]
        fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
        bars = ax.barh(names, worst, color=["tab:green" if n.startswith("tern") else "tab:gray"
                                              for n in names])
        ax.bar_label(bars, fmt="+%.0f", padding=3, fontsize=8)
        ax.set_xscale("log")
        ax.invert_yaxis()
        ax.set_xlabel("extra instructions over native, worst timer test (log scale)")
        ax.set_title("Timer interrupt: cost of the hypervisor (emulated, icount shift 4)", fontsize=10)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_xlim(right=max(worst) * 4)
        fig.tight_layout()
        written += _save(plt, fig, out_dir / "extra-over-native")
    return written


# ---- docs/benchmarks.md ----

def _worst_extra(records, systems, tests, scenario="timer"):
    """The largest AVG over native among the tests `tests` of `systems` in `scenario` (shift 4)."""
    vals = [r["extra_avg"] for r in records if r["shift"] == 4 and r["scenario"] == scenario
            and r["system"] in systems and r["test"] in tests and "extra_avg" in r]
    return max(vals) if vals else None


# Said under a scenario's first table: how its samples are taken.
_CHANNEL_NOTE = [
    "Two partitions of the latency guest share a 64 KiB channel (`[[channel]]`), member 0 on",
    "core 1 and member 1 on core 2, both in the system's delivery mode. `doorbell` is member 1's",
    "sample: from member 0's counter read before it writes its message to member 1's vector,",
    "so it holds the sender's trapped ring; `chan-rtt` is member 0's: the same message answered",
    "and rung back. The sender's cost is the ring alone (the trapped 32-bit store to the doorbell",
    "page, guest instructions included). No native row: the bare board has no channel.",
]

SCENARIO_NOTES = {
    "channel": _CHANNEL_NOTE,
    "riscv64-channel": _CHANNEL_NOTE + ["Unit: the `cycle` CSR, one instruction at shift 0."],
    "riscv64": [
        "Unit: the guest reads the `cycle` CSR, which under icount counts virtual nanoseconds: at",
        "shift 0 one tick here is one instruction (not the arm64 tables' 16). A sample runs from",
        "the deadline, or from just before the store, ecall or device write that sends, to the",
        "second instruction of the guest's trap vector. The SBI figures include OpenSBI (M-mode)",
        "on both harts natively; in a partition, Tern answers the SBI calls itself (HS-mode). Tern",
        "runs a 2-vCPU partition on cores 1-2: `direct` has the Sstc timer and an IMSIC guest file",
        "per vCPU (no hypervisor entry per interrupt), `wfi=trap`/`wfi=native` are trap-and-emulate",
        "(SBI timer and IPIs: no Sstc, no IMSIC file). For the device tests the partition owns the",
        "PCIe bus (`unconfined_dma`: no IOMMU on this board). edu-*: in `direct` it aims edu's MSI",
        "at its own file; the hypervisor's emulated ECAM gives the device the guest file behind",
        "it, so edu writes there itself (trap-and-emulate partitions have no file for an MSI).",
        "intx-*: edu's INTx line through the partition's APLIC: in `direct` an APLIC in MSI mode",
        "(as on the board), whose source the hypervisor aims at the guest file, so the line's",
        "interrupt arrives with no hypervisor entry; trap-and-emulate partitions get an APLIC in",
        "direct delivery mode, emulated: the board sends the source to the hypervisor, which",
        "raises the vCPU's external interrupt, and the guest's claims (`claimi`) trap.",
        "",
        "*traps/interrupt*: the hypervisor's entries per sample (per measured interrupt), on both",
        "vCPUs, from its own counters (`tern-stats`): each test runs alone twice more in the same",
        f"partition, with {TRAP_SAMPLES} and {2 * TRAP_SAMPLES} samples, and the counters' difference is divided by",
        f"{TRAP_SAMPLES}. Under icount the two runs are identical up to the last sample of the first, so",
        "boot and the test's set-up cancel out and the figure is exact. Entries are the `exit_*`",
        "counters and one per SBI call (`sbi_*`, by extension); *by cause* names those that moved.",
        "A sample counts everything the test does per interrupt: the SBI timer tests arm the",
        "timer and stop it in the handler (`sbi_time 2`); the IPI tests' pacing (the receiver's",
        "watchdog, the sender's delays) uses SBI `set_timer` where the partition has no Sstc. One",
        "overlap: with `wfi = \"trap\"`, a timer that ends the trapped WFI is handed over in that",
        "same entry (`boot.S`'s fast path), which counts it under `exit_irq` as well as `exit_wfi`:",
        "those rows count one more than there were entries for each such WFI. Native rows have no",
        "hypervisor (OpenSBI's M-mode traps are not counted).",
        "This scenario alone: `./tern bench --scenarios riscv64`",
        "(it rewrites this file with that scenario only).",
    ],
    "device": [
        "A sample runs from the counter read just before the guest's 32-bit write of 1 to edu's",
        "interrupt-raise register (BAR0 + 0x60) to the counter read in its IRQ vector. QEMU",
        "raises the INTx line during that write while the guest still has IRQs masked, so the",
        "native figure is the guest's own instructions (the write, unmasking, reaching the",
        "vector); anything above it is the path from the GIC to the guest's vector. The device is",
        "QEMU's `edu` in slot 2 (INTA = INTID 37, level-triggered) behind the PCIe host bridge",
        "that the measured partition owns (`devices = [\"pcie\"]`, MMIO mapped by stage 2): with",
        "`irq = \"direct\"` the GIC delivers the SPI to EL1, with trap-and-inject it takes the",
        "hypervisor's fast path into a hardware-linked list register. The guest assigns BAR0 and",
        "finds the INTID through the host bridge's `interrupt-map`, natively and in Tern alike.",
    ],
}

# What each scenario's sender does between its two counter reads.
SENDER_ACTION = {
    "ipi": "its `ICC_SGI1R_EL1` write",
    "device": "its write to edu's interrupt-raise register",
    "channel": "its store to the doorbell page, one trapped write",
    "riscv64-channel": "its store to the doorbell page, one trapped write (cycles)",
}


def _fmt_extra(value):
    return "-" if value is None else f"+{value:.0f}"


def markdown_report(data, plot_dir_rel=None):
    recs = data["records"]
    lines = _report_header(data) + _systems_section(data) + _goals_section(recs, plot_dir_rel)
    lines += _latency_sections(data, plot_dir_rel)
    lines += beside_section(data, plot_dir_rel)
    lines += path_section(data)
    lines += cyclictest_section(data, plot_dir_rel)
    lines += virtio_section(data)
    lines += shared_section(data)
    lines += riscv64_shared_section(data)
    lines += _priority_section(recs)
    lines += _interference_caveat(recs)
    lines += _boot_section(recs)
    lines += riscv64_boot_section(recs)
    lines += _fast_path_section(data["paths"])
    lines += _published_figures_section()
    lines += _failed_runs_section(data["errors"])
    return "\n".join(lines)


def board_of(scenario):
    """The board a scenario runs on (layout.VirtBoard): riscv64's scenarios are named for it."""
    return layout.QEMU_VIRT_RISCV64 if scenario.startswith("riscv64") else layout.QEMU_VIRT_ARM64


def reported_boards(recs):
    """The boards the records were measured on, arm64's first."""
    used = {board_of(r["scenario"]).arch for r in recs}
    return [b for b in layout.VIRT_BOARDS.values() if b.arch in used] or [layout.QEMU_VIRT_ARM64]


def _report_header(data):
    meta = data["meta"]
    boards = reported_boards(data["records"])
    named = " and ".join(f"{b.name} ({b.features})" for b in boards)
    return [
        "# Benchmarks",
        "",
        "Generated by `tern bench` from `results.json`; do not edit by hand.",
        "",
        f"- Command: `{meta['command']}`, {meta['date']}, {data['plan']['samples']} samples per "
        f"latency test, icount shifts {', '.join(str(s) for s in data['plan']['shifts'])}; "
        f"took {meta['seconds']:.0f} s",
        f"- {'Boards' if len(boards) > 1 else 'Board'}: {named}; {meta['versions']['qemu']}; "
        f"built with {meta['versions']['clang']}",
        "- Timing: **emulated (icount)**, `-icount shift=N,align=off,sleep=off`. Virtual time",
        "  follows the instruction count, so results are identical run to run and comparable",
        "  between the systems of one run. At shift 4 the 62.5 MHz counter ticks once per",
        "  instruction: a latency in ticks is the number of instructions executed from the",
        "  deadline to the guest's counter read in its vector. At shift 0 one instruction is 1 ns",
        "  and a tick is 16 instructions. icount counts instructions only: not cycles, caches,",
        "  TLB misses, exception entry/return or GIC access time. It ranks software path length;",
        "  it is not hardware time.",
        f"- Deadlines: every sample gets the same budget of {20000} instructions (20 us at shift 0,",
        "  320 us at shift 4).",
        "",
    ]


def _systems_section(data):
    return [
        "## Systems",
        "",
        *[f"- **{s['name']}**: {s['description']}" for s in data["systems"]],
        "",
        "Xen gives a domU its own memory map, not the board's (GIC at 0x0300_1000 / 0x0302_0000,",
        "console on Xen's emulated PL011 at 0x2200_0000), so the Xen runs use",
        "`guests/build/arm64/*-xen.img`: the same sources built with `guests/xen/board.h`. An image built",
        "for the board does not boot unchanged as a Xen domU; it does in a Tern partition. Every",
        "Xen run uses `bootscrub=off` (Xen scrubs free RAM in the background after boot, which",
        "would delay wake-ups in the first hundreds of milliseconds).",
        "",
    ]


def _arm64_boots(recs):
    """The arm64 boot records, and Tern's (None if no Tern system booted)."""
    boots = [r for r in recs if r["scenario"] == "boot"]
    return boots, next((r for r in boots if r["system"].startswith("tern")), None)


def _goals_section(recs, plot_dir_rel):
    riscv64 = _riscv64_boot_goal_rows(recs)
    riscv64_shared = _riscv64_shared_goal_rows(recs)
    where = f"{layout.QEMU_VIRT_ARM64.name}, icount shift 4"
    if riscv64 or riscv64_shared:
        where += f"; the riscv64 rows {layout.QEMU_VIRT_RISCV64.name}, shift 0"
    lines = [f"## Against the goals ({where})", "",
             "| path | goal | Tern | reference on this board |",
             "|---|---:|---:|---|"]
    lines += _interrupt_goal_rows(recs) + _boot_goal_rows(recs)
    lines += riscv64
    lines += _beside_goal_rows(recs) + _cyclictest_goal_rows(recs) + _virtio_goal_rows(recs)
    lines += _shared_goal_rows(recs) + riscv64_shared
    lines += [""]
    if plot_dir_rel:
        lines += [f"![extra instructions over native]({plot_dir_rel}/extra-over-native.svg)", ""]
    return lines


def _interrupt_goal_rows(recs):
    all_timer = {"vtimer-busy", "ptimer-busy", "vtimer-wfi", "ptimer-wfi"}
    wfi_tests = {"vtimer-wfi", "ptimer-wfi"}
    inject = _worst_extra(recs, {"tern wfi=trap", "tern wfi=native"}, all_timer)
    wfi_trap = _worst_extra(recs, {"tern wfi=trap"}, wfi_tests)
    xen_null = _worst_extra(recs, {"xen null vwfi=native"}, all_timer)
    xen_native = _worst_extra(recs, {"xen credit2 vwfi=native"}, all_timer)
    xen_trap = _worst_extra(recs, {"xen credit2"}, wfi_tests)
    lines = [f"| trap-and-inject, over native | <= +{GOAL_TRAP_AND_INJECT} | {_fmt_extra(inject)} | "
             f"this run: Xen null+vwfi=native {_fmt_extra(xen_null)}, credit2+vwfi=native "
             f"{_fmt_extra(xen_native)}; Bao about +199 (earlier measurement) |",
             f"| guest WFI trapped, over native | <= +{GOAL_WFI_TRAPPED} | {_fmt_extra(wfi_trap)} | "
             f"this run: Xen credit2 (WFI trapped) {_fmt_extra(xen_trap)} |"]
    direct = _worst_extra(recs, {"tern direct"}, all_timer)
    if direct is not None:
        lines.append(f"| direct delivery, timers, over native | exactly 0 | {_fmt_extra(direct)} | - |")
    device_tests = {"edu-wfi", "edu-busy"}
    direct_device = _worst_extra(recs, {"tern direct"}, device_tests, "device")
    if direct_device is not None:
        trap_device = _worst_extra(recs, {"tern wfi=trap", "tern wfi=native"}, device_tests, "device")
        lines.append(f"| direct delivery, device interrupt (edu), over native | exactly 0 | "
                     f"{_fmt_extra(direct_device)} | this run: Tern trap-and-inject "
                     f"{_fmt_extra(trap_device)}; no Xen cell (no PCI pass-through for Arm guests in Xen 4.17) |")
    return lines


def _boot_goal_rows(recs):
    boots, boot = _arm64_boots(recs)
    if not boot:
        return []
    # Ticks are instructions at shift 4; the goal was set as 1000 us of emulated time.
    goal = GOAL_BOOT_US * boot["freq_hz"] // 1000000
    xen_boot = next((r for r in boots if r["system"].startswith("xen")), None)
    ref = "-" if xen_boot is None else f"Xen: {xen_boot['first_instruction']} instructions"
    return [f"| boot to first guest instruction, instructions (shift 4) | <= {goal} "
            f"({GOAL_BOOT_US} us emulated) | {boot['first_instruction']} | {ref} |"]


def _latency_sections(data, plot_dir_rel):
    """One table per latency scenario and icount shift, on the scenario's board."""
    recs = data["records"]
    lines = []
    for scenario in data["scenarios"]:
        noted = False
        for shift in data["plan"]["shifts"]:
            rows = latency_rows(recs, scenario["name"], shift)
            if not rows:
                continue
            title = scenario["title"][0].upper() + scenario["title"][1:]
            lines += [f"## {title} ({board_of(scenario['name']).name}, shift {shift})", ""]
            if not noted and scenario["name"] in SCENARIO_NOTES:
                lines += SCENARIO_NOTES[scenario["name"]] + [""]
                noted = True
            lines += _latency_table(recs, scenario["name"], shift, rows)
            if plot_dir_rel and shift == 4:
                tests = sorted({r['test'] for r in recs if r['scenario'] == scenario['name']})
                lines += [""] + [f"![{scenario['name']} {t}]({plot_dir_rel}/cdf-{scenario['name']}-{t}.svg)"
                                 for t in tests]
            lines.append("")
    return lines


def _latency_table(recs, scenario, shift, rows):
    """The table of `rows`, and what raising the interrupt cost the sender if it was measured."""
    headers = latency_headers(scenario)
    lines = ["| " + " | ".join(headers) + " |", markdown_rule(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    senders = [r for r in recs if r["scenario"] == scenario and r["shift"] == shift
               and r.get("sender")]
    if senders:
        action = SENDER_ACTION.get(scenario, "what raises the interrupt")
        lines += ["", f"Sender's cost (counter before and after {action}): " +
                  "; ".join(f"{r['system']} {r['test']} AVG {_num(r['sender'].get('avg'))}"
                            for r in senders)]
    return lines


def _priority_section(recs):
    prio = [r for r in recs if r["scenario"] == "prio"]
    if not prio:
        return []
    lines = [f"## Priority order ({board_of('prio').name})", "",
             "Ten SGIs with distinct, non-monotonic priorities are raised while the guest has",
             "interrupts masked (more than the GIC's four list registers), then unmasked; a run",
             "passes when they are taken exactly in priority order. Published results for",
             "hypervisors on hardware: Bao and Xen 50/50, Jailhouse and seL4 0/50. The order",
             f"expected here is {prio[0].get('expected', '')}." if prio[0].get('expected') else
             "", "",
             "| system | runs in order | first wrong order seen |", "|---|---:|---|"]
    lines += [f"| {r['system']} | {r['in_order']}/{r['runs']} | {r.get('first_wrong') or '-'} |"
              for r in prio]
    lines.append("")
    return lines


def _interference_caveat(recs):
    if not any(r["scenario"].startswith("noise") for r in recs):
        return []
    return [f"## Interference caveat ({board_of('noise-burst').name})", "",
            "Under icount QEMU runs all cores round-robin on one host thread. A core that never",
            "sleeps holds that thread for whole slices and delays the other cores' interrupts:",
            "an artefact of the emulator, not of the hypervisor. The headline interference",
            "figure therefore uses a neighbour that streams memory and takes its own timer",
            "interrupts in bursts separated by WFI (`noise-burst`); the spinning variant",
            "(`noise-spin`) is reported with this caveat. The interference shows in the WFI tests",
            "only: a core asleep in WFI is woken when the emulator next switches to it, after the",
            "busy neighbour's current block of instructions; a core that is running takes its",
            "interrupt at once, which is why the busy tests do not move. That holds for one busy",
            "neighbour; with two or more a running core waits too (*Real-time partition beside",
            "Linux*). Tern has no state shared between partitions on the interrupt path",
            "(per-core tables, no locks).", ""]


def _boot_section(recs):
    boots, boot = _arm64_boots(recs)
    lines = []
    if boots:
        lines += [f"## Boot ({board_of('boot').name})", "",
                  "Board reset to the guest's first instruction, read by the guest itself (`LAT-BOOT`:",
                  "the physical counter at its entry; ticks = instructions at shift 4). Natively that is",
                  "QEMU's own boot of the image.", "",
                  "| system | first guest instruction, ticks | emulated time |", "|---|---:|---:|"]
        lines += [f"| {r['system']} | {r['first_instruction']} | "
                  f"{r['first_instruction'] * 1e6 / r['freq_hz']:.1f} us |" for r in boots]
        lines.append("")
    if boot and "hyp_entry" in boot:
        lines += ["Tern's own timestamps (`tern-boot` line). All cores share one instruction clock",
                  "under icount, so a timestamp on the boot core also counts what other cores ran.", "",
                  "| event | ticks | emulated time |", "|---|---:|---:|"]
        for name, key in (("hypervisor entry", "hyp_entry"), ("EL2 MMU on", "mmu_on"),
                          ("partition created", "created"), ("eret into vCPU 0", "eret"),
                          ("guest's first instruction", "first_instruction")):
            lines.append(f"| {name} | {boot[key]} | {boot[key] * 1e6 / boot['freq_hz']:.1f} us |")
        lines.append("")
    return lines


def _fast_path_section(paths):
    fast = paths["fast_path"]
    return [f"## Where Tern's extra instructions go ({layout.QEMU_VIRT_ARM64.name})", "",
            f"The interrupt fast path (`guest_irq`, `hypervisor/arch/arm64/vectors.S`) is "
            f"**{len(fast)} instructions** from the EL2 vector to `eret`:", "", "```", *fast, "```", "",
            "It acknowledges the physical interrupt, loads the precomputed list-register value for",
            "that INTID from the core's table, writes it to list register 0 (hardware-linked: the",
            "guest's own EOI deactivates the physical interrupt, no second exit), drops priority,",
            "counts and returns. With `wfi = \"trap\"` the core waits in the WFI trap handler and",
            f"then runs {len(paths['wfi_wake'])} instruction(s) (`{'; '.join(paths['wfi_wake'])}`)",
            "into the same path, so a trapped WFI costs no more than a running guest.",
            "What limits it: acknowledge, list-register write and priority drop are the minimum of",
            "trap-and-inject on GICv3; the rest saves four registers and counts. Taking the",
            "hypervisor off the path entirely is direct delivery (issue 4).", ""]


def _published_figures_section():
    return ["## Published hardware figures (for scale, not comparable with the above)", "",
            "On a Zynq UltraScale+ (4x Cortex-A53, GICv2) the \"Xen on ARM interrupt latency\" post",
            "(Xen Project blog, March 2017; in the project's source documents) measured with tbm:",
            "native about 300 ns; Xen 4.9 with pinned vCPUs AVG 4850 / WARM_MAX 4980 ns; with",
            "`vwfi=native` AVG 1850 / WARM_MAX 1950 ns.", ""]


def _failed_runs_section(errors):
    if not errors:
        return []
    lines = ["## Runs that failed or were skipped", ""]
    lines += [f"- FAILED: {e['scenario']} on {e['system']} (shift {e['shift']}): {e['error']}"
              for e in errors if not e.get("skipped")]
    reasons = {}
    for e in errors:
        if e.get("skipped"):
            reasons.setdefault(e["error"], []).append(f"{e['scenario']} on {e['system']}")
    lines += [f"- Not run: {', '.join(cells)}. Why: {why}." for why, cells in reasons.items()]
    lines.append("")
    return lines


GOAL_RISCV64_BOOT_FACTOR = 2   # issue 13: the hypervisor's boot within 2x of arm64's


def hypervisor_part(record):
    """Instructions from the hypervisor's first instruction to the guest's first one."""
    if record.get("hypervisor_part") is not None:
        return record["hypervisor_part"]
    if record.get("hyp_entry") is not None:     # arm64: ticks are instructions at shift 4
        return record["first_instruction"] - record["hyp_entry"]
    return None


def _boot_pair(recs):
    """(arm64 Tern boot record, riscv64 Tern boot records, riscv64 native boot record)."""
    arm = next((r for r in recs if r["scenario"] == "boot" and r["system"] == "tern wfi=trap"
                and r.get("shift") == 4), None)
    riscv = [r for r in recs if r["scenario"] == "riscv64-boot" and r["system"].startswith("tern")
             and hypervisor_part(r) is not None]
    native = next((r for r in recs if r["scenario"] == "riscv64-boot" and r["system"] == "native"),
                  None)
    return arm, riscv, native


def _value_span(values):
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _riscv64_boot_goal_rows(recs):
    arm, riscv, native = _boot_pair(recs)
    if not riscv:
        return []
    arm_part = hypervisor_part(arm) if arm else None
    goal = (f"<= {GOAL_RISCV64_BOOT_FACTOR} x arm64's = {GOAL_RISCV64_BOOT_FACTOR * arm_part}"
            if arm_part else f"<= {GOAL_RISCV64_BOOT_FACTOR} x arm64's")
    ref = (f"arm64, the same span: {arm_part} (tern wfi=trap, shift 4)" if arm_part
           else "arm64: not in this run")
    rows = [f"| riscv64 boot, hypervisor's first instruction to the guest's, instructions "
            f"(shift 0) | {goal} | {_value_span([hypervisor_part(r) for r in riscv])} | {ref} |"]
    whole = _value_span([r["first_instruction"] for r in riscv])
    ref = (f"natively (OpenSBI to the guest) {native['first_instruction']}" if native else "-")
    if arm:
        ref += f"; arm64 (no firmware) {arm['first_instruction']}"
    rows.append(f"| riscv64 boot, board reset to the guest's first instruction (OpenSBI included), "
                f"instructions (shift 0) | - | {whole} | {ref} |")
    return rows


def riscv64_boot_section(recs):
    boots = [r for r in recs if r["scenario"] == "riscv64-boot"]
    if not boots:
        return []
    arm, riscv, native = _boot_pair(recs)
    lines = [f"### Boot on the RISC-V board ({layout.QEMU_VIRT_RISCV64.name}, shift 0)", "",
             "The same run on QEMU's riscv virt board (2 harts; Tern: one vCPU on core 1, the latency",
             "guest, `lat.tests=sbi-timer-busy lat.samples=1`), at icount shift 0. The guest reads",
             "`cycle` at its first instruction (`LAT-BOOT` `entry_cycle`): under icount it counts",
             "virtual nanoseconds from the board's reset, one per instruction at shift 0, on every hart.",
             "On this board the reset runs QEMU's reset vector and OpenSBI (M-mode) before anything",
             "else: natively OpenSBI enters the guest; in Tern it enters the hypervisor, whose first",
             "instruction reads `cycle` too (`tern-boot-cycle`). The arm64 board has no firmware: QEMU",
             "enters the hypervisor after its own 8-instruction boot stub. So the comparable figure is",
             "the hypervisor's own part, from its first instruction to the guest's; board reset to the",
             "guest counts OpenSBI's boot on both harts as well.", "",
             "| system | board reset to the guest's first instruction | hypervisor entry | "
             "hypervisor entry to the guest's first instruction |", "|---|---:|---:|---:|"]
    for r in boots:
        lines.append(f"| {r['system']} | {r['first_instruction']} | {r.get('hyp_entry', '-')} | "
                     f"{_num(hypervisor_part(r))} |")
    if arm and hypervisor_part(arm) is not None:
        lines.append(f"| arm64 {arm['system']} (shift 4, above) | {arm['first_instruction']} | "
                     f"{arm['hyp_entry']} | {hypervisor_part(arm)} |")
    lines.append("")
    example = next((r for r in riscv if "created" in r), None)
    if example:
        res = example["time_resolution"]
        lines += [f"Tern's `tern-boot` timestamps for `{example['system']}`, in instructions: "
                  f"they are `time` (10 MHz), so {res} instructions a tick, to within {res}.", "",
                  "| event | instructions |", "|---|---:|"]
        for name, key in (("OpenSBI done: hypervisor entry (`cycle`, exact)", "hyp_entry"),
                          ("partition created", "created"), ("all partitions ready", "ready"),
                          ("sret into vCPU 0", "eret"),
                          ("guest's first instruction (`cycle`, exact)", "first_instruction")):
            lines.append(f"| {name} | {example[key]} |")
        lines.append("")
    if native and riscv:
        lines += ["OpenSBI's share depends on the board QEMU is given for the run (its device tree, the",
                  f"harts): natively it enters the guest after {native['first_instruction']} instructions, "
                  f"in the Tern runs the hypervisor after {_value_span([r['hyp_entry'] for r in riscv])}.",
                  "This scenario alone: `./tern bench --scenarios riscv64-boot`.", ""]
    return lines


def _worst_over_alone(records):
    vals = [r["extra_warm_max_over_alone"] for r in records]
    return f"{max(vals):+d}" if vals else "-"


def _setup(records, scenario, system=None):
    """The `setup` record of a beside scenario (of `system`, else of the first system)."""
    chosen = [r for r in records if r["scenario"] == scenario and r["test"] == "setup"]
    return next((r for r in chosen if r["system"] == system), chosen[0] if chosen else None)


def _beside_goal_rows(recs):
    rows = []
    control = [r for r in beside_records(recs, "noise-pair") if r.get("irq") == "direct"]
    for scenario, what in (("linux-stress", "stress"), ("linux-cyclictest", "cyclictest")):
        chosen = beside_records(recs, scenario)
        if not chosen:
            continue
        direct = [r for r in chosen if r.get("irq") == "direct"]
        trap = [r for r in chosen if r.get("irq") != "direct"]
        ref = (f"this run: control without Linux or any hypervisor on an interrupt path "
               f"(`noise-pair`, direct) {_worst_over_alone(control)}; an emulator artefact, see "
               "*Real-time partition beside Linux*") if control else "see *Real-time partition beside Linux*"
        if direct:
            rows.append(f"| rt beside busy Linux ({what}), direct: worst WARM_MAX over alone | "
                        f"exactly 0 | {_worst_over_alone(direct)} | {ref} |")
        if trap:
            rows.append(f"| rt beside busy Linux ({what}), trap-and-inject: worst WARM_MAX over alone | "
                        f"<= +{BESIDE_TRAP_BOUND} | {_worst_over_alone(trap)} | {ref} |")
    paths = path_records(recs)
    for label, chosen, goal in (
            ("direct", [r for r in paths if r.get("irq") == "direct"], "exactly 0"),
            ("trap-and-inject", [r for r in paths if r.get("irq") != "direct"],
             f"<= +{BESIDE_TRAP_BOUND}")):
        if not chosen:
            continue
        worst = max(path_difference(r) for r in chosen)
        extra = max(r["extra_exceptions_over_alone"] for r in chosen)
        rows.append(f"| rt beside busy Linux (stress), {label}: WARM_MAX counted on rt's own core "
                    f"(instructions per interrupt, execution trace) over alone | {goal} | "
                    f"{worst:+d} | exceptions on rt's core over alone: {extra:+d}; see *rt's core "
                    "instruction by instruction* |")
    return rows


def _cyclictest_goal_rows(recs):
    chosen = {r["system"]: r for r in cyclictest_records(recs)}
    base = chosen.get(NATIVE_PARTITION_DT)
    tern = [r for r in chosen.values() if r["system"].startswith("tern")]
    if not base or not tern:
        return []
    native = chosen.get("native")
    ref = (f"this run: native with QEMU's own device tree AVG {native['avg']} us, with "
           f"the partition's {base['avg']} us") if native else "-"
    figures = ", ".join(f"{r['system']} {r['avg'] - base['avg']:+d}" for r in tern)
    return [f"| cyclictest in Linux, AVG over native with the same device tree | - | "
            f"{figures} us | {ref} |"]


BESIDE_INTRO = [
    "The latency guest runs in partition `rt` on core 1 (the four timer tests, deadlines 320 us",
    "apart) and its neighbours on cores 2 and 3. Linux is Debian's kernel, busybox and rt-tests",
    "(`make linux`) in one 2-vCPU partition, always trap-and-inject (`irq = \"trap\"`,",
    "`wfi = \"trap\"`), as in examples/linux-rt.toml; the system column is how `rt` runs. `rt` first",
    "sleeps `lat.start_delay_us` (WFI on its virtual timer) so that every sample is taken with its",
    "neighbours busy, and each run checks that their busy line (`TERN-LINUX: stress running`,",
    "`TERN-LINUX: ready`, `noise: mode`) came before rt's `LAT-START`. The neighbours never power",
    "off by themselves: when `rt` prints `LAT-DONE` the bench types `stop NAME` for each on the",
    "hypervisor console. *Alone* is the same `rt` partition, bootargs and board without the",
    "neighbours, run in the same bench run.",
    "",
]


def beside_section(data, plot_dir_rel=None):
    recs = data["records"]
    titles = {s["name"]: s["title"] for s in data["scenarios"]}
    present = [name for name in BESIDE_SCENARIOS if beside_records(recs, name)]
    if not present:
        return []
    lines = [f"## Real-time partition beside Linux ({layout.QEMU_VIRT_ARM64.name}, shift 4)", "",
             *BESIDE_INTRO,
             "Acceptance: `rt`'s WARM_MAX beside a busy Linux equals its WARM_MAX alone with direct",
             "delivery (`irq = \"direct\"`), and with trap-and-inject stays within a bound: **the bound",
             f"used here is +{BESIDE_TRAP_BOUND} instructions over WARM_MAX alone** (the project's",
             "trap-and-inject goal). *met* says whether a row keeps it; all figures are emulated",
             "(icount) ticks, one instruction each.", ""]
    for name in present:
        lines += _beside_table(recs, name, titles.get(name, name), plot_dir_rel)
    return lines + _beside_caveat(recs) + _beside_how_run(recs)


def _beside_table(recs, name, title, plot_dir_rel):
    """One beside scenario: its neighbours, rt's figures alone and beside them, its plots."""
    setup = _setup(recs, name, "tern direct")
    lines = [f"### {title[0].upper()}{title[1:]}", ""]
    if setup:
        lines += [f"Neighbours: {setup['neighbours']}; `rt` starts after "
                  f"`lat.start_delay_us={setup['start_delay_us']}`.", ""]
    lines += ["| " + " | ".join(BESIDE_HEADERS) + " |",
              "|---|---|" + "---:|" * (len(BESIDE_HEADERS) - 4) + "---|---|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in beside_rows(recs, name)]
    stats = [r for r in recs if r["scenario"] == name and r["test"] == "setup"
             and r.get("rt_stats")]
    if stats:
        lines += ["", "`rt`'s hypervisor entries in the run beside them (tern-stats): " +
                  "; ".join(f"{r['system']}: exit_irq {r['rt_stats'].get('exit_irq')}, "
                            f"irq_injected {r['rt_stats'].get('irq_injected')}" for r in stats)]
    if plot_dir_rel:
        tests = sorted({r["test"] for r in beside_records(recs, name)})
        lines += [""] + [f"![{name} {t}]({plot_dir_rel}/cdf-{name}-{t}.svg)" for t in tests]
    lines.append("")
    return lines


def _beside_caveat(recs):
    """Why emulated time cannot show the acceptance beside busy neighbours."""
    stress = beside_records(recs, "linux-stress")
    control = beside_records(recs, "noise-pair")
    direct_setup = _setup(recs, "linux-stress", "tern direct")
    lines = ["### What the figures beside busy neighbours measure", "",
              "Under icount QEMU 7.2 runs the cores in turn on one host thread. A core that does not",
              "sleep keeps that thread until the next timer event anywhere on the board (or QEMU's",
              "100 ms round-robin kick when there is none). `rt`'s interrupt is raised at its",
              "deadline, but while two neighbour cores are busy one of them runs its turn first,",
              "up to the next timer event: Linux's 4 ms tick (Debian's kernel has CONFIG_HZ=250,",
              "250000 ticks of 16 ns)."]
    if stress:
        typical = max(r["p50"] for r in stress)
        lines += [f"Most samples beside `stress` (p50 up to {typical} ticks) are that tick less `rt`'s",
                  "20000-tick deadline: `rt`'s interrupt waits for Linux's next tick."]
    if control:
        worst = max(r["warm_max"] for r in control)
        lines += ["The `noise-pair` control puts no Linux there: two bare-metal guests in direct",
                  "partitions streaming memory with a 4 ms timer, so that with `rt` direct too no core",
                  "of the board enters the hypervisor on an interrupt. It shows the same effect",
                  f"(WARM_MAX up to {worst}) in every mode of `rt`."]
    if direct_setup and direct_setup.get("rt_stats"):
        lines += [f"With direct delivery `rt`'s core took {direct_setup['rt_stats'].get('exit_irq')} "
                  "interrupt exits in the whole run beside Linux: no hypervisor instruction runs on",
                  "its interrupt path, busy neighbours or not."]
    if any(r["scenario"] == "noise-spin" for r in recs):
        lines += ["With a single busy neighbour the effect stays small (`noise-spin` above); with two",
                  "it reaches a timer period and hits the busy-wait tests as much as the WFI ones."]
    lines += ["**Emulated time therefore cannot show the acceptance beside a busy Linux, in either",
              "mode**: the rows that miss it measure QEMU's round-robin, as the control does; what",
              "Tern does on `rt`'s core is counted exactly in *rt's core instruction by instruction*",
              "below. Beside",
              "cyclictest (Linux's cores mostly asleep) the median does not move; only the samples",
              "that fall while Linux's cores run do, and those largest samples are not always the",
              "same from one bench run to the next (the medians and the alone runs are). The",
              "latency figure itself needs cores that run in parallel: hardware, or an emulator",
              "without icount (whose figures are not instruction counts).", ""]
    return lines


def _beside_how_run(recs):
    """The system the bench ran beside `stress`, and how to run it by hand."""
    direct_setup = _setup(recs, "linux-stress", "tern direct")
    lines = []
    if direct_setup:
        lines += ["How it was run (`tern direct`, beside `stress`): the bench writes this system,",
                  f"runs it under icount shift 4 and {direct_setup['console']}. By hand:",
                  "`./tern run FILE --icount 4`, then type `stop linux` at the console once",
                  "`[rt] LAT-DONE` shows. These scenarios alone: `./tern bench --scenarios "
                  f"{','.join(BESIDE_SCENARIOS)}`.", "", "```toml",
                  direct_setup["system_toml"].rstrip(), "```", ""]
    return lines


def path_section(data):
    recs = data["records"]
    rows = path_rows(recs)
    if not rows:
        return []
    setup = _setup(recs, "rt-path", "tern direct")
    board = layout.QEMU_VIRT_ARM64.name
    lines = [f"## rt's core instruction by instruction ({board}, shift 4)", "",
             "The same `rt` partition as above (core 1), alone and beside Linux running `stress`,",
             "each run traced by QEMU instruction by instruction (`-singlestep -d exec,nochain,int`,",
             "code at 0x4000_0000 and up: the hypervisor and `rt`; tools/tern/pathtrace.py reads",
             "the trace). Emulated time beside busy cores also counts what the other cores ran",
             "while `rt`'s core waited for its turn; the trace counts only what `rt`'s core itself",
             "executed for each interrupt, which is what its latency is made of where cores run in",
             "parallel:",
             "",
             "- *hypervisor*: EL2 instructions that delivered the interrupt, from the physical",
             "  interrupt (its exception, or the wake-up from the hypervisor's own WFI when the",
             "  guest's WFI is trapped) to the `eret` into the guest; 0 with direct delivery;",
             "- *vector*: the guest's instructions from its interrupt exception to the counter read",
             "  (its timestamp);",
             "- *exceptions*: every exception `rt`'s core took over the samples after the warm-up, by",
             "  QEMU's name (a trapped WFI shows as `Undefined Instruction`); anything another",
             "  partition caused on this core would show here.",
             "",
             f"Per test {setup['samples'] if setup else '-'} samples, the first "
             "8 (warm-up) left out; a range is min-max over the rest. *difference*: worst",
             "hypervisor + vector beside Linux minus alone; *met*: within the bound and no",
             "exception beyond those alone.", "",
             "| " + " | ".join(PATH_HEADERS) + " |",
             "|---|---|" + "---:|" * 4 + "---|---|---:|---|---|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    trap_wfi = [r for r in path_records(recs) if r.get("wfi") == "trap" and r.get("irq") != "direct"
                and r["test"].endswith("-wfi") and path_difference(r) != 0]
    lines.append("")
    if trap_wfi:
        lines += ["With `wfi = \"trap\"` alone, `rt` sleeps in the hypervisor (its WFI trapped) and the",
                  "interrupt wakes it there. Beside busy Linux the emulator gives `rt`'s core its turn",
                  "only after the deadline has passed, so the interrupt is already pending when `rt`",
                  "reaches its WFI, which then does not sleep: the physical interrupt is taken as an",
                  "exception instead, one instruction longer. Same count of exceptions, other kinds;",
                  "an emulator effect on where the wait ends, not work added by Linux.", ""]
    lines += ["Timestamps in emulated time from the same traced runs (WARM_MAX alone / beside, ticks): " +
              "; ".join(f"{r['system']} {r['test']} {r['warm_max_ticks']['alone']} / "
                        f"{r['warm_max_ticks']['beside']}" for r in path_records(recs)
                        if r["test"] == "vtimer-busy"), ""]
    if setup:
        lines += ["How it was run: the system of *Real-time partition beside Linux* with "
                  f"`{setup['trace']}` added to QEMU's options and `rt` printing LAT-SOON "
                  f"{TRACE_NOTICE_US // 1000} ms before it measures; the bench {setup['console']}. "
                  "This scenario alone: "
                  "`./tern bench --scenarios rt-path`.", ""]
    return lines


CYCLICTEST_NOTES_UNIT = [
    "Its unit is microseconds of **emulated (icount)** time: at shift 4 one instruction is 16 ns,",
    "so 1 us is 62.5 instructions of the two Linux cores. The same kernel and initramfs run on",
    "the bare board (2 cores) and in a 2-vCPU partition on cores 2 and 3 in each of Tern's modes",
    "(the Linux partition's `irq` and `wfi` are the system's). Natively it runs twice more with",
    "the device tree Tern writes for that partition (`-dtb`, 256 MiB), as written (with the",
    "`rng-seed` in its `/chosen`) and without that `rng-seed`.",
]


def cyclictest_section(data, plot_dir_rel=None):
    recs = cyclictest_records(data["records"])
    if not recs:
        return []
    by_name = {r["system"]: r for r in recs}
    loops = recs[0]["loops"]
    lines = [f"## cyclictest inside Linux ({layout.QEMU_VIRT_ARM64.name}, shift 4)", "",
             "cyclictest (Debian's rt-tests) in the Linux guest: one SCHED_FIFO thread at priority 80",
             "waking every 1000 us with `clock_nanosleep`, memory locked, histogram in 1 us buckets",
             f"(`tern.run=cyclictest tern.loops={loops}`: {loops} wake-ups).", *CYCLICTEST_NOTES_UNIT, "",
             "| " + " | ".join(CYCLICTEST_HEADERS) + " |",
             "|---|" + "---:|" * (len(CYCLICTEST_HEADERS) - 1)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in cyclictest_rows(recs)]
    headers, rows = cyclictest_buckets(recs)
    if rows:
        lines += ["", "Histogram (wake-ups per range of latency, emulated us):", "",
                  "| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    if plot_dir_rel:
        lines += ["", f"![cyclictest]({plot_dir_rel}/cdf-cyclictest.svg)"]
    lines.append("")
    notes = []
    direct = by_name.get("tern direct")
    failed = [e for e in data.get("errors", []) if e["scenario"] == "cyclictest"
              and e["system"] == "tern direct"]
    if direct:
        notes.append("- Linux in a partition with `irq = \"direct\"` boots and runs cyclictest: the GIC "
                     "delivers its timer to EL1 with no hypervisor entry (exit_irq "
                     f"{direct.get('linux_stats', {}).get('exit_irq', '-')} in the whole run, "
                     "tern-stats).")
    elif failed:
        notes.append(f"- Linux with `irq = \"direct\"` did not complete: {failed[0]['error']}.")
    if by_name.get("native"):
        notes.append("- QEMU writes fresh random bytes into every `rng-seed` and `kaslr-seed` of the "
                     "device tree it boots (its own, or one given with `-dtb`), and `tern run` "
                     "writes a fresh `rng-seed` into each partition's, so the rows with a seed vary "
                     "a little from run to run; the one without repeats exactly.")
    native, same_dt = by_name.get("native"), by_name.get(NATIVE_PARTITION_DT)
    unseeded = by_name.get(NATIVE_PARTITION_DT_NO_SEED)
    if native and unseeded:
        gap = unseeded["avg"] - native["avg"]
        notes.append(f"- The `rng-seed` matters more than the hypervisor: without it Linux wakes "
                     f"{gap:+d} us (about {gap * 1000 // 16} instructions) later on average, on "
                     "the bare board as in a partition (Linux without a seeded random number "
                     "generator pays for it on every wake-up). Tern's partition device trees "
                     "therefore carry a fresh 32-byte `rng-seed` per run, as QEMU gives the board.")
    if native and same_dt:
        notes.append("- The hypervisor's own cost is each Tern row against "
                     f"`{NATIVE_PARTITION_DT}` (the same device tree and kernel): the "
                     "*AVG - native (partition's DT)* column.")
    lines += notes + [""] if notes else []
    example = by_name.get("native")
    if example and example.get("command"):
        lines += ["Native command (with `-dtb FILE` and `-m 256M` for the device-tree rows; the "
                  "partitions' systems are as above without `rt`). This scenario alone: "
                  "`./tern bench --scenarios cyclictest`.", "",
                  "```sh", example["command"], "```", ""]
    return lines


def today():
    return datetime.date.today().isoformat()


def rel(path, base):
    try:
        return str(Path(path).resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)


# ---- VirtIO (issue 28) ----

# The hypervisor entries per request the design aims at on the frontend's core in steady state:
# the notify and the completion's InterruptStatus read.
GOAL_VIO_ENTRIES = 2
VIO_PATHS = ("native", "pass-through", "mediated", "trusted")
VIO_BLK_HEADERS = ("board", "path", "request", "bytes", "guest ns", "MB/s (emulated)")
VIO_COST_HEADERS = ("board", "path", "per request", "per KiB", "entries per request",
                    "by cause")
VIO_NET_HEADERS = ("board", "ping avg rtt (ms)", "min / max", "TCP bytes", "guest ns",
                   "MB/s (emulated)")


def virtio_records(records):
    return [r for r in records if r.get("scenario") in VIRTIO_SCENARIOS]


def _board(r):
    return board_of(r["scenario"]).arch


def _order(r):
    return (_board(r) != "arm64", VIO_PATHS.index(r["path"]) if r.get("path") in VIO_PATHS
            else 9, r.get("bs", 0))


def virtio_blk_rows(records):
    chosen = sorted((r for r in virtio_records(records) if r["test"].startswith("blk-read-")),
                    key=_order)
    return [(_board(r), r["path"], r["bs"], r["bytes"], r["ns"], _num(r["mb_s"], 2))
            for r in chosen]


def virtio_cost_rows(records):
    chosen = sorted((r for r in virtio_records(records) if r["test"] == "blk-cost"), key=_order)
    return [(_board(r), r["path"], r["per_request"], _per_kib(r["per_kib"]),
             r.get("entries_per_request", "-"),
             ", ".join(f"{k} {v}" for k, v in (r.get("entries_by_cause") or {}).items()) or "-")
            for r in chosen]


def _per_kib(value):
    # Time that shrinks as requests grow: idle jumps of the emulated clock, not instructions.
    return value if value >= 0 else f"{value} (not an instruction count: see the caveat)"


def virtio_net_rows(records):
    recs = virtio_records(records)
    rows = []
    for board in ("arm64", "riscv64"):
        ping = next((r for r in recs if r["test"] == "ping" and _board(r) == board), None)
        tcp = next((r for r in recs if r["test"] == "tcp" and _board(r) == board), None)
        if ping and tcp:
            rows.append((board, ping["rtt_avg_ms"], f"{ping['rtt_min_ms']} / {ping['rtt_max_ms']}",
                         tcp["bytes"], tcp["ns"], _num(tcp["mb_s"], 2)))
    return rows


def virtio_terminal(records):
    lines = []
    for title, headers, rows in (
            ("virtio-blk sequential read in Linux, MB per emulated second", VIO_BLK_HEADERS,
             virtio_blk_rows(records)),
            ("virtio-blk cost, instructions (two request sizes); hypervisor entries per request "
             "on the frontend's core", VIO_COST_HEADERS, virtio_cost_rows(records)),
            ("virtio-net between two Linux partitions (mediated)", VIO_NET_HEADERS,
             virtio_net_rows(records))):
        if rows:
            lines += ["", title, results_fmt.format_table(headers, rows)]
    return lines


def _virtio_goal_rows(recs):
    rows = []
    for r in sorted((r for r in virtio_records(recs) if r["test"] == "blk-cost"
                     and r.get("entries_per_request") is not None), key=_order):
        causes = ", ".join(f"{k} {v}" for k, v in r["entries_by_cause"].items())
        moved = "the copy" if r["path"] == "mediated" else "the backend's own moves"
        copy = (f"{moved}: {r['per_kib']} instructions per KiB" if r["per_kib"] >= 0 else
                f"the cost per KiB of {moved} not measurable on this board")
        rows.append(f"| virtio-blk {r['path']} ({_board(r)}): hypervisor entries per request on the "
                    f"frontend's core, steady state | <= {GOAL_VIO_ENTRIES} | "
                    f"{r['entries_per_request']} | by cause: {causes}; {copy}. Not reachable "
                    "with virtio-mmio as Linux drives it: its interrupt handler reads "
                    "InterruptStatus and writes InterruptACK, two trapped accesses besides the "
                    "notify and the interrupt (see *VirtIO devices served by another "
                    "partition*) |")
    return rows


def _table(headers, rows):
    return (["| " + " | ".join(headers) + " |", "|---|" + "---:|" * (len(headers) - 1)] +
            ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def virtio_section(data):
    recs = virtio_records(data["records"])
    failed = [e for e in data.get("errors", []) if e["scenario"] in VIRTIO_SCENARIOS]
    if not recs and not failed:
        return []
    boards = sorted({_board(r) for r in recs} | {board_of(e["scenario"]).arch for e in failed},
                    key=lambda b: b != "arm64")
    lines = ["## VirtIO devices served by another partition (" +
             ", ".join(f"{b}: shift {VIO_SHIFT[b]}" for b in boards) + ")", "",
             *VIRTIO_NOTES, ""]
    blk, cost, net = virtio_blk_rows(recs), virtio_cost_rows(recs), virtio_net_rows(recs)
    if blk:
        lines += ["virtio-blk sequential read (`tern.run=blk-read`), MB (10^6 bytes) per emulated "
                  "second:", ""] + _table(VIO_BLK_HEADERS, blk) + [""]
    if cost:
        lines += ["Per request and per KiB, instructions (from the two request sizes), and the "
                  "hypervisor's entries per request on the frontend's core (the served paths "
                  "only):",
                  ""] + _table(VIO_COST_HEADERS, cost) + [""]
    if net:
        lines += ["virtio-net between two Linux partitions (`tern.run=vio-net-frontend` / "
                  "`vio-net-backend`), the client pinging the server five times, then sending "
                  "it a TCP transfer:", ""] + _table(VIO_NET_HEADERS, net) + [""]
    for e in failed:
        what = "Not measured" if e.get("skipped") else "Failed"
        lines += [f"- {what}: {e['scenario']} on {e['system']}: {e['error']}"]
    if failed:
        lines.append("")
    return lines


VIO_SHIFT = {"arm64": 4, "riscv64": 0}
VIRTIO_NOTES = [
    "How each row is made. The Linux guest (one vCPU, 256 MiB) runs the same kernel and an",
    "initramfs the bench builds from this tree's `/init` (`tools/tern/initramfs.py`).",
    "**native**: Linux on the bare board reading QEMU's virtio-blk on PCI. **pass-through**:",
    "the same device on the board's PCIe bus, owned by the Linux partition",
    "(`[board] pci = [{model = \"virtio-blk\", disk = ...}]`, `devices = [\"pcie\"]`).",
    "**mediated**: the board's first virtio-mmio slot, emulated by Tern, served by the",
    "bare-metal backend `vback` from the same disk image (`[[virtio]] device = \"blk\"`).",
    "**trusted**: the same with `backend_trusted = true`: `vback` reads and writes Linux's",
    "buffers itself through its window onto Linux's RAM, the hypervisor posting each chain's",
    "scatter list and copying nothing.",
    "`blk-read` reads the disk's first bytes with `dd iflag=direct` (O_DIRECT: every block one",
    "request, no page cache), once per request size, and prints the bytes and the guest's own",
    "monotonic clock around the read (the kernel's `now` in `/proc/timer_list`): MB/s is bytes",
    "over that time, emulated (icount).",
    "",
    "Per request and per KiB: under icount a request of S bytes takes a + b x S, so the two",
    "request sizes give a (instructions per request) and b (per byte, shown per KiB); at shift",
    "N an instruction is 2^N ns. The mediated row's b is what moving the data costs on that path:",
    "the hypervisor's copy into the frontend's buffers, `vback`'s copy from its disk into the",
    "channel, and the guest's own handling, all cores' instructions counted (icount's one",
    "clock). Entries per request: the mediated run once more with twice the bytes; the",
    "frontend's `tern-stats` entry counters (`exit_*`, `sbi_*`) differ by what the extra",
    "requests cost, divided by the difference of `virtio_request` (boot and set-up cancel).",
    "The MMIO entries repeat exactly; the interrupt's and WFI's also count the timer's ticks,",
    "which fall between requests a little differently from run to run (a few hundredths).",
    "Where arm64's mediated cost per KiB goes, from the code rather than measured apart:",
    "`vback`'s `memcpy` (`guests/lib/string.c`) is a byte loop, 3 instructions a byte in its",
    "arm64 build (about 3070 per KiB, over half); the hypervisor's moves aligned buffers 8",
    "bytes a load in an unrolled loop (a few hundred per KiB).",
    "",
    "**Caveat, native and pass-through**: QEMU's virtio-blk completes a request on the host's",
    "time, in its own thread. Under `-icount ... sleep=off` the emulated clock does not follow",
    "host time: while the guest waits idle it jumps to the next timer deadline. Those rows",
    "therefore count jumps whose number depends on the host's speed, and they change from run",
    "to run (4 KiB reads on these two paths measured anywhere from 0.05 to 12 MB/s in",
    "successive runs while this was written); they are not instruction counts and no ratio is",
    "drawn from them. The mediated",
    "rows have no host I/O (the backend is a partition reading its RAM): on arm64 they repeat",
    "within 0.5 %. On riscv64 they do not: a 4 KiB request takes 1.3 to 1.5 ms of emulated time",
    "(as many million instructions at shift 0) and varies from run to run, so idle jumps",
    "dominate there too (not explained yet); a negative cost per KiB is the sign of it.",
    "",
    "virtio-net: the client pings the server five times (busybox ping's round-trip line,",
    "emulated ms), then sends the transfer's bytes with `nc`; the server times the transfer on",
    "its own clock, from the connection's acceptance to its end of file. Both are Linux",
    "partitions; the server's `tern-vio` moves the frames between the channel and a TAP",
    "interface.",
]


# ---- Shared cores (issue 29): bench.run_shared_lat and bench.run_shared_switch ----

# Goals from issue 29, against Xen 4.17 on the same board.
GOAL_SWITCH_OF_XEN = 1 / 2          # a context switch: at most half of Xen's
GOAL_WINDOW_SWITCH_OF_XEN = 1 / 3   # an ARINC 653 window switch: at most a third of Xen's
SHARED_LAT_HEADERS = ("SCHEDULER", "SYSTEM", "AVG", "WARM_MAX", "p99", "MAX", "bound",
                      "bound is", "MAX - bound")
SHARED_SWITCH_HEADERS = ("SCHEDULER", "SYSTEM", "switches", "switch MIN", "switch AVG",
                         "switch MAX", "interruptions", "interruption MAX", "window-start jitter")


def _shared(records, what, prefix="shared"):
    """The shared-core records of one kind (lat, switch) on one board: arm64's scenarios are
    shared-*, riscv64's riscv64-shared-*."""
    order = {s: i for i, s in enumerate(bench.SHARED_SCHEDULERS)}
    chosen = [r for r in records if r["scenario"].startswith(f"{prefix}-{what}-")
              and r.get("test") != "switch-trace"]
    return sorted(chosen, key=lambda r: (order.get(r.get("scheduler"), 99), r["system"]))


def shared_lat_rows(records, prefix="shared"):
    return [(r["scheduler"], r["system"], _num(r["avg"]), r["warm_max"], r["p99"], r["max"],
             r["bound_ticks"], r["bound"], f"{r['max'] - r['bound_ticks']:+d}")
            for r in _shared(records, "lat", prefix) if "warm_max" in r]


def _jitter(r):
    """The hypervisor's own window-start jitter (Tern's tern-sched), then the guests' first
    reads' (which add where in its loop step each guest was switched out)."""
    j = r.get("window_jitter")
    if not j:
        return "-"
    guests = ", ".join(f"{n} {_num(v)}" for n, v in j.items())
    hyp = r.get("window_start") or {}
    if not hyp.get("n"):
        return guests
    return f"hypervisor {_num(hyp['jitter'])} ({hyp['n']} windows); guests {guests}"


def shared_switch_rows(records, prefix="shared"):
    rows = []
    for r in _shared(records, "switch", prefix):
        sw, it = r.get("switch") or {}, r.get("interruption") or {}
        rows.append((r["scheduler"], r["system"], sw.get("n", 0), _num(sw.get("min")),
                     _num(sw.get("avg")), _num(sw.get("max")), it.get("n", 0),
                     _num(it.get("max")), _jitter(r)))
    return rows


def shared_tables(records):
    """(title, headers, rows) of the shared-core tables that have rows."""
    out = []
    rows = shared_lat_rows(records)
    if rows:
        out.append(("latency guest sharing one core with a busy partition (vtimer-wfi), icount "
                    "shift 4, ticks (instructions)", SHARED_LAT_HEADERS, rows))
    rows = shared_switch_rows(records)
    if rows:
        out.append(("two guests spinning on one core: switches and interruptions, icount shift "
                    "4, ticks (instructions)", SHARED_SWITCH_HEADERS, rows))
    return out


def shared_section(data):
    tables = shared_tables(data["records"])
    traced = switch_trace_lines(data["records"])
    if not tables and not traced:
        return []
    lines = ["## Shared cores: two guests on one core (arm64, shift 4)", "",
             f"Tern's pool is core {bench.TERN_SHARED_CORE}'s; Xen's (`xen sched`: `make "
             "xen-sched`) is a boot-time cpupool on its board's one core (so Pool-0), set in "
             "the device tree. Both run with Xen's defaults where a dom0less Xen takes nothing "
             f"else: RTDS {bench.SHARED_RTDS_BUDGET_US} us every {bench.SHARED_RTDS_PERIOD_US} "
             "us for each guest (Xen's also with its default extra time), except Tern's in "
             f"the switch rows: {bench.SWITCH_RTDS_BUDGET_US} us each, since its servers are "
             "not work-conserving and would leave the core idle between turns, credit weight 256 "
             f"each (slice: Tern {bench.TERN_CREDIT_SLICE_US} us, Xen credit's 30 ms "
             "`sched_credit_tslice_ms`, with its 1 ms `sched_ratelimit_us`). ARINC 653 (Tern "
             f"only): a {bench.SHARED_MAJOR_FRAME_US} us major frame, a "
             f"{bench.SHARED_WINDOW_US} us window per guest; Xen's has no figure under "
             "icount (see *Method*). The busy partition streams memory and takes no interrupt; "
             "the switch rows' guests spin on the physical counter (`noise.mode=slices`): a "
             "switch is one guest's last read to the other's first, an interruption a gap of "
             "one guest with no run of the other in it (the core busy with something else, "
             "e.g. a scheduler tick). Window-start jitter: the hypervisor's, the widest spread "
             "of one window's entries, each from its boundary to the counter read just before "
             "the eret into the guest (`tern-sched`), over the windows both guests measured; "
             "then each guest's, the spread of its first reads relative to its major frame, "
             "which adds where in its read loop's step it was switched out. At shift 4 a tick "
             "is an instruction.", ""]
    for title, headers, rows in tables:
        lines += [f"**{title[0].upper() + title[1:]}**", "",
                  "| " + " | ".join(headers) + " |", markdown_rule(headers)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        lines.append("")
    return lines + traced + SHARED_METHOD


SHARED_METHOD = [
    "### Method: Xen 4.17 for these rows",
    "",
    "- **Build** (`make xen-sched`, `scripts/xen/build-xen-null.sh sched`): Debian's `xen` "
    "source package (bookworm's 4.17.5 where the mirror does not serve the security update's "
    "source), `arm64_defconfig` plus `CONFIG_EXPERT`, `CONFIG_UNSUPPORTED`, "
    "`CONFIG_SCHED_NULL`, `CONFIG_SCHED_RTDS`, `CONFIG_SCHED_ARINC653` and "
    "`CONFIG_BOOT_TIME_CPUPOOLS`, `CONFIG_DEBUG` off; credit (credit1) is in the defconfig. "
    "credit2 stays the default scheduler.",
    "- **Configuration, dom0less**: under `/chosen`, a `xen,cpupool` node whose `cpupool-cpus` "
    "is the board's one core and whose `cpupool-sched` is the row's scheduler (the pool "
    "holding the boot core becomes Pool-0), and each domU's `domain-cpupool` pointing at it. "
    "The Xen command line is the other rows' (`console=dtuart ... bootscrub=off`), WFI trapped "
    "(Xen's default `vwfi=trap`: a waiting guest gives the core away).",
    "- **What Xen 4.17 cannot be told without dom0 and a toolstack**: no per-domain scheduling "
    "parameter is read from the device tree. So RTDS runs every vCPU at its defaults, 4 ms "
    "every 10 ms, with extra time on (work-conserving: `xl sched-rtds -e` would turn it off); "
    "credit runs weight 256, no cap, for every domain (the command line sets only global "
    "values: `sched_credit_tslice_ms`, `sched_ratelimit_us`, left at 30 ms and 1 ms). Tern's "
    "side is configured to the same budgets, periods and weights.",
    "- **ARINC 653**: Xen gives its default windows (10 ms each) to domain 0's vCPUs only; a "
    "dom0less domU (domain 1 or above) runs only in windows a toolstack sets (`xl "
    "sched-arinc653`). With no dom0 the domUs never ran. A dom0 that does the toolstack's job "
    "(`guests/xen/arinc-dom0`: it gives each domU a distinct domain handle with "
    "`XEN_DOMCTL_setdomainhandle` and puts the pool's schedule with `XEN_SYSCTL_scheduler_op` "
    "putinfo, the same major frame and windows as Tern's; Xen itself unmodified) cannot run in "
    "the domUs' pool: a window names its vCPU by domain handle and vCPU id, every domain has "
    "the all-zero handle at boot, and Xen 4.17 resolves dom0's default window to the newest "
    "matching vCPU, domain 2's, which then holds the core and dom0 never runs. On two cores "
    "(dom0 in Pool-0, the domUs' ARINC 653 pool on the other) Xen accepts its schedule and the "
    "domUs take turns in 10 ms windows (`tests/system/test_xen_pools.py`), but Xen 4.17 stops "
    "booting on two cores under icount, and a timed run without icount is not comparable: Xen "
    "has no timed ARINC 653 row. Its window switch is counted instead, instruction by "
    "instruction from an execution trace (the table above, where it was run), and the "
    "window-switch goal is held against that count; without it, against Xen's nearest timed "
    "figure, its context switch.",
    "- Xen 4.17 runs no riscv64 guest: these rows are arm64 only. Both sides run the same "
    "guests' `-xen.img` builds (Xen) and board builds (Tern) of one source.",
    "",
]


# ---- The ARINC 653 window switch by execution trace (bench.run_switch_trace) ----

SWITCH_TRACE_HEADERS = ("SYSTEM", "switches", "MIN", "AVG", "MAX", "AVG / Xen's AVG",
                        "other paths")


def switch_trace_records(records):
    """Tern's rows first, then Xen's."""
    return sorted((r for r in records if r.get("test") == "switch-trace"),
                  key=lambda r: (not r["system"].startswith("tern"), r["system"]))


def _trace_avg(records, kind):
    r = next((r for r in records if r["system"].startswith(kind)
              and (r.get("hyp_instructions") or {}).get("n")), None)
    return None if r is None else r["hyp_instructions"]["avg"]


def switch_trace_rows(records):
    chosen = switch_trace_records(records)
    xen_avg = _trace_avg(chosen, "xen")
    rows = []
    for r in chosen:
        h = r.get("hyp_instructions") or {}
        ratio = f"{h['avg'] / xen_avg:.2f}" if xen_avg and h.get("n") else "-"
        rows.append((r["system"], h.get("n", 0), _num(h.get("min")), _num(h.get("avg")),
                     _num(h.get("max")), ratio, r.get("other_paths", "-")))
    return rows


def switch_trace_lines(records):
    """The table, where the median switch's instructions go, and how it was counted."""
    rows = switch_trace_rows(records)
    if not rows:
        return []
    lines = ["**Hypervisor instructions per ARINC 653 window switch, by execution trace "
             "(counted, not timed)**", "",
             "| " + " | ".join(SWITCH_TRACE_HEADERS) + " |", markdown_rule(SWITCH_TRACE_HEADERS)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    lines += ["", "Where the median switch's instructions go (functions by instructions):", ""]
    for r in switch_trace_records(records):
        funcs = ", ".join(f"`{name}` {n}" for name, n in r.get("functions") or [])
        lines.append(f"- {r['system']}: {funcs or '-'}")
    lines += ["", *SWITCH_TRACE_METHOD]
    return lines


SWITCH_TRACE_METHOD = [
    "Method: the same two slices guests, 10 ms windows in a 20 ms major frame, on core "
    f"{bench.SWITCH_TRACE_CORE} of a two-core board of the same machine; QEMU traces every "
    "instruction of the hypervisor's text (`-singlestep -d exec,nochain,int -dfilter`, "
    "`-accel tcg,thread=single` so that each core's lines stay in order), streamed through a "
    "FIFO into the parser (`pathtrace.parse_switches`). Counted: the EL2 instructions from the "
    "interrupt that ends one guest's window (an IRQ or FIQ from EL1) to the eret into the other "
    "guest, all of them the hypervisor's, a nested EL2 exception on the way included; a path "
    "is a switch if it runs the function that saves the outgoing vCPU (Tern `arch_vcpu_save`, "
    "Xen `__context_switch`), *other paths* are the interrupts from EL1 on that core that did "
    "not switch. Xen 4.17 (`make xen-sched`) is unmodified: its dom0 stand-in "
    "(`guests/xen/arinc-dom0`) sets the schedule from Pool-0 on core 0. Tern runs under icount "
    "shift 4, Xen without icount, since Xen 4.17 does not boot on two cores under icount and "
    "the stand-in needs two; an instruction count does not depend on the clock (a window's "
    "length only decides when the next switch comes, not what it executes), so the two are "
    "comparable where the timed rows are not. Each guest ends after "
    f"{bench.SWITCH_TRACE_SLICES['tern']} (Tern) or {bench.SWITCH_TRACE_SLICES['xen']} (Xen, whose "
    "traced console takes seconds a line) turns away from the core; counted are the switches from both "
    "guests' first line in slices mode to the first guest's results (before, one guest still "
    "prints through the hypervisor's console; after, the finished guest's windows idle), the "
    "first dropped (the parser may lag QEMU by up to a pipe's worth of lines). This scenario "
    f"alone: `./tern bench --scenarios {bench.SWITCH_TRACE_SCENARIO}`.",
    "",
]


def _switch_trace_goal_rows(recs):
    chosen = switch_trace_records(recs)
    if not chosen:
        return []
    tern, xen = _trace_avg(chosen, "tern"), _trace_avg(chosen, "xen")
    what = "| ARINC 653 window switch: hypervisor instructions per switch, AVG (execution trace) |"
    tern_cell = _num(tern) if tern is not None else "not run"
    if xen is None:
        return [f"{what} <= 1/3 of Xen's | {tern_cell} | Xen 4.17 ARINC 653: not run |"]
    verdict = ""
    if tern is not None:
        ratio = tern / xen
        verdict = (f" ({ratio:.2f} of Xen's: "
                   f"{'met' if ratio <= GOAL_WINDOW_SWITCH_OF_XEN else 'not met'})")
    return [f"{what} <= {_num(xen * GOAL_WINDOW_SWITCH_OF_XEN)} | {tern_cell} | Xen 4.17 "
            f"ARINC 653: {_num(xen)}{verdict} |"]


# ---- The riscv64 board's shared-core rows (bench.run_riscv64_shared_*): Tern only ----

RISCV64_SHARED = "riscv64-shared"


def in_instructions(r):
    """A riscv64 switch record with its `time` ticks as instructions (instructions_per_tick:
    100 at shift 0), to within one tick."""
    k = r.get("instructions_per_tick", 1)

    def scaled(stats):
        return {key: (v if key == "n" else round(v * k, 2) if isinstance(v, float) else v * k)
                for key, v in stats.items()}
    out = dict(r, switch=scaled(r.get("switch") or {}),
               interruption=scaled(r.get("interruption") or {}))
    if r.get("window_jitter"):
        out["window_jitter"] = {n: None if v is None else v * k
                                for n, v in r["window_jitter"].items()}
    if (r.get("window_start") or {}).get("n"):
        out["window_start"] = scaled(r["window_start"])
    return out


def riscv64_shared_tables(records):
    """(title, headers, rows) of the riscv64 board's shared-core tables that have rows."""
    board = layout.QEMU_VIRT_RISCV64.name
    out = []
    rows = shared_lat_rows(records, RISCV64_SHARED)
    if rows:
        out.append((f"latency guest sharing one core with a busy partition on {board} "
                    "(sbi-timer-wfi), icount shift 0, `cycle` ticks (instructions)",
                    SHARED_LAT_HEADERS, rows))
    switch = [in_instructions(r) for r in _shared(records, "switch", RISCV64_SHARED)]
    rows = shared_switch_rows(switch, RISCV64_SHARED)
    if rows:
        out.append((f"two guests spinning on one core on {board}: switches and "
                    "interruptions, icount shift 0, instructions (`time` ticks x "
                    f"{bench.RISCV64_INSTRUCTIONS_PER_TICK}: to within "
                    f"{bench.RISCV64_INSTRUCTIONS_PER_TICK})", SHARED_SWITCH_HEADERS, rows))
    return out


def riscv64_shared_section(data):
    tables = riscv64_shared_tables(data["records"])
    if not tables:
        return []
    mhz = bench.RISCV64_TIMEBASE_HZ // 1_000_000
    per_tick = bench.RISCV64_INSTRUCTIONS_PER_TICK
    lines = [f"## Shared cores on the RISC-V board ({layout.QEMU_VIRT_RISCV64.name}, shift 0)", "",
             f"The arm64 rows' set-up on the riscv64 board, Tern only (Xen 4.17 runs no riscv64 "
             f"guest): core {bench.TERN_SHARED_CORE} of 2 in a pool of the row's scheduler, with "
             "the same budgets, slices and windows, trap-and-emulate partitions "
             "(`irq = \"trap\"`, `wfi = \"trap\"`). The latency guest's timer is SBI "
             "`set_timer` (such a partition has no Sstc); its samples are `cycle`, virtual "
             "nanoseconds under icount, so at shift 0 one tick is one instruction, and the bound "
             f"is the scheduler's in instructions (10 ms = {10_000 * bench.RISCV64_CYCLE_HZ // 1_000_000} "
             "of them). riscv64's noise guest has only its slices mode, so the busy partition "
             "spins on its counter with interrupts masked rather than streaming memory; it "
             "never gives the core away either. The switch rows' guests and the hypervisor's "
             f"`tern-sched` lines read `time`, the board's {mhz} MHz timebase: at shift 0 a "
             f"tick is {per_tick} instructions, and the tables give ticks x {per_tick}, each "
             f"figure to within {per_tick} instructions (a slices guest sees a gap above "
             f"{bench.RISCV64_SWITCH_GAP_TICKS} tick, its loop's step being under "
             f"{per_tick} instructions). Window-start jitter as on arm64: the hypervisor's, "
             "then the guests' first reads'. A boundary is a whole tick and an entry's read "
             f"rounds down to one, so a jitter of 1 tick is a spread of 1 to {2 * per_tick - 1} "
             f"instructions, and one of 0 ticks a spread under {per_tick}.", ""]
    for title, headers, rows in tables:
        lines += [f"**{title[0].upper() + title[1:]}**", "",
                  "| " + " | ".join(headers) + " |", markdown_rule(headers)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        lines.append("")
    scenarios = ",".join(f"{RISCV64_SHARED}-{w}-{s}" for w in ("lat", "switch")
                         for s in bench.SHARED_SCHEDULERS)
    return lines + [f"These rows alone: `./tern bench --scenarios {scenarios}`.", ""]


def _riscv64_shared_goal_rows(recs):
    """The issue 29 goals on the riscv64 board, each row named for it: Xen has no figure here,
    so the reference is arm64 Tern's own."""
    switch = [in_instructions(r) for r in _shared(recs, "switch", RISCV64_SHARED)]
    if not switch:
        return []

    def avg(records, scheduler):
        r = next((r for r in records if r["scheduler"] == scheduler
                  and r["system"].startswith("tern") and (r.get("switch") or {}).get("n")), None)
        return None if r is None else r["switch"]["avg"]

    def arm64(sched):
        value = avg(_shared(recs, "switch"), sched)
        return f"arm64 Tern {_num(value)} (shift 4)" if value is not None else "-"

    rows = []
    for sched, what, goal in (("credit", "context switch, credit pool", "<= 1/2 of Xen's"),
                              ("rtds", "context switch, rtds pool", "<= 1/2 of Xen's"),
                              ("arinc653", "ARINC 653 window switch", "<= 1/3 of Xen's")):
        value = avg(switch, sched)
        rows.append(f"| riscv64: {what}: AVG, instructions (to within "
                    f"{bench.RISCV64_INSTRUCTIONS_PER_TICK}) | {goal} (no Xen on riscv64) | "
                    f"{_num(value) if value is not None else 'not run'} | {arm64(sched)} |")
    whose = "the hypervisor's entries"
    jitter = max((r["window_start"]["jitter"] for r in switch
                  if r["scheduler"] == "arinc653" and (r.get("window_start") or {}).get("n")),
                 default=None)
    rows.append(f"| riscv64: ARINC 653 window start: jitter across major frames, instructions "
                f"(to within {bench.RISCV64_INSTRUCTIONS_PER_TICK}) | exactly 0 | "
                f"{_num(jitter) if jitter is not None else 'not run'} | "
                f"{whose if jitter is not None else '-'} |")
    return rows


def _switch_avg(records, kind, scheduler):
    r = next((r for r in _shared(records, "switch") if r["scheduler"] == scheduler
              and r["system"].startswith(kind) and (r.get("switch") or {}).get("n")), None)
    return None if r is None else r["switch"]["avg"]


def _shared_goal_rows(recs):
    traced = _switch_trace_goal_rows(recs)
    if not _shared(recs, "switch"):
        return traced
    rows = []
    for sched in ("credit", "rtds"):
        tern, xen = _switch_avg(recs, "tern", sched), _switch_avg(recs, "xen", sched)
        goal = f"<= {_num(xen * GOAL_SWITCH_OF_XEN)}" if xen is not None else "<= 1/2 of Xen's"
        rows.append(f"| context switch, {sched} pool: AVG (one guest's last counter read to the "
                    f"other's first) | {goal} | {_num(tern) if tern is not None else 'not run'} | "
                    f"Xen 4.17 {sched}: {_num(xen) if xen is not None else 'not run'} |")
    tern = _switch_avg(recs, "tern", "arinc653")
    xen = _switch_avg(recs, "xen", "arinc653")
    if traced:
        # Xen's ARINC 653 is counted only by trace: the goal is held against that.
        rows += traced
    elif xen is not None:
        rows.append(f"| ARINC 653 window switch: AVG | <= {_num(xen * GOAL_WINDOW_SWITCH_OF_XEN)} "
                    f"| {_num(tern) if tern is not None else 'not run'} | Xen 4.17 ARINC 653: "
                    f"{_num(xen)} |")
    else:
        ref = [f"{s} {_num(_switch_avg(recs, 'xen', s))}" for s in ("rtds", "credit")
               if _switch_avg(recs, "xen", s) is not None]
        rows.append("| ARINC 653 window switch: AVG | <= 1/3 of Xen's | "
                    f"{_num(tern) if tern is not None else 'not run'} | Xen 4.17's ARINC 653 has "
                    "no figure under icount (see *Method*); its context switch " +
                    (", ".join(ref) or "not run") + " |")
    arinc = [r for r in _shared(recs, "switch") if r["scheduler"] == "arinc653"
             and r["system"].startswith("tern")]
    # The hypervisor's figure (its entry into each window against the boundary); the guests'
    # first reads only where a run has none.
    jitter = max((r["window_start"]["jitter"] for r in arinc
                  if (r.get("window_start") or {}).get("n")), default=None)
    whose = "the hypervisor's entries"
    if jitter is None:
        jitter = max((v for r in arinc for v in (r.get("window_jitter") or {}).values()
                      if v is not None), default=None)
        whose = "the guests' first reads"
    rows.append(f"| ARINC 653 window start: jitter across major frames | exactly 0 | "
                f"{_num(jitter) if jitter is not None else 'not run'} | "
                f"{whose if jitter is not None else '-'} |")
    return rows
