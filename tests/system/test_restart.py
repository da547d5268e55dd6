"""Restarting a partition: from the hypervisor console, many times over, leaking nothing."""

import json

from conftest import LAT, PROBE, partition, probe_record

from tern import run_system

RESTARTS = 100


def records(result, tag):
    """Every `tag {json}` line the hypervisor printed, in order."""
    return [json.loads(line[len(tag) + 1:]) for line in result.log if line.startswith(tag + " ")]


def idle_boots(result, name):
    return [r["boots"] for r in result.partitions[name].probe if r.get("test") == "idle"]


def test_console_restarts_a_partition_100_times_and_nothing_leaks(system_file):
    path = system_file(
        partition("rt", [1], LAT, "lat.samples=2000 lat.tests=vtimer-busy", wfi="native"),
        partition("idle", [2], PROBE, "probe.tests=idle"),
    )
    boots = 0

    def console(line):
        nonlocal boots
        if '"test":"idle"' not in line:
            return None
        boots += 1
        if boots == 1:
            return "stats\rrestart idle\r"
        return "restart idle\r" if boots <= RESTARTS else "stats\rstop idle\r"

    result = run_system(path, timeout=120, console=console)
    assert result.ok, result.explain()
    # Every boot ran from a pristine image: its .data counter reads 1, never 2.
    assert idle_boots(result, "idle") == [1] * (RESTARTS + 1), result.explain()
    before, after = [r for r in records(result, "tern-stats") if r["partition"] == "idle"][:2]
    assert (before["restarts"], after["restarts"]) == (0, RESTARTS)
    for counter in ("faults", "irq_queued", "gic_ignored", "undef_injected", "psci_denied"):
        assert after[counter] == before[counter] == 0, (counter, after)
    # The hypervisor allocates only at boot: restarts take no table memory.
    mem = records(result, "tern-mem")
    assert len(mem) == 2 and mem[0] == mem[1] and mem[0]["table_pages_used"] > 0, mem
    # The neighbour ran to completion meanwhile.
    assert result.partitions["rt"].state == "off", result.explain()
    assert result.partitions["rt"].lat and result.partitions["rt"].lat[0]["samples"] == 2000


def test_console_restarts_a_partition_that_ended(system_file):
    path = system_file(partition("a", [1], PROBE, "probe.tests=idle"),
                       partition("b", [2], PROBE, "probe.tests=idle"))
    script = iter(["stop b\r", "restart b\r", "stop a\rstop b\r"])

    def console(line):
        if '"test":"idle"' in line and line.startswith("[b]") or line == "tern: partition b off":
            return next(script, None)
        return None

    result = run_system(path, timeout=60, console=console)
    assert result.ok, result.explain()
    assert idle_boots(result, "b") == [1, 1], result.explain()
    assert "tern: partition b restarted" in result.log, result.explain()
    assert records(result, "tern-stats")[-1]["restarts"] == 1


def test_console_reports_bad_commands_and_keeps_running(system_file):
    path = system_file(partition("a", [1], PROBE, "probe.tests=idle"))
    sent = []

    def console(line):
        if '"test":"idle"' in line and not sent:
            sent.append(True)
            return "restart nosuch\rfrobnicate\r" + "x" * 300 + "\rhelp\rstop a\r"
        return None

    result = run_system(path, timeout=60, console=console)
    assert result.ok, result.explain()
    log = "\n".join(result.log)
    assert 'tern: console: no partition named "nosuch"' in log
    assert 'tern: console: unknown command "frobnicate" (try help)' in log
    assert "tern: console: line longer than 255 characters ignored" in log
    assert ("tern: commands: help, list, vcpu-list, pool-list, stats, restart NAME, stop NAME, "
            "pause NAME, unpause NAME, vcpu-pin NAME VCPU CPU") in log
    assert result.partitions["a"].state == "off"
    assert probe_record(result, "a", "idle")["boots"] == 1
