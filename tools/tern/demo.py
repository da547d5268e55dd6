"""`tern demo`: interrupt latency of the latency guest natively and in Tern, one table per board.

arm64: native, then a Tern partition with wfi trapped, with wfi native, and with its interrupts
direct; riscv64: native under OpenSBI, a trap-and-emulate partition and a trap-less one, each
with the hypervisor's entries per interrupt counted from tern-stats.
"""

import json
import sys
from pathlib import Path

from . import bench, build, layout, results, runner
from .config import dump_toml
from .errors import ToolError, cwd_relative, one_line, show_path
from .files import NotAFile, check_regular

IMAGE = runner.REPO_ROOT / "guests" / "build" / "arm64" / "lat.img"
TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy", "edu-wfi", "edu-busy")
# The device tests' board: QEMU's edu on the PCIe bus, the host bridge owned by the partition.
PCI = ("edu",)
DEVICES = ("pcie",)
PARTITION = "lat"
CORE = 1
BOARD_CPUS = 2
# The riscv64 table: the latency guest natively under OpenSBI, in a trap-and-emulate partition
# and in a trap-less one, two vCPUs on cores 1-2 (the IPI tests send from one to the other),
# at icount shift 0, where the guest's `cycle` counts instructions.
ARCHES = ("arm64", "riscv64")
IMAGE_RISCV64 = runner.REPO_ROOT / "guests" / "build" / "riscv64" / "lat.img"
# The bench's riscv64 tests: without Sstc or an IMSIC guest file, a trap-and-emulate
# partition runs the SBI timer and IPI tests, and edu's INTx through its emulated APLIC.
TESTS_RISCV64 = bench.RISCV64_TESTS
TRAP_TESTS_RISCV64 = bench.RISCV64_PARTITION_TESTS["trap"]
CORES_RISCV64 = (1, 2)
ICOUNT_RISCV64 = 0
# QEMU 7.2 runs the generic timer at 62.5 MHz: one tick is 16 ns of virtual time.
TIMER_TICK_NS = 16


def guest_bootargs(samples=None, tests=TESTS):
    """The latency guest's command line: `tests` (every arm64 demo test), `samples` each."""
    args = f"lat.tests={','.join(tests)}"
    return args if samples is None else f"{args} lat.samples={samples}"


def plan(arch):
    """The runs of one table: (label, wfi, irq, tests), the native one first (wfi None)."""
    if arch == "riscv64":
        return [("native", None, None, TESTS_RISCV64),
                ("tern wfi=trap", "trap", "trap", TRAP_TESTS_RISCV64),
                ("tern direct", "native", "direct", TESTS_RISCV64)]
    return [("native", None, None, TESTS), ("tern wfi=trap", "trap", "trap", TESTS),
            ("tern wfi=native", "native", "trap", TESTS),
            ("tern direct", "native", "direct", TESTS)]


def system_toml(image, wfi, memory="64MiB", samples=None, irq="trap", arch="arm64",
                tests=None):
    """The demo's one-partition system, as TOML text.  riscv64: two vCPUs on cores 1-2; a
    partition that runs an edu test owns the PCIe bus (the board has no IOMMU: unconfined DMA)."""
    if arch == "riscv64":
        tests = tests or (TESTS_RISCV64 if irq == "direct" else TRAP_TESTS_RISCV64)
        owns = any(t.startswith(("edu-", "intx-")) for t in tests)
        board = {"arch": "riscv64", "cpus": max(CORES_RISCV64) + 1,
                 "pci": list(PCI) if owns else []}
        partition = {"name": PARTITION, "cpus": list(CORES_RISCV64), "memory": memory,
                     "image": str(Path(image).resolve()), "wfi": wfi, "irq": irq,
                     "devices": list(DEVICES) if owns else [], "unconfined_dma": owns,
                     "bootargs": guest_bootargs(samples, tests)}
    else:
        board = {"cpus": BOARD_CPUS, "pci": list(PCI)}
        partition = {"name": PARTITION, "cpus": [CORE], "memory": memory,
                     "image": str(Path(image).resolve()), "wfi": wfi, "irq": irq,
                     "devices": list(DEVICES), "bootargs": guest_bootargs(samples, tests or TESTS)}
    return dump_toml({"board": board, "partition": [partition]},
                     comment="Written by `tern demo`.")


def unit_note(icount):
    """What a latency number means on this emulated board."""
    if icount is None:
        return "emulated, real time (no icount): 1 tick = 16 ns of host time; not hardware time"
    per_tick = TIMER_TICK_NS / (1 << icount)
    word = "instruction" if per_tick == 1 else "instructions"
    return f"emulated (icount shift {icount}): 1 tick = {per_tick:g} {word}; not hardware time"


def unit_note_riscv64():
    return ("emulated (icount shift 0): 1 tick = 1 instruction (the guest's `cycle`); "
            "not hardware time")


def _run(args, arch, label, wfi, irq, tests, rundir, samples, quiet):
    """One run of the demo: (RunResult, LAT-JSON records, tern-stats of the partition)."""
    image = args.image if arch == "arm64" else IMAGE_RISCV64
    icount = args.icount if arch == "arm64" else ICOUNT_RISCV64
    if wfi is None:
        result = runner.run_native(image, bootargs=guest_bootargs(samples, tests),
                                   cpus=BOARD_CPUS, icount=icount, timeout=args.timeout,
                                   quiet=quiet, workdir=rundir, pci=PCI)
        return result, result.lat, {}
    rundir = runner.make_workdir(rundir)     # tern's own, before system.toml goes in
    toml_path = rundir / "system.toml"
    toml_path.write_text(system_toml(image, wfi, samples=samples, irq=irq, arch=arch,
                                     tests=tests))
    result = runner.run_system(toml_path, icount=icount, timeout=args.timeout, quiet=quiet,
                               workdir=rundir,
                               hypervisor=args.hypervisor if arch == "arm64" else None)
    part = result.partitions.get(PARTITION)
    return result, (part.lat if part else []), result.stats.get(PARTITION) or {}


