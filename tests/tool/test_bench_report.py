"""The latency lab's parsing, checks and report for Linux beside the real-time partition,
cyclictest inside Linux and the VirtIO devices (no QEMU: synthetic logs and records)."""

import shutil
import subprocess
import tomllib

import pytest

from tern import bench, devicetree, layout, qemu, report
from tern.units import MiB

CYCLICTEST_LOG = [
    "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]",
    "TERN-LINUX: ready cpus=2 kernel=6.1.0-56-arm64",
    "TERN-LINUX: cyclictest min=69 avg=75 max=187 samples=10",
    "TERN-LINUX: cyclictest-hist 69 1",
    "TERN-LINUX: cyclictest-hist 74 7",
    "TERN-LINUX: cyclictest-hist 119 1",
    "TERN-LINUX: cyclictest-hist 187 1",
    "TERN-LINUX: done",
]


def test_cyclictest_lines_are_parsed_with_or_without_a_partition_prefix():
    for lines in (CYCLICTEST_LOG, ["[linux] " + line for line in CYCLICTEST_LOG]):
        parsed = bench.parse_cyclictest(lines)
        assert (parsed["min"], parsed["avg"], parsed["max"], parsed["samples"]) == (69, 75, 187, 10)
        assert parsed["hist_us"] == [[69, 1], [74, 7], [119, 1], [187, 1]]
        assert (parsed["cpus"], parsed["kernel"]) == (2, "6.1.0-56-arm64")
        assert (parsed["p50"], parsed["p99"], parsed["overflows"]) == (74, 187, 0)


def test_cyclictest_overflows_and_errors():
    lines = CYCLICTEST_LOG[:3] + ["TERN-LINUX: cyclictest-hist 69 9",
                                  "TERN-LINUX: cyclictest-overflows 1"]
    parsed = bench.parse_cyclictest(lines)
    assert parsed["p50"] == 69 and parsed["p99"] is None and parsed["overflows"] == 1
    assert "error" in bench.parse_cyclictest(["TERN-LINUX: cyclictest-error status 1: boom"])
    assert "error" in bench.parse_cyclictest(["TERN-LINUX: ready cpus=2 kernel=x"])


def test_neighbours_are_stopped_once_rt_is_done():
    console = bench._stop_when_rt_done(["linux"])
    assert console("tern: partition rt: 1 vCPU(s) from core 1, 64 MiB") is None
    assert console("[linux] TERN-LINUX: stress running") is None
    assert console("[rt] LAT-DONE") == "stop linux\r"
    assert console("tern: partition rt off") is None          # typed once only
    pair = bench._stop_when_rt_done(["noise1", "noise2"])
    assert pair("tern: partition rt stopped") == "stop noise1\rstop noise2\r"


def test_beside_runs_must_measure_with_the_neighbours_busy():
    linux = bench.beside_setup("linux-stress")[0]
    good = ["[linux] TERN-LINUX: ready cpus=2 kernel=x", "[linux] TERN-LINUX: stress running",
            '[rt] LAT-START {"counter":1,"start_delay_us":25000000}', "[rt] LAT-DONE",
            "tern: partition rt off", "tern: > stop linux", "tern: partition linux off"]
    assert bench.check_beside(good, linux) is None
    late = [good[2], good[0], good[1]] + good[3:]
    assert "not busy yet" in bench.check_beside(late, linux)
    early_end = good[:3] + ["tern: partition linux off", "[rt] LAT-DONE"]
    assert "ended before" in bench.check_beside(early_end, linux)
    assert "LAT-START" in bench.check_beside(good[:2], linux)


def test_beside_neighbours():
    (linux,), delay, _ = bench.beside_setup("linux-cyclictest")
    assert delay == bench.LINUX_START_DELAY_US and linux.cpus == bench.NEIGHBOUR_CORES
    assert "tern.run=cyclictest" in linux.bootargs and linux.irq == "trap"
    assert 'initrd = ' in linux.toml() and 'memory = "256MiB"' in linux.toml()
    pair, delay, _ = bench.beside_setup("noise-pair")
    assert [n.cpus for n in pair] == [(2,), (3,)] and {n.irq for n in pair} == {"direct"}
    assert f"noise.irq_us={bench.LINUX_TICK_US}" in pair[0].bootargs


