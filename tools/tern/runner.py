"""Running QEMU and deciding how a run went.

Python API for system tests (add tools/ to sys.path, then `from tern import ...`):

    run_system(toml_path, icount=None, timeout=120, quiet=True, workdir=None,
               console=None) -> RunResult
        Boot the hypervisor with the partitions described in toml_path, on the board of
        its [board] arch (arm64 or riscv64).  console(line) sees every serial line and may
        return text to type on the board's console.
    run_native(image, bootargs="", cpus=2, icount=None, timeout=120, pci=(), ...) -> RunResult
        Boot `image` directly on the same board (at EL1, no hypervisor), with the
        PCI devices `pci` (["edu"]) in slots 2, 3, ... as [board] pci puts them, and
        an initial ramdisk `initrd` (QEMU's -initrd) and a device tree `dtb` in place
        of QEMU's own (-dtb) if given.  A riscv64 image (its Image header or ELF says
        so) boots on QEMU's riscv virt board instead, in S-mode under OpenSBI.

RunResult.status: 0 ok, 1 failed (reason says why), 3 hypervisor panic,
124 timed out.  Bad input raises tern.ConfigError / tern.ToolError instead.

The work directory (workdir=, default a fresh one under build/run/) is tern's own: see
make_workdir.  QEMU never outlives a run (run_qemu).
"""

import errno
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build, ctl, files, qemu, results
from .config import GiB, load_system
from .errors import EXIT_FAILED, EXIT_OK, EXIT_PANIC, EXIT_TIMEOUT, ToolError, show_path
from .image import ARCHS, ARM64, RISCV64, ImageError, inspect
from .layout import place

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HYPERVISOR = REPO_ROOT / "hypervisor" / "build" / "arm64" / "tern.img"
DEFAULT_HYPERVISOR_RISCV64 = REPO_ROOT / "hypervisor" / "build" / "riscv64" / "tern.img"
RUN_DIR = REPO_ROOT / "build" / "run"
DEFAULT_TIMEOUT = 120
# After "tern: PANIC" the hypervisor prints its report and stops the board,
# which may leave QEMU running; wait this long for the report, then end it.
PANIC_GRACE = 2.0
TAIL_LINES = 40
# A run that times out leaves every core's registers here, in its work directory, taken
# through QEMU's monitor before QEMU is killed: where a silent core was stuck.
REGISTERS_FILE = "registers.txt"

STATUS_OK = EXIT_OK
STATUS_FAILED = EXIT_FAILED
STATUS_PANIC = EXIT_PANIC
STATUS_TIMEOUT = EXIT_TIMEOUT


@dataclass
class QemuRun:
    """What came out of one QEMU process."""

    lines: list
    returncode: int
    timed_out: bool
    stderr: list
    cores: list = field(default_factory=list)     # at a timeout: "CPU#n pc=..." per core


@dataclass
class RunResult:
    """How a run went and everything it printed, sorted by the console protocol."""

    status: int
    reason: str
    log: list = field(default_factory=list)          # every serial line, in order
    partitions: dict = field(default_factory=dict)   # name -> results.PartitionOutput
    stats: dict = field(default_factory=dict)        # name -> tern-stats record
    faults: list = field(default_factory=list)       # parsed "tern: fault" lines
    injected: list = field(default_factory=list)     # parsed "tern: injected fault" lines
    panic: str = None                                # the "tern: PANIC" line
    lat: list = field(default_factory=list)          # native runs: LAT-JSON records
    probe: list = field(default_factory=list)        # native runs: PROBE-JSON records
    timed_out: bool = False
    qemu_status: int = None
    qemu_stderr: list = field(default_factory=list)
    workdir: Path = None
    command: list = field(default_factory=list)
    cores: list = field(default_factory=list)        # at a timeout: where each core was

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
        if self.cores:
            out.append(f"cores when it timed out (their registers: {REGISTERS_FILE}):")
            out += ["  " + line for line in self.cores]
        out.append(f"last {min(count, len(self.log))} of {len(self.log)} serial lines:")
        out += ["  " + line for line in self.tail(count)]
        return "\n".join(out)


