"""VirtIO's hostile cases (issue 28), on both boards, each beside a real-time partition (the
latency guest): a frontend that writes garbage to its transport, posts chains outside the
rules or notifies in a storm, and a backend that answers garbage or never answers
(guests/hostile/virtio/actions.c, with the bare-metal driver lib/vio_driver.c). None may stop
another partition or the hypervisor; each misdeed is counted on the frontend's vCPU
(virtio_refused_frontend, virtio_refused_backend) and named in the hypervisor's log line
(`virtio DEVICE: OFFENDER what`). Then the real-time partition's WARM_MAX beside a
VirtIO-busy pair (the busy frontend and vback), judged as ../shared/notes on icount say: the
pair ends before rt's first sample (lat.start_delay_us), and rt's WARM_MAX equals rt alone's.

The disk is a pattern the frontend checks byte by byte (vio_disk_byte in actions.c).
"""

import pytest
from conftest import LAT, LAT_RISCV64, REPO

from tern import run_system
from tern.config import dump_toml

HOSTILE = {"arm64": REPO / "guests" / "build" / "arm64" / "hostile.img",
           "riscv64": REPO / "guests" / "build" / "riscv64" / "hostile.img"}
VBACK = {"arm64": REPO / "guests" / "build" / "arm64" / "vback.img",
         "riscv64": REPO / "guests" / "build" / "riscv64" / "vback.img"}
ARCHS = sorted(HOSTILE)
SECTORS = 64
REQUESTS = 16
# The frontend's wait for one request: a served one takes well under a millisecond of counter
# time alone, far more on a loaded host without icount (the counter is the host's time); a
# silent backend's frontend gives up after this.
WAIT_US = 200000
# How long a hostile backend acts: the garbage one ends once it served every request, the silent
# one well after the frontend's timeout.
BACKEND_UNTIL_US = {"virtio-backend-garbage": 10000000, "virtio-backend-silent": 2000000}
STORM_ROUNDS = 2000
TIMEOUT = 120


def disk_bytes():
    return bytes(((at >> 9) * 131 + (at & 511) * 7 + 0x5A) & 0xFF
                 for at in range(SECTORS * 512))


def rt(arch, tests, cpus=(1,), extra=""):
    image = LAT if arch == "arm64" else LAT_RISCV64
    return {"name": "rt", "cpus": list(cpus), "memory": "32MiB", "image": str(image),
            "irq": "direct", "wfi": "native",
            "bootargs": f"lat.samples=50 lat.tests={tests} {extra}".strip()}


def guest(name, arch, core, bootargs, image=None):
    return {"name": name, "cpus": [core], "memory": "32MiB",
            "image": str(image or HOSTILE[arch]), "irq": "trap", "wfi": "trap",
            "bootargs": bootargs}


def system(tmp_path, arch, partitions, frontend, backend, cpus=4):
    for image in (HOSTILE[arch], VBACK[arch]):
        assert image.exists(), f"missing {image}: run `make all` first"
    (tmp_path / "disk.img").write_bytes(disk_bytes())
    board = {"cpus": cpus, "memory": "1GiB"}
    if arch == "riscv64":
        board["arch"] = "riscv64"
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({
        "board": board, "partition": partitions,
        "virtio": [{"name": "disk0", "device": "blk", "frontend": frontend,
                    "backend": backend, "disk": "disk.img"}]}))
    return path


def stop_when_off(*names, then):
    """A console answer: once every partition of `names` is off, stop partition `then` (vback
    serves for ever)."""
    off = set()

    def console(line):
        for name in names:
            if line.strip() == f"tern: partition {name} off":
                off.add(name)
                if off == set(names):
                    return f"stop {then}\r"
        return None
    return console


def record(result, name, test, phase="done"):
    records = [r for r in result.partitions[name].probe
               if r.get("test") == test and r.get("phase") == phase]
    assert records, result.explain()
    return records[-1]


def named_lines(result, offender):
    """The hypervisor's lines about disk0 that name `offender`."""
    return [line for line in result.log if "virtio disk0:" in line and f" {offender} " in line]


def check_rt_ran(result, tests):
    assert result.panic is None, result.explain()
    part = result.partitions["rt"]
    assert part.state == "off", result.explain()
    assert [r["test"] for r in part.lat] == tests.split(","), result.explain()
    assert all(r["samples"] == 50 and "error" not in r for r in part.lat), part.lat