WEIRD_BOOTARGS = 'console="ttyAMA0 x" path=C:\\dir\\ q=\\"'


def test_bench_systems_keep_quotes_and_backslashes(tmp_path):
    image = tmp_path / 'we"ird\\dir' / "lat.img"
    rt = bench._partition("rt", (1, 2), image, "trap", WEIRD_BOOTARGS, initrd=image)
    neighbour = bench.Neighbour("b", (3,), image, WEIRD_BOOTARGS, "busy")
    text = bench._system_toml(4, rt, neighbour.table(), pci=("edu",), arch="riscv64")
    doc = tomllib.loads(text)
    assert doc["board"] == {"arch": "riscv64", "cpus": 4, "pci": ["edu"]}
    first, second = doc["partition"]
    assert (first["bootargs"], first["image"], first["initrd"]) == \
        (WEIRD_BOOTARGS, str(image), str(image))
    assert (first["cpus"], second["name"], second["bootargs"]) == ([1, 2], "b", WEIRD_BOOTARGS)
    assert tomllib.loads(neighbour.toml())["partition"][0]["bootargs"] == WEIRD_BOOTARGS


@pytest.mark.skipif(not shutil.which("dtc"), reason="needs dtc")
def test_rng_seed_goes_into_chosen(tmp_path):
    seed = bytes(range(devicetree.RNG_SEED_BYTES))
    ram_ipa = layout.QEMU_VIRT_ARM64.partition_ram_ipa
    dts = devicetree.partition_dts("linux", 2, "cortex-a53", ram_ipa,
                                   256 * MiB, "console=ttyAMA0", rng_seed=seed)
    assert dts.count("rng-seed") == 1
    assert f"rng-seed = [{seed.hex(' ')}];" in dts
    assert dts.index("chosen {") < dts.index("rng-seed") < dts.index("cpus {")
    devicetree.compile_dts(dts, tmp_path / "seeded.dtb")
    assert "rng-seed" not in devicetree.partition_dts("linux", 2, "cortex-a53",
                                                      ram_ipa, 256 * MiB)


def test_native_command_with_initrd_and_dtb():
    args = qemu.native_command("Image", "console=ttyAMA0", initrd="initrd.gz", dtb="p.dtb")
    assert args[args.index("-initrd") + 1] == "initrd.gz"
    assert args[args.index("-dtb") + 1] == "p.dtb"
    assert "-initrd" not in qemu.native_command("Image") and "-dtb" not in qemu.native_command("Image")


def _beside_record(system, irq, test, alone, beside):
    stats = {"avg": float(beside), "min": alone, "max": beside, "warm_max": beside, "p50": alone,
             "p99": beside, "p999": beside, "samples": 10}
    return {"system": system, "scenario": "linux-stress", "test": test, "shift": 4,
            "unit": "ticks", "irq": irq, "wfi": "native", **stats,
            "alone": {"avg": float(alone), "min": alone, "max": alone, "warm_max": alone},
            "extra_avg_over_alone": float(beside - alone),
            "extra_warm_max_over_alone": beside - alone}


def _cyclictest_record(system, lo):
    return {"system": system, "scenario": "cyclictest", "test": "cyclictest", "shift": 4,
            "unit": "us", "loops": 10, "min": lo, "avg": lo + 5, "max": lo + 40, "p50": lo + 4,
            "p99": lo + 40, "samples": 10, "overflows": 0,
            "hist_us": [[lo, 2], [lo + 4, 7], [lo + 40, 1]], "command": "qemu-system-aarch64 ..."}


def test_beside_rows_apply_the_bound_of_each_mode():
    records = [_beside_record("tern direct", "direct", "vtimer-busy", 2, 2),
               _beside_record("tern direct", "direct", "vtimer-wfi", 3, 13),
               _beside_record("tern wfi=trap", "trap", "vtimer-busy", 18, 18 + report.BESIDE_TRAP_BOUND),
               _beside_record("tern wfi=trap", "trap", "vtimer-wfi", 18, 19 + report.BESIDE_TRAP_BOUND)]
    met = {(row[0], row[1]): (row[4], row[-2], row[-1])
           for row in report.beside_rows(records, "linux-stress")}
    assert met[("vtimer-busy", "tern direct")] == ("+0", "= alone", "yes")
    assert met[("vtimer-wfi", "tern direct")] == ("+10", "= alone", "no")
    assert met[("vtimer-busy", "tern wfi=trap")][2] == "yes"
    assert met[("vtimer-wfi", "tern wfi=trap")] == (f"+{report.BESIDE_TRAP_BOUND + 1}",
                                                    f"<= alone +{report.BESIDE_TRAP_BOUND}", "no")
    # Their own table, not the latency table.
    assert report.latency_rows(records, "linux-stress", 4) == []