# QEMU is started through this small program, which asks Linux to kill it with SIGKILL
# when the thread of tern that started it ends (PR_SET_PDEATHSIG: it holds even when tern
# itself is killed with SIGKILL and runs no cleanup), checks that tern did not end before
# that, and execs QEMU (the setting survives exec).  A program of its own rather than a
# preexec_fn: Python code run between fork and exec in a process with threads can deadlock.
PDEATHSIG_WRAPPER = """\
import os, signal, sys
parent = int(sys.argv[1])
try:
    import ctypes
    PR_SET_PDEATHSIG = 1
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
except (ImportError, AttributeError, OSError) as e:
    sys.stderr.write(f"tern: cannot ask for a parent-death signal: {e}\\n")
    os._exit(126)
if os.getppid() != parent:
    os._exit(125)
for name in ("SIGPIPE", "SIGXFSZ"):
    signal.signal(getattr(signal, name), signal.SIG_DFL)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as e:
    sys.stderr.write(f"{sys.argv[2]}: {e.strerror}\\n")
    os._exit(127)
"""


def guarded(command):
    """`command` started through PDEATHSIG_WRAPPER, on Linux (elsewhere: as it is)."""
    if not sys.platform.startswith("linux") or not sys.executable:
        return list(command)
    return [sys.executable, "-I", "-S", "-c", PDEATHSIG_WRAPPER, str(os.getpid())] + list(command)


def run_qemu(command, timeout, quiet=True, log_path=None, panic_prefix=None, stop_when=None,
             console=None, interactive=False, pid_path=None, registers_path=None,
             ctl_path=None):
    """Run `command`, streaming its output, until it exits or `timeout` seconds pass.

    Serial lines (QEMU's stdout) are echoed to our stdout unless quiet, and
    appended to log_path as they arrive.  A line starting with panic_prefix
    cuts the remaining time to PANIC_GRACE.  QEMU is killed on timeout, or
    once stop_when(line) says the run is complete (for boards that never
    power off by themselves).  console(line) may return text, which is typed
    on the serial console (QEMU's stdin); interactive=True hands QEMU our own
    stdin instead (a person at the terminal).  pid_path: a file holding QEMU's
    process ID while it runs.  registers_path: on a timeout, every core's registers are
    written there (QEMU's monitor, `info registers -a`) and each core's PC is in the
    result's `cores`.  ctl_path: serve the control socket there while QEMU runs (ctl.py;
    not when interactive: the console is the person's), removed when it ends.

    QEMU never outlives the call: whatever ends it (a timeout, an exception, a signal
    handler's exception such as KeyboardInterrupt) kills QEMU on the way out, and
    QEMU gets SIGKILL from Linux should this process die without a chance to
    (guarded()).  Unless interactive, QEMU has a process group of its own, so that a
    Ctrl-C at the terminal reaches tern, which ends QEMU, rather than both at once.
    """
    session = _QemuSession(timeout, quiet, panic_prefix, stop_when, console)
    serve = ctl_path is not None and not interactive
    stdin = subprocess.PIPE if console or serve else (None if interactive else subprocess.DEVNULL)
    terminal = _terminal_state() if interactive else None
    monitor_dir = tempfile.mkdtemp(prefix="tern-mon-") if registers_path else None
    monitor = Path(monitor_dir) / "m.sock" if monitor_dir else None   # short: a socket path's limit
    try:
        if log_path:
            session.log_file = files.create_text(log_path)
        if monitor:
            command = list(command) + ["-monitor", f"unix:{monitor},server=on,wait=off"]
        session.start(command, stdin, interactive, pid_path)
        if serve:
            session.serve_control(ctl_path)
        session.read_output()
        session.wait_for_exit()
        if session.timed_out and monitor:
            session.cores = cores_snapshot(monitor, registers_path)
    except BaseException:
        session.echo = False  # the exception says what happened; QEMU's last words go to the log
        raise
    finally:
        try:
            session.end()
        finally:
            if session.control:
                session.control.close()
            if pid_path:
                _remove(pid_path)
            if monitor_dir:
                shutil.rmtree(monitor_dir, ignore_errors=True)
            if session.log_file:
                session.log_file.close()
            _restore_terminal(terminal)
    returncode = 0 if session.stopped else session.proc.returncode
    return QemuRun(lines=session.lines, returncode=returncode, timed_out=session.timed_out,
                   stderr=session.stderr, cores=session.cores)


# `info registers -a`: a "CPU#n" line, then that core's registers; its PC is "pc <hex>"
# (riscv64) or "PC=<hex>" (arm64, with the exception level in PSTATE's "EL2h").
_CPU_HEADER = re.compile(r"^CPU#(\d+)", re.M)
_PC = re.compile(r"\b(?:pc\s+|PC=)([0-9a-fA-F]+)")
_ARM_EL = re.compile(r"\bEL(\d)[ht]\b")
_RISCV_V = re.compile(r"^\s*V\s*=\s*(\d)", re.M)


