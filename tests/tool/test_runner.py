"""The runner on stand-in processes: streaming, logs, timeouts, panics."""

import sys
import time

import pytest

from tern import cli, demo, runner
from tern.errors import UsageError


def models(system):
    """The board's PCI device models, in slot order."""
    return tuple(d.model for d in system.board.pci)


def python(code):
    return [sys.executable, "-c", code]


def test_lines_are_streamed_logged_and_cleaned(tmp_path, capsys):
    code = ("import sys; sys.stdout.write('one\\r\\ntwo\\r\\n'); sys.stdout.flush(); "
            "sys.stderr.write('warn\\n'); sys.stdout.write('no newline')")
    run = runner.run_qemu(python(code), timeout=30, quiet=False, log_path=tmp_path / "serial.log")
    assert run.lines == ["one", "two", "no newline"]
    assert run.stderr == ["warn"]
    assert run.returncode == 0 and not run.timed_out
    assert (tmp_path / "serial.log").read_text() == "one\ntwo\nno newline\n"
    out, err = capsys.readouterr()
    assert out == "one\ntwo\nno newline\n" and err == "warn\n"


def test_quiet_prints_nothing(capsys):
    runner.run_qemu(python("print('x')"), timeout=30, quiet=True)
    assert capsys.readouterr() == ("", "")


def test_exit_status_is_kept():
    assert runner.run_qemu(python("raise SystemExit(7)"), timeout=30).returncode == 7


def test_timeout_kills_the_process():
    start = time.monotonic()
    run = runner.run_qemu(python("import time; print('up', flush=True); time.sleep(60)"),
                          timeout=1)
    assert time.monotonic() - start < 10
    assert run.timed_out and run.lines == ["up"] and run.returncode != 0


def test_timeout_while_silent_child_holds_the_pipe_open():
    run = runner.run_qemu(python("import time; time.sleep(60)"), timeout=0.5)
    assert run.timed_out


def test_panic_ends_the_run_soon(monkeypatch):
    monkeypatch.setattr(runner, "PANIC_GRACE", 0.3)
    code = ("import time; print('tern: PANIC esr=0x0', flush=True); "
            "print('tern: PANIC core 0', flush=True); time.sleep(60)")
    start = time.monotonic()
    run = runner.run_qemu(python(code), timeout=60, panic_prefix="tern: PANIC")
    assert time.monotonic() - start < 10
    assert run.lines == ["tern: PANIC esr=0x0", "tern: PANIC core 0"]


def test_cli_timeout_report(capsys):
    result = runner.RunResult(status=124, reason="timed out after 3 s",
                              log=[f"[rt] {i}" for i in range(50)])
    assert cli._finish(result) == 124
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "tern: error: timed out after 3 s"
    assert err[2:] == [f"[rt] {i}" for i in range(10, 50)]


def test_cli_failure_is_one_line(capsys):
    result = runner.RunResult(status=1, reason='partition "rt" stopped', log=["x"] * 50)
    assert cli._finish(result) == 1
    assert capsys.readouterr().err == 'tern: error: partition "rt" stopped\n'


def test_unit_note():
    assert demo.unit_note(4) == \
        "emulated (icount shift 4): 1 tick = 1 instruction; not hardware time"
    assert demo.unit_note(3) == \
        "emulated (icount shift 3): 1 tick = 2 instructions; not hardware time"


def test_demo_system_is_valid(tmp_path, stub_image):
    from tern.config import load_system
    text = demo.system_toml(stub_image, "native", samples=50)
    path = tmp_path / "demo.toml"
    path.write_text(text)
    system = load_system(path)
    assert system.board.cpus == 2 and models(system) == ("edu",)
    (p,) = system.partitions
    assert (p.name, p.cpus, p.wfi_native, p.irq_direct, p.devices) == \
        ("lat", (1,), True, False, ("pcie",))
    assert p.bootargs == ("lat.tests=vtimer-wfi,vtimer-busy,ptimer-wfi,ptimer-busy,edu-wfi,"
                          "edu-busy lat.samples=50")
    direct = tmp_path / "direct.toml"
    direct.write_text(demo.system_toml(stub_image, "native", irq="direct"))
    assert load_system(direct).partitions[0].irq_direct