def test_report_sections_for_linux():
    records = [_beside_record("tern direct", "direct", "vtimer-busy", 2, 12),
               {"system": "tern direct", "scenario": "linux-stress", "test": "setup", "shift": 4,
                "neighbours": "Linux busy", "start_delay_us": 25000000,
                "system_toml": "[board]\ncpus = 4\n", "console": "types `stop linux`",
                "rt_stats": {"exit_irq": 0, "irq_injected": 0}},
               _cyclictest_record("native", 70), _cyclictest_record(bench.NATIVE_PARTITION_DT, 220),
               _cyclictest_record(bench.NATIVE_PARTITION_DT_NO_SEED, 71),
               _cyclictest_record("tern direct", 221)]
    data = {
        "meta": {"command": "test", "date": "today", "seconds": 1.0,
                 "versions": {"qemu": "QEMU 7.2", "clang": "clang 14"}},
        "plan": {"samples": 10, "prio_runs": 2, "shifts": [4]},
        "systems": [{"name": "tern direct", "description": "Tern, direct"}],
        "scenarios": [{"name": "linux-stress", "title": "rt beside Linux running stress"},
                      {"name": "cyclictest", "title": "cyclictest inside Linux"}],
        "paths": {"fast_path": ["eret"], "wfi_wake": []},
        "records": records,
        "errors": [],
    }
    text = report.markdown_report(data)
    assert f"the bound\nused here is +{report.BESIDE_TRAP_BOUND} instructions" in text
    assert "| vtimer-busy | tern direct | 2 | 12 | +10 |" in text
    assert "exit_irq 0" in text and "[board]\ncpus = 4" in text
    assert "emulated (icount)" in text
    assert "| tern direct | 221 | 226 | 261 |" in text
    assert "| rt beside busy Linux (stress), direct: worst WARM_MAX over alone | exactly 0 | +10 |" in text
    assert "tern direct +1 us" in text                      # over native with the same DT
    assert "rng-seed" in text and "qemu-system-aarch64 ..." in text
    headers, rows = report.cyclictest_buckets(records)
    assert headers[1:] == ["native", bench.NATIVE_PARTITION_DT, bench.NATIVE_PARTITION_DT_NO_SEED,
                           "tern direct"]
    assert sum(row[1] for row in rows) == 10 and sum(row[4] for row in rows) == 10
    terminal = report.terminal_report(data)
    assert "cyclictest inside Linux" in terminal and "WARM_MAX beside" in terminal


def _path_record(system, irq, test, hyp_alone, hyp_beside, exc_alone, exc_beside):
    def summ(hyp, exc):
        return {"samples": 30, "warm": 22, "hyp_min": hyp, "hyp_max": hyp, "vector_min": 2,
                "vector_max": 2, "exceptions": exc}
    a, b = summ(hyp_alone, exc_alone), summ(hyp_beside, exc_beside)
    return {"system": system, "scenario": "rt-path", "test": test, "shift": 4, "irq": irq,
            "wfi": "native", "unit": "instructions", "alone": a, "beside": b,
            "extra_hyp_max_over_alone": hyp_beside - hyp_alone, "extra_vector_max_over_alone": 0,
            "extra_exceptions_over_alone": sum(exc_beside.values()) - sum(exc_alone.values()),
            "warm_max_ticks": {"alone": 2, "beside": 229904}}