def parse_cores(text):
    """Each core's PC in `info registers -a` output, as "CPU#n pc=0x..." lines (with the
    exception level on arm64, V on riscv64: a guest's PC or the hypervisor's)."""
    headers = list(_CPU_HEADER.finditer(text))
    cores = []
    for i, header in enumerate(headers):
        block = text[header.end():headers[i + 1].start() if i + 1 < len(headers) else len(text)]
        pc = _PC.search(block)
        line = f"CPU#{header.group(1)} pc=0x{int(pc.group(1), 16):x}" if pc else \
            f"CPU#{header.group(1)} pc=?"
        for pattern, name in ((_ARM_EL, "EL"), (_RISCV_V, "V=")):
            found = pattern.search(block)
            if found:
                line += f" {name}{found.group(1)}"
        cores.append(line)
    return cores


def cores_snapshot(monitor, registers_path):
    """Every core's registers through the monitor, saved to registers_path; each core's PC.
    A monitor that does not answer is said in the result, not raised: the run's own outcome
    (a timeout) is what the caller reports."""
    try:
        text = "".join(qemu.hmp(monitor, "info registers -a", timeout=5.0))
    except ToolError as e:
        return [f"(no registers: {e})"]
    if registers_path:
        try:
            with files.create_text(registers_path) as out:
                out.write(text)
        except OSError:
            pass
    return parse_cores(text)


