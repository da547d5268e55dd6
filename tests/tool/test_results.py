"""Reading the console protocol, deciding outcomes, and tables."""

from tern import results, runner

LOG = [
    "tern: Tern hypervisor on qemu-virt",
    "tern: partition rt: 1 vCPU(s) from core 1, 64 MiB at 0x44000000, wfi native",
    "[rt] lat: starting",
    '[rt] LAT-JSON {"test":"vtimer-wfi","samples":100,"avg":120.5,"min":100,"max":300,'
    '"warm_max":150,"p99":250}',
    "[bad] probe: poking 0x10000000",
    '[bad] PROBE-JSON {"test":"stage2-fault","ok":true}',
    "[rt] LAT-JSON {broken json",
    "tern: fault partition=bad vcpu=0 ipa=0x10000000 pc=0x40080123 esr=0x93c08046",
    "tern: injected fault partition=rt vcpu=0 ipa=0xb000000 pc=0x40080200 esr=0x82000005",
    "tern: partition bad stopped",
    "[rt] LAT-DONE",
    "tern: partition rt off",
    'tern-stats {"partition":"rt","state":"off","restarts":0,"exit_irq":5,"exit_wfi":0}',
    'tern-stats {"partition":"bad","state":"stopped","restarts":0,"faults":1}',
    "tern: all partitions ended, board off",
]


def test_parse_log():
    log = results.parse_log(LOG, ["rt", "bad", "quiet"])
    rt, bad, quiet = log.partitions["rt"], log.partitions["bad"], log.partitions["quiet"]
    assert rt.lines[0] == "lat: starting" and rt.lines[-1] == "LAT-DONE"
    assert rt.lat == [{"test": "vtimer-wfi", "samples": 100, "avg": 120.5, "min": 100,
                       "max": 300, "warm_max": 150, "p99": 250}]
    assert rt.probe == [] and rt.state == "off"
    assert bad.probe == [{"test": "stage2-fault", "ok": True}] and bad.state == "stopped"
    assert quiet.lines == [] and quiet.state is None
    assert log.stats["rt"]["exit_irq"] == 5 and log.stats["bad"]["faults"] == 1
    assert log.faults == [{"line": LOG[7], "partition": "bad", "vcpu": 0, "ipa": 0x1000_0000,
                           "pc": 0x4008_0123, "esr": 0x93C0_8046}]
    # A fault handed to the guest is not a fault that ended its partition.
    assert log.injected == [{"line": LOG[8], "partition": "rt", "vcpu": 0, "ipa": 0xB00_0000,
                             "pc": 0x4008_0200, "esr": 0x8200_0005}]
    assert log.panic is None and log.errors == []
    assert log.lat == [] and log.probe == []


def test_native_records_and_panic():
    log = results.parse_log([
        'LAT-JSON {"test":"ptimer-busy","avg":7}',
        'PROBE-JSON {"test":"x","ok":false}',
        "tern: PANIC esr=0x96000045 far=0x0 elr=0x40081234 core=1 partition=rt",
        "tern: PANIC again",
        "tern: error: system description: partition rt: image outside its RAM",
    ])
    assert log.lat == [{"test": "ptimer-busy", "avg": 7}]
    assert log.probe == [{"test": "x", "ok": False}]
    assert log.panic.startswith("tern: PANIC esr=")
    assert log.errors == ["tern: error: system description: partition rt: image outside its RAM"]


def outcome(lines, names=("rt",), returncode=0, timed_out=False, stderr=()):
    run = runner.QemuRun(lines=list(lines), returncode=returncode, timed_out=timed_out,
                         stderr=list(stderr))
    return runner.system_outcome(results.parse_log(run.lines, names), run, 120, list(names))


def test_outcomes():
    assert outcome(["tern: partition rt off"]) == (0, "all partitions off")
    assert outcome(["tern: partition rt off"], ("rt", "b")) == \
        (1, 'partition "b" never reported off')
    assert outcome(["tern: fault partition=rt vcpu=0 ipa=0x0 pc=0x0 esr=0x0",
                    "tern: partition rt stopped"]) == \
        (1, 'partition "rt" stopped (tern: fault partition=rt vcpu=0 ipa=0x0 pc=0x0 esr=0x0)')
    assert outcome(["tern: PANIC boom", "tern: partition rt off"], timed_out=True) == \
        (3, "hypervisor panic: tern: PANIC boom")
    assert outcome(["[rt] still going"], timed_out=True, returncode=-9) == \
        (124, "timed out after 120 s")
    rom = "qemu-system-aarch64: Some ROM regions are overlapping"
    assert outcome([], returncode=1, stderr=[rom]) == (1, f"QEMU exited with status 1: {rom}")
    assert outcome(["tern: error: system description: 0 partitions (1..8 supported)"]) == \
        (1, "hypervisor: system description: 0 partitions (1..8 supported)")