def test_native_picks_the_board_from_the_image(tmp_path, monkeypatch):
    """A riscv64 image runs on the riscv board, an arm64 one on the arm board; nothing else
    changes (QEMU is stood in for: only the command it would get matters here)."""
    from tern_test_files import write_image, write_riscv_image
    commands = []

    def fake_run_qemu(command, timeout, quiet, log_path, pid_path=None, **_):
        commands.append(command)
        return runner.QemuRun(lines=["LAT-DONE"], returncode=0, timed_out=False, stderr=[])

    monkeypatch.setattr(runner, "run_qemu", fake_run_qemu)
    monkeypatch.setattr(runner.qemu, "require_qemu", lambda arch: None)
    rv = runner.run_native(write_riscv_image(tmp_path / "rv.img"), icount=0,
                           workdir=tmp_path / "w1")
    arm = runner.run_native(write_image(tmp_path / "a.img"), icount=4, workdir=tmp_path / "w2")
    assert rv.ok and arm.ok
    assert commands[0][:5] == ["qemu-system-riscv64", "-M", "virt,aia=aplic-imsic,aia-guests=4",
                               "-cpu", "rv64,h=true,sstc=true"]
    assert commands[1][:5] == ["qemu-system-aarch64", "-M", "virt,gic-version=3,highmem=off",
                               "-cpu", "cortex-a53"]
    assert "qemu-system-riscv64" in (tmp_path / "w1" / "qemu.sh").read_text()


def test_native_passes_qemu_args_through(tmp_path, monkeypatch):
    from tern_test_files import write_image
    commands = []

    def fake_run_qemu(command, timeout, quiet, log_path, pid_path=None, **_):
        commands.append(command)
        return runner.QemuRun(lines=["LAT-DONE"], returncode=0, timed_out=False, stderr=[])

    monkeypatch.setattr(runner, "run_qemu", fake_run_qemu)
    monkeypatch.setattr(runner.qemu, "require_qemu", lambda arch: None)
    extra = ("-device", "ivshmem-plain,memdev=m")
    assert runner.run_native(write_image(tmp_path / "a.img"), qemu_args=extra,
                             workdir=tmp_path / "w").ok
    assert commands[0][-2:] == list(extra)


def test_native_raw_binary_runs_on_the_board_named(tmp_path, monkeypatch, capsys):
    """A raw binary says nothing of its architecture: arm64 unless --arch says riscv64; an
    Image or ELF for another board than --arch is refused before QEMU runs."""
    from tern_test_files import write_image
    commands = []

    def fake_run_qemu(command, timeout, quiet, log_path, pid_path=None, **_):
        commands.append(command)
        return runner.QemuRun(lines=[], returncode=0, timed_out=False, stderr=[])

    monkeypatch.setattr(runner, "run_qemu", fake_run_qemu)
    monkeypatch.setattr(runner.qemu, "require_qemu", lambda arch: None)
    raw = tmp_path / "raw.bin"
    raw.write_bytes(b"\x13" * 64)
    assert cli.main(["native", str(raw), "--workdir", str(tmp_path / "w1")]) == 0
    assert cli.main(["native", str(raw), "--arch", "riscv64",
                     "--workdir", str(tmp_path / "w2")]) == 0
    assert [c[0] for c in commands] == ["qemu-system-aarch64", "qemu-system-riscv64"]
    assert all(c[-2:] == ["-kernel", str(raw)] for c in commands), commands
    capsys.readouterr()
    assert cli.main(["native", str(write_image(tmp_path / "a.img")), "--arch", "riscv64"]) == 2
    assert "a.img is an arm64 Image, not riscv64" in capsys.readouterr().err
    assert len(commands) == 2


def test_native_riscv64_refuses_an_arm_cpu(tmp_path):
    from tern_test_files import write_riscv_image
    image = write_riscv_image(tmp_path / "rv.img")
    assert cli.main(["native", str(image), "--cpu", "cortex-a57"]) == 2


