"""Channels between partitions (issue 28): two latency guests play ping-pong over a
[[channel]], on both boards, with trap-and-inject and direct (riscv64: trap-less) delivery.

Partition `ping` is member 0: it writes a message holding its counter, rings `pong` and waits
for the answer (`chan-rtt`, the round trip). `pong` is member 1: its doorbell handler takes
the one-way latency (`doorbell`), replies and rings back. Figures and goals live in `make
bench`; here: every sample arrives, the rings are counted on the sender, a direct receiver is
never entered for its doorbell, and `tern check` refuses a channel to nobody.
"""

import subprocess
import sys

import pytest

from conftest import LAT, LAT_RISCV64, REPO

from tern import run_system
from tern.config import dump_toml

SAMPLES = 50
BOOTARGS = f"lat.tests=chan lat.chan=msg lat.samples={SAMPLES}"
CHANNEL = {"name": "msg", "size": "64KiB", "members": ["ping", "pong"]}

# Each board as the other tests run it: arm64 under icount shift 4, riscv64 at shift 0.
BOARDS = {
    "arm64": ({"cpus": 3, "cpu": "cortex-a53"}, LAT, 4),
    "riscv64": ({"arch": "riscv64", "cpus": 3, "memory": "1GiB"}, LAT_RISCV64, 0),
}


def system(tmp_path, arch, irq, channel=CHANNEL, bootargs=BOOTARGS):
    """ping on core 1 and pong on core 2, both running lat's channel test, and `channel`."""
    board, image, _ = BOARDS[arch]
    wfi = "native" if irq == "direct" else "trap"
    partitions = [{"name": name, "cpus": [core], "memory": "32MiB", "image": str(image),
                   "irq": irq, "wfi": wfi, "bootargs": bootargs}
                  for name, core in (("ping", 1), ("pong", 2))]
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": board, "partition": partitions, "channel": [channel]}))
    return path


def tern_check(path, *args):
    return subprocess.run([sys.executable, str(REPO / "tern"), "check", str(path), *args],
                          capture_output=True, text=True, timeout=60)


def only_record(result, name, test):
    """The one LAT-JSON record partition `name` printed, which must be `test`'s."""
    records = result.partitions[name].lat
    assert [r.get("test") for r in records] == [test], result.explain()
    return records[0]


@pytest.mark.parametrize("irq", ["trap", "direct"])
@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_two_latency_guests_ping_pong_over_a_channel(tmp_path, arch, irq):
    path = system(tmp_path, arch, irq)
    check = tern_check(path)
    assert check.returncode == 0, check.stderr
    assert "msg" in check.stdout, check.stdout      # the channel is in the layout

    result = run_system(path, icount=BOARDS[arch][2])
    assert result.ok, result.explain()
    rtt = only_record(result, "ping", "chan-rtt")
    one_way = only_record(result, "pong", "doorbell")
    for record in (rtt, one_way):
        assert "error" not in record and record["samples"] == SAMPLES, record
        assert record["min"] > 0, record
    # A round trip holds the same message's one-way trip and then the answer's.
    assert rtt["min"] > one_way["min"], (rtt, one_way)
    assert (rtt["member"], one_way["member"]) == (0, 1), (rtt, one_way)

    # Each side rang once per sample, every ring to a member that exists.
    for name in ("ping", "pong"):
        stats = result.stats[name]
        assert stats["doorbell_ring"] == SAMPLES, (name, stats)
        assert stats["doorbell_refused"] == 0, (name, stats)
        # every ring in the hypervisor's trap vector
        assert stats["fast_doorbell"] == SAMPLES, (name, stats)
    pong = result.stats["pong"]
    if irq == "direct":
        # The doorbell is set pending in the board's controller for pong's core: taken there
        # with no hypervisor entry, as a passed-through device's interrupt is.
        assert pong["exit_irq"] == 0 and pong["irq_injected"] == 0, pong
    else:
        assert pong["irq_injected"] >= SAMPLES, pong


@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_check_refuses_a_channel_to_an_unknown_partition(tmp_path, arch):
    channel = {**CHANNEL, "members": ["ping", "nobody"]}
    check = tern_check(system(tmp_path, arch, "trap", channel))
    assert check.returncode == 2, (check.stdout, check.stderr)
    assert check.stdout == "", check.stdout
    assert "channel[0].members" in check.stderr and "nobody" in check.stderr, check.stderr


# lat.chan as each guest reads it (guests/lib's channel_by_bootarg): the error each reports.
UNFOUND = {"none": ("", "no channel named: lat.chan=NAME"),
           "unknown": ("lat.chan=nowhere", "channel not in the device tree"),
           "too long": ("lat.chan=" + "n" * 16, "no channel named: lat.chan=NAME")}


@pytest.mark.parametrize("chan", sorted(UNFOUND))
@pytest.mark.parametrize("arch", sorted(BOARDS))
def test_a_latency_guest_names_the_channel_it_cannot_find(tmp_path, arch, chan):
    arg, error = UNFOUND[chan]
    path = system(tmp_path, arch, "trap", bootargs=f"lat.tests=chan lat.samples=1 {arg}")
    result = run_system(path, icount=BOARDS[arch][2])
    assert result.ok, result.explain()
    for name in ("ping", "pong"):
        records = result.partitions[name].lat
        assert [r.get("error") for r in records] == [error], result.explain()