def test_native_outcomes():
    ok = runner.QemuRun(lines=[], returncode=0, timed_out=False, stderr=[])
    assert runner.native_outcome(ok, 5) == (0, "QEMU exited with status 0")
    slow = runner.QemuRun(lines=[], returncode=-9, timed_out=True, stderr=[])
    assert runner.native_outcome(slow, 2.5) == (124, "timed out after 2.5 s")


def test_explain_has_status_reason_and_tail():
    result = runner.RunResult(status=1, reason='partition "rt" never reported off',
                              log=[f"line {i}" for i in range(100)])
    text = result.explain()
    assert text.splitlines()[0] == 'status 1: partition "rt" never reported off'
    assert "last 40 of 100 serial lines:" in text
    assert text.splitlines()[-1] == "  line 99" and "  line 59" not in text


def test_format_table():
    table = results.format_table(("NAME", "N", "DELTA"), [("a", 5, "+3"), ("long", 1234, None)])
    assert table.splitlines() == [
        "NAME     N  DELTA",
        "----  ----  -----",
        "a        5     +3",
        "long  1234      -",
    ]


def test_latency_table():
    runs = {
        "native": [{"test": "vtimer-wfi", "avg": 100, "min": 90, "max": 200, "warm_max": 120,
                    "p99": 190}],
        "tern wfi=trap": [{"test": "vtimer-wfi", "avg": 150.5, "min": 120, "max": 400,
                           "warm_max": 160, "p99": 390}],
        "tern wfi=native": [],
    }
    headers, rows = results.latency_table(runs, ["vtimer-wfi", "ptimer-busy"])
    assert headers == ("TEST", "SYSTEM", "AVG", "MIN", "MAX", "WARM_MAX", "p99", "+ over native")
    assert rows[0] == ("vtimer-wfi", "native", 100, 90, 200, 120, 190, None)
    assert rows[1] == ("vtimer-wfi", "tern wfi=trap", 150.5, 120, 400, 160, 390, "+50.5")
    assert rows[2] == ("vtimer-wfi", "tern wfi=native") + (None,) * 6
    assert len(rows) == 6 and rows[3][:2] == ("ptimer-busy", "native")


def test_records_split_across_lines_are_joined():
    log = results.parse_log([
        '[rt] LAT-JSON {"test":"a","avg":1,"',
        '[other] interleaved',
        '[rt] min":0}',
        '[rt] LAT-JSON {"test":"b",',
        '[rt] LAT-JSON {"test":"c"}',          # a new record abandons the unfinished one
        '[rt] PROBE-JSON {"test":"p",',
        '[rt] "ok":true}',
    ])
    rt = log.partitions["rt"]
    assert rt.lat == [{"test": "a", "avg": 1, "min": 0}, {"test": "c"}]
    assert rt.probe == [{"test": "p", "ok": True}]
    assert len(rt.lines) == 6 and log.partitions["other"].lines == ["interleaved"]


def test_parse_sched_keeps_each_cores_last_line_and_its_entries():
    entry = '"window_entry":{"count":%d,"min":%d,"max":%d}'
    arrival = '"event_arrival":{"count":9,"min":3,"max":3}'
    line = 'tern-sched {"cpu":%d,"scheduler":"arinc653","freq_hz":62500000,' + entry + ',' \
        + arrival + '}'
    log = ["tern: > stats", line % (1, 4, 900, 900), "[a] tern-sched {\"cpu\":2}",
           'tern-sched {"cpu":-1}', "tern-sched {broken", line % (1, 8, 900, 901),
           'tern-sched-windows {"cpu":1,"from":2,"entries":[[0,300,901],[1,400,900]]}',
           'tern-sched-windows {"cpu":1,"from":0,"entries":[[0,100,900],[1,200,900],[1,"x",1]]}',
           'tern-sched-windows {"cpu":3,"from":0,"entries":[[0,100,900]]}']
    sched = results.parse_sched("\n".join(log))
    assert list(sched) == [1]
    assert sched[1]["window_entry"] == {"count": 8, "min": 900, "max": 901}
    assert sched[1]["event_arrival"]["max"] == 3
    assert sched[1]["entries"] == [(0, 100, 900), (1, 200, 900), (0, 300, 901), (1, 400, 900)]
    assert results.parse_sched(log) == sched
    assert results.window_lateness(sched[1], 150, 400) == {0: [901], 1: [900, 900]}