class _QemuSession:
    """One QEMU process while run_qemu reads it: what it wrote, and when to stop reading."""

    def __init__(self, timeout, quiet, panic_prefix, stop_when, console):
        self.lines, self.stderr = [], []
        self.arrivals = queue.Queue()
        self.deadline = time.monotonic() + timeout
        self.timed_out = False
        self.stopped = False
        self.echo = not quiet
        self.panic_prefix = panic_prefix
        self.stop_when = stop_when
        self.console = console
        self.proc = None
        self.readers = []
        self.log_file = None
        self.cores = []
        self.control = None
        self.typing = threading.Lock()   # the console callback's and the control socket's lines

    def start(self, command, stdin, interactive, pid_path):
        """QEMU, with a thread reading each of its output streams into self.arrivals."""
        self.proc = subprocess.Popen(guarded(str(c) for c in command), stdin=stdin,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     process_group=None if interactive else 0)
        if pid_path:
            files.write_new(pid_path, f"{self.proc.pid}\n")
        self.readers = [threading.Thread(target=_pump, args=(stream, tag, self.arrivals),
                                         daemon=True)
                        for stream, tag in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))]
        for reader in self.readers:
            reader.start()

    def serve_control(self, path):
        """The control socket (ctl.ControlServer): its requests typed on QEMU's console."""
        control = ctl.ControlServer(path, self.type, timeout=ctl.REPLY_TIMEOUT)
        if control.start():
            self.control = control
        else:
            print(f"tern: no control socket: {show_path(path)} cannot be one (a path too long?)",
                  file=sys.stderr, flush=True)

    def type(self, text):
        """Type `text` on the serial console; OSError if QEMU is gone."""
        with self.typing:
            if self.proc.poll() is not None:
                raise OSError("QEMU has ended")
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()

    def read_output(self):
        """Take QEMU's lines as they arrive, until it closes both streams, stop_when says the
        run is complete, or the deadline passes."""
        open_streams = len(self.readers)
        while open_streams and not self.stopped:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                break
            try:
                tag, raw = self.arrivals.get(timeout=remaining)
            except queue.Empty:
                continue
            if raw is None:
                open_streams -= 1
            else:
                self.take(tag, raw)

    def wait_for_exit(self):
        """QEMU closed its streams: give it what is left of the time to exit."""
        if not self.timed_out and not self.stopped:
            try:
                self.proc.wait(timeout=max(self.deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                self.timed_out = True

    def end(self):
        """Kill QEMU if it still runs, and keep whatever it wrote before its pipes closed."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=5)
        while True:
            try:
                tag, raw = self.arrivals.get_nowait()
            except queue.Empty:
                break
            if raw is not None:
                self.take(tag, raw)

    def take(self, tag, raw):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if tag == "err":
            self.stderr.append(line)
            if self.echo:
                print(line, file=sys.stderr, flush=True)
            return
        self.lines.append(line)
        if self.log_file:
            self.log_file.write(line + "\n")
            self.log_file.flush()
        if self.echo:
            print(line, flush=True)
        if self.panic_prefix and line.startswith(self.panic_prefix):
            self.deadline = min(self.deadline, time.monotonic() + PANIC_GRACE)
        if self.stop_when and self.stop_when(line):
            self.stopped = True
        if self.control:
            self.control.feed(line)
        self._answer(line)

    def _answer(self, line):
        """Type on QEMU's serial console what console(line) gives, while QEMU runs."""
        typed = self.console(line) if self.console and self.proc.poll() is None else None
        if typed:
            try:
                self.type(typed)
            except (BrokenPipeError, OSError):
                pass                              # QEMU is gone; its exit says why


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _terminal_state():
    """The terminal settings of our stdin, to put back after QEMU (which makes the terminal
    raw and, when killed, cannot restore it)."""
    try:
        import termios
        return termios.tcgetattr(sys.stdin.fileno())
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _restore_terminal(state):
    if state is None:
        return
    try:
        import termios
        termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, state)
    except (OSError, ValueError, AttributeError):
        pass


def _pump(stream, tag, arrivals):
    try:
        for raw in iter(stream.readline, b""):
            arrivals.put((tag, raw))
    finally:
        arrivals.put((tag, None))


# A directory tern made for its runs holds this file; tern writes in no other.
WORKDIR_MARKER = ".tern-workdir"
MARKER_TEXT = ("tern's work directory: `tern run`, `tern native`, `tern demo` and `tern bench` "
               "replace what they write here.\n")


def make_workdir(workdir=None):
    """The work directory of a run: `workdir`, or a fresh one under build/run/.

    tern writes only in a directory of its own: `workdir` is created (with its parents) if
    it does not exist; an existing one is taken only if it is empty or a work directory tern
    made before (it has WORKDIR_MARKER).  Anything else raises ToolError, so a run never
    writes among someone's files (a flattened rt.img over the user's own rt.img).
    """
    return claim_workdir(workdir)[0]


def claim_workdir(workdir=None):
    """(path, created): make_workdir, and whether this call created the directory."""
    if workdir is None:
        try:
            RUN_DIR.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(prefix="run-", dir=RUN_DIR))
        except OSError as e:
            raise ToolError(f"work directory: cannot create one in {show_path(RUN_DIR)} "
                            f"({e.strerror}); pass --workdir") from None
        _mark(path)
        return path, True
    path = Path(workdir).absolute()
    shown = show_path(workdir)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as e:
        raise ToolError(f"work directory {shown}: {files.os_problem(e)}") from None
    if info is None:
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            raise ToolError(f"work directory {shown}: appeared while tern was creating it") \
                from None
        except OSError as e:
            reason = ("a parent is not a directory" if e.errno == errno.ENOTDIR
                      else (e.strerror or str(e)).lower())
            raise ToolError(f"work directory {shown}: cannot create it ({reason})") from None
        _mark(path)
        return path, True
    if not stat.S_ISDIR(info.st_mode):
        raise ToolError(f"work directory {shown}: is {files.kind(info.st_mode)}, "
                        f"not a directory")
    try:
        entries = os.listdir(path)
    except OSError as e:
        raise ToolError(f"work directory {shown}: {files.os_problem(e)}") from None
    if entries and WORKDIR_MARKER not in entries:
        raise ToolError(f"work directory {shown}: not empty, and not one tern made (tern "
                        f"writes only in a new or empty directory, or one it made before)")
    if not entries:
        _mark(path, shown)
    return path, False


def _mark(path, shown=None):
    try:
        files.write_new(path / WORKDIR_MARKER, MARKER_TEXT)
    except OSError as e:
        raise ToolError(f"work directory {shown or show_path(path)}: cannot write in it "
                        f"({(e.strerror or str(e)).lower()})") from None


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


def default_hypervisor(arch):
    """The hypervisor `make all` builds for `arch`'s board (looked up when a run starts, so
    that a test may point DEFAULT_HYPERVISOR elsewhere)."""
    return DEFAULT_HYPERVISOR_RISCV64 if arch == RISCV64 else DEFAULT_HYPERVISOR


