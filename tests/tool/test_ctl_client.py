"""tern ctl and tern run's control socket, against a stand-in hypervisor console."""

import json
import sys
import threading
import time

import pytest

from tern import cli, ctl, runner

# A stand-in for the board's console: reads `@N COMMAND` lines as the hypervisor does and
# answers with tern-ctl lines, around lines that are not the reply (a guest's, another
# sequence number's).  `mute` never answers; `quit` ends the board.
FAKE_HYPERVISOR = r'''
import json, sys
def out(line):
    sys.stdout.write(line + "\r\n"); sys.stdout.flush()
def ctl(seq, cmd, **kv):
    out("tern-ctl " + json.dumps({"seq": seq, "cmd": cmd, **kv}))
out("tern: ready")
buf = b""
while True:
    c = sys.stdin.buffer.read(1)
    if not c:
        break
    if c != b"\r":
        buf += c
        continue
    line, buf = buf.decode(), b""
    out("tern: > " + line)
    tag, verb, *args = line.split()
    seq = int(tag[1:])
    out("[rt] LAT tick")
    ctl(seq - 1, verb, ok=True)   # a stale reply: not this request's
    if verb == "list":
        ctl(seq, verb, partition="rt", id=0, state="paused", vcpus=1, cpus=[1], mem_mib=32,
            restarts=0, pool=None)
        out("[other] tern-ctl {\"seq\": %d, \"cmd\": \"list\", \"ok\": false}" % seq)
        ctl(seq, verb, partition="linux", id=1, state="running", vcpus=2, cpus=[2, 3],
            mem_mib=256, restarts=3, pool=None)
        ctl(seq, verb, ok=True)
    elif verb == "stats":
        out('tern-stats {"partition":"rt","state":"running","restarts":0,"exit_irq":5,"faults":0}')
        out('tern-sched {"cpu":1,"scheduler":"arinc653","freq_hz":62500000,'
            '"window_entry":{"count":4,"min":4379,"max":4411},'
            '"event_arrival":{"count":4,"min":60,"max":60}}')
        out('tern-mem {"table_pages_used":3,"table_pages":64}')
        ctl(seq, verb, ok=True)
    elif verb == "vcpu-pin":
        ctl(seq, verb, ok=False, reason="it is in a null pool, which keeps each vCPU on its own core")
    elif verb == "quit":
        break
    elif verb != "mute":
        ctl(seq, verb, ok=True, args=args)
'''


@pytest.fixture
def board(tmp_path, monkeypatch):
    """run_qemu serving ctl.sock in tmp_path, on the stand-in, in a thread; the run's result."""
    monkeypatch.setattr(ctl, "REPLY_TIMEOUT", 2.0)
    path = tmp_path / ctl.SOCKET_NAME

    def run():
        runner.run_qemu([sys.executable, "-c", FAKE_HYPERVISOR], timeout=60,
                                      ctl_path=path)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    while not path.exists():           # the server is up once its socket is there
        assert time.monotonic() < deadline and thread.is_alive(), "no control socket"
        time.sleep(0.01)
    yield path, thread
    if path.exists():
        ctl.send(path, "quit", timeout=5)
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_socket_forwards_a_request_and_matches_its_reply(board):
    path, _ = board
    items, final = ctl.send(path, "list")
    assert final == {"ok": True}
    assert [i["partition"] for i in items] == ["rt", "linux"]   # not the stale or a guest's
    assert items[1]["cpus"] == [2, 3]
    items, final = ctl.send(path, "pause rt")
    assert (items, final) == ([], {"ok": True, "args": ["rt"]})


def test_stats_collects_the_counters(board):
    path, _ = board
    items, final = ctl.send(path, "stats")
    assert final["ok"] and items == [
        {"stats": {"partition": "rt", "state": "running", "restarts": 0, "exit_irq": 5,
                   "faults": 0}},
        {"sched": {"cpu": 1, "scheduler": "arinc653", "freq_hz": 62500000,
                   "window_entry": {"count": 4, "min": 4379, "max": 4411},
                   "event_arrival": {"count": 4, "min": 60, "max": 60}}},
        {"mem": {"table_pages_used": 3, "table_pages": 64}}]
    assert ctl.format_reply("stats", items).splitlines()[2:] == [
        "core 1 (arinc653): window entries 4, 4379-4411 ticks after the boundary; scheduling "
        "events 4, 60-60 ticks after the deadline", "hypervisor tables: 3 of 64 pages"]


def test_a_silent_hypervisor_is_a_clear_error(board):
    path, _ = board
    items, final = ctl.send(path, "mute")
    assert final == {"ok": False, "reason": "the hypervisor did not answer 'mute' within 2 s"}
    assert ctl.send(path, "list")[1]["ok"]       # and the next request is answered


