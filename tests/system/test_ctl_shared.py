"""tern ctl's orders to shared pools (issue 29) on both boards, through ctl.sock as
test_ctl.py does: vcpu-pin of a vCPU that takes IPIs and timer interrupts, pool-migrate of a
partition from an RTDS pool to a credit pool, sched-credit, and each refusal's reason.

One run per board: core 0 the console's; credit pool "work" on cores 1 and 2, RTDS pool "rt"
on core 3.  "smp" (two vCPUs, homed on cores 1 and 2) runs lat's IPI test and then its timer
test; "mig", alone in "rt", lat's timer test.  Each lat test counts its own samples: an
interrupt lost while its vCPU moved would leave it asleep in WFI until its watchdog (the IPI
test's "error") or for ever (no LAT-DONE within the run's timeout).  No icount: nothing here
is measured, and lat's samples follow the counter whatever QEMU's pace.
"""

import json

import pytest
from conftest import LAT, LAT_RISCV64, Background, ctl, serial

from tern.results import parse_log
from tern.tomlwriter import dumps

# (lat image, its IPI test, its timer test).
BOARDS = {"arm64": (LAT, "sgi-wfi", "vtimer-wfi"),
          "riscv64": (LAT_RISCV64, "sbi-ipi-wfi", "sbi-timer-wfi")}
# Samples and their delay: each test lasts seconds of counter time, long enough for the orders
# below (each a `tern ctl` process, a fraction of a second of host time) to land inside it.
SAMPLES = 2500
DELTA_US = 2000
# The run's own bound and the polls': what the board does in its own time.
TIMEOUT = 240
DEADLINE = 90


def write(tmp_path, arch):
    image, ipi, timer = BOARDS[arch]

    def lat(name, cpus, pool, tests, **keys):
        return {"name": name, "cpus": cpus, "pool": pool, "memory": "32MiB", "image": str(image),
                "irq": "trap", "wfi": "trap",
                "bootargs": f"lat.tests={tests} lat.samples={SAMPLES} lat.delta_us={DELTA_US}",
                **keys}

    board = {"cpus": 4, **({"arch": arch} if arch != "arm64" else {})}
    pools = [{"name": "work", "cpus": [1, 2], "scheduler": "credit"},
             {"name": "rt", "cpus": [3], "scheduler": "rtds"}]
    partitions = [lat("smp", [1, 2], "work", f"{ipi},{timer}"),
                  lat("mig", [3], "rt", timer, budget_us=5000, period_us=10000)]
    path = tmp_path / "system.toml"
    path.write_text(dumps({"board": board, "pool": pools, "partition": partitions},
                          comment=f"tests/system/test_ctl_shared.py, {arch}"))
    return path


def items(workdir, command):
    done = ctl(workdir, "--json", command)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["items"]


def core_of(workdir, name, vcpu):
    return next(v["cpu"] for v in items(workdir, "vcpu-list")
                if v["partition"] == name and v["vcpu"] == vcpu)


def refused(workdir, reason, *args):
    done = ctl(workdir, *args)
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr == f"tern: error: {reason}\n"


@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_ctl_pins_migrates_and_refuses_on_shared_pools(tmp_path, arch):
    _, ipi, timer = BOARDS[arch]
    workdir = tmp_path / "run"
    with Background(write(tmp_path, arch), workdir, TIMEOUT) as run:
        run.wait_for("both partitions measuring",
                     lambda: all(f"[{n}] LAT-BOOT " in serial(workdir) for n in ("smp", "mig")),
                     DEADLINE)
        # Refusals first: nothing is posted by them.
        refused(workdir, "vcpu-pin smp 0 3: that core is not in its pool (pool-migrate moves a "
                         "partition to another)", "vcpu-pin", "smp", "0", "3")
        refused(workdir, "partition smp has no vCPU 2 (it has 2)", "vcpu-pin", "smp", "2", "1")
        refused(workdir, 'no pool named "nowhere"', "pool-migrate", "smp", "nowhere")
        refused(workdir, "sched-rtds smp: vCPU 0: its pool's scheduler is another",
                "sched-rtds", "smp", "--budget", "1000", "--period", "10000")
        refused(workdir, "sched-credit mig: vCPU 0: its pool's scheduler is another",
                "sched-credit", "mig", "--weight", "512")
        refused(workdir, "sched-arinc653 work: not an ARINC 653 pool",
                "sched-arinc653", "work", "--window", "smp:1000")
        refused(workdir, "sched-rtds mig: vCPU 0: the budget is longer than the period",
                "sched-rtds", "mig", "--budget", "12000", "--period", "10000")

        # vCPU 0 of smp, the IPI test's receiver (arm64) or sender (riscv64), between its
        # cores and back while it measures.
        for core in (2, 1, 2, 1):
            done = ctl(workdir, "vcpu-pin", "smp", "0", str(core))
            assert done.returncode == 0 and done.stdout == "", done.stderr
            run.wait_for(f"smp's vCPU 0 on core {core}",
                         lambda: core_of(workdir, "smp", 0) == core, DEADLINE)
        # ... all while the IPI test went on (its record comes at its end).
        assert f'[smp] LAT-JSON {{"test":"{ipi}"' not in serial(workdir), run.tail()

        done = ctl(workdir, "pool-migrate", "mig", "work")
        assert done.returncode == 0, done.stderr
        run.wait_for("mig on core 1", lambda: core_of(workdir, "mig", 0) == 1, DEADLINE)
        pools = {p["pool"]: p["partitions"] for p in items(workdir, "pool-list")}
        assert pools == {"work": ["smp", "mig"], "rt": []}, pools
        # Now in a credit pool: its parameters are credit's.
        done = ctl(workdir, "sched-credit", "mig", "--weight", "512")
        assert done.returncode == 0, done.stderr

        run.finish()
    log = parse_log(serial(workdir).splitlines(), ("smp", "mig"))
    for name, tests in (("smp", [ipi, timer]), ("mig", [timer])):
        out = log.partitions[name]
        assert [r["test"] for r in out.lat] == tests, serial(workdir)[-4000:]
        for record in out.lat:
            # Every interrupt it waited for came: no watchdog, every sample taken.
            assert "error" not in record and record["samples"] == SAMPLES, record
        assert out.state == "off", serial(workdir)[-4000:]