def test_path_rows_need_the_same_work_and_no_extra_exception_on_rt_core():
    irq = {"IRQ": 22}
    records = [_path_record("tern direct", "direct", "vtimer-busy", 0, 0, irq, irq),
               _path_record("tern direct", "direct", "vtimer-wfi", 0, 0, irq,
                            {"IRQ": 22, "Virtual IRQ": 1}),
               _path_record("tern wfi=native", "trap", "vtimer-busy", 16, 16 + 51, irq, irq)]
    met = {(row[0], row[1]): (row[6], row[7], row[8], row[-1]) for row in report.path_rows(records)}
    assert met[("vtimer-busy", "tern direct")] == ("IRQ 22", "IRQ 22", "+0", "yes")
    assert met[("vtimer-wfi", "tern direct")][3] == "no"            # an exception more beside
    assert met[("vtimer-busy", "tern wfi=native")][2:] == ("+51", "no")
    # Its own table, neither the latency table nor the emulated-time "beside" one.
    assert report.latency_rows(records, "rt-path", 4) == []
    assert report.beside_rows(records, "rt-path") == []
    data = {"meta": {"command": "test", "date": "today", "seconds": 1.0,
                     "versions": {"qemu": "QEMU 7.2", "clang": "clang 14"}},
            "plan": {"samples": 10, "prio_runs": 2, "shifts": [4]},
            "systems": [], "scenarios": [{"name": "rt-path", "title": "rt's core"}],
            "paths": {"fast_path": ["eret"], "wfi_wake": []}, "records": records, "errors": []}
    text = report.markdown_report(data)
    assert "| vtimer-busy | tern direct | 0 | 0 | 2 | 2 | IRQ 22 | IRQ 22 | +0 | = alone | yes |" in text
    assert ("| rt beside busy Linux (stress), trap-and-inject: WARM_MAX counted on rt's own core "
            "(instructions per interrupt, execution trace) over alone | <= +50 | +51 |") in text
    assert "rt's core per interrupt" in report.terminal_report(data)


def test_traced_runs_trace_from_lat_soon_to_the_end(monkeypatch):
    calls = []
    monkeypatch.setattr(qemu, "trace_on", lambda m: calls.append(("on", m)))
    monkeypatch.setattr(qemu, "trace_off", lambda m: calls.append(("off", m)))
    console = bench._traced_console("mon.sock", ["linux"])
    assert console("[linux] TERN-LINUX: stress running") is None and calls == []
    assert console('[rt] LAT-SOON {"counter":1,"notice_us":200000}') is None
    assert calls == [("on", "mon.sock")]
    assert console("[rt] LAT-DONE") == "stop linux\r"
    assert calls == [("on", "mon.sock"), ("off", "mon.sock")]
    assert console("[rt] LAT-DONE") is None and len(calls) == 2


def test_extra_over_native_compares_within_one_board():
    # edu-wfi exists on both boards: each partition row is set against its own board's native.
    records = [
        {"system": "native", "scenario": "device", "test": "edu-wfi", "shift": 0, "avg": 12.0,
         "warm_max": 12},
        {"system": "native", "scenario": "riscv64", "test": "edu-wfi", "shift": 0, "avg": 13.0,
         "warm_max": 13},
        {"system": "tern direct", "scenario": "device", "test": "edu-wfi", "shift": 0,
         "avg": 12.0, "warm_max": 12},
        {"system": "tern direct", "scenario": "riscv64", "test": "edu-wfi", "shift": 0,
         "avg": 15.0, "warm_max": 16},
    ]
    bench.add_extra_over_native(records)
    assert (records[2]["extra_avg"], records[2]["extra_warm_max"]) == (0.0, 0)
    assert (records[3]["extra_avg"], records[3]["extra_warm_max"]) == (2.0, 3)


def test_traps_per_interrupt_are_the_counters_difference_over_the_extra_samples():
    few = {"partition": "rt", "state": "off", "restarts": 0, "console_dropped": 5, "exit_irq": 12,
           "exit_wfi": 3, "exit_mmio": 900, "irq_injected": 12, "sbi_time": 30, "sbi_base": 7,
           "exception_injected": 0}
    more = dict(few, console_dropped=9, exit_irq=32, irq_injected=32, sbi_time=70, exit_mmio=900)
    total, causes = bench.per_sample(few, more, 20)
    # Only entries count (exit_*, sbi_*): not injections, not the console.
    assert causes == {"exit_irq": 1, "sbi_time": 2} and total == 3
    assert bench.per_sample(few, dict(few), 20) == (0, {})
    assert bench.per_sample(few, dict(few, exit_irq=22), 20) == (0.5, {"exit_irq": 0.5})