def test_native_riscv64_timeout_shows_the_serial_log(tmp_path, monkeypatch, capsys):
    from tern_test_files import write_riscv_image

    def fake_run_qemu(command, timeout, quiet, log_path, pid_path=None, **_):
        return runner.QemuRun(lines=["OpenSBI v1.1", "lat: entered"], returncode=-9,
                              timed_out=True, stderr=[])

    monkeypatch.setattr(runner, "run_qemu", fake_run_qemu)
    monkeypatch.setattr(runner.qemu, "require_qemu", lambda arch: None)
    image = write_riscv_image(tmp_path / "rv.img")
    assert cli.main(["native", str(image), "--timeout", "5", "--workdir",
                     str(tmp_path / "w")]) == 124
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "tern: error: timed out after 5 s"
    assert err[-2:] == ["OpenSBI v1.1", "lat: entered"]


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_demo_system_keeps_quotes_and_backslashes(tmp_path, arch):
    """What demo writes is read back as it was meant, whatever the path or the test names."""
    from tern.config import load_system
    from tern_test_files import write_image, write_riscv_image
    image = (write_riscv_image if arch == "riscv64" else write_image)(
        tmp_path / 'we"ird\\dir' / "lat.img")
    tests = ('edu-"x"', "a\\b")
    path = tmp_path / "demo.toml"
    path.write_text(demo.system_toml(image, "trap", arch=arch, tests=tests, samples=3))
    (p,) = load_system(path).partitions
    assert p.bootargs == 'lat.tests=edu-"x",a\\b lat.samples=3'
    assert p.image_path == image


def test_demo_arch_option_and_plan():
    parse = cli._parser().parse_args
    assert parse(["demo"]).arch is None                     # both boards
    assert parse(["demo", "--arch", "riscv64"]).arch == ["riscv64"]
    assert parse(["demo", "--arch", "riscv64", "--arch", "arm64"]).arch == ["riscv64", "arm64"]
    with pytest.raises(UsageError):
        parse(["demo", "--arch", "x86"])
    # arm64's plan as before; riscv64: native, trap-and-emulate, trap-less.
    assert [(l, w, i) for l, w, i, _ in demo.plan("arm64")] == [
        ("native", None, None), ("tern wfi=trap", "trap", "trap"),
        ("tern wfi=native", "native", "trap"), ("tern direct", "native", "direct")]
    riscv = demo.plan("riscv64")
    assert [(l, w, i) for l, w, i, _ in riscv] == [
        ("native", None, None), ("tern wfi=trap", "trap", "trap"),
        ("tern direct", "native", "direct")]
    assert riscv[0][3] == riscv[2][3] == demo.TESTS_RISCV64
    assert riscv[1][3] == ("sbi-timer-wfi", "sbi-timer-busy", "sbi-ipi-wfi", "sbi-ipi-busy",
                           "intx-wfi", "intx-busy")


def test_demo_riscv64_systems_are_valid(tmp_path):
    from tern.config import load_system
    from tern_test_files import write_riscv_image
    image = tmp_path / "lat.img"
    write_riscv_image(image)
    direct = tmp_path / "direct.toml"
    direct.write_text(demo.system_toml(image, "native", samples=20, irq="direct",
                                        arch="riscv64"))
    system = load_system(direct)
    assert (system.board.arch, system.board.cpus, models(system)) == ("riscv64", 3, ("edu",))
    (p,) = system.partitions
    assert (p.name, p.cpus, p.wfi_native, p.irq_direct, p.devices) == \
        ("lat", (1, 2), True, True, ("pcie",))
    assert p.bootargs == f"lat.tests={','.join(demo.TESTS_RISCV64)} lat.samples=20"
    trap = tmp_path / "trap.toml"
    trap.write_text(demo.system_toml(image, "trap", irq="trap", arch="riscv64",
                                      tests=("sbi-timer-busy",)))
    system = load_system(trap)
    (p,) = system.partitions
    assert models(system) == () and p.devices == () and not p.irq_direct and not p.wfi_native
    assert p.bootargs == "lat.tests=sbi-timer-busy"
    # edu's INTx: a trap-and-emulate partition owns the bus too (its APLIC is emulated).
    trap.write_text(demo.system_toml(image, "trap", irq="trap", arch="riscv64"))
    system = load_system(trap)
    (p,) = system.partitions
    assert models(system) == ("edu",) and p.devices == ("pcie",) and p.unconfined_dma


def test_demo_trap_cells():
    traps = {"tern wfi=trap": {"sbi-timer-busy": {"traps_per_interrupt": 3,
                                                  "traps_by_cause": {"exit_irq": 1, "sbi_time": 2}}},
             "tern direct": {"sstc-busy": {"traps_per_interrupt": 0, "traps_by_cause": {}}}}
    assert demo.trap_cells(traps, "tern wfi=trap", "sbi-timer-busy") == \
        (3, "exit_irq 1, sbi_time 2")
    assert demo.trap_cells(traps, "tern direct", "sstc-busy") == (0, "none")
    assert demo.trap_cells(traps, "native", "sstc-busy") == ("-", "-")
