"""`tern demo`: its tables, from the --json it writes (few samples; `make demo` has more)."""

import json

from tern import cli, demo


def test_demo_riscv64_table_trapless_rows_equal_native(tmp_path, capsys):
    out = tmp_path / "demo.json"
    status = cli.main(["demo", "--arch", "riscv64", "--samples", "10", "--json", str(out),
                       "--workdir", str(tmp_path / "runs")])
    printed = capsys.readouterr().out
    assert status == 0, printed
    doc = json.loads(out.read_text())
    assert doc["arches"] == ["riscv64"] and "runs" not in doc      # no arm64 table
    table = doc["riscv64"]
    assert table["icount"] == 0 and "emulated (icount shift 0)" in table["note"]
    runs = table["runs"]
    assert list(runs) == ["native", "tern wfi=trap", "tern direct"]
    assert all(r["status"] == 0 for r in runs.values()), runs
    native = {r["test"]: r for r in runs["native"]["lat"]}
    direct = {r["test"]: r for r in runs["tern direct"]["lat"]}
    assert sorted(direct) == sorted(native) == sorted(demo.TESTS_RISCV64)
    assert all("error" not in r for r in direct.values()), direct
    # The trap-less rows: no hypervisor entry per interrupt, and the bare board's figures.
    # (SBI calls trap in any partition: the SBI IPI rows are Tern's SBI against OpenSBI's.)
    traps = runs["tern direct"]["traps"]
    trapless = sorted(t for t, c in traps.items() if c["traps_per_interrupt"] == 0)
    assert trapless == sorted(("sstc-wfi", "sstc-busy", "ipi-wfi", "ipi-busy", "edu-wfi",
                               "edu-busy", "intx-wfi", "intx-busy")), traps
    for test in trapless:
        r = direct[test]
        assert (r["min"], r["max"], r["avg"]) == \
            (native[test]["min"], native[test]["max"], native[test]["avg"]), (test, r)
    trapped = runs["tern wfi=trap"]["traps"]["sbi-timer-busy"]
    assert trapped["traps_per_interrupt"] > 0 and "sbi_time" in trapped["traps_by_cause"]
    # edu's INTx through the emulated APLIC: the interrupt and the guest's claims trap.
    intx = runs["tern wfi=trap"]["traps"]["intx-busy"]
    assert intx["traps_by_cause"].get("exit_irq", 0) >= 1, intx
    assert intx["traps_by_cause"].get("exit_mmio", 0) >= 1, intx
    assert "traps" not in runs["native"]
    # The table printed: riscv64's only, its trap column.
    assert "guests/build/riscv64/lat.img" in printed and "guests/build/arm64/lat.img" not in printed
    assert "traps/interrupt" in printed
