"""A manager partition (`manager = true`) runs the console's commands through its manager calls
(docs/management.md, "Hypercalls for a manager partition"), on both boards: guests/manager in
partition a lists, pauses and unpauses partition b, whose periodic lines stop while it is
paused and come back after; b, not a manager, is denied its own call and goes on running."""

import json

import pytest
from conftest import REPO, partition

from tern import run_system
from tern.config import dump_toml

# The commands a submits, and what each reply is checked for below.
COMMANDS = ["list", "pause b", "list", "unpause b", "list"]
GAP_MS = 500
MANAGER = ("manager.cmds=" + ";".join(c.replace(" ", "+") for c in COMMANDS)
           + f" manager.gap_ms={GAP_MS}")
# Ticks every 50 ms for longer than a's commands and gaps take (about 2.5 s).
TICKER = "manager.tick_ms=50 manager.seconds=6"


def lines_of(result, name, tag):
    """The text after `tag ` of every line partition `name` printed starting with it."""
    prefix = f"[{name}] {tag} "
    return [line[len(prefix):] for line in result.log if line.startswith(prefix)]


def replies(result):
    """Command index -> the tern-ctl records of its reply, and every reply line."""
    records, every = {}, []
    for text in lines_of(result, "a", "MANAGER-REPLY"):
        head, _, line = text.partition("} ")
        i = json.loads(head + "}")["i"]
        every.append(line)
        if line.startswith("tern-ctl "):
            records.setdefault(i, []).append(json.loads(line[len("tern-ctl "):]))
    return records, every


def states(reply):
    return {r["partition"]: r["state"] for r in reply if "partition" in r}


# (the board's cores, a's core, b's core).  With a spare core, that core is the console core; on
# a 2-core board it is a's own: its SUBMIT kicks its own core, which serves it at that exit.
PLACES = {"spare-console-core": (3, 1, 2), "manager-on-console-core": (2, 0, 1)}


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_manager_lists_pauses_and_unpauses_another_partition(tmp_path, arch, place):
    cores, a_core, b_core = PLACES[place]
    image = REPO / "guests" / "build" / arch / "manager.img"
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"arch": arch, "cpus": cores}}) + "\n"
                    + partition("a", [a_core], image, MANAGER, manager=True) + "\n"
                    + partition("b", [b_core], image, TICKER))
    result = run_system(path, timeout=240, workdir=tmp_path / "work")
    assert result.ok, result.explain()

    # The call a makes with a buffer outside its RAM is refused, and changes nothing.
    (refused,) = [json.loads(t) for t in lines_of(result, "a", "MANAGER-REFUSED")]
    assert refused["error"] == "invalid_address", result.explain()

    records, every = replies(result)
    assert sorted(records) == list(range(len(COMMANDS))), result.explain()
    for i, command in enumerate(COMMANDS):
        verb = command.split()[0]
        assert all(r["cmd"] == verb for r in records[i]), result.explain()
        assert records[i][-1]["ok"] is True, result.explain()
    assert states(records[0]) == {"a": "running", "b": "running"}, result.explain()
    assert states(records[2])["b"] == "paused", result.explain()
    assert states(records[4])["b"] == "running", result.explain()
    # The reply is the command's output only: the console's echo is not in it ...
    assert not any(line.startswith("tern: >") for line in every), result.explain()
    # ... but on the console, with the manager's name, for the operator.
    for command in COMMANDS:
        assert f"tern: > (manager a) {command}" in result.log, result.explain()

    done = {json.loads(t)["i"]: json.loads(t) for t in lines_of(result, "a", "MANAGER-RESULT")}
    assert all("len" in done[i] for i in range(len(COMMANDS))), result.explain()
    # b's ticks (board counter time) stop between the pause's reply and the list that saw it
    # paused (a quarter of the gap left for the pause to reach b's core), and come back.
    ticks = [json.loads(t)["t"] for t in lines_of(result, "b", "manager-tick")]
    paused_from = done[1]["t"] + (done[2]["t"] - done[1]["t"]) // 4
    assert not [t for t in ticks if paused_from < t < done[2]["t"]], result.explain()
    assert any(t < done[1]["t"] for t in ticks), result.explain()
    assert any(t > done[3]["t"] for t in ticks), result.explain()

    # b, not a manager, was denied and ran on; a's calls were all its own.
    (call,) = [json.loads(t) for t in lines_of(result, "b", "MANAGER-CALL")]
    assert call["error"] == "denied", result.explain()
    assert lines_of(result, "b", "MANAGER-DONE"), result.explain()
    assert result.stats["b"]["manager_calls"] == 1, result.explain()
    assert result.stats["b"]["manager_denied"] == 1, result.explain()
    assert result.stats["a"]["manager_denied"] == 0, result.explain()
    assert result.stats["a"]["manager_calls"] >= 1 + 2 * len(COMMANDS), result.explain()
