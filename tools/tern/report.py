"""Benchmark reports: the terminal table, plots and docs/benchmarks.md, all from results.json."""

import datetime
import re
import subprocess
from pathlib import Path

from . import results as results_fmt
from .runner import REPO_ROOT

HYPERVISOR_ELF = REPO_ROOT / "hypervisor" / "build" / "tern.elf"
TIMER_TICK_NS = 16  # QEMU virt's 62.5 MHz generic timer

# Goals from the issues, in instructions over native (icount shift 4).
GOAL_TRAP_AND_INJECT = 50
GOAL_WFI_TRAPPED = 150
GOAL_BOOT_US = 1000


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


def latency_rows(records, scenario, shift):
    """(test, system, AVG, MIN, MAX, WARM_MAX, p99, p99.9, extra) rows of one scenario."""
    rows = []
    chosen = [r for r in records if r["scenario"] == scenario and r["shift"] == shift and "avg" in r]
    tests = list(dict.fromkeys(r["test"] for r in chosen))
    for r in sorted(chosen, key=lambda r: tests.index(r["test"])):
        extra = r.get("extra_avg")
        rows.append((r["test"], r["system"], _num(r["avg"]), r["min"], r["max"], r["warm_max"],
                     r["p99"], r.get("p999", "-"), "-" if extra is None else f"{extra:+.1f}"))
    return rows


HEADERS = ("TEST", "SYSTEM", "AVG", "MIN", "MAX", "WARM_MAX", "p99", "p99.9", "+AVG over native")


def terminal_report(data):
    lines = []
    for scenario in data["scenarios"]:
        for shift in data["plan"]["shifts"]:
            rows = latency_rows(data["records"], scenario["name"], shift)
            if not rows:
                continue
            lines.append(f"\n{scenario['title']} - icount shift {shift}, ticks")
            lines.append(results_fmt.format_table(HEADERS, rows))
    prio = [r for r in data["records"] if r["scenario"] == "prio"]
    if prio:
        lines.append("\npriority order: runs served in priority order")
        lines += [f"  {r['system']:<16} {r['in_order']}/{r['runs']}" for r in prio]
    boots = [r for r in data["records"] if r["scenario"] == "boot"]
    if boots:
        lines.append("\nboot: board reset to the guest's first instruction")
        lines += [f"  {r['system']:<32} {r['first_instruction']:>10} ticks = "
                  f"{r['first_instruction'] * 1e6 / r['freq_hz']:9.0f} us emulated" for r in boots]
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
SCENARIO_NOTES = {
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
}


def _fmt_extra(value):
    return "-" if value is None else f"+{value:.0f}"