def test_riscv64_boot_record_in_instructions():
    guest = ['LAT-BOOT {"entry_counter":246051,"freq_hz":10000000,"hart":0,'
             '"cycle_hz":1000000000,"entry_cycle":24605166,"arch":"riscv64"}']
    log = ["[rt] " + guest[0],
           'tern-boot {"freq_hz":10000000,"entry":245684,"mmu_on":245719,"ready":245963,'
           '"partitions":{"rt":{"created":245956,"first_entry":246051}}}',
           "tern: all partitions ended, board off", 'tern-boot-cycle {"entry":24568493}']
    rec = bench.riscv64_boot_record("tern direct", 0, guest, log)
    assert rec["first_instruction"] == 24605166 and rec["hyp_entry"] == 24568493
    assert rec["hypervisor_part"] == 24605166 - 24568493 and rec["unit"] == "instructions"
    assert (rec["created"], rec["eret"], rec["time_resolution"]) == (24595600, 24605100, 100)
    native = bench.riscv64_boot_record("native", 0, guest, guest)
    assert native["first_instruction"] == 24605166 and "hyp_entry" not in native
    assert bench.riscv64_boot_record("native", 0, ["LAT-BOOT {\"entry_counter\":1}"], []) is None


def _lat(system, test, avg, **more):
    return {"system": system, "scenario": "riscv64", "test": test, "shift": 0, "avg": avg,
            "min": avg, "max": avg, "warm_max": avg, "p99": avg, "p999": avg, **more}


def test_riscv64_table_says_traps_per_interrupt():
    records = [_lat("native", "sbi-timer-busy", 2),
               _lat("tern wfi=trap", "sbi-timer-busy", 22, traps_per_interrupt=3,
                    traps_by_cause={"exit_irq": 1, "sbi_time": 2}),
               _lat("tern direct", "sstc-busy", 2, traps_per_interrupt=0, traps_by_cause={})]
    rows = report.latency_rows(records, "riscv64", 0)
    assert [r[-2:] for r in rows] == [("-", "-"), ("3", "exit_irq 1, sbi_time 2"), ("0", "none")]
    assert len(report.latency_headers("riscv64")) == len(rows[0])
    assert report.latency_headers("timer") == report.HEADERS
    assert report.markdown_rule(report.latency_headers("riscv64")).endswith("|---:|---|")


def test_riscv64_boot_is_reported_beside_arm64():
    arm = {"system": "tern wfi=trap", "scenario": "boot", "test": "boot", "shift": 4,
           "freq_hz": 62500000, "first_instruction": 39476, "hyp_entry": 8, "mmu_on": 16665,
           "created": 38004, "eret": 39445}
    riscv = {"system": "tern wfi=trap", "scenario": "riscv64-boot", "test": "boot", "shift": 0,
             "freq_hz": 10 ** 9, "first_instruction": 24600808, "hyp_entry": 24568493,
             "hypervisor_part": 32315, "time_resolution": 100, "created": 24591300,
             "ready": 24592000, "eret": 24600700}
    native = {"system": "native", "scenario": "riscv64-boot", "test": "boot", "shift": 0,
              "freq_hz": 10 ** 9, "first_instruction": 24682611}
    rows = report._riscv64_boot_goal_rows([arm, riscv, native])
    assert "<= 2 x arm64's = 78936 | 32315 |" in rows[0] and "39468" in rows[0]
    assert "24600808" in rows[1] and "24682611" in rows[1]
    text = "\n".join(report.riscv64_boot_section([arm, riscv, native]))
    assert "| tern wfi=trap | 24600808 | 24568493 | 32315 |" in text
    assert "| arm64 tern wfi=trap (shift 4, above) | 39476 | 8 | 39468 |" in text
    assert report._riscv64_boot_goal_rows([arm]) == []


def _report_data(records, scenarios, shifts):
    return {"meta": {"command": "test", "date": "today", "seconds": 1.0,
                     "versions": {"qemu": "QEMU 7.2", "clang": "clang 14"}},
            "plan": {"samples": 10, "prio_runs": 2, "shifts": shifts},
            "systems": [], "scenarios": scenarios,
            "paths": {"fast_path": ["eret"], "wfi_wake": []}, "records": records, "errors": []}


