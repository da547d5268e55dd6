"""The `tern` command line.

    tern run SYSTEM.toml      boot the hypervisor with the system, stream the console
    tern check SYSTEM.toml    validate the system and print where everything goes
    tern native IMAGE         boot an image directly on the same board
    tern demo                 interrupt latency: native vs. Tern (wfi trap / native, direct)
    tern bench                the latency lab: every system x scenario, JSON, plots, report

main() is the one place where a failure becomes a line, `tern: error: FILE: FIELD: message`,
and an exit status (errors.py; README.md has the table): 0 ok, 1 run failed, 2 bad input
or missing tool, 3 hypervisor panic, 70 internal error (a bug: --debug shows the traceback),
124 timeout, 128+N ended by signal N (SIGINT, SIGTERM, SIGHUP and SIGQUIT end QEMU first).
"""

import argparse
import json
import math
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from . import bench, build, layout, qemu, results, runner
from .config import CPU_MODELS, PCI_DISK_MODELS, PCI_MODELS, format_size, load_system
from .errors import (EXIT_INTERNAL, EXIT_SIGNAL_BASE, Interrupted, TernError, ToolError,
                     UsageError, one_line, quote, show_path)
from .files import NotAFile, check_regular
from .image import ARCHS

DEMO_IMAGE = runner.REPO_ROOT / "guests" / "build" / "arm64" / "lat.img"
DEMO_TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy", "edu-wfi", "edu-busy")
# The device tests' board: QEMU's edu on the PCIe bus, the host bridge owned by the partition.
DEMO_PCI = ("edu",)
DEMO_DEVICES = ("pcie",)
DEMO_PARTITION = "lat"
DEMO_CORE = 1
DEMO_BOARD_CPUS = 2
# The riscv64 table: the latency guest natively under OpenSBI, in a trap-and-emulate partition
# and in a trap-less one, two vCPUs on cores 1-2 (the IPI tests send from one to the other),
# at icount shift 0, where the guest's `cycle` counts instructions.
DEMO_ARCHES = ("arm64", "riscv64")
DEMO_IMAGE_RISCV64 = runner.REPO_ROOT / "guests" / "build" / "riscv64" / "lat.img"
# The bench's riscv64 tests: without Sstc or an IMSIC guest file, a trap-and-emulate
# partition runs the SBI timer and IPI tests, and edu's INTx through its emulated APLIC.
DEMO_TESTS_RISCV64 = bench.RISCV64_TESTS
DEMO_TRAP_TESTS_RISCV64 = bench.RISCV64_PARTITION_TESTS["trap"]
DEMO_CORES_RISCV64 = (1, 2)
DEMO_ICOUNT_RISCV64 = 0
# QEMU 7.2 runs the generic timer at 62.5 MHz: one tick is 16 ns of virtual time.
TIMER_TICK_NS = 16
# The longest --timeout: a week.  (More would be no timeout; inf would overflow the clock.)
MAX_TIMEOUT = 7 * 24 * 3600

# Signals that end a run: QEMU is ended and tern exits with 128 + N.
ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                       if hasattr(signal, name))


def main(argv=None):
    """Run the command line `argv`; returns the exit status.  Nothing escapes as a
    traceback (unless --debug asks for it): every failure is one line on stderr."""
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    previous = _catch_signals()
    try:
        return _report(argv, debug)
    except Interrupted as e:        # the signal came while another failure was being said
        return _fail(f"interrupted by {e.name}", e.status, debug)
    finally:
        _restore_signals(previous)
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            _quiet_stdout()


def _report(argv, debug):
    """_main(argv), every failure turned into its line and status."""
    try:
        return _main(argv)
    except Interrupted as e:
        return _fail(f"interrupted by {e.name}", e.status, debug)
    except KeyboardInterrupt:
        return _fail("interrupted by SIGINT", EXIT_SIGNAL_BASE + signal.SIGINT, debug)
    except BrokenPipeError:
        # Our output was closed (`tern check | head -1`): end as a SIGPIPE would.
        _quiet_stdout()
        return _fail("output closed (broken pipe)", EXIT_SIGNAL_BASE + signal.SIGPIPE, debug)
    except TernError as e:
        return _fail(str(e), e.status, debug)
    except OSError as e:
        where = f"{show_path(e.filename)}: " if e.filename else ""
        return _fail(f"{where}{(e.strerror or str(e)).lower()}", TernError.status, debug)
    except Exception as e:          # a bug in tern: still one line, and a status that says so
        return _fail(f"internal error: {type(e).__name__}: {e} (--debug shows where)",
                     EXIT_INTERNAL, debug)