RT_TESTS = {"arm64": "vtimer-wfi", "riscv64": "sstc-wfi"}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("action", ["virtio-garbage", "virtio-storm"])
def test_a_hostile_frontend_is_refused_counted_and_named(tmp_path, arch, action):
    """The hostile frontend `bad` and vback (`store`) as its backend; rt beside. Garbage: every
    misdeed after the register garbage leaves the device in DEVICE_NEEDS_RESET, a reset brings
    it back, and vback serves each new request. Storm: notifies counted, nothing refused, the
    device serves after it."""
    args = (f"hostile.action={action} hostile.wait_us={WAIT_US} "
            f"hostile.rounds={STORM_ROUNDS}")
    path = system(tmp_path, arch, [rt(arch, RT_TESTS[arch]), guest("bad", arch, 2, args),
                                   guest("store", arch, 3, "", VBACK[arch])], "bad", "store")
    result = run_system(path, timeout=TIMEOUT, console=stop_when_off("bad", then="store"))
    assert result.ok, result.explain()
    check_rt_ran(result, RT_TESTS[arch])
    done = record(result, "bad", f"hostile-{action}")
    assert done["pass"], f"{done}\n{result.explain()}"
    stats = result.stats["bad"]
    assert stats["virtio_refused_backend"] == 0 and stats["faults"] == 0, stats
    if action == "virtio-garbage":
        names = [m["name"] for m in done["misdeeds"]]
        assert names == ["registers", "desc-outside-ram", "looping-chain", "avail-past-queue"]
        for misdeed in done["misdeeds"][1:]:
            assert misdeed["needs_reset"] and misdeed["interrupt_status"] & 2, misdeed
        assert stats["virtio_refused_frontend"] >= 3, stats
        lines = named_lines(result, "bad")
        for what in ("posted a chain outside the rules",
                     "moved its available ring past its entries"):
            assert any(what in line for line in lines), (what, lines)
    else:
        assert done["notifies"] == 2 * STORM_ROUNDS, done
        assert stats["virtio_notify"] >= 2 * STORM_ROUNDS, stats
        assert stats["virtio_refused_frontend"] == 0, stats
        assert not named_lines(result, "bad"), result.explain()
    assert result.stats["store"]["faults"] == 0, result.stats
    assert result.partitions["bad"].state == "off", result.explain()
    assert result.partitions["store"].state == "off", result.explain()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("action", ["virtio-backend-garbage", "virtio-backend-silent"])
def test_a_hostile_backend_is_refused_counted_and_named(tmp_path, arch, action):
    """The busy bare-metal frontend `front` and the hostile backend `bad`; rt beside. Garbage
    answers are refused and counted on the frontend's vCPU, the correct answer after them
    served: every read completes with the disk's bytes. A silent backend: the frontend's
    first wait times out, it resets the device and ends by itself."""
    front = guest("front", arch, 2, f"hostile.action=virtio-busy hostile.requests={REQUESTS} "
                                    f"hostile.wait_us={WAIT_US}")
    bad = guest("bad", arch, 3, f"hostile.action={action} hostile.requests={REQUESTS} "
                                f"hostile.wait_us={WAIT_US} "
                                f"hostile.until_us={BACKEND_UNTIL_US[action]}")
    path = system(tmp_path, arch, [rt(arch, RT_TESTS[arch]), front, bad], "front", "bad")
    result = run_system(path, timeout=TIMEOUT)
    assert result.ok, result.explain()
    check_rt_ran(result, RT_TESTS[arch])
    busy = record(result, "front", "hostile-virtio-busy")
    stats = result.stats["front"]
    assert stats["virtio_refused_frontend"] == 0 and stats["faults"] == 0, stats
    backend = record(result, "bad", f"hostile-{action}")
    if action == "virtio-backend-garbage":
        assert (busy["completed"], busy["bad"], busy["timeouts"]) == (REQUESTS, 0, 0), busy
        assert backend["served"] == REQUESTS and backend["garbage"] == 3 * REQUESTS, backend
        assert backend["jumps"] == 1 and backend["untaken"] == 0, backend
        # Per request two refused (no such head, too many bytes; the stale epoch is dropped
        # silently), and the jump once.
        assert stats["virtio_refused_backend"] == 2 * REQUESTS + 1, stats
        lines = named_lines(result, "bad")
        for what in ("completed no outstanding request",
                     "wrote more than the request has room for"):
            assert any(what in line for line in lines), (what, lines)
    else:
        assert (busy["completed"], busy["bad"], busy["timeouts"]) == (0, 0, 1), busy
        assert busy["status"] == 0, busy          # reset: the request taken back
        assert backend["posted"] == 1 and backend["taken"] == 0, backend
        assert stats["virtio_request"] == 1 and stats["virtio_completion"] == 0, stats
        assert stats["virtio_refused_backend"] == 0, stats
        # The frontend ended by its own timeout, before the silent backend did.
        order = [i for i, line in enumerate(result.log)
                 if line.strip() in ("tern: partition front off", "tern: partition bad off")]
        assert len(order) == 2 and "front" in result.log[order[0]], result.explain()
    for name in ("front", "bad"):
        assert result.partitions[name].state == "off", result.explain()


