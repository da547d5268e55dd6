"""[[pool]]s on the boards (issue 29): an explicit null pool runs exactly as the same
partitions with no pool; two partitions share one core under each other scheduler, and both
run to their end."""

import pytest
from conftest import LAT, LAT_RISCV64, partition

from tern import run_system
from tern.config import dump_toml

SHORT_LAT = "lat.samples=10 lat.tests=vtimer-wfi,ptimer-busy"
SHORT_LAT_RISCV64 = "lat.samples=10 lat.tests=sstc-wfi,ipi-busy"
# image, tests, irq, rt's cores
BOARDS = {
    "arm64": (LAT, SHORT_LAT, "trap", [1]),
    "riscv64": (LAT_RISCV64, SHORT_LAT_RISCV64, "direct", [1, 2]),
}
# Where the latency samples must be equal too.  On riscv64 they move by a few ticks when the
# guest's start moves (the pool record lengthens the blob, and the boot with it: its timer and
# IPI samples depend on where their deadlines fall among the cores' turns under icount), so
# there the same path shows as the same exits and calls, which are exact.
SAMPLES_EQUAL = {"arm64"}


def write(tmp_path, name, arch, pools, *partitions):
    board = {"cpus": 4, **({"arch": arch} if arch != "arm64" else {})}
    path = tmp_path / name
    path.write_text(dump_toml({"board": board, "pool": list(pools)}) + "\n"
                    + "\n".join(partitions))
    return path


def lat_of(result, name):
    """The partition's latency records, by test: what it measured, in instructions."""
    return {r["test"]: r for r in result.partitions[name].lat}


def warm(record):
    return {k: record[k] for k in ("samples", "min", "warm_max", "p50")}


def without_console(stats):
    return {k: v for k, v in stats.items() if k not in ("exit_mmio", "console_dropped")}


@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_an_explicit_null_pool_runs_as_without_it(tmp_path, arch):
    image, tests, irq, cores = BOARDS[arch]
    results = []
    for pools, pool_key in (([], {}), ([{"name": "rt", "cpus": cores, "scheduler": "null"}],
                                       {"pool": "rt"})):
        path = write(tmp_path, f"system-{len(pools)}.toml", arch, pools,
                     partition("rt", cores, image, tests, irq=irq, **pool_key),
                     partition("other", [3], image, tests, irq=irq))
        result = run_system(path, icount=4, workdir=tmp_path / f"work-{len(pools)}")
        assert result.ok, result.explain()
        results.append(result)
    alone, pooled = results
    assert pooled.partitions["rt"].state == "off", pooled.explain()
    assert sorted(lat_of(pooled, "rt")) == sorted(lat_of(alone, "rt")) != [], pooled.explain()
    # Under icount the same path takes the same instructions: the warm samples are equal.
    # (The cold first one is not: a longer blob moves the guest's start by a few ticks.)
    for test, record in lat_of(alone, "rt").items():
        pooled_record = lat_of(pooled, "rt")[test]
        assert pooled_record["samples"] == record["samples"] > 0, test
        if arch in SAMPLES_EQUAL:
            assert warm(pooled_record) == warm(record), test
    # The same exits and calls, but the console's (as many as the lines it printed).
    assert without_console(pooled.stats["rt"]) == without_console(alone.stats["rt"])


SHARED = {
    "arinc653": {"major_frame_us": 4000, "windows": [{"partition": "a", "duration_us": 2000},
                                                     {"partition": "b", "duration_us": 2000}]},
    "rtds": {},
    "credit": {},
}


@pytest.mark.parametrize("scheduler", sorted(SHARED))
@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_two_partitions_share_a_core(tmp_path, arch, scheduler):
    """Both latency guests on core 2 measure and end: each waits in a trapped WFI (its turn
    goes to the other) and is woken by its own timer, on one core, under the scheduler."""
    image, tests, _, _ = BOARDS[arch]
    keys = {"rtds": {"budget_us": 2000, "period_us": 5000}, "credit": {"weight": 256}}
    path = write(tmp_path, "system.toml", arch,
                 [{"name": "shared", "cpus": [2], "scheduler": scheduler, **SHARED[scheduler]}],
                 partition("rt", [1], image, tests, irq="trap"),
                 *(partition(name, [2], image, tests, irq="trap", pool="shared",
                             **keys.get(scheduler, {})) for name in ("a", "b")))
    result = run_system(path, icount=4, timeout=240, workdir=tmp_path / "work")
    assert result.ok, result.explain()
    for name in ("rt", "a", "b"):
        assert result.partitions[name].state == "off", result.explain()
        records = lat_of(result, name)
        assert sorted(records) == sorted(lat_of(result, "rt")) != [], result.explain()
        assert all(r["samples"] > 0 for r in records.values()), result.explain()
    # Each shared vCPU waited (trapped WFIs) and was switched out and back.
    for name in ("a", "b"):
        assert result.stats[name]["exit_wfi"] > 0, result.explain()