def _count_traps(args, label, wfi, irq, tests, rundir):
    """riscv64: per test, the hypervisor's entries per interrupt (bench.traps_per_interrupt).
    Returns ({test: {...}}, failed RunResult or None)."""
    def run_counters(test, samples):
        result, _, counters = _run(args, "riscv64", label, wfi, irq, (test,),
                                   rundir / f"traps-{test}-{samples}", samples, True)
        return (counters, None) if result.ok and counters else (None, result)

    return bench.traps_per_interrupt(tests, run_counters)


def _table(args, arch, workdir, quiet):
    """Run one board's plan and print its table; returns its JSON part and the statuses."""
    runs, statuses, traps = {}, {}, {}
    riscv = arch == "riscv64"
    for label, wfi, irq, tests in plan(arch):
        print(f"demo: running {label}{' (riscv64)' if riscv else ''} ...", file=sys.stderr,
              flush=True)
        name = label.replace(" ", "-").replace("=", "-")
        rundir = workdir / (f"riscv64-{name}" if riscv else name)
        # arm64's guest runs its own test list by default; riscv64's is always named.
        result, records, _ = _run(args, arch, label, wfi, irq, tests if riscv else TESTS,
                                  rundir, args.samples, quiet)
        runs[label] = records
        statuses[label] = result
        if not result.ok:
            print(f"tern: error: demo: {label}: {one_line(result.reason)} "
                  f"(see {show_path(rundir)})", file=sys.stderr)
        elif not records:
            print(f"demo: {label}: no LAT-JSON records (see {rundir}/serial.log)",
                  file=sys.stderr)
        elif riscv and wfi is not None:
            traps[label], failed = _count_traps(args, label, wfi, irq, tests,
                                                Path(f"{rundir}-traps"))
            if failed is not None:
                statuses[f"{label} (traps)"] = failed
                print(f"tern: error: demo: {label}: counting traps: "
                      f"{one_line(failed.reason or 'no tern-stats')}", file=sys.stderr)

    units = {r.get("unit") for records in runs.values() for r in records if r.get("unit")}
    unit = " / ".join(sorted(units)) if units else "ticks"
    image = args.image if not riscv else IMAGE_RISCV64
    note = unit_note_riscv64() if riscv else unit_note(args.icount)
    icount = ICOUNT_RISCV64 if riscv else args.icount
    print(f"Interrupt latency of {cwd_relative(image)}, in {unit}; {note}")
    known = TESTS_RISCV64 if riscv else TESTS
    tests = list(known) + sorted({r.get("test") for rs in runs.values() for r in rs
                                  if r.get("test") not in known}, key=str)
    headers, rows = results.latency_table(runs, tests)
    if riscv:
        # A trap-and-emulate partition does not run what needs Sstc, a guest file or the bus.
        planned = {label: set(t) for label, _, _, t in plan(arch)}
        headers = headers + ("traps/interrupt", "by cause")
        rows = [row + trap_cells(traps, row[1], row[0]) for row in rows
                if row[0] in planned.get(row[1], ()) or row[0] not in known]
    print(results.format_table(headers, rows))
    if riscv:
        n = bench.TRAP_SAMPLES
        print(f"traps/interrupt: the hypervisor's entries per sample, by cause (tern-stats; each "
              f"test alone with {n} and {2 * n} samples, the difference divided by {n}); "
              "native: no hypervisor")
    part = {"icount": icount, "unit": unit, "note": note,
            "runs": {label: {"status": statuses[label].status, "reason": statuses[label].reason,
                             "workdir": str(statuses[label].workdir), "lat": runs[label],
                             **({"traps": traps[label]} if label in traps else {})}
                     for label in runs}}
    return part, statuses


def trap_cells(traps, label, test):
    """(traps/interrupt, by cause) of one riscv64 row: "-" for native or what was not counted."""
    counted = (traps.get(label) or {}).get(test)
    if counted is None:
        return ("-", "-")
    causes = counted["traps_by_cause"]
    return (counted["traps_per_interrupt"],
            ", ".join(f"{k} {v}" for k, v in causes.items()) or "none")


def run(args):
    arches = [a for a in ARCHES if a in (args.arch or ARCHES)]
    for arch in arches:
        image = args.image if arch == "arm64" else IMAGE_RISCV64
        try:
            check_regular(image)
        except NotAFile as e:
            hint = " (build the guests first)" if e.problem == "no such file" else ""
            raise ToolError(f"latency guest: {e}{hint}") from None
        build.check_hypervisor((args.hypervisor if arch == "arm64" else None)
                               or runner.default_hypervisor(arch), layout.VIRT_BOARDS[arch])
    workdir = runner.make_workdir(args.workdir)
    quiet = not args.verbose
    doc = {"samples": args.samples, "arches": arches}
    statuses = {}
    for n, arch in enumerate(arches):
        if n:
            print()
        part, done = _table(args, arch, workdir, quiet)
        statuses.update({(arch, label): result for label, result in done.items()})
        if arch == "arm64":
            doc.update({k: part[k] for k in ("icount", "unit", "note", "runs")})
        else:
            doc[arch] = part
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    failed = [r.status for r in statuses.values() if not r.ok]
    return failed[0] if failed else 0