def _main(argv):
    args = _parser().parse_args(argv)
    return args.func(args)


def _fail(message, status, debug):
    if debug:
        traceback.print_exc()
    try:
        print(f"tern: error: {one_line(message)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass                        # no terminal left to say it on (SIGHUP)
    return status


def _quiet_stdout():
    """Point stdout at /dev/null, so that Python's last flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _catch_signals():
    """Make SIGINT, SIGTERM, SIGHUP and SIGQUIT raise Interrupted in the main thread, once:
    it unwinds through run_qemu's cleanup, which kills QEMU, and main() exits with 128 + N.
    A second signal while tern is ending is ignored (QEMU dies with tern regardless:
    runner.guarded).  Returns the handlers to put back; only the main thread can do this."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    raised = []

    def handler(signum, frame):
        if not raised:
            raised.append(signum)
            raise Interrupted(signum)

    previous = {}
    for signum in ENDING_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, handler)
        except (OSError, ValueError):
            pass
    return previous


def _restore_signals(previous):
    for signum, handler in previous.items():
        try:
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        except (OSError, ValueError, TypeError):
            pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is a UsageError: one line, exit status 2."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def _icount(text):
    try:
        shift = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {show_path(text)}") from None
    if not 0 <= shift <= 10:
        raise argparse.ArgumentTypeError(f"icount shift must be 0..10 (got {shift})")
    return shift


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {show_path(text)}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_TIMEOUT} s "
                                         f"(got {show_path(text)})")
    return value


def _cores(text):
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {show_path(text)}") from None
    if not 1 <= count <= 8:
        raise argparse.ArgumentTypeError(f"must be 1..8 (got {count})")
    return count


def _samples(text):
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {show_path(text)}") from None
    if not 1 <= count <= 1_000_000:
        raise argparse.ArgumentTypeError(f"must be 1..1000000 (got {count})")
    return count


