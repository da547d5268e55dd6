"""Running QEMU and deciding how a run went.

Python API for system tests (add tools/ to sys.path, then `from tern import ...`):

    run_system(toml_path, icount=None, timeout=120, quiet=True, workdir=None,
               console=None) -> RunResult
        Boot the hypervisor with the partitions described in toml_path.  console(line)
        sees every serial line and may return text to type on the board's console.
    run_native(image, bootargs="", cpus=2, icount=None, timeout=120, pci=(), ...) -> RunResult
        Boot `image` directly on the same board (at EL1, no hypervisor), with the
        PCI devices `pci` (["edu"]) in slots 2, 3, ... as [board] pci puts them, and
        an initial ramdisk `initrd` (QEMU's -initrd) and a device tree `dtb` in place
        of QEMU's own (-dtb) if given.

RunResult.status: 0 ok, 1 failed (reason says why), 3 hypervisor panic,
124 timed out.  Bad input raises tern.ConfigError / tern.ToolError instead.
"""

import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build, qemu, results
from .config import GiB, load_system
from .errors import ToolError
from .image import ImageError, inspect
from .layout import place

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HYPERVISOR = REPO_ROOT / "hypervisor" / "build" / "tern.img"
RUN_DIR = REPO_ROOT / "build" / "run"
DEFAULT_TIMEOUT = 120
# After "tern: PANIC" the hypervisor prints its report and stops the board,
# which may leave QEMU running; wait this long for the report, then end it.
PANIC_GRACE = 2.0
TAIL_LINES = 40

STATUS_OK = 0
STATUS_FAILED = 1
STATUS_PANIC = 3
STATUS_TIMEOUT = 124


@dataclass
class QemuRun:
    """What came out of one QEMU process."""

    lines: list
    returncode: int
    timed_out: bool
    stderr: list


@dataclass
class RunResult:
    """How a run went and everything it printed, sorted by the console protocol."""

    status: int
    reason: str
    log: list = field(default_factory=list)          # every serial line, in order
    partitions: dict = field(default_factory=dict)   # name -> results.PartitionOutput
    stats: dict = field(default_factory=dict)        # name -> tern-stats record
    faults: list = field(default_factory=list)       # parsed "tern: fault" lines
    panic: str = None                                # the "tern: PANIC" line
    lat: list = field(default_factory=list)          # native runs: LAT-JSON records
    probe: list = field(default_factory=list)        # native runs: PROBE-JSON records
    timed_out: bool = False
    qemu_status: int = None
    qemu_stderr: list = field(default_factory=list)
    workdir: Path = None
    command: list = field(default_factory=list)

    @property
    def ok(self):
        return self.status == STATUS_OK

    def tail(self, count=TAIL_LINES):
        return self.log[-count:]

    def explain(self, count=TAIL_LINES):
        """Status, reason and the end of the log: a ready-made assertion message."""
        out = [f"status {self.status}: {self.reason}"]
        if self.workdir:
            out.append(f"work directory: {self.workdir}")
        if self.qemu_stderr:
            out.append("QEMU stderr:")
            out += ["  " + line for line in self.qemu_stderr[-10:]]
        out.append(f"last {min(count, len(self.log))} of {len(self.log)} serial lines:")
        out += ["  " + line for line in self.tail(count)]
        return "\n".join(out)