# ---- WARM_MAX of rt beside a VirtIO-busy pair ----

# arm64: icount shift 4 (a tick an instruction), rt's timer tests on core 1. riscv64:
# icount shift 0, where the cycle CSR counts instructions; its IPI tests on harts 1 and 2
# (timer tests there move with the phase of a 100-cycle tick that any earlier instruction on the
# board shifts: test_riscv64_partitions.py).
WARM = {"arm64": (4, "vtimer-wfi,vtimer-busy", (1,), 4), "riscv64": (0, "ipi-busy,ipi-wfi", (1, 2), 5)}
# rt sleeps until the pair is done (its reads take a few ms of counter time).
START_DELAY_US = 200000


@pytest.mark.parametrize("arch", ARCHS)
def test_rt_warm_max_beside_a_virtio_busy_pair_is_as_alone(tmp_path, arch):
    icount, tests, rt_cpus, cpus = WARM[arch]
    front_core, store_core = rt_cpus[-1] + 1, rt_cpus[-1] + 2
    realtime = rt(arch, tests, rt_cpus, f"lat.start_delay_us={START_DELAY_US}")

    (tmp_path / "alone").mkdir()
    alone_path = tmp_path / "alone" / "system.toml"
    board = {"cpus": cpus, "memory": "1GiB"}
    if arch == "riscv64":
        board["arch"] = "riscv64"
    alone_path.write_text(dump_toml({"board": board, "partition": [realtime]}))
    alone = run_system(alone_path, icount=icount, timeout=TIMEOUT)
    assert alone.ok, alone.explain()
    expected = {r["test"]: r["warm_max"] for r in alone.partitions["rt"].lat}

    front = guest("front", arch, front_core,
                  f"hostile.action=virtio-busy hostile.requests={REQUESTS} "
                  f"hostile.wait_us={WAIT_US}")
    # vback ends once it has served the frontend's reads (vback.requests): a command typed on
    # the console would land at no fixed point of the emulated time, maybe inside rt's tests.
    store = guest("store", arch, store_core, f"vback.requests={REQUESTS}", VBACK[arch])
    (tmp_path / "pair").mkdir()
    path = system(tmp_path / "pair", arch, [realtime, front, store], "front", "store",
                  cpus=cpus)
    result = run_system(path, icount=icount, timeout=TIMEOUT)
    assert result.ok, result.explain()
    check_rt_ran(result, tests)
    busy = record(result, "front", "hostile-virtio-busy")
    assert (busy["completed"], busy["bad"], busy["timeouts"]) == (REQUESTS, 0, 0), busy
    stats = result.stats["front"]
    assert stats["virtio_request"] == REQUESTS and stats["virtio_completion"] == REQUESTS, stats
    assert f"TERN-VBACK: served {REQUESTS}, done" in result.partitions["store"].lines, \
        result.explain()
    got = {r["test"]: r["warm_max"] for r in result.partitions["rt"].lat}
    assert got == expected, (got, expected, result.explain())
    # The pair had ended before rt's first sample.
    first = {prefix: next(i for i, line in enumerate(result.log) if line.startswith(prefix))
             for prefix in ("tern: partition front off", "tern: partition store off",
                            "[rt] LAT-JSON")}
    assert max(first["tern: partition front off"], first["tern: partition store off"]) < \
        first["[rt] LAT-JSON"], result.explain()