def _parser():
    parser = _Parser(
        prog="tern", description="Build, run and measure Tern partitioned systems on QEMU virt.")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, also print Python's traceback")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # --debug after the command too (main() looks for it in argv, as parsing may fail).
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="on an error, also print Python's traceback")

    def run_options(p):
        p.add_argument("--icount", type=_icount, metavar="SHIFT",
                       help="deterministic emulated time: one instruction = 2^SHIFT ns")
        p.add_argument("--timeout", type=_seconds, default=runner.DEFAULT_TIMEOUT, metavar="S",
                       help="kill QEMU after S seconds (default %(default)g)")
        p.add_argument("--workdir", type=Path, metavar="D",
                       help="where generated files and serial.log go: a new or empty "
                            "directory, or one tern made before (default: a new directory "
                            "under build/run/)")
        p.add_argument("--quiet", action="store_true", help="do not echo the console")

    p = sub.add_parser("run", help="boot the hypervisor with a system description",
                       parents=[debug])
    p.add_argument("system", type=Path, metavar="SYSTEM.toml")
    run_options(p)
    p.add_argument("--hypervisor", type=Path, metavar="IMAGE",
                   help=f"hypervisor image (default {_rel(runner.DEFAULT_HYPERVISOR)}, for a "
                        f"riscv64 board {_rel(runner.DEFAULT_HYPERVISOR_RISCV64)})")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("check", help="validate a system description and show its layout",
                       parents=[debug])
    p.add_argument("system", type=Path, metavar="SYSTEM.toml")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("native", help="boot an image directly on the board, no hypervisor "
                       "(an arm64 one on the arm virt board, a riscv64 one on the riscv virt "
                       "board)", parents=[debug])
    p.add_argument("image", type=Path, metavar="IMAGE",
                   help="Image or ELF, arm64 or riscv64 (its header says which), or a raw "
                        "binary (loaded as QEMU's -kernel loads one: arm64 at RAM base + "
                        "0x80000, riscv64 at 0x80200000)")
    p.add_argument("--arch", choices=ARCHS,
                   help="the board for a raw binary (default arm64); an Image or ELF says its "
                        "own")
    p.add_argument("--bootargs", default="", metavar="S", help="kernel command line")
    p.add_argument("--cpus", type=_cores, default=2, metavar="N", help="cores (default 2)")
    p.add_argument("--cpu", choices=CPU_MODELS,
                   help="CPU model (default cortex-a53; a riscv64 image always runs on "
                        f"{qemu.RISCV64_CPU})")
    diskless = [m for m in PCI_MODELS if m not in PCI_DISK_MODELS]
    p.add_argument("--pci", action="append", default=[], choices=diskless, metavar="MODEL",
                   help="put a QEMU PCI device on the board's PCIe bus, in slot 2, 3, ... as "
                        f"[board] pci does; repeat for more ({', '.join(diskless)})")
    run_options(p)
    p.set_defaults(func=cmd_native)

    p = sub.add_parser("demo", help="latency table (timers, edu device): native vs. Tern trap-and-inject "
                       "(wfi trap and native) and direct", parents=[debug])
    p.add_argument("--samples", type=_samples, metavar="N",
                   help="samples per test (lat.samples=N)")
    p.add_argument("--arch", choices=DEMO_ARCHES, action="append",
                   help="only this board's table: arm64 (QEMU's arm virt) or riscv64 (riscv "
                        "virt under OpenSBI, icount shift 0); repeat for both (the default)")
    p.add_argument("--icount", type=_icount, default=4, metavar="SHIFT",
                   help="arm64's icount shift (default 4: one timer tick per instruction); "
                        "riscv64 always runs at 0")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every record as JSON")
    p.add_argument("--timeout", type=_seconds, default=runner.DEFAULT_TIMEOUT, metavar="S",
                   help="per run (default %(default)g)")
    p.add_argument("--image", type=Path, default=DEMO_IMAGE,
                   help=f"arm64 latency guest (default {_rel(DEMO_IMAGE)}; riscv64's is "
                        f"{_rel(DEMO_IMAGE_RISCV64)})")
    p.add_argument("--hypervisor", type=Path, metavar="IMAGE",
                   help=f"arm64 hypervisor image (default {_rel(runner.DEFAULT_HYPERVISOR)}; "
                        f"riscv64's is {_rel(runner.DEFAULT_HYPERVISOR_RISCV64)})")
    p.add_argument("--workdir", type=Path, metavar="D",
                   help="where the runs' files go (default: a new directory under build/run/)")
    p.add_argument("--verbose", action="store_true", help="echo the console of every run")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("bench", help="the latency lab: systems x scenarios, results.json, plots, "
                       "report", parents=[debug])
    p.add_argument("--quick", action="store_true",
                   help="fewer samples, icount shift 4 only (a few minutes)")
    p.add_argument("--out", type=Path, default=runner.REPO_ROOT / "build" / "bench", metavar="DIR",
                   help="results.json and plots (default build/bench)")
    p.add_argument("--doc", type=Path, metavar="FILE",
                   help="also write the Markdown report there (make bench: docs/benchmarks.md)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots (no matplotlib needed)")
    p.add_argument("--scenarios", metavar="A,B", help="only these scenarios")
    p.add_argument("--workdir", type=Path, metavar="D",
                   help="where the runs' files go (default: a new directory under build/run/)")
    p.set_defaults(func=cmd_bench)
    return parser


def _rel(path):
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _finish(result):
    """Print the reason a run failed; return its exit status."""
    if result.status == runner.STATUS_OK:
        return 0
    print(f"tern: error: {one_line(result.reason)}", file=sys.stderr)
    if result.status == runner.STATUS_TIMEOUT:
        tail = result.tail()
        where = f" (all of them in {result.workdir / 'serial.log'})" if result.workdir else ""
        print(f"last {len(tail)} serial lines{where}:", file=sys.stderr)
        for line in tail:
            print(line, file=sys.stderr)
    return result.status