def test_what_the_console_cannot_take_is_refused_by_the_server(board):
    path, _ = board
    for bad in ("x" * 241, "list\rstop rt", "st\x7fats"):
        _, final = ctl.send(path, bad)
        assert not final["ok"] and "not a console command" in final["reason"], bad


def test_a_board_that_ends_answers_and_removes_the_socket(board):
    path, thread = board
    assert ctl.send(path, "quit", timeout=5)[1] == {
        "ok": False, "reason": "the system is no longer running"}
    thread.join(timeout=30)
    assert not thread.is_alive() and not path.exists()


def test_cli_prints_xl_like_tables(board, capsys):
    path, _ = board
    assert cli.main(["ctl", "--workdir", str(path.parent), "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["Name", "ID", "Mem", "VCPUs", "State", "Restarts", "CPUs", "Pool"]
    assert out[1].split() == ["rt", "0", "32", "1", "paused", "0", "1", "-"]
    assert out[2].split() == ["linux", "1", "256", "2", "running", "3", "2,3", "-"]


def test_cli_json_and_refusals(board, capsys):
    path, _ = board
    assert cli.main(["ctl", "--workdir", str(path.parent), "--json", "list"]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["ok"] and reply["command"] == "list" and len(reply["items"]) == 2
    status = cli.main(["ctl", "--workdir", str(path.parent), "vcpu-pin", "rt", "0", "2"])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert err == "tern: error: it is in a null pool, which keeps each vCPU on its own core\n"
    status = cli.main(["ctl", "--workdir", str(path.parent), "--json", "vcpu-pin", "rt", "0", "2"])
    out, err = capsys.readouterr()
    assert status == 1 and json.loads(out)["ok"] is False and "null pool" in err


def test_cli_sends_each_command_with_its_arguments(board, capsys):
    path, _ = board
    w = ["ctl", "--workdir", str(path.parent), "--json"]
    for argv, sent in ((["sched-rtds", "rt", "--budget", "100", "--period", "1000"],
                        "sched-rtds rt --budget 100 --period 1000"),
                       (["sched-credit", "rt", "--weight", "256"], "sched-credit rt --weight 256"),
                       (["pool-migrate", "rt", "frame"], "pool-migrate rt frame"),
                       (["sched-arinc653", "frame", "--major-frame", "20000", "--window", "a:10"],
                        "sched-arinc653 frame --major-frame 20000 --window a:10"),
                       (["unpause", "rt"], "unpause rt"), (["stop", "rt"], "stop rt")):
        assert cli.main(w + argv) == 0, argv
        reply = json.loads(capsys.readouterr().out)
        assert reply["command"] == sent and reply["args"] == sent.split()[1:]


@pytest.mark.parametrize("argv, message", [
    (["vcpu-pin", "rt", "0"], "the following arguments are required: CPU"),
    (["vcpu-pin", "rt", "x", "1"], "not a whole number: x"),
    (["sched-rtds", "rt", "--budget", "1"], "the following arguments are required: --period"),
    (["pause"], "the following arguments are required: PARTITION"),
    (["frob"], "invalid choice: 'frob'"),
])
def test_cli_checks_arguments(argv, message, capsys):
    assert cli.main(["ctl"] + argv) == 2
    assert message in capsys.readouterr().err


def test_without_a_running_system_ctl_says_so(tmp_path, capsys):
    assert cli.main(["ctl", "--workdir", str(tmp_path), "list"]) == 2
    assert "no control socket" in capsys.readouterr().err
    with pytest.raises(ctl.ToolError, match="no running system"):
        ctl.find_socket(None, tmp_path)


def test_default_is_the_newest_run(tmp_path):
    old, new = tmp_path / "run-a" / ctl.SOCKET_NAME, tmp_path / "run-b" / ctl.SOCKET_NAME
    for path in (old, new):
        path.parent.mkdir()
        path.write_text("")
    import os
    os.utime(old, (1, 1))
    assert ctl.find_socket(None, tmp_path) == new


def test_formats_vcpu_and_pool_lists():
    text = ctl.format_reply("vcpu-list", [
        {"partition": "rt", "id": 0, "vcpu": 0, "cpu": 1, "power": "on", "paused": True,
         "affinity": [1]},
        {"partition": "linux", "id": 1, "vcpu": 1, "cpu": 3, "power": "off", "paused": False,
         "affinity": [3]}])
    assert [line.split() for line in text.splitlines()] == [
        ["Name", "ID", "VCPU", "CPU", "State", "Affinity"],
        ["rt", "0", "0", "1", "paused", "1"], ["linux", "1", "1", "3", "off", "3"]]
    text = ctl.format_reply("pool-list", [{"pool": None, "scheduler": "null", "cpus": [1],
                                           "partitions": ["rt"]}])
    assert text.splitlines()[1].split() == ["-", "null", "1", "rt"]
    assert ctl.format_reply("pause", []) == ""
