"""arm64's side of shared cores on the board (issue 29): vCPUs that take turns on a core under
RTDS and credit.  The lead's tests/system/test_shared_cores.py covers the schedulers; this is
what the arm64 port itself must get right: a budget that runs out and the core that waits for
its refill (the EL2 timer, which an idle wait once left pending for ever), a partition's two
vCPUs on one core raising SGIs to each other, and two partitions' timers and WFIs on one core."""

from conftest import LAT, PROBE, partition, probe_record

from tern import run_system
from tern.config import dump_toml

WFI_TESTS = "lat.samples=10 lat.tests=vtimer-wfi"


def test_arm64_vcpus_share_cores(tmp_path):
    pools = [{"name": "budget", "cpus": [1], "scheduler": "rtds"},
             {"name": "pair", "cpus": [2], "scheduler": "credit"},
             {"name": "smp", "cpus": [3], "scheduler": "credit"}]
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"cpus": 4}, "pool": pools}) + "\n" + "\n".join([
        # 4 ms every 10 ms: the probe's console output alone outlasts a budget.
        partition("rtds", [1], PROBE, "probe.tests=psci", pool="budget", budget_us=4000,
                  period_us=10000),
        partition("a", [2], LAT, WFI_TESTS, pool="pair"),
        partition("b", [2], LAT, WFI_TESTS, pool="pair"),
        partition("smp", [3, 3], PROBE, "probe.tests=smp", pool="smp"),
    ]))
    result = run_system(path, icount=4)
    assert result.ok, result.explain()
    for name in ("rtds", "a", "b", "smp"):
        assert result.partitions[name].state == "off", result.explain()
    assert probe_record(result, "rtds", "psci")["pass"], result.explain()
    smp = probe_record(result, "smp", "smp")
    assert smp["pass"] and smp["sgi_to_1"] and smp["sgi_back"], result.explain()
    for name in ("a", "b"):
        lat = result.partitions[name].lat
        assert [r["test"] for r in lat] == ["vtimer-wfi"], result.explain()
        assert lat[0]["samples"] == 10, result.explain()
        # Its timer's interrupts reached it on the core it shares.
        assert result.stats[name]["irq_injected"] >= 10, result.explain()
