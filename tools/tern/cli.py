"""The `tern` command line.

    tern run SYSTEM.toml      boot the hypervisor with the system, stream the console
    tern check SYSTEM.toml    validate the system and print where everything goes (--json:
                              as one JSON object, with every finding; check.py)
    tern native IMAGE         boot an image directly on the same board
    tern demo                 interrupt latency: native vs. Tern (wfi trap / native, direct;
                              demo.py)
    tern bench                the latency lab: every system x scenario, JSON, plots, report
    tern ctl COMMAND          manage a running `tern run` through its control socket (list,
                              vcpu-list, pause, unpause, stop, restart, stats, ...; ctl.py)

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

from . import __version__, bench, build, check, ctl, demo, qemu, runner
from .config import CPU_MODELS, PCI_DISK_MODELS, PCI_MODELS
from .errors import (EXIT_INTERNAL, EXIT_SIGNAL_BASE, Interrupted, TernError, ToolError,
                     UsageError, one_line, quote, show_path)
from .errors import cwd_relative as _rel
from .files import NotAFile, check_regular
from .image import ARCHS

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


def _whole(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {show_path(text)}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (got {value})")
    return value


def _parser():
    parser = _Parser(
        prog="tern", description="Build, run and measure Tern partitioned systems on QEMU virt.")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, also print Python's traceback")
    parser.add_argument("--version", action="version", version=f"tern {__version__}")
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
    p.add_argument("systems", type=Path, nargs="+", metavar="SYSTEM.toml")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the layout and the findings (for scripts and "
                        "editors; of several files, {\"ok\": ..., \"files\": [...]}); an error "
                        "still exits non-zero")
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
    p.add_argument("--arch", choices=demo.ARCHES, action="append",
                   help="only this board's table: arm64 (QEMU's arm virt) or riscv64 (riscv "
                        "virt under OpenSBI, icount shift 0); repeat for both (the default)")
    p.add_argument("--icount", type=_icount, default=4, metavar="SHIFT",
                   help="arm64's icount shift (default 4: one timer tick per instruction); "
                        "riscv64 always runs at 0")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every record as JSON")
    p.add_argument("--timeout", type=_seconds, default=runner.DEFAULT_TIMEOUT, metavar="S",
                   help="per run (default %(default)g)")
    p.add_argument("--image", type=Path, default=demo.IMAGE,
                   help=f"arm64 latency guest (default {_rel(demo.IMAGE)}; riscv64's is "
                        f"{_rel(demo.IMAGE_RISCV64)})")
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

    p = sub.add_parser("ctl", help="manage a running system through `tern run`'s control "
                       "socket, as xl does", parents=[debug])
    p.add_argument("--workdir", type=Path, metavar="D",
                   help="the work directory of the `tern run` to talk to (default: the newest "
                        "under build/run/ with a control socket)")
    p.add_argument("--json", action="store_true",
                   help="print the hypervisor's reply as JSON (for scripts)")
    p.add_argument("--timeout", type=_seconds, default=ctl.REPLY_TIMEOUT + 5, metavar="S",
                   help="give up after S seconds (default %(default)g)")
    p.set_defaults(func=cmd_ctl)
    csub = p.add_subparsers(dest="ctl_command", required=True, metavar="COMMAND")
    for name, text in (("list", "the partitions (xl list)"),
                       ("vcpu-list", "every vCPU: its core and state (xl vcpu-list)"),
                       ("pool-list", "the pools and their schedulers (xl cpupool-list)"),
                       ("stats", "every partition's counters")):
        csub.add_parser(name, help=text)
    for name, text in (("pause", "hold a partition's vCPUs in the hypervisor, guest untouched"),
                       ("unpause", "let a paused partition go on where it was"),
                       ("stop", "end a partition, as its own power-off would"),
                       ("restart", "reload a partition from its pristine images")):
        csub.add_parser(name, help=text).add_argument("partition", metavar="PARTITION")
    c = csub.add_parser("vcpu-pin", help="move a vCPU to a core (xl vcpu-pin)")
    c.add_argument("partition", metavar="PARTITION")
    c.add_argument("vcpu", type=_whole, metavar="VCPU")
    c.add_argument("cpu", type=_whole, metavar="CPU")
    c = csub.add_parser("pool-migrate", help="move a partition to another pool")
    c.add_argument("partition", metavar="PARTITION")
    c.add_argument("pool", metavar="POOL")
    c = csub.add_parser("sched-rtds", help="a partition's RTDS budget and period")
    c.add_argument("partition", metavar="PARTITION")
    c.add_argument("--budget", type=_whole, metavar="US", required=True)
    c.add_argument("--period", type=_whole, metavar="US", required=True)
    c = csub.add_parser("sched-credit", help="a partition's credit weight (and cap)")
    c.add_argument("partition", metavar="PARTITION")
    c.add_argument("--weight", type=_whole, metavar="W", required=True)
    c.add_argument("--cap", type=_whole, metavar="PERCENT")
    c = csub.add_parser("sched-arinc653", help="an ARINC 653 pool's major frame and windows")
    c.add_argument("pool_name", metavar="POOL")
    c.add_argument("--major-frame", type=_whole, metavar="US")
    c.add_argument("--window", action="append", metavar="PARTITION:US")
    return parser


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
    # At a terminal, what the user types reaches the hypervisor console (help, stats, restart);
    # otherwise `tern ctl` does, through ctl.sock in the work directory.
    result = runner.run_system(args.system, icount=args.icount, timeout=args.timeout,
                               quiet=args.quiet, workdir=args.workdir,
                               hypervisor=args.hypervisor, interactive=sys.stdin.isatty(),
                               control=True)
    return _finish(result)


def cmd_ctl(args):
    return ctl.run(args, runner.RUN_DIR)


def cmd_native(args):
    result = runner.run_native(args.image, bootargs=args.bootargs, cpus=args.cpus,
                               icount=args.icount, timeout=args.timeout, quiet=args.quiet,
                               workdir=args.workdir, cpu=args.cpu, pci=args.pci,
                               arch=args.arch)
    return _finish(result)


def cmd_check(args):
    return check.run(args.systems, args.json)


def cmd_demo(args):
    return demo.run(args)


def cmd_bench(args):
    from . import report

    plan = bench.QUICK if args.quick else bench.FULL
    scenarios = bench.SCENARIOS
    if args.scenarios:
        wanted = args.scenarios.split(",")
        unknown = [w for w in wanted if w not in bench.SCENARIO_BY_NAME]
        if unknown:
            raise ToolError(f"unknown scenario(s) {', '.join(quote(w) for w in unknown)}; known: "
                            f"{', '.join(s.name for s in scenarios)}")
        scenarios = tuple(s for s in scenarios if s.name in wanted)
    for image in sorted({img for s in scenarios for img in s.images}):
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