# -- sched-credit and sched-arinc653, measured by slices guests -------------------------

# Two noise guests in slices mode on core 1 of a 2-core board, under icount as
# test_shared_cores.py runs them; the change is sent once both measure, and lands with most
# of their measurement left (MEASURE_US, counter time: arm64 at shift 4 runs it faster than
# real time, riscv64 at shift 0 slower).  Their gap lines, printed at the end, must fit the
# console's buffer: a few hundred each (credit's 10 ms slices; ARINC 653 frames, FRAME_US).
MEASURE_US = {"arm64": 4_000_000, "riscv64": 2_000_000}
CHANGES = {
    "credit": ({"name": "p", "cpus": [1], "scheduler": "credit"},
               ["sched-credit", "b", "--weight", "768"]),
    "arinc653": ({"name": "p", "cpus": [1], "scheduler": "arinc653", "major_frame_us": "{F}",
                  "windows": [{"partition": "a", "duration_us": "{F/2}"},
                              {"partition": "b", "duration_us": "{F/2}"}]},
                 ["sched-arinc653", "p", "--window", "a:{F/4}", "--window", "b:{3F/4}"]),
}
# The ARINC 653 frame (us): a few of them must pass before the order lands (riscv64's counter
# time runs slower than the host's, arm64's faster).
FRAME_US = {"arm64": 100_000, "riscv64": 20_000}


def framed(value, frame):
    """CHANGES' "{F}"-style placeholders, in whole us of the frame F."""
    if isinstance(value, dict):
        return {k: framed(v, frame) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [framed(v, frame) for v in value]
    if not isinstance(value, str) or "{" not in value:
        return value
    for mark, us in (("{3F/4}", 3 * frame // 4), ("{F/4}", frame // 4), ("{F/2}", frame // 2),
                     ("{F}", frame)):
        value = value.replace(mark, str(us))
    return int(value) if value.isdigit() else value


def near(value, want, tolerance):
    return abs(value - want) <= tolerance


@pytest.mark.parametrize("scheduler", sorted(CHANGES))
@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_ctl_sched_changes_what_the_guests_get(tmp_path, arch, scheduler):
    from tern.results import parse_slices
    from tern.slices import ran_between, runs
    from test_shared_cores import BOARDS as SHARED, PAUSE_TIMEOUT, slices, ticks
    from test_shared_cores import write as write_shared

    board = SHARED[arch]
    frame = FRAME_US[arch]
    pool, order = framed(CHANGES[scheduler], frame)
    until = board["start_us"] + MEASURE_US[arch]
    guests = [slices(arch, n, "p", until) for n in "ab"]
    for guest in guests:
        guest["bootargs"] += f" noise.gap_ticks={ticks(arch, 100)} noise.max_gaps=1024"
    path = write_shared(tmp_path, arch, [pool], guests)
    workdir = tmp_path / "run"
    with Background(path, workdir, PAUSE_TIMEOUT, "--icount", board["icount"]) as run:
        run.wait_for("both measuring",
                     lambda: all(f"[{n}] noise: mode slices" in serial(workdir) for n in "ab"),
                     PAUSE_TIMEOUT)
        done = ctl(workdir, *order)
        assert done.returncode == 0, done.stderr
        run.finish()
    records = parse_slices(serial(workdir))
    assert set(records) >= {"a", "b"}, serial(workdir)[-4000:]
    a, b = records["a"], records["b"]
    assert a["complete"] and b["complete"], (a, b)
    hi = min(a["end"], b["end"])
    if scheduler == "credit":
        # The last quarter, well past the change: b's weight is three times a's.
        lo = hi - (hi - max(a["start"], b["start"])) // 4
        ran_a, ran_b = ran_between(a, lo, hi), ran_between(b, lo, hi)
        share = ran_b / (ran_a + ran_b)
        assert near(share, 0.75, 0.075), (share, ran_a, ran_b)
        return
    # ARINC 653: a's whole windows are half the frame, then a quarter, each at the same offset
    # in its frame: the new timeline starts at a frame's start (one changed mid-frame would
    # start a new frame at the change, and a's windows would move).  The window the order lands
    # in may start late, by the console core's turn with the command under icount (module
    # docstring of test_shared_cores.py): it alone may be neither.
    tolerance = board["switch_max"] + ticks(arch, 100)
    major = ticks(arch, frame)
    windows = [(start, end) for start, end, after, before in runs(a) if after and before]
    kinds = ["old" if near(end - start, ticks(arch, frame // 2), tolerance) else
             "new" if near(end - start, ticks(arch, frame // 4), tolerance) else end - start
             for start, end in windows]
    odd = [i for i, k in enumerate(kinds) if k not in ("old", "new")]
    assert "old" in kinds and "new" in kinds and len(odd) <= 1, kinds
    first_new = kinds.index("new")
    assert all(k == "old" for i, k in enumerate(kinds[:first_new]) if i not in odd), kinds
    assert all(k == "new" for k in kinds[first_new:]), kinds
    assert not odd or odd[0] == first_new - 1, kinds
    offsets = [start % major for i, (start, _) in enumerate(windows) if i not in odd]
    assert max(offsets) - min(offsets) <= tolerance, (offsets, kinds)
