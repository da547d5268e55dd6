"""[[pool]]s (issue 29): the description, its refusals, `tern check`'s view, the blob."""

import json
import shutil

import pytest
from tern import abi, build
from tern.config import dump_toml, load_system
from tern.layout import notes, place
from tern_test_files import partition, write_image, write_riscv_image, write_toml

from test_config import error_of, example_with_stand_ins, run_cli


def pool(name="frame", cpus=(2,), scheduler="arinc653", **keys):
    """One [[pool]] table as TOML text; an ARINC 653 pool gets a 20 ms frame of one 10 ms
    window for partition "a" unless `keys` say otherwise (None leaves a key out)."""
    if scheduler == "arinc653":
        keys = {"major_frame_us": 20000,
                "windows": [{"partition": "a", "duration_us": 10000}], **keys}
    table = {"name": name, "cpus": list(cpus), "scheduler": scheduler, **keys}
    return dump_toml({"pool": [{k: v for k, v in table.items() if v is not None}]})


def shared(scheduler, a=None, b=None, pool_keys=None):
    """rt alone on core 1; a and b in pool "frame" of `scheduler` on core 2, with keys."""
    return (pool(scheduler=scheduler, **(pool_keys or {}))
            + partition("rt", cpus=[1])
            + partition("a", cpus=[2], pool="frame", **(a or {}))
            + partition("b", cpus=[2], pool="frame", **(b or {})))


def test_each_scheduler_is_described(tmp_path, stub_image):
    frame = [{"partition": "a", "duration_us": 5000}, {"partition": "b", "duration_us": 10000},
             {"partition": "a", "duration_us": 5000}]
    system = load_system(write_toml(tmp_path, shared("arinc653", pool_keys={"windows": frame})))
    (q,) = system.pools
    assert (q.name, q.cpus, q.scheduler, q.major_frame_us) == ("frame", (2,), "arinc653", 20000)
    assert [(w.partition, w.duration_us) for w in q.windows] == \
        [("a", 5000), ("b", 10000), ("a", 5000)]
    rt, a, b = system.partitions
    assert (rt.pool, a.pool, b.pool) == (None, "frame", "frame")
    # RTDS: Xen's defaults, 4 ms every 10 ms, where a key is left out.
    system = load_system(write_toml(tmp_path, shared("rtds", a={"budget_us": 500,
                                                               "period_us": 1000})))
    _, a, b = system.partitions
    assert (a.budget_us, a.period_us, b.budget_us, b.period_us) == (500, 1000, 4000, 10000)
    assert (a.weight, a.cap) == (0, 0)
    # Credit: weight 256 and no cap by default.
    system = load_system(write_toml(tmp_path, shared("credit", a={"weight": 512, "cap": 50})))
    _, a, b = system.partitions
    assert (a.weight, a.cap, b.weight, b.cap) == (512, 50, 256, 0)
    assert (a.budget_us, a.period_us) == (0, 0)


def test_a_null_pool_is_todays_rule(tmp_path, stub_image):
    text = pool("solo", cpus=(2, 3), scheduler="null") + partition("a", cpus=[2, 3], pool="solo")
    (a,) = load_system(write_toml(tmp_path, text)).partitions
    assert a.pool == "solo" and a.cpus == (2, 3)
    text = (pool("solo", cpus=(2,), scheduler="null") + partition("a", cpus=[2], pool="solo")
            + partition("b", cpus=[2], pool="solo"))
    assert error_of(tmp_path, text) == 'partition[1].cpus: core 2 is already used by partition "a"'