def markdown_report(data, plot_dir_rel=None):
    meta = data["meta"]
    recs = data["records"]
    paths = data["paths"]
    lines = [
        "# Benchmarks",
        "",
        "Generated by `tern bench` from `results.json`; do not edit by hand.",
        "",
        f"- Command: `{meta['command']}`, {meta['date']}, {data['plan']['samples']} samples per "
        f"latency test, icount shifts {', '.join(str(s) for s in data['plan']['shifts'])}; "
        f"took {meta['seconds']:.0f} s",
        f"- Board: QEMU `virt`, GICv3, cortex-a53; {meta['versions']['qemu']}; built with "
        f"{meta['versions']['clang']}",
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
        "## Systems",
        "",
        *[f"- **{s['name']}**: {s['description']}" for s in data["systems"]],
        "",
        "Xen gives a domU its own memory map, not the board's (GIC at 0x0300_1000 / 0x0302_0000,",
        "console on Xen's emulated PL011 at 0x2200_0000), so the Xen runs use",
        "`guests/build/*-xen.img`: the same sources built with `guests/xen/board.h`. An image built",
        "for the board does not boot unchanged as a Xen domU; it does in a Tern partition. Every",
        "Xen run uses `bootscrub=off` (Xen scrubs free RAM in the background after boot, which",
        "would delay wake-ups in the first hundreds of milliseconds).",
        "",
        "## Against the goals (icount shift 4)",
        "",
        "| path | goal | Tern | reference on this board |",
        "|---|---:|---:|---|",
    ]
    all_timer = {"vtimer-busy", "ptimer-busy", "vtimer-wfi", "ptimer-wfi"}
    wfi_tests = {"vtimer-wfi", "ptimer-wfi"}
    inject = _worst_extra(recs, {"tern wfi=trap", "tern wfi=native"}, all_timer)
    wfi_trap = _worst_extra(recs, {"tern wfi=trap"}, wfi_tests)
    xen_null = _worst_extra(recs, {"xen null vwfi=native"}, all_timer)
    xen_native = _worst_extra(recs, {"xen credit2 vwfi=native"}, all_timer)
    xen_trap = _worst_extra(recs, {"xen credit2"}, wfi_tests)
    lines.append(f"| trap-and-inject, over native | <= +{GOAL_TRAP_AND_INJECT} | {_fmt_extra(inject)} | "
                 f"this run: Xen null+vwfi=native {_fmt_extra(xen_null)}, credit2+vwfi=native "
                 f"{_fmt_extra(xen_native)}; Bao about +199 (earlier measurement) |")
    lines.append(f"| guest WFI trapped, over native | <= +{GOAL_WFI_TRAPPED} | {_fmt_extra(wfi_trap)} | "
                 f"this run: Xen credit2 (WFI trapped) {_fmt_extra(xen_trap)} |")
    boots = [r for r in recs if r["scenario"] == "boot"]
    boot = next((r for r in boots if r["system"].startswith("tern")), None)
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
    if boot:
        us = boot["first_instruction"] * 1e6 / boot["freq_hz"]
        xen_boot = next((r for r in boots if r["system"].startswith("xen")), None)
        ref = "-" if xen_boot is None else \
            f"Xen: {xen_boot['first_instruction'] * 1e6 / xen_boot['freq_hz']:.0f} us"
        lines.append(f"| boot to first guest instruction | <= {GOAL_BOOT_US} us | {us:.0f} us | {ref} |")
    lines += [""]
    if plot_dir_rel:
        lines += [f"![extra instructions over native]({plot_dir_rel}/extra-over-native.svg)", ""]

    for scenario in data["scenarios"]:
        noted = False
        for shift in data["plan"]["shifts"]:
            rows = latency_rows(recs, scenario["name"], shift)
            if not rows:
                continue
            lines += [f"## {scenario['title'][0].upper()}{scenario['title'][1:]} (shift {shift})", ""]
            if not noted and scenario["name"] in SCENARIO_NOTES:
                lines += SCENARIO_NOTES[scenario["name"]] + [""]
                noted = True
            lines += ["| " + " | ".join(HEADERS) + " |",
                      "|" + "---|" * 2 + "---:|" * (len(HEADERS) - 2)]
            lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
            senders = [r for r in recs if r["scenario"] == scenario["name"] and r["shift"] == shift
                       and r.get("sender")]
            if senders:
                action = SENDER_ACTION.get(scenario["name"], "what raises the interrupt")
                lines += ["", f"Sender's cost (counter before and after {action}): " +
                          "; ".join(f"{r['system']} {r['test']} AVG {_num(r['sender'].get('avg'))}"
                                    for r in senders)]
            if plot_dir_rel and shift == 4:
                tests = sorted({r['test'] for r in recs if r['scenario'] == scenario['name']})
                lines += [""] + [f"![{scenario['name']} {t}]({plot_dir_rel}/cdf-{scenario['name']}-{t}.svg)"
                                 for t in tests]
            lines.append("")

    prio = [r for r in recs if r["scenario"] == "prio"]
    if prio:
        lines += ["## Priority order", "",
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

    if any(r["scenario"].startswith("noise") for r in recs):
        lines += ["## Interference caveat", "",
                  "Under icount QEMU runs all cores round-robin on one host thread. A core that never",
                  "sleeps holds that thread for whole slices and delays the other cores' interrupts:",
                  "an artefact of the emulator, not of the hypervisor. The headline interference",
                  "figure therefore uses a neighbour that streams memory and takes its own timer",
                  "interrupts in bursts separated by WFI (`noise-burst`); the spinning variant",
                  "(`noise-spin`) is reported with this caveat. The interference shows in the WFI tests",
                  "only: a core asleep in WFI is woken when the emulator next switches to it, after the",
                  "busy neighbour's current block of instructions; a core that is running takes its",
                  "interrupt at once, which is why the busy tests do not move. Tern has no state shared",
                  "between partitions on the interrupt path (per-core tables, no locks).", ""]

    if boots:
        lines += ["## Boot", "",
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

    fast = paths["fast_path"]
    lines += ["## Where Tern's extra instructions go", "",
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
              "hypervisor off the path entirely is direct delivery (issue 4).", "",
              "## Published hardware figures (for scale, not comparable with the above)", "",
              "On a Zynq UltraScale+ (4x Cortex-A53, GICv2) the \"Xen on ARM interrupt latency\" post",
              "(Xen Project blog, March 2017; in the project's source documents) measured with tbm:",
              "native about 300 ns; Xen 4.9 with pinned vCPUs AVG 4850 / WARM_MAX 4980 ns; with",
              "`vwfi=native` AVG 1850 / WARM_MAX 1950 ns.", ""]
    if data["errors"]:
        lines += ["## Runs that failed or were skipped", ""]
        lines += [f"- FAILED: {e['scenario']} on {e['system']} (shift {e['shift']}): {e['error']}"
                  for e in data["errors"] if not e.get("skipped")]
        reasons = {}
        for e in data["errors"]:
            if e.get("skipped"):
                reasons.setdefault(e["error"], []).append(f"{e['scenario']} on {e['system']}")
        lines += [f"- Not run: {', '.join(cells)}. Why: {why}." for why, cells in reasons.items()]
        lines.append("")
    return "\n".join(lines)


def today():
    return datetime.date.today().isoformat()


def rel(path, base):
    try:
        return str(Path(path).resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)