def run_system(toml_path, icount=None, timeout=DEFAULT_TIMEOUT, quiet=True, workdir=None,
               hypervisor=None, console=None, interactive=False, qemu_args=(), control=False):
    """Boot the hypervisor with the system in `toml_path`; returns a RunResult.

    The board is the one its [board] arch names, with that architecture's hypervisor
    (default_hypervisor) unless `hypervisor` is given.  icount: QEMU -icount shift (None:
    real time).  console(line): see run_qemu; interactive: the board's console reads our
    stdin.  qemu_args: more QEMU options (qemu.trace_args).  control: serve `tern ctl` on
    ctl.sock in the work directory while QEMU runs (not when interactive).  Raises
    ConfigError for a bad description and ToolError for a missing tool or hypervisor image.
    """
    system = load_system(toml_path)
    placed = place(system)
    arch = system.board.arch
    hypervisor = build.check_hypervisor(hypervisor or default_hypervisor(arch),
                                        system.board.virt)
    qemu.require_qemu(arch)
    workdir, created = claim_workdir(workdir)
    try:
        prepared = build.prepare_system(system, placed, workdir, hypervisor, icount)
    except BaseException:
        if created:             # nothing ran: leave nothing behind
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    run = run_qemu(list(prepared.command) + list(qemu_args), timeout, quiet,
                   workdir / "serial.log", panic_prefix=results.PANIC_PREFIX, console=console,
                   interactive=interactive, pid_path=workdir / "qemu.pid",
                   registers_path=workdir / REGISTERS_FILE,
                   ctl_path=workdir / ctl.SOCKET_NAME if control else None)
    names = [p.name for p in system.partitions]
    parsed = results.parse_log(run.lines, names)
    status, reason = system_outcome(parsed, run, timeout, names)
    return RunResult(status=status, reason=reason, log=run.lines, partitions=parsed.partitions,
                     stats=parsed.stats, faults=parsed.faults, injected=parsed.injected,
                     panic=parsed.panic,
                     lat=parsed.lat, probe=parsed.probe, timed_out=run.timed_out,
                     qemu_status=run.returncode, qemu_stderr=run.stderr, workdir=workdir,
                     command=list(prepared.command) + list(qemu_args), cores=run.cores)


def run_native(image, bootargs="", cpus=2, icount=None, timeout=DEFAULT_TIMEOUT, quiet=True,
               workdir=None, cpu=None, memory=2 * GiB, pci=(), initrd=None, dtb=None, arch=None,
               qemu_args=()):
    """Boot `image` directly on the board of its architecture (no hypervisor).

    arm64: the guest enters at EL1 with QEMU's own device tree, where PSCI is "hvc".
    riscv64: QEMU's riscv virt board (qemu.RISCV64_MACHINE), the guest entered in S-mode
    by QEMU's OpenSBI.  Success is QEMU exiting with status 0 (the guest powered the
    board off).  pci: QEMU PCI device models put on the board's PCIe bus, as [board] pci
    does.  cpu: a QEMU CPU model (default cortex-a53; riscv64 only runs on
    qemu.RISCV64_CPU).  arch: the board for a raw binary, which has no header to say
    (default arm64); an Image or ELF for another is refused.  qemu_args: further QEMU options,
    appended as given (a device or backend no [board] pci model stands for).
    """
    image = Path(image)
    try:
        arch = inspect(image, (arch,) if arch else ARCHS, raw_arch=arch or ARM64).arch
    except (ImageError, files.NotAFile) as e:
        raise ToolError(f"image: {e}") from None
    if arch == RISCV64 and cpu not in (None, qemu.RISCV64_CPU):
        raise ToolError(f"cpu: {show_path(cpu)} is not for a riscv64 image "
                        f"(it runs on {qemu.RISCV64_CPU})")
    for what, extra in (("initrd", initrd), ("dtb", dtb)):
        if extra is not None:
            try:
                files.check_regular(extra)
            except files.NotAFile as e:
                raise ToolError(f"{what}: {e}") from None
    command = qemu.native_command(image, bootargs, cpu, cpus, memory, icount, pci, initrd, dtb,
                                  arch=arch, extra=qemu_args)
    qemu.require_qemu(arch)
    workdir = make_workdir(workdir)
    build.write_command(workdir, command)
    run = run_qemu(command, timeout, quiet, workdir / "serial.log",
                   pid_path=workdir / "qemu.pid", registers_path=workdir / REGISTERS_FILE)
    parsed = results.parse_log(run.lines)
    status, reason = native_outcome(run, timeout)
    return RunResult(status=status, reason=reason, log=run.lines, partitions=parsed.partitions,
                     stats=parsed.stats, faults=parsed.faults, injected=parsed.injected,
                     panic=parsed.panic,
                     lat=parsed.lat, probe=parsed.probe, timed_out=run.timed_out,
                     qemu_status=run.returncode, qemu_stderr=run.stderr, workdir=workdir,
                     command=command, cores=run.cores)