def cmd_run(args):
    # At a terminal, what the user types reaches the hypervisor console (help, stats, restart).
    result = runner.run_system(args.system, icount=args.icount, timeout=args.timeout,
                               quiet=args.quiet, workdir=args.workdir,
                               hypervisor=args.hypervisor, interactive=sys.stdin.isatty())
    return _finish(result)


def cmd_native(args):
    result = runner.run_native(args.image, bootargs=args.bootargs, cpus=args.cpus,
                               icount=args.icount, timeout=args.timeout, quiet=args.quiet,
                               workdir=args.workdir, cpu=args.cpu, pci=args.pci,
                               arch=args.arch)
    return _finish(result)


def cmd_check(args):
    system = load_system(args.system)
    placed = layout.place(system)
    board = system.board
    count = len(system.partitions)
    print(f"{show_path(args.system)}: ok: {count} partition{'s' if count != 1 else ''} on "
          f"{board.cpus} x {board.cpu}, {format_size(board.memory)} RAM")
    headers = ("REGION", "BOARD ADDRESS (HPA)", "SIZE", "PARTITION ADDRESS (IPA)", "NOTES")
    print(results.format_table(headers, layout.describe(system, placed)))
    ram_base = placed.board.ram_base
    used = placed.end - ram_base
    print(f"RAM used: {format_size(used, round_up=True)} of {format_size(board.memory)} "
          f"(0x{ram_base:x}-0x{placed.end:x})")
    return 0


def demo_bootargs(samples=None, tests=DEMO_TESTS):
    """The latency guest's command line: `tests` (every arm64 demo test), `samples` each."""
    args = f"lat.tests={','.join(tests)}"
    return args if samples is None else f"{args} lat.samples={samples}"


def demo_plan(arch):
    """The runs of one table: (label, wfi, irq, tests), the native one first (wfi None)."""
    if arch == "riscv64":
        return [("native", None, None, DEMO_TESTS_RISCV64),
                ("tern wfi=trap", "trap", "trap", DEMO_TRAP_TESTS_RISCV64),
                ("tern direct", "native", "direct", DEMO_TESTS_RISCV64)]
    return [("native", None, None, DEMO_TESTS), ("tern wfi=trap", "trap", "trap", DEMO_TESTS),
            ("tern wfi=native", "native", "trap", DEMO_TESTS),
            ("tern direct", "native", "direct", DEMO_TESTS)]


def demo_system_toml(image, wfi, memory="64MiB", samples=None, irq="trap", arch="arm64",
                     tests=None):
    """The demo's one-partition system, as TOML text.  riscv64: two vCPUs on cores 1-2; a
    partition that runs an edu test owns the PCIe bus (the board has no IOMMU: unconfined DMA)."""
    if arch == "riscv64":
        tests = tests or (DEMO_TESTS_RISCV64 if irq == "direct" else DEMO_TRAP_TESTS_RISCV64)
        owns = any(t.startswith(("edu-", "intx-")) for t in tests)
        lines = [
            "# Written by `tern demo`.",
            "[board]",
            'arch = "riscv64"',
            f"cpus = {max(DEMO_CORES_RISCV64) + 1}",
            f"pci = {json.dumps(list(DEMO_PCI) if owns else [])}",
            "",
            "[[partition]]",
            f'name = "{DEMO_PARTITION}"',
            f"cpus = {json.dumps(list(DEMO_CORES_RISCV64))}",
            f'memory = "{memory}"',
            f"image = {json.dumps(str(Path(image).resolve()))}",
            f'wfi = "{wfi}"',
            f'irq = "{irq}"',
            f"devices = {json.dumps(list(DEMO_DEVICES) if owns else [])}",
            f"unconfined_dma = {json.dumps(owns)}",
            f'bootargs = "{demo_bootargs(samples, tests)}"',
        ]
        return "\n".join(lines) + "\n"
    lines = [
        "# Written by `tern demo`.",
        "[board]",
        f"cpus = {DEMO_BOARD_CPUS}",
        f"pci = {json.dumps(list(DEMO_PCI))}",
        "",
        "[[partition]]",
        f'name = "{DEMO_PARTITION}"',
        f"cpus = [{DEMO_CORE}]",
        f'memory = "{memory}"',
        f"image = {json.dumps(str(Path(image).resolve()))}",
        f'wfi = "{wfi}"',
        f'irq = "{irq}"',
        f"devices = {json.dumps(list(DEMO_DEVICES))}",
        f'bootargs = "{demo_bootargs(samples, tests or DEMO_TESTS)}"',
    ]
    return "\n".join(lines) + "\n"


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


