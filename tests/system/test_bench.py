"""The latency lab's machinery: deterministic results and a report that says what they are."""

import re

from tern import bench, report

TERN_TRAP = next(s for s in bench.SYSTEMS if s.name == "tern wfi=trap")
NATIVE = next(s for s in bench.SYSTEMS if s.name == "native")
TIMER = next(s for s in bench.SCENARIOS if s.name == "timer")
SMALL = bench.Plan(samples=20, prio_runs=2, shifts=(4,), timeout=120)


def test_bench_results_are_identical_across_runs(tmp_path):
    first, errors1 = bench.run_matrix(SMALL, systems=(NATIVE, TERN_TRAP), scenarios=(TIMER,),
                                      workdir=tmp_path / "a", progress=None)
    second, errors2 = bench.run_matrix(SMALL, systems=(NATIVE, TERN_TRAP), scenarios=(TIMER,),
                                       workdir=tmp_path / "b", progress=None)
    assert not errors1 and not errors2, (errors1, errors2)
    assert len(first) == 2 * len(bench.TIMER_TESTS)
    assert first == second
    tern = [r for r in first if r["system"] == "tern wfi=trap"]
    assert all(r["extra_avg"] > 0 for r in tern), tern


def test_report_labels_figures_as_emulated(tmp_path):
    records, errors = bench.run_matrix(SMALL, systems=(NATIVE, TERN_TRAP), scenarios=(TIMER,),
                                       workdir=tmp_path, progress=None)
    data = {
        "meta": {"command": "test", "date": "today", "versions": report.tool_versions(),
                 "seconds": 1.0},
        "plan": {"samples": SMALL.samples, "prio_runs": 2, "shifts": [4]},
        "systems": [{"name": s.name, "description": s.describe()} for s in (NATIVE, TERN_TRAP)],
        "scenarios": [{"name": "timer", "title": TIMER.title}],
        "paths": report.interrupt_paths(),
        "records": records,
        "errors": errors,
    }
    text = report.markdown_report(data)
    assert "emulated (icount)" in text and "not hardware time" in text
    assert f"**{len(data['paths']['fast_path'])} instructions**" in text
    assert data["paths"]["fast_path"][-1] == "eret"
    for r in records:
        assert f"| {r['test']} | {r['system']} |" in text


TERN_DIRECT = next(s for s in bench.SYSTEMS if s.name == "tern direct")
BESIDE = tuple(s for s in bench.SCENARIOS if s.name in ("linux-stress", "noise-pair"))


def test_rt_is_measured_alone_and_beside_busy_linux(tmp_path):
    """The machinery of the mixed-criticality scenarios: rt starts once Linux is busy, the
    console stops the neighbours when rt is done, alone and beside land in one record."""
    assert bench.LINUX_IMAGE.is_file() and bench.LINUX_INITRD.is_file(), "run `make linux` first"
    records, errors = bench.run_matrix(SMALL, systems=(TERN_DIRECT,), scenarios=BESIDE,
                                       workdir=tmp_path, progress=None)
    assert not errors, errors
    beside = [r for r in records if "alone" in r]
    assert len(beside) == len(BESIDE) * len(bench.TIMER_TESTS)
    assert all(r["samples"] == SMALL.samples and r["alone"]["warm_max"] <= 3 for r in beside)
    setups = [r for r in records if r["test"] == "setup"]
    assert len(setups) == len(BESIDE)
    # Direct delivery: rt's core never enters the hypervisor on an interrupt, neighbours or not.
    assert all(s["rt_stats"]["exit_irq"] == 0 for s in setups), setups


RISCV64 = tuple(s for s in bench.SCENARIOS if s.name == "riscv64")
RISCV64_BOOT = tuple(s for s in bench.SCENARIOS if s.name == "riscv64-boot")
SHIFT0 = bench.Plan(samples=20, prio_runs=2, shifts=(0,), timeout=120)


def test_riscv64_traps_per_interrupt(tmp_path):
    """Counted from the hypervisor's own counters: none where delivery is trap-less, the SBI
    timer's calls and interrupt where it is trapped."""
    records, errors = bench.run_matrix(SHIFT0, systems=(NATIVE, TERN_TRAP, TERN_DIRECT),
                                       scenarios=RISCV64, workdir=tmp_path, progress=None)
    assert not errors, errors
    by = {(r["system"], r["test"]): r for r in records}
    assert all("traps_per_interrupt" not in r for r in records if r["system"] == "native")
    for test in ("sstc-wfi", "sstc-busy", "ipi-wfi", "ipi-busy", "edu-wfi", "edu-busy"):
        r = by[("tern direct", test)]
        assert (r["traps_per_interrupt"], r["traps_by_cause"]) == (0, {}), r
    trapped = by[("tern wfi=trap", "sbi-timer-busy")]
    assert trapped["traps_by_cause"]["sbi_time"] >= 1, trapped
    assert trapped["traps_by_cause"]["exit_irq"] >= 1, trapped
    assert trapped["traps_per_interrupt"] == sum(trapped["traps_by_cause"].values())
    # The same partition's SBI timer without a trap for the interrupt itself: only its calls.
    assert set(by[("tern direct", "sbi-timer-busy")]["traps_by_cause"]) == {"sbi_time"}


TERN_WFI_NATIVE = next(s for s in bench.SYSTEMS if s.name == "tern wfi=native")
RISCV64_DOC_TABLE = "This scenario alone: `./tern bench --scenarios riscv64`"


