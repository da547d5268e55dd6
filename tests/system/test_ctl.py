"""tern ctl against a real board: `tern run` in the background, managed through ctl.sock."""

import json
import subprocess
import sys
import time

import pytest

from conftest import REPO, partition

NOISE = REPO / "guests" / "build" / "arm64" / "noise.img"
TERN = [sys.executable, str(REPO / "tern")]
# Polls below are for what the board does in its own time (the guests print about once a
# second of counter time); each has this much at most.
DEADLINE = 90


def ctl(workdir, *args):
    return subprocess.run(TERN + ["ctl", "--workdir", str(workdir)] + list(args),
                          capture_output=True, text=True, timeout=60)


def listed(workdir):
    """Each partition's state, by `tern ctl --json list`."""
    done = ctl(workdir, "--json", "list")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["ok"] and reply["command"] == "list"
    return {item["partition"]: item["state"] for item in reply["items"]}


def noise_lines(workdir, name):
    """How many NOISE-JSON lines partition `name` has printed so far."""
    log = (workdir / "serial.log").read_text() if (workdir / "serial.log").exists() else ""
    return sum(1 for line in log.splitlines() if line.startswith(f"[{name}] NOISE-JSON "))


def wait_for(what, check, run):
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert run.poll() is None, f"tern run ended while waiting for {what}"
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE} s"
        time.sleep(0.2)


# (a's interrupts, the board's cores, a's core, b's core).  On a 2-core board a's core 0 is the
# console core: paused, it goes on draining b's lines and taking the operator's commands.
PLACES = {"trap": ("trap", 4, 1, 2), "direct": ("direct", 4, 1, 2),
          "console-core": ("trap", 2, 0, 1)}


