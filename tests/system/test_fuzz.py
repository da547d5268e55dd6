"""The in-guest fuzzer (guests/fuzz) beside the latency guest.

`fuzz` makes, from a seed, thousands of random accesses to what the hypervisor traps or
emulates (GICD, its redistributor frames, the PL011, SMCCC/PSCI calls through HVC and SMC,
trapped system registers) on cores 2.., while `rt` (the latency guest) runs on core 1. The
oracle does not depend on the hypervisor's answers: the hypervisor does not panic, the fuzzer
completes every iteration and powers off, and `rt` completes with its counters those of `rt`
alone on the same board (the hypervisor did no extra work on its core).
"""

import pytest
from conftest import LAT, REPO, partition, probe_record

from tern import run_system

FUZZ = REPO / "guests" / "build" / "arm64" / "fuzz.img"
BOARD_CPUS = 4
SAMPLES = 100
RT_TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-busy")
ITERATIONS = 10000
UNMAPPED_IPA = 0x0C000000


@pytest.fixture(scope="module", autouse=True)
def fuzz_image():
    assert FUZZ.exists(), f"missing {FUZZ}: run `make all` first"


def rt_partition():
    return partition("rt", [1], LAT, f"lat.samples={SAMPLES} lat.tests={','.join(RT_TESTS)}",
                     wfi="native")


def run(directory, *partitions):
    path = directory / "system.toml"
    path.write_text(f"[board]\ncpus = {BOARD_CPUS}\n\n" + "\n".join(partitions))
    return run_system(path, icount=4, timeout=60)


@pytest.fixture(scope="module")
def rt_alone(tmp_path_factory):
    result = run(tmp_path_factory.mktemp("alone"), rt_partition())
    assert result.ok, result.explain()
    return result


def check_rt(result, rt_alone):
    """rt ran every test to the end, and the hypervisor did nothing more on its core."""
    assert result.panic is None, result.explain()
    assert result.partitions["rt"].state == "off", result.explain()
    records = result.partitions["rt"].lat
    assert [r["test"] for r in records] == list(RT_TESTS), result.explain()
    assert all("error" not in r and r["samples"] == SAMPLES for r in records), result.explain()
    # exit_mmio counts console output, which depends on the histograms.
    mine = {k: v for k, v in result.stats["rt"].items() if k != "exit_mmio"}
    alone = {k: v for k, v in rt_alone.stats["rt"].items() if k != "exit_mmio"}
    assert mine == alone, f"rt's counters moved:\n{mine}\n{alone}\n{result.explain()}"


def fuzz_partition(args, cores=(2,), **keys):
    return partition("fuzz", list(cores), FUZZ, args, **keys)


def check_fuzz_done(result, seed, cpus):
    record = probe_record(result, "fuzz", "fuzz")
    assert record["seed"] == seed and record["iterations"] == ITERATIONS, record
    assert record["started"] == cpus and record["done"] == ITERATIONS * cpus, \
        f"{record}\n{result.explain()}"
    assert record["pass"], f"{record}\n{result.explain()}"
    return record


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fuzzer_beside_rt(tmp_path, rt_alone, seed):
    result = run(tmp_path, rt_partition(), fuzz_partition(
        f"fuzz.seed={seed} fuzz.iterations={ITERATIONS}"))
    check_rt(result, rt_alone)
    assert result.ok, result.explain()
    assert result.partitions["fuzz"].state == "off", result.explain()
    check_fuzz_done(result, seed, 1)


def test_fuzzer_on_two_vcpus_with_the_mmu_on(tmp_path, rt_alone):
    """Both vCPUs fuzz (seeds S and S+1) with their MMUs on and the GIC's pages Normal
    Non-cacheable, so that misaligned accesses reach the hypervisor's trap."""
    result = run(tmp_path, rt_partition(), fuzz_partition(
        f"fuzz.seed=7 fuzz.iterations={ITERATIONS} fuzz.cpus=2 fuzz.mmu=on", cores=(2, 3)))
    check_rt(result, rt_alone)
    assert result.ok, result.explain()
    record = check_fuzz_done(result, 7, 2)
    assert record["mmu"] and record["frames"] == 2, record


def test_fuzzer_ending_on_an_unmapped_ipa_is_stopped(tmp_path, rt_alone):
    """fuzz.unmapped=on: after the done record, a read of an IPA nothing is mapped at."""
    result = run(tmp_path, rt_partition(), fuzz_partition(
        f"fuzz.seed=4 fuzz.iterations={ITERATIONS} fuzz.unmapped=on", on_fault="stop"))
    check_rt(result, rt_alone)
    check_fuzz_done(result, 4, 1)
    assert result.partitions["fuzz"].state == "stopped", result.explain()
    assert [f["ipa"] for f in result.faults] == [UNMAPPED_IPA], result.explain()
    trying = probe_record(result, "fuzz", "fuzz-unmapped")
    assert trying["phase"] == "trying", result.explain()    # the read never returned