def _demo_run(args, arch, label, wfi, irq, tests, rundir, samples, quiet):
    """One run of the demo: (RunResult, LAT-JSON records, tern-stats of the partition)."""
    image = args.image if arch == "arm64" else DEMO_IMAGE_RISCV64
    icount = args.icount if arch == "arm64" else DEMO_ICOUNT_RISCV64
    if wfi is None:
        result = runner.run_native(image, bootargs=demo_bootargs(samples, tests),
                                   cpus=DEMO_BOARD_CPUS, icount=icount, timeout=args.timeout,
                                   quiet=quiet, workdir=rundir, pci=DEMO_PCI)
        return result, result.lat, {}
    rundir = runner.make_workdir(rundir)     # tern's own, before system.toml goes in
    toml_path = rundir / "system.toml"
    toml_path.write_text(demo_system_toml(image, wfi, samples=samples, irq=irq, arch=arch,
                                          tests=tests))
    result = runner.run_system(toml_path, icount=icount, timeout=args.timeout, quiet=quiet,
                               workdir=rundir,
                               hypervisor=args.hypervisor if arch == "arm64" else None)
    part = result.partitions.get(DEMO_PARTITION)
    return result, (part.lat if part else []), result.stats.get(DEMO_PARTITION) or {}


def _demo_traps(args, label, wfi, irq, tests, rundir):
    """riscv64: per test, the hypervisor's entries per interrupt (bench.traps_per_interrupt).
    Returns ({test: {...}}, failed RunResult or None)."""
    def run_counters(test, samples):
        result, _, counters = _demo_run(args, "riscv64", label, wfi, irq, (test,),
                                        rundir / f"traps-{test}-{samples}", samples, True)
        return (counters, None) if result.ok and counters else (None, result)

    return bench.traps_per_interrupt(tests, run_counters)