def test_report_names_every_board_it_reports():
    riscv = [_lat("native", "sbi-timer-busy", 2)]
    arm = [dict(_lat("native", "vtimer-busy", 2), scenario="timer")]
    scenarios = [{"name": "timer", "title": "timer latency"},
                 {"name": "riscv64", "title": "RISC-V board"}]
    both = report.markdown_report(_report_data(arm + riscv, scenarios, [0]))
    assert ("- Boards: QEMU virt arm64 (GICv3, Cortex-A53) and QEMU virt riscv64 "
            "(AIA APLIC+IMSIC, Sstc); QEMU 7.2; built with clang 14") in both
    assert "## Timer latency (QEMU virt arm64, shift 0)" in both
    assert "## RISC-V board (QEMU virt riscv64, shift 0)" in both
    alone = report.markdown_report(_report_data(arm, scenarios[:1], [0]))
    assert "- Board: QEMU virt arm64 (GICv3, Cortex-A53); QEMU 7.2;" in alone
    assert "riscv64" not in alone


def test_channel_scenarios_run_in_tern_only_with_a_channel_between_the_two_members():
    seen = {}

    class Runs:
        def tern_system(self, label, shift, partitions, board_cpus, arch="arm64", channels=()):
            seen.update(label=label, text=bench._system_toml(board_cpus, *partitions, arch=arch,
                                                              channels=channels))
            return type("Result", (), {"ok": False, "reason": "not run", "workdir": None,
                                       "partitions": {}})()

    plan = type("Plan", (), {"samples": 7})()
    system = next(s for s in bench.SYSTEMS if s.name == "tern direct")
    for name, arch in (("channel", "arm64"), ("riscv64-channel", "riscv64")):
        scenario = bench.SCENARIO_BY_NAME[name]
        assert scenario.kinds == ("tern",) and scenario.arch == arch
        outcome = scenario.run(system, scenario.shifts[0], plan, Runs())
        assert outcome.error == "not run" and outcome.records == []
        doc = tomllib.loads(seen["text"])
        assert doc["board"]["arch"] == arch
        assert doc["channel"] == [{"name": bench.CHANNEL, "size": "64KiB",
                                   "members": ["ping", "pong"]}]
        assert [(p["name"], p["cpus"], p["irq"]) for p in doc["partition"]] == \
            [("ping", [1], "direct"), ("pong", [2], "direct")]
        assert all("lat.tests=chan lat.chan=bench" in p["bootargs"] for p in doc["partition"])
    trap = next(s for s in bench.SYSTEMS if s.name == "tern wfi=trap")
    assert "icount" in trap.can_run(bench.SCENARIO_BY_NAME["channel"])
    assert trap.can_run(bench.SCENARIO_BY_NAME["riscv64-channel"]) is None


def test_channel_tables_say_what_the_sender_did():
    record = {"system": "tern direct", "scenario": "channel", "test": "chan-rtt", "shift": 4,
              "avg": 747.0, "min": 747, "max": 789, "warm_max": 789, "p99": 747, "p999": 747,
              "sender": {"avg": 241.0, "min": 241, "max": 241}}
    lines = report._latency_table([record], "channel", 4,
                                  report.latency_rows([record], "channel", 4))
    assert any("doorbell page" in line and "AVG 241.0" in line for line in lines), lines


# ---- VirtIO (issue 28): /init's blk-read and vio-net lines, the costs, the report ----

BLK_READ_LOG = [
    "TERN-LINUX: ready cpus=1 kernel=6.1.0-56-arm64",
    "TERN-LINUX: blk-read bytes=1048576 bs=4096 ns=192372976",
    "TERN-LINUX: blk-read bytes=1048576 bs=16384 ns=118334768",
    "TERN-LINUX: done",
]


def test_blk_read_lines_are_parsed_with_or_without_a_partition_prefix():
    for lines in (BLK_READ_LOG, ["[linux] " + line for line in BLK_READ_LOG]):
        assert bench.parse_blk_read(lines) == [
            {"bytes": 1048576, "bs": 4096, "ns": 192372976},
            {"bytes": 1048576, "bs": 16384, "ns": 118334768}]
    assert "no /dev/vda" in bench.parse_blk_read(
        ["TERN-LINUX: blk-read-error no /dev/vda"])["error"]
    assert "error" in bench.parse_blk_read(BLK_READ_LOG[:1])