@pytest.mark.parametrize("text, message", [
    # Pools on their own.
    (pool() + pool("other", cpus=(2, 3), scheduler="credit") + partition("a", cpus=[2], pool="frame"),
     'pool[1].cpus: core 2 is already in pool "frame"'),
    (pool(cpus=(9,)) + partition("a", cpus=[2], pool="frame"),
     "pool[0].cpus: core 9 is out of range (board has 4 cores)"),
    (pool(scheduler="edf"), 'pool[0].scheduler: unknown scheduler "edf" (use "null", '
                            '"arinc653", "rtds" or "credit")'),
    (pool(scheduler=None), 'pool[0].scheduler: missing ("null", "arinc653", "rtds" or "credit")'),
    (pool(colour="red"), "pool[0].colour: unknown key"),
    (pool() + pool(), 'pool[1].name: "frame" is already the name of pool[0]'),
    (pool(scheduler="credit", major_frame_us=1000),
     'pool[0].major_frame_us: only for scheduler = "arinc653" (this pool\'s is "credit")'),
    (pool(scheduler="rtds", windows=[]),
     'pool[0].windows: only for scheduler = "arinc653" (this pool\'s is "rtds")'),
    (pool(major_frame_us=None) + partition("a", cpus=[2], pool="frame"),
     "pool[0].major_frame_us: missing (the ARINC 653 major frame, in microseconds, like 20000)"),
    # A partition and its pool.
    (pool() + partition("a", cpus=[2], pool="nope"),
     'partition[0].pool: unknown pool "nope" (pools: frame)'),
    (pool() + partition("a", cpus=[2], pool="frame") + partition("rt", cpus=[2]),
     'partition[1].cpus: core 2 is in pool "frame", and the partition names no pool (a '
     "pool's cores are its members' only)"),
    (pool() + partition("a", cpus=[2, 3], pool="frame"),
     'partition[0].cpus: core 3 is not in its pool "frame" (cores 2)'),
    (shared("credit", a={"wfi": "native"}),
     'partition[1].wfi: wfi = "native" in pool "frame" (credit): a guest\'s idle must come '
     'back to the scheduler (use wfi = "trap")'),
    (shared("credit", a={"irq": "direct", "wfi": "native"}),
     'partition[1].irq: irq = "direct" in pool "frame" (credit): on arm64 a direct guest owns '
     "the core's physical CPU interface, and its interrupts could not wait while another vCPU "
     'runs (use irq = "trap")'),
    # ARINC 653 windows.
    (shared("arinc653", pool_keys={"windows": [{"partition": "a", "duration_us": 15000},
                                               {"partition": "b", "duration_us": 6000}]}),
     "pool[0].windows: the windows add up to 21000 us, more than major_frame_us (20000 us)"),
    (shared("arinc653", pool_keys={"windows": [{"partition": "z", "duration_us": 1}]}),
     'pool[0].windows[0].partition: unknown partition "z" (known: rt, a, b)'),
    (shared("arinc653", pool_keys={"windows": [{"partition": "rt", "duration_us": 1}]}),
     'pool[0].windows[0].partition: partition "rt" is not in pool "frame" (its pool key)'),
    (shared("arinc653", pool_keys={"windows": [{"partition": "a", "duration_us": 0}]}),
     "pool[0].windows[0].duration_us: must be a whole number of microseconds from 1 to "
     "10000000 (got 0)"),
    (shared("arinc653", pool_keys={"windows": [{"partition": "a", "length": 1}]}),
     "pool[0].windows[0].length: unknown key (expected partition and duration_us)"),
    (shared("arinc653", pool_keys={"windows": None}),
     "pool[0].windows: missing (the major frame's windows, in order: [ { partition = \"a\", "
     "duration_us = 10000 }, ... ])"),
    # Another scheduler's keys.
    (shared("credit", a={"budget_us": 100}),
     'partition[1].budget_us: only for a partition of an rtds pool (pool "frame" is credit)'),
    (shared("arinc653", a={"weight": 100}),
     'partition[1].weight: only for a partition of an credit pool (pool "frame" is arinc653)'),
    (partition("rt", period_us=100),
     "partition[0].period_us: only for a partition of an rtds pool (it names no pool)"),
    (shared("rtds", a={"cap": 10}),
     'partition[1].cap: only for a partition of an credit pool (pool "frame" is rtds)'),
    # RTDS budgets and their sum on a core.
    (shared("rtds", a={"budget_us": 2000, "period_us": 1000}),
     "partition[1].budget_us: 2000 us is more than period_us (1000 us)"),
    (shared("rtds", a={"budget_us": 0}),
     "partition[1].budget_us: must be a whole number of microseconds from 1 to 10000000 (got 0)"),
    (shared("rtds", a={"budget_us": 7000}),
     "pool[0].cpus: core 2 is asked for 110% of its time (a 1 x 7000/10000 us, b 1 x "
     "4000/10000 us): RTDS meets its deadlines up to 100 %"),
    # Credit.
    (shared("credit", a={"weight": 0}),
     "partition[1].weight: must be a whole number from 1 to 65535 (got 0)"),
    (shared("credit", a={"weight": 65536}),
     "partition[1].weight: must be a whole number from 1 to 65535 (got 65536)"),
    (shared("credit", a={"cap": 101}),
     "partition[1].cap: must be a percentage of one core from 0 (no cap) to 100 (got 101)"),
])
def test_refusals_name_the_field(tmp_path, stub_image, text, message):
    assert error_of(tmp_path, text) == message