def run_qemu(command, timeout, quiet=True, log_path=None, panic_prefix=None, stop_when=None,
             console=None, interactive=False):
    """Run `command`, streaming its output, until it exits or `timeout` seconds pass.

    Serial lines (QEMU's stdout) are echoed to our stdout unless quiet, and
    appended to log_path as they arrive.  A line starting with panic_prefix
    cuts the remaining time to PANIC_GRACE.  QEMU is killed on timeout, or
    once stop_when(line) says the run is complete (for boards that never
    power off by themselves).  console(line) may return text, which is typed
    on the serial console (QEMU's stdin); interactive=True hands QEMU our own
    stdin instead (a person at the terminal).
    """
    lines, stderr = [], []
    arrivals = queue.Queue()
    stdin = subprocess.PIPE if console else (None if interactive else subprocess.DEVNULL)
    proc = subprocess.Popen([str(c) for c in command], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    readers = [threading.Thread(target=_pump, args=(stream, tag, arrivals), daemon=True)
               for stream, tag in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for reader in readers:
        reader.start()
    log_file = open(log_path, "w", encoding="utf-8") if log_path else None
    deadline = time.monotonic() + timeout
    open_streams = len(readers)
    timed_out = False
    stopped = False

    def take(tag, raw):
        nonlocal deadline, stopped
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if tag == "err":
            stderr.append(line)
            if not quiet:
                print(line, file=sys.stderr, flush=True)
            return
        lines.append(line)
        if log_file:
            log_file.write(line + "\n")
            log_file.flush()
        if not quiet:
            print(line, flush=True)
        if panic_prefix and line.startswith(panic_prefix):
            deadline = min(deadline, time.monotonic() + PANIC_GRACE)
        if stop_when and stop_when(line):
            stopped = True
        typed = console(line) if console else None
        if typed:
            try:
                proc.stdin.write(typed.encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass                              # QEMU is gone; its exit says why

    try:
        while open_streams and not stopped:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            try:
                tag, raw = arrivals.get(timeout=remaining)
            except queue.Empty:
                continue
            if raw is None:
                open_streams -= 1
            else:
                take(tag, raw)
        if not timed_out and not stopped:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        # Killing QEMU closes its pipes; keep whatever it wrote before that.
        for reader in readers:
            reader.join(timeout=5)
        while True:
            try:
                tag, raw = arrivals.get_nowait()
            except queue.Empty:
                break
            if raw is not None:
                take(tag, raw)
        if log_file:
            log_file.close()
    return QemuRun(lines=lines, returncode=0 if stopped else proc.returncode, timed_out=timed_out,
                   stderr=stderr)


def _pump(stream, tag, arrivals):
    try:
        for raw in iter(stream.readline, b""):
            arrivals.put((tag, raw))
    finally:
        arrivals.put((tag, None))


def make_workdir(workdir=None):
    """The given directory (created if needed) or a fresh one under build/run/."""
    if workdir is not None:
        path = Path(workdir).resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="run-", dir=RUN_DIR))


def system_outcome(parsed, run, timeout, names):
    """(status, reason) of a hypervisor run, by the console protocol."""
    if parsed.panic:
        return STATUS_PANIC, f"hypervisor panic: {parsed.panic}"
    if run.timed_out:
        return STATUS_TIMEOUT, f"timed out after {timeout:g} s"
    if run.returncode != 0:
        return STATUS_FAILED, _qemu_failure(run)
    if parsed.errors:
        return STATUS_FAILED, "hypervisor: " + parsed.errors[0][len(results.ERROR_PREFIX):].strip()
    for name in names:
        if parsed.partitions[name].state == "stopped":
            faults = [f["line"] for f in parsed.faults if f.get("partition") == name]
            detail = f" ({faults[0]})" if faults else ""
            return STATUS_FAILED, f'partition "{name}" stopped{detail}'
    for name in names:
        if parsed.partitions[name].state is None:
            return STATUS_FAILED, f'partition "{name}" never reported off'
    return STATUS_OK, "all partitions off"


def native_outcome(run, timeout):
    if run.timed_out:
        return STATUS_TIMEOUT, f"timed out after {timeout:g} s"
    if run.returncode != 0:
        return STATUS_FAILED, _qemu_failure(run)
    return STATUS_OK, "QEMU exited with status 0"


def _qemu_failure(run):
    reason = f"QEMU exited with status {run.returncode}"
    if run.stderr:
        reason += f": {run.stderr[-1]}"
    return reason


def run_system(toml_path, icount=None, timeout=DEFAULT_TIMEOUT, quiet=True, workdir=None,
               hypervisor=None, console=None, interactive=False, qemu_args=()):
    """Boot the hypervisor with the system in `toml_path`; returns a RunResult.

    icount: QEMU -icount shift (None: real time).  console(line): see run_qemu;
    interactive: the board's console reads our stdin.  qemu_args: more QEMU options
    (qemu.trace_args).  Raises ConfigError for a bad description and ToolError for a
    missing tool or hypervisor image.
    """
    system = load_system(toml_path)
    placed = place(system)
    qemu.require_qemu()
    workdir = make_workdir(workdir)
    prepared = build.prepare_system(system, placed, workdir, hypervisor or DEFAULT_HYPERVISOR,
                                    icount)
    run = run_qemu(list(prepared.command) + list(qemu_args), timeout, quiet,
                   workdir / "serial.log",
                   panic_prefix=results.PANIC_PREFIX, console=console, interactive=interactive)
    names = [p.name for p in system.partitions]
    parsed = results.parse_log(run.lines, names)
    status, reason = system_outcome(parsed, run, timeout, names)
    return RunResult(status=status, reason=reason, log=run.lines, partitions=parsed.partitions,
                     stats=parsed.stats, faults=parsed.faults, panic=parsed.panic,
                     lat=parsed.lat, probe=parsed.probe, timed_out=run.timed_out,
                     qemu_status=run.returncode, qemu_stderr=run.stderr, workdir=workdir,
                     command=list(prepared.command) + list(qemu_args))


def run_native(image, bootargs="", cpus=2, icount=None, timeout=DEFAULT_TIMEOUT, quiet=True,
               workdir=None, cpu="cortex-a53", memory=2 * GiB, pci=(), initrd=None, dtb=None):
    """Boot `image` directly on the board (no hypervisor, guest at EL1).

    QEMU gives the guest its own device tree, where PSCI is "hvc".  Success is
    QEMU exiting with status 0 (the guest powered the board off).  pci: QEMU
    PCI device models put on the board's PCIe bus, as [board] pci does.
    """
    image = Path(image)
    if not image.is_file():
        raise ToolError(f"no such file: {image}")
    try:
        inspect(image)
    except ImageError as e:
        raise ToolError(str(e)) from None
    for extra in (initrd, dtb):
        if extra is not None and not Path(extra).is_file():
            raise ToolError(f"no such file: {extra}")
    command = qemu.native_command(image, bootargs, cpu, cpus, memory, icount, pci, initrd, dtb)
    qemu.require_qemu()
    workdir = make_workdir(workdir)
    build.write_command(workdir, command)
    run = run_qemu(command, timeout, quiet, workdir / "serial.log")
    parsed = results.parse_log(run.lines)
    status, reason = native_outcome(run, timeout)
    return RunResult(status=status, reason=reason, log=run.lines, partitions=parsed.partitions,
                     stats=parsed.stats, faults=parsed.faults, panic=parsed.panic,
                     lat=parsed.lat, probe=parsed.probe, timed_out=run.timed_out,
                     qemu_status=run.returncode, qemu_stderr=run.stderr, workdir=workdir,
                     command=command)
