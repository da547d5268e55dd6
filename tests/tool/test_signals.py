"""QEMU always ends with tern: a real `tern run` of a guest that spins for ever, ended by a
signal, leaves no QEMU behind.

SIGINT, SIGTERM, SIGHUP and SIGQUIT: tern ends QEMU, removes its qemu.pid, says so in one
line and exits with 128 + N.  SIGKILL: tern can do nothing, and QEMU dies all the same (its
parent-death signal).  QEMU is found by its command line, which names the test's own work
directory; every wait has a deadline.  Needs QEMU and `make all` (the hypervisor and the
probe guest); skipped without them.  TERN_HYPERVISOR=IMAGE runs them on another hypervisor
build, as the system tests do.
"""

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tern.config import dump_toml

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "tern"
HYPERVISOR = Path(os.environ.get("TERN_HYPERVISOR")
                  or REPO / "hypervisor" / "build" / "arm64" / "tern.img")
PROBE = REPO / "guests" / "build" / "arm64" / "probe.img"
BOOT_DEADLINE = 90          # seconds until the guest says it spins (QEMU on a busy host)
END_DEADLINE = 30           # seconds for tern and QEMU to be gone after the signal

pytestmark = [
    pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None, reason="needs QEMU"),
    pytest.mark.skipif(not (HYPERVISOR.is_file() and PROBE.is_file()),
                       reason="needs the hypervisor and the probe guest (make all)"),
]

SYSTEM = dump_toml({"board": {"cpus": 2},
                    "partition": [{"name": "spin", "cpus": [1], "memory": "32MiB",
                                   "image": str(PROBE), "bootargs": "probe.tests=spin"}]})


def qemu_processes(marker):
    """PIDs of live QEMU processes whose command line holds `marker` (zombies are dead)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = (Path("/proc") / entry / "cmdline").read_bytes()
            state = (Path("/proc") / entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"qemu-system-aarch64" in cmdline and marker.encode() in cmdline and state not in "ZX":
            found.append(int(entry))
    return found


def wait_for(condition, deadline, what):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"no {what} within {deadline} s")


@pytest.fixture
def spinning_run(tmp_path):
    """Start `tern run` of a guest that spins; return (tern's Popen, work directory, a
    function giving all tern wrote on stderr once it has ended) when the guest spins.
    Whatever QEMU of this run is left at the end is killed, so that a failure leaves
    nothing behind either."""
    (tmp_path / "sys.toml").write_text(SYSTEM)
    workdir = tmp_path / "work"
    proc = subprocess.Popen([sys.executable, str(LAUNCHER), "run", "sys.toml", "--workdir",
                             str(workdir), "--timeout", "600", "--hypervisor", str(HYPERVISOR)],
                            cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    lines = queue.Queue()
    stderr = []
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    stderr_reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    stderr_reader.start()

    def stderr_text():
        stderr_reader.join(timeout=END_DEADLINE)
        return b"".join(stderr).decode()
    try:
        end = time.monotonic() + BOOT_DEADLINE
        while True:
            try:
                line = lines.get(timeout=max(end - time.monotonic(), 0.01))
            except queue.Empty:
                pytest.fail(f"the guest did not start spinning within {BOOT_DEADLINE} s: "
                            f"{b''.join(stderr)!r}")
            assert line is not None, f"tern ended before the guest spun: {b''.join(stderr)!r}"
            if b'"phase":"spinning"' in line:
                break
        assert len(qemu_processes(str(workdir))) == 1
        yield proc, workdir, stderr_text
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=END_DEADLINE)
        for pid in qemu_processes(str(workdir)):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                                    signal.SIGQUIT], ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_qemu_and_tern(spinning_run, signum):
    proc, workdir, stderr_text = spinning_run
    (qemu,) = qemu_processes(str(workdir))
    pid_file = workdir / "qemu.pid"
    recorded = pid_file.read_text().strip() if pid_file.exists() else None
    proc.send_signal(signum)
    status = proc.wait(timeout=END_DEADLINE)
    wait_for(lambda: not qemu_processes(str(workdir)), END_DEADLINE, "end of QEMU")
    assert status == 128 + signum
    assert stderr_text() == f"tern: error: interrupted by {signal.Signals(signum).name}\n"
    assert recorded == str(qemu)
    # What tern writes while it runs is cleaned up; the run's record stays.
    names = sorted(p.name for p in workdir.iterdir())
    assert "qemu.pid" not in names and not [n for n in names if n.endswith(".tmp")], names
    assert "serial.log" in names and "spinning" in (workdir / "serial.log").read_text()


def test_qemu_dies_with_a_killed_tern(spinning_run):
    proc, workdir, _ = spinning_run
    proc.send_signal(signal.SIGKILL)           # no handler, no cleanup: only Linux can help
    assert proc.wait(timeout=END_DEADLINE) == -signal.SIGKILL
    wait_for(lambda: not qemu_processes(str(workdir)), END_DEADLINE, "end of QEMU")