def test_rtds_takes_all_of_a_core_exactly(tmp_path, stub_image):
    # 1/3 + 1/3 + 1/3: exactly one core, which EDF schedules.
    def text(budget):
        return (pool(scheduler="rtds") + partition("a", cpus=[2, 2], pool="frame",
                                                   budget_us=1000, period_us=3000)
                + partition("b", cpus=[2], pool="frame", budget_us=budget, period_us=3000))

    a, b = load_system(write_toml(tmp_path, text(1000))).partitions
    assert a.cpus == (2, 2)
    # A microsecond more is refused: the sum is exact, not rounded.
    assert "is asked for 100% of its time (a 2 x 1000/3000 us, b 1 x 1001/3000 us)" \
        in error_of(tmp_path, text(1001))


def riscv64(text):
    return '[board]\narch = "riscv64"\n' + text.replace("guests/build/arm64", "guests/build/riscv64")


def test_riscv64_keeps_trap_less_vcpus_up_to_its_guest_files(tmp_path):
    write_riscv_image(tmp_path / "guests" / "build" / "riscv64" / "lat.img")
    four = "".join(partition(f"p{i}", cpus=[2], pool="frame", memory="16MiB")
                   for i in range(4))
    five = four + partition("p4", cpus=[2], pool="frame", memory="16MiB")
    assert error_of(tmp_path, riscv64(pool(scheduler="credit") + five)) == \
        'partition[4].irq: core 2 of pool "frame" would have 5 trap-less vCPUs (irq = ' \
        '"direct"), more than the 4 guest interrupt files a hart has (QEMU aia-guests=4)'
    # Trap-less by default, as every riscv64 partition: within the files, each vCPU keeps one.
    system = load_system(write_toml(tmp_path, riscv64(pool(scheduler="credit") + four)))
    assert len(system.partitions) == 4
    assert all(p.irq_direct and not p.wfi_native for p in system.partitions)
    # Trapped ones have no file of their own; WFI is trapped by default in a shared pool.
    trapped = "".join(partition(f"p{i}", cpus=[2], pool="frame", memory="16MiB", irq="trap")
                      for i in range(5))
    system = load_system(write_toml(tmp_path, riscv64(pool(scheduler="credit") + trapped)))
    assert len(system.partitions) == 5
    assert all(not p.irq_direct and not p.wfi_native for p in system.partitions)


def test_a_shared_pools_partitions_have_no_lines_yet(tmp_path, stub_image):
    devices = shared("credit", a={"devices": ["pcie"]})
    assert error_of(tmp_path, devices).startswith(
        'partition[1].devices: partition "a" is in pool "frame", a shared pool: devices passed '
        'through there are not built yet')
    channel = dump_toml({"channel": [{"name": "c", "size": "64KiB", "members": ["rt", "b"]}]})
    assert error_of(tmp_path, shared("credit") + channel).startswith(
        'partition[2].pool: partition "b" is in pool "frame", a shared pool: channels there')
    # The same partitions in a null pool, or in none, have them.
    null = (pool(cpus=(2, 3), scheduler="null") + partition("rt", cpus=[1])
            + partition("a", cpus=[2], pool="frame", devices=["pcie"])
            + partition("b", cpus=[3], pool="frame"))
    assert len(load_system(write_toml(tmp_path, null + channel)).channels) == 1