def test_blk_cost_is_the_difference_between_two_request_sizes():
    # 256 requests of 4 KiB and 64 of 16 KiB, each 1000 + 2 x bytes instructions at shift 4
    # (16 ns each).
    reads = [{"bytes": 1 << 20, "bs": bs, "ns": (1 << 20) // bs * (1000 + 2 * bs) * 16}
             for bs in (4096, 16384)]
    assert bench.vio_per_kib(reads, 4) == (1000, 2048)
    assert bench.vio_per_kib(reads[:1], 4) is None
    assert bench.mb_per_s(1_000_000, 500_000_000) == 2.0


def test_entries_per_request_are_the_counters_difference_over_the_extra_requests():
    few = {"exit_mmio": 1000, "exit_irq": 500, "exit_wfi": 300, "virtio_request": 321,
           "irq_injected": 9999}
    more = {"exit_mmio": 1960, "exit_irq": 820, "exit_wfi": 620, "virtio_request": 641,
            "irq_injected": 0}
    total, causes = bench.per_request(few, more)
    assert total == 5 and causes == {"exit_irq": 1, "exit_mmio": 3, "exit_wfi": 1}
    assert bench.per_request(more, more) == (None, {})


VIO_NET_CLIENT = [
    "[client] TERN-LINUX: vio-net ping 5 packets transmitted, 5 packets received, 0% packet loss",
    "[client] TERN-LINUX: vio-net rtt round-trip min/avg/max = 0.972/1.084/1.317 ms",
    "[client] TERN-LINUX: vio-net sent bytes=1048576 md5=" + "0" * 32,
]
VIO_NET_SERVER = ["[server] TERN-LINUX: vio-net receive-time bytes=1048576 ns=406663856",
                  "[server] TERN-LINUX: vio-net received bytes=1048576 md5=" + "0" * 32]


def test_vio_net_lines_are_parsed():
    assert bench.parse_vio_net(VIO_NET_CLIENT, VIO_NET_SERVER) == {
        "ping_sent": 5, "ping_received": 5, "rtt_min_ms": 0.972, "rtt_avg_ms": 1.084,
        "rtt_max_ms": 1.317, "bytes": 1048576, "ns": 406663856}
    assert "bytes" in bench.parse_vio_net(VIO_NET_CLIENT, [])["error"]
    assert "no ethN" in bench.parse_vio_net(["TERN-LINUX: vio-net-error no ethN"], [])["error"]


def test_init_prints_the_lines_the_bench_parses(tmp_path):
    # /init's clock: the kernel's "now" line of /proc/timer_list (a copy here), read by sh.
    from tern import initramfs
    timer_list = tmp_path / "timer_list"
    timer_list.write_text("Timer List Version: v0.9\nHRTIMER_MAX_CLOCK_BASES: 8\n"
                          "now at 15797588123 nsecs\n\ncpu: 0\n")
    now = initramfs.INIT.split("now() {\n", 1)[1].split("\n}\n", 1)[0]
    script = ("now() {\n" + now.replace("/proc/timer_list", str(timer_list)) + "\n}\n"
              "now; echo \"$ns\"\n")
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "15797588123"
    # The receiver's copy of it, in the script nc runs for each connection.
    assert "now at" in initramfs.INIT.split("cat >/tmp/timed-cat", 1)[1].split("\nEOF\n", 1)[0]
    for mode in ("blk-read) run_blk_read", "tern.blk.bytes=*", "tern.blk.sizes=*"):
        assert mode in initramfs.INIT
    echo = 'echo "TERN-LINUX: blk-read bytes=$((count * bs)) bs=$bs ns=$((ns - start))"'
    assert echo in initramfs.INIT
    line = subprocess.run(["sh", "-c", "count=4; bs=4096; ns=9000; start=1000; " + echo],
                          capture_output=True, text=True, check=True).stdout
    assert bench.parse_blk_read([line]) == [{"bytes": 16384, "bs": 4096, "ns": 8000}]


def test_virtio_scenarios_run_one_tern_system_per_board():
    names = {s.name: s for s in bench.SCENARIOS if s.report == "virtio"}
    assert set(names) == {"virtio-blk", "virtio-net", "riscv64-virtio-blk", "riscv64-virtio-net"}
    assert names["virtio-blk"].systems == ("native", "tern wfi=native")
    assert names["riscv64-virtio-net"].systems == ("tern direct",)
    assert all(s.arch == ("riscv64" if n.startswith("riscv64") else "arm64")
               for n, s in names.items())


def _vio_records():
    base = {"system": "tern wfi=trap", "scenario": "virtio-blk", "shift": 4, "arch": "arm64"}
    return [
        {**base, "test": "blk-read-4096", "path": "mediated", "bytes": 1048576, "bs": 4096,
         "ns": 192372976, "mb_s": 5.45},
        {**base, "test": "blk-cost", "path": "mediated", "per_request": 24101, "per_kib": 5716,
         "entries_per_request": 5.2,
         "entries_by_cause": {"exit_irq": 1.22, "exit_mmio": 3, "exit_wfi": 0.98}},
        {**base, "test": "blk-read-4096", "path": "trusted", "bytes": 1048576, "bs": 4096,
         "ns": 96000000, "mb_s": 10.92},
        {**base, "test": "blk-cost", "path": "trusted", "per_request": 20000, "per_kib": 3100,
         "entries_per_request": 5.1,
         "entries_by_cause": {"exit_irq": 1.2, "exit_mmio": 3, "exit_wfi": 0.9}},
        {**base, "test": "blk-read-4096", "path": "native", "system": "native", "bytes": 1048576,
         "bs": 4096, "ns": 128004224, "mb_s": 8.19},
        {**base, "scenario": "virtio-net", "test": "ping", "path": "mediated", "sent": 5,
         "received": 5, "rtt_min_ms": 0.972, "rtt_avg_ms": 1.084, "rtt_max_ms": 1.317},
        {**base, "scenario": "virtio-net", "test": "tcp", "path": "mediated", "bytes": 1048576,
         "ns": 406663856, "mb_s": 2.58}]


def test_virtio_report_sections_and_goal():
    data = {
        "meta": {"command": "test", "date": "today", "seconds": 1.0,
                 "versions": {"qemu": "QEMU 7.2", "clang": "clang 14"}},
        "plan": {"samples": 10, "prio_runs": 2, "shifts": [4]},
        "systems": [{"name": "tern wfi=trap", "description": "Tern"}],
        "scenarios": [{"name": "virtio-blk", "title": "virtio-blk"},
                      {"name": "virtio-net", "title": "virtio-net"}],
        "paths": {"fast_path": ["eret"], "wfi_wake": []},
        "records": _vio_records(),
        "errors": [{"system": "tern direct", "scenario": "riscv64-virtio-net", "shift": 0,
                    "error": "timed out", "workdir": None}],
    }
    text = report.markdown_report(data)
    assert ("| virtio-blk mediated (arm64): hypervisor entries per request on the frontend's "
            f"core, steady state | <= {report.GOAL_VIO_ENTRIES} | 5.2 |") in text
    assert "| arm64 | native | 4096 | 1048576 | 128004224 | 8.19 |" in text
    assert "| arm64 | mediated | 4096 | 1048576 | 192372976 | 5.45 |" in text
    assert "| arm64 | mediated | 24101 | 5716 | 5.2 | exit_irq 1.22, exit_mmio 3, exit_wfi 0.98 |" \
        in text
    # The trusted path beside the mediated one, after it.
    assert ("| virtio-blk trusted (arm64): hypervisor entries per request on the frontend's "
            f"core, steady state | <= {report.GOAL_VIO_ENTRIES} | 5.1 |") in text
    assert "the backend's own moves: 3100 instructions per KiB" in text
    assert text.index("| arm64 | mediated | 4096 |") < text.index("| arm64 | trusted | 4096 |")
    assert "| arm64 | trusted | 20000 | 3100 | 5.1 | exit_irq 1.2, exit_mmio 3, exit_wfi 0.9 |" \
        in text
    assert "| arm64 | 1.084 | 0.972 / 1.317 | 1048576 | 406663856 | 2.58 |" in text
    assert "- Failed: riscv64-virtio-net on tern direct: timed out" in text
    assert "emulated (icount)" in text and "sleep=off" in text
    # Their own tables, not the latency table.
    assert report.latency_rows(data["records"], "virtio-blk", 4) == []
    terminal = report.terminal_report(data)
    assert "virtio-blk sequential read" in terminal and "406663856" in terminal