def _demo_table(args, arch, workdir, quiet):
    """Run one board's plan and print its table; returns its JSON part and the statuses."""
    runs, statuses, traps = {}, {}, {}
    riscv = arch == "riscv64"
    for label, wfi, irq, tests in demo_plan(arch):
        print(f"demo: running {label}{' (riscv64)' if riscv else ''} ...", file=sys.stderr,
              flush=True)
        name = label.replace(" ", "-").replace("=", "-")
        rundir = workdir / (f"riscv64-{name}" if riscv else name)
        # arm64's guest runs its own test list by default; riscv64's is always named.
        result, records, _ = _demo_run(args, arch, label, wfi, irq, tests if riscv else DEMO_TESTS,
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
            traps[label], failed = _demo_traps(args, label, wfi, irq, tests,
                                               Path(f"{rundir}-traps"))
            if failed is not None:
                statuses[f"{label} (traps)"] = failed
                print(f"tern: error: demo: {label}: counting traps: "
                      f"{one_line(failed.reason or 'no tern-stats')}", file=sys.stderr)

    units = {r.get("unit") for records in runs.values() for r in records if r.get("unit")}
    unit = " / ".join(sorted(units)) if units else "ticks"
    image = args.image if not riscv else DEMO_IMAGE_RISCV64
    note = unit_note_riscv64() if riscv else unit_note(args.icount)
    icount = DEMO_ICOUNT_RISCV64 if riscv else args.icount
    print(f"Interrupt latency of {_rel(image)}, in {unit}; {note}")
    known = DEMO_TESTS_RISCV64 if riscv else DEMO_TESTS
    tests = list(known) + sorted({r.get("test") for rs in runs.values() for r in rs
                                  if r.get("test") not in known}, key=str)
    headers, rows = results.latency_table(runs, tests)
    if riscv:
        # A trap-and-emulate partition does not run what needs Sstc, a guest file or the bus.
        planned = {label: set(t) for label, _, _, t in demo_plan(arch)}
        headers = headers + ("traps/interrupt", "by cause")
        rows = [row + demo_trap_cells(traps, row[1], row[0]) for row in rows
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


def demo_trap_cells(traps, label, test):
    """(traps/interrupt, by cause) of one riscv64 row: "-" for native or what was not counted."""
    counted = (traps.get(label) or {}).get(test)
    if counted is None:
        return ("-", "-")
    causes = counted["traps_by_cause"]
    return (counted["traps_per_interrupt"],
            ", ".join(f"{k} {v}" for k, v in causes.items()) or "none")


def cmd_demo(args):
    arches = [a for a in DEMO_ARCHES if a in (args.arch or DEMO_ARCHES)]
    for arch in arches:
        image = args.image if arch == "arm64" else DEMO_IMAGE_RISCV64
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
        part, done = _demo_table(args, arch, workdir, quiet)
        statuses.update({(arch, label): result for label, result in done.items()})
        if arch == "arm64":
            doc.update({k: part[k] for k in ("icount", "unit", "note", "runs")})
        else:
            doc[arch] = part
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    failed = [r.status for r in statuses.values() if not r.ok]
    return failed[0] if failed else 0


def cmd_bench(args):
    from . import report

    plan = bench.QUICK if args.quick else bench.FULL
    scenarios = bench.SCENARIOS
    if args.scenarios:
        wanted = args.scenarios.split(",")
        unknown = [w for w in wanted if w not in {s.name for s in scenarios}]
        if unknown:
            raise ToolError(f"unknown scenario(s) {', '.join(quote(w) for w in unknown)}; known: "
                            f"{', '.join(s.name for s in scenarios)}")
        scenarios = tuple(s for s in scenarios if s.name in wanted)
    for image in sorted({img for s in scenarios for img in bench.images_for(s)}):
        try:
            check_regular(image)
        except NotAFile as e:
            hint = " (run `make all linux` first)" if e.problem == "no such file" else ""
            raise ToolError(f"guest: {e.problem}: {show_path(_rel(image))}{hint}") from None
    build.check_hypervisor(runner.DEFAULT_HYPERVISOR)
    if not args.no_plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ToolError("plots need matplotlib (`make deps-bench`), or pass --no-plots")

    started = time.monotonic()
    records, errors = bench.run_matrix(plan, scenarios=scenarios, workdir=args.workdir)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "tern bench" + (" --quick" if args.quick else "")
    data = {
        "meta": {"command": command, "date": report.today(), "versions": report.tool_versions(),
                 "seconds": time.monotonic() - started,
                 "note": "emulated (icount): ticks count instructions, not hardware time"},
        "plan": {"samples": plan.samples, "prio_runs": plan.prio_runs, "shifts": list(plan.shifts),
                 "budget_instructions": bench.BUDGET_INSTRUCTIONS},
        "systems": [{"name": s.name, "description": s.describe()} for s in bench.SYSTEMS],
        "scenarios": [{"name": s.name, "title": s.title} for s in scenarios],
        "paths": report.interrupt_paths(),
        "records": records,
        "errors": errors,
    }
    (args.out / "results.json").write_text(json.dumps(data, indent=1) + "\n")
    plots = [] if args.no_plots else report.write_plots(data, args.out)
    print(report.terminal_report(data))
    if args.doc:
        plot_rel = None
        if plots:
            plot_rel = report.rel(args.out, args.doc.parent)
        args.doc.write_text(report.markdown_report(data, plot_rel))
    print(f"\nbench: {len(records)} records in {_rel(args.out / 'results.json')}"
          + (f", {len(plots)} plot files" if plots else "")
          + (f", report {_rel(args.doc)}" if args.doc else ""), file=sys.stderr)
    return 1 if [e for e in errors if not e.get("skipped")] else 0