def recorded_riscv64():
    """docs/benchmarks.md's riscv64 table: each Tern row's MIN, and the senders' AVG."""
    text = (bench.REPO / "docs" / "benchmarks.md").read_text()
    section = text.split(RISCV64_DOC_TABLE, 1)[1]
    rows, senders = {}, {}
    for line in section.splitlines():
        if line.startswith("Sender's cost"):
            senders = {(system, test): float(avg) for system, test, avg
                       in re.findall(r"(tern \S+) (\S+) AVG ([0-9.]+)", line)}
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and cells[1].startswith("tern"):
            rows[(cells[1], cells[0])] = int(cells[3])
    return rows, senders


def test_riscv64_figures_are_the_recorded_ones(tmp_path):
    """Issue 26: the hypervisor's paths on riscv64 (an SBI IPI's call and kick, a trapped
    interrupt, a trapped WFI, the SBI timer) are as long as docs/benchmarks.md says. Shift 0
    counts instructions exactly, so a change that lengthens one fails here and not only in a
    later reading of the bench; one that shortens it updates the table."""
    rows, senders = recorded_riscv64()
    assert len(rows) == 24 and len(senders) == 16, (rows, senders)
    records, errors = bench.run_matrix(SHIFT0, systems=(TERN_TRAP, TERN_WFI_NATIVE, TERN_DIRECT),
                                       scenarios=RISCV64, workdir=tmp_path, progress=None)
    assert not errors, errors
    measured = {(r["system"], r["test"]): r["min"] for r in records}
    assert {k: measured.get(k) for k in rows} == rows
    sent = {(r["system"], r["test"]): r["sender"]["avg"] for r in records if r.get("sender")}
    assert {k: sent.get(k) for k in senders} == senders


def test_riscv64_boot_is_counted_in_instructions_and_ordered(tmp_path):
    records, errors = bench.run_matrix(SHIFT0, systems=(NATIVE, TERN_DIRECT),
                                       scenarios=RISCV64_BOOT, workdir=tmp_path, progress=None)
    assert not errors, errors
    native, tern = (next(r for r in records if r["system"] == name)
                    for name in ("native", "tern direct"))
    assert native["first_instruction"] > 0 and native["unit"] == "instructions"
    # created and eret are `time` stamps (100 instructions a tick), the others `cycle`.
    assert 0 < tern["hyp_entry"] < tern["created"] < tern["eret"], tern
    assert tern["eret"] <= tern["first_instruction"], tern
    assert tern["hypervisor_part"] == tern["first_instruction"] - tern["hyp_entry"] > 0


VIRTIO_BLK = tuple(s for s in bench.SCENARIOS if s.name == "virtio-blk")
# The system the bench runs arm64's VirtIO on (trap-and-inject, native WFI).
VIO_TERN = next(s for s in bench.SYSTEMS if s.name == bench.VIO_SYSTEM["arm64"])
SHIFT4 = bench.Plan(samples=20, prio_runs=2, shifts=(4,), timeout=300)


def recorded_virtio_entries():
    """docs/benchmarks.md's goal row: arm64's entries per request and their causes."""
    text = (bench.REPO / "docs" / "benchmarks.md").read_text()
    row = next(line for line in text.splitlines()
               if line.startswith("| virtio-blk mediated (arm64)"))
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    causes = dict(re.findall(r"(exit_\w+) ([0-9.]+)", cells[3]))
    return float(cells[2]), {k: float(v) for k, v in causes.items()}


def test_virtio_blk_mediated_entries_per_request_are_the_recorded_ones(tmp_path):
    """Issue 28: Linux reading its disk through the board's virtio-mmio slot, served by the
    bare-metal backend. The frontend's entries per request come from the hypervisor's own
    counters (two runs, the second with twice the bytes) and are the figure docs/benchmarks.md
    states; the reads are timed by the guest."""
    recorded, causes = recorded_virtio_entries()
    records, errors = bench.run_matrix(SHIFT4, systems=(VIO_TERN,), scenarios=VIRTIO_BLK,
                                       workdir=tmp_path, progress=None)
    assert not errors, errors
    paths = {(r["path"], r["test"]): r for r in records}
    for path in ("pass-through", "mediated", "trusted"):
        for bs in bench.VIO_BLK_SIZES:
            r = paths[(path, f"blk-read-{bs}")]
            assert r["bytes"] == bench.VIO_BLK_BYTES and r["ns"] > 0 and r["mb_s"] > 0, r
    cost = paths[("mediated", "blk-cost")]
    # One request per O_DIRECT block of each size, the second run reading twice as many.
    per_run = sum(bench.VIO_BLK_BYTES // bs for bs in bench.VIO_BLK_SIZES)
    assert cost["requests"]["second"] - cost["requests"]["first"] == per_run, cost
    # The MMIO entries (notify, InterruptStatus, InterruptACK) repeat exactly; the interrupt's
    # count timer ticks too, which fall between requests a little differently from run to run
    # (how the cores' turns interleave): a few hundredths. The guest's WFI runs natively.
    by_cause = cost["entries_by_cause"]
    assert by_cause["exit_mmio"] == causes["exit_mmio"] == 3, cost
    assert set(by_cause) == set(causes) == {"exit_mmio", "exit_irq"}, cost
    assert abs(by_cause["exit_irq"] - causes["exit_irq"]) <= 0.05, cost
    assert abs(cost["entries_per_request"] - recorded) <= 0.1, cost
    assert cost["per_kib"] > 0, cost