@pytest.mark.parametrize("place", PLACES)
def test_ctl_lists_pauses_unpauses_and_stops_partitions(system_file, tmp_path, place):
    # noise's gaps are WFIs woken by its virtual timer: a timer interrupt lost while it was
    # paused would leave it asleep, and its lines would not come back.  A direct partition's
    # timer interrupt is the physical GIC's, its CPU interface the guest's own.
    irq, cores, a_core, b_core = PLACES[place]
    path = system_file(partition("a", [a_core], NOISE, "noise.mode=burst", irq=irq),
                       partition("b", [b_core], NOISE, "noise.mode=burst"), cpus=cores)
    workdir = tmp_path / "run"
    run = subprocess.Popen(TERN + ["run", str(path), "--workdir", str(workdir), "--quiet",
                                   "--timeout", "600"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        wait_for("output of both partitions",
                 lambda: noise_lines(workdir, "a") >= 1 and noise_lines(workdir, "b") >= 1, run)
        assert (workdir / "ctl.sock").exists()
        table = ctl(workdir, "list")
        assert table.returncode == 0, table.stderr
        rows = [line.split() for line in table.stdout.splitlines()]
        assert rows[0] == ["Name", "ID", "Mem", "VCPUs", "State", "Restarts", "CPUs", "Pool"]
        assert rows[1:] == [["a", "0", "32", "1", "running", "0", str(a_core), "-"],
                            ["b", "1", "32", "1", "running", "0", str(b_core), "-"]]

        paused = ctl(workdir, "pause", "a")
        assert paused.returncode == 0 and paused.stdout == "", paused.stderr
        wait_for("a paused", lambda: listed(workdir)["a"] == "paused", run)
        assert listed(workdir)["b"] == "running"
        vcpus = json.loads(ctl(workdir, "--json", "vcpu-list").stdout)["items"]
        assert [(v["partition"], v["vcpu"], v["cpu"], v["paused"]) for v in vcpus] == \
            [("a", 0, a_core, True), ("b", 0, b_core, False)]
        # A line a printed just before its vCPU stopped may still be on its way out: counted
        # once b has printed after the pause, a's lines stop while b's go on.
        b_start = noise_lines(workdir, "b")
        wait_for("b's output", lambda: noise_lines(workdir, "b") > b_start, run)
        a_paused = noise_lines(workdir, "a")
        b_start = noise_lines(workdir, "b")
        wait_for("more of b's output", lambda: noise_lines(workdir, "b") >= b_start + 3, run)
        assert noise_lines(workdir, "a") == a_paused

        assert ctl(workdir, "unpause", "a").returncode == 0
        wait_for("a's output again", lambda: noise_lines(workdir, "a") >= a_paused + 2, run)
        assert listed(workdir) == {"a": "running", "b": "running"}

        pin = ctl(workdir, "vcpu-pin", "a", "0", str(b_core))
        assert pin.returncode == 1 and pin.stdout == ""
        assert pin.stderr == (f"tern: error: vcpu-pin a 0 {b_core}: it is in a null pool, which "
                              f"keeps each vCPU on its own core\n")
        refused = ctl(workdir, "--json", "pause", "nosuch")
        assert refused.returncode == 1
        assert json.loads(refused.stdout) == {"command": "pause nosuch", "ok": False,
                                              "reason": 'no partition named "nosuch"',
                                              "items": []}

        assert ctl(workdir, "stop", "a").returncode == 0
        wait_for("a off", lambda: listed(workdir)["a"] == "off", run)
        assert listed(workdir)["b"] == "running"
        assert ctl(workdir, "stop", "b").returncode == 0
        out, err = run.communicate(timeout=DEADLINE)
        assert run.returncode == 0, err
        assert not (workdir / "ctl.sock").exists()
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()


LAT_RISCV64 = REPO / "guests" / "build" / "riscv64" / "lat.img"


def test_ctl_pauses_and_unpauses_riscv64_partitions(tmp_path):
    # Both interrupt modes: "rt" trap-less (its Sstc timer and interrupt file are its own),
    # "tr" trap-and-emulate (its SBI timer is the core's stimecmp).  Each waits for its timer
    # in WFI sample after sample: a timer interrupt lost while paused would leave it asleep,
    # and its LAT-DONE would never come.
    from tern.config import dump_toml
    lat = {"memory": "32MiB", "image": str(LAT_RISCV64), "wfi": "trap"}
    system = tmp_path / "system.toml"
    system.write_text(dump_toml({
        "board": {"arch": "riscv64", "cpus": 4},
        "partition": [
            {"name": "rt", "cpus": [1], "irq": "direct", **lat,
             "bootargs": "lat.tests=sstc-wfi lat.samples=3000 lat.delta_us=2000"},
            {"name": "tr", "cpus": [2], "irq": "trap", **lat,
             "bootargs": "lat.tests=sbi-timer-wfi lat.samples=3000 lat.delta_us=2000"}]}))
    workdir = tmp_path / "run"
    run = subprocess.Popen(TERN + ["run", str(system), "--workdir", str(workdir), "--quiet",
                                   "--timeout", "600"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)

    def log():
        path = workdir / "serial.log"
        return path.read_text() if path.exists() else ""

    try:
        wait_for("both partitions measuring",
                 lambda: "[rt] LAT-BOOT " in log() and "[tr] LAT-BOOT " in log(), run)
        assert listed(workdir) == {"rt": "running", "tr": "running"}
        for name in ("rt", "tr"):
            assert ctl(workdir, "pause", name).returncode == 0
        wait_for("both paused", lambda: listed(workdir) == {"rt": "paused", "tr": "paused"}, run)
        assert "LAT-DONE" not in log()
        for name in ("rt", "tr"):
            assert ctl(workdir, "unpause", name).returncode == 0
        out, err = run.communicate(timeout=DEADLINE)
        assert run.returncode == 0, err + log()
        text = log()
        assert "[rt] LAT-DONE" in text and "[tr] LAT-DONE" in text
        assert "tern: partition rt off" in text and "tern: partition tr off" in text
        assert not (workdir / "ctl.sock").exists()
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