def test_notes_for_idle_pools(tmp_path, stub_image):
    text = (shared("credit") + pool("spare", cpus=(3,), scheduler="rtds")
            + pool("solo", cpus=(0,), scheduler="null") + partition("z", cpus=[0], pool="solo"))
    system = load_system(write_toml(tmp_path, text))
    assert notes(system, place(system)) == [
        ("pool[1]", 'pool "spare" has no partition: its cores 3 stay idle'),
    ]
    text = shared("arinc653")
    system = load_system(write_toml(tmp_path, text))
    assert ("pool[0].windows", 'partition "b" has no window in pool "frame": it never runs') \
        in notes(system, place(system))


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_blob_carries_pools_and_parameters(tmp_path, stub_image):
    frame = [{"partition": "b", "duration_us": 7000}, {"partition": "a", "duration_us": 3000}]
    text = (shared("arinc653", pool_keys={"windows": frame})
            + pool("rt", cpus=(3,), scheduler="rtds")
            + partition("c", cpus=[3], pool="rt", budget_us=300, period_us=1000)
            + pool("cr", cpus=(0,), scheduler="credit")
            + partition("d", cpus=[0], pool="cr", weight=9, cap=20))
    system = load_system(write_toml(tmp_path, text))
    prepared = build.prepare_system(system, place(system), tmp_path / "work",
                                    write_image(tmp_path / "tern.img"))
    blob = abi.unpack((tmp_path / "work" / "config.bin").read_bytes())
    assert blob == prepared.blob
    assert blob.pools == [
        abi.PoolRecord("frame", (2,), abi.SCHED_ARINC653, 20000, ((2, 7000), (1, 3000))),
        abi.PoolRecord("rt", (3,), abi.SCHED_RTDS),
        abi.PoolRecord("cr", (0,), abi.SCHED_CREDIT)]
    rt, a, b, c, d = blob.partitions
    assert (rt.pool, a.pool, b.pool, c.pool, d.pool) == (abi.POOL_NONE, 0, 0, 1, 2)
    assert (c.budget_us, c.period_us, c.weight, c.cap) == (300, 1000, 0, 0)
    assert (d.budget_us, d.period_us, d.weight, d.cap) == (0, 0, 9, 20)
    assert (a.budget_us, a.period_us, a.weight, a.cap) == (0, 0, 0, 0)


def test_the_pools_example(repo_root, tmp_path):
    path = example_with_stand_ins(repo_root, "pools.toml", tmp_path)
    proc = run_cli("check", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok: 5 partitions, 2 pools on 4 x cortex-a53, "
                                  f"2 GiB RAM\n")
    assert "RAM; cores 2; pool frame (arinc653); wfi trap" in proc.stdout
    assert "RAM; cores 3; pool shared (credit, weight 512); wfi trap" in proc.stdout
    assert "cores 2; arinc653, major frame 20 ms: a 10 ms, b 10 ms; members a, b" in proc.stdout
    assert "cores 3; credit; members c, d" in proc.stdout
    assert "not built yet" not in proc.stdout
    proc = run_cli("check", "--json", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["layout"]
    assert doc["pools"] == [
        {"name": "frame", "cpus": [2], "scheduler": "arinc653",
         "parameters": {"major_frame_us": 20000,
                        "windows": [{"partition": "a", "duration_us": 10000},
                                    {"partition": "b", "duration_us": 10000}]},
         "members": [{"name": "a", "cpus": [2], "parameters": {}},
                     {"name": "b", "cpus": [2], "parameters": {}}]},
        {"name": "shared", "cpus": [3], "scheduler": "credit", "parameters": {},
         "members": [{"name": "c", "cpus": [3], "parameters": {"weight": 512, "cap": 0}},
                     {"name": "d", "cpus": [3], "parameters": {"weight": 256, "cap": 0}}]}]
    parts = {p["name"]: (p["pool"], p["scheduling"]) for p in doc["partitions"]}
    assert parts == {"rt": (None, {}), "a": ("frame", {}), "b": ("frame", {}),
                     "c": ("shared", {"weight": 512, "cap": 0}),
                     "d": ("shared", {"weight": 256, "cap": 0})}


def test_a_shared_pool_on_cpu_max_is_refused(tmp_path, stub_image):
    board = dump_toml({"board": {"cpu": "max"}})
    assert error_of(tmp_path, board + shared("credit")) == (
        'pool[0].scheduler: pool "frame" (credit) on cpu = "max": these cores offer SVE or SME '
        "to guests, which a shared core does not switch (a core model without them shares: "
        "cortex-a53, cortex-a57)")
    # A null pool keeps each vCPU on its own core: nothing is switched, "max" is fine.
    null = pool("solo", cpus=(2,), scheduler="null") + partition("a", cpus=[2], pool="solo")
    assert load_system(write_toml(tmp_path, board + null)).board.cpu == "max"
    assert load_system(write_toml(tmp_path, shared("credit"))).board.cpu == "cortex-a53"
