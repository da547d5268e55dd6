"""The riscv64 hypervisor on QEMU `virt` (AIA, H, Sstc) under OpenSBI.

What runs on riscv64 so far (issue 13): the boot in HS-mode, the config blob's validation with
the board's allow-lists on the real target, partitions in VS-mode under G-stage with the SBI a
partition gets (BASE, HSM, SRST, DBCN; guests/sbi-smoke), fault containment, SRST power-off.
These tests pack the blob and load the images themselves, to reach the hypervisor's own
checks with what `tern check` would refuse first; `tern run` on riscv64 is in
test_riscv64_run.py and test_riscv64_partitions.py.
"""

import json
import subprocess
import sys

import pytest

from conftest import REPO, SBI_SMOKE_RESULTS

sys.path.insert(0, str(REPO / "tools"))
from tern import abi, qemu  # noqa: E402

HYPERVISOR = REPO / "hypervisor" / "build" / "riscv64" / "tern.img"
SBI_SMOKE = REPO / "guests" / "build" / "riscv64" / "sbi-smoke.img"
CONFIG_HPA = 0x83F00000
MiB = 1 << 20
TIMEOUT = 60


def run_board(tmp_path, blob=None, cpus=2, loads=(), aia_guests=None):
    """Boot the board with the hypervisor, a config blob and (file, address) loads (and
    `aia_guests` guest interrupt files a hart, if not tern's 4); the serial log and QEMU's exit
    code."""
    for path in (HYPERVISOR, *(f for f, _ in loads)):
        assert path.exists(), f"missing {path}: run `make all` first"
    cmd = qemu.riscv64_board_args(cpus, 1 << 30) + ["-kernel", str(HYPERVISOR)]
    if aia_guests is not None:
        machine = cmd.index(qemu.RISCV64_MACHINE)
        cmd[machine] = qemu.RISCV64_MACHINE.replace("aia-guests=4", f"aia-guests={aia_guests}")
        assert cmd[machine] != qemu.RISCV64_MACHINE or aia_guests == 4
    # No icount: these are functional checks, and under icount QEMU's round-robin gives a
    # spinning hart (sbi-smoke's hart 0, polling HSM status) the CPU until a timer deadline,
    # of which nothing sets one here: the hart it waits for never runs.
    if blob is not None:
        path = tmp_path / "config.blob"
        path.write_bytes(blob)
        cmd += qemu.loader_args(path, CONFIG_HPA)
    for file, addr in loads:
        cmd += qemu.loader_args(file, addr)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except FileNotFoundError:
        pytest.fail(f"{qemu.QEMU_RISCV64} missing: run `make deps` (scripts/install-deps.sh)")
    except subprocess.TimeoutExpired as e:
        log = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"QEMU did not power off within {TIMEOUT} s; serial log:\n{log}")
    return done.stdout.replace("\0", ""), done.returncode


def tern_lines(log):
    return [line.rstrip("\r") for line in log.splitlines() if line.startswith("tern:")]


def partition(name="rt", ram_hpa=0x84000000, cpus=(1,), **more):
    fields = dict(name=name, ram_ipa=0x80000000, ram_hpa=ram_hpa, ram_size=32 * MiB,
                  entry_ipa=0x80200000, dtb_ipa=0x81E00000, image_ipa=0x80200000,
                  image_size=4096, pristine_image_hpa=0x8A000000,
                  pristine_dtb_hpa=0x8A200000, dtb_size=4096, cpus=cpus)
    fields.update(more)
    return abi.PartitionRecord(**fields)


def blob(*partitions, board_cpus=2, ram_size=1 << 30):
    return abi.pack(abi.ConfigBlob(board_cpus=board_cpus, partitions=list(partitions),
                                   ram_size=ram_size))


def test_boots_in_hs_mode_and_refuses_a_missing_description(tmp_path):
    log, rc = run_board(tmp_path)
    lines = tern_lines(log)
    assert lines[:2] == ["tern: Tern hypervisor on qemu-virt-riscv64",
                         "tern: error: system description: no config blob (magic 0x0)"], log
    assert rc == 0, f"the board did not power off cleanly (exit {rc}):\n{log}"


@pytest.mark.parametrize("record, error", [
    (partition(ram_hpa=0x82000000), "overlaps"),
    (partition(cpus=(5,)), "core 5 out of range"),
    (partition(ram_hpa=0x84100000), "RAM not 2 MiB aligned"),
])
def test_the_system_check_runs_on_the_target(tmp_path, record, error):
    log, rc = run_board(tmp_path, blob(record))
    lines = tern_lines(log)
    assert len(lines) == 2 and lines[1].startswith("tern: error: system description: "), log
    assert error in lines[1], log
    assert rc == 0, log


ECAM = abi.Region(0x30000000, 0x30000000, 0x10000000)
MEMORY_WINDOW = abi.Region(0x40000000, 0x40000000, 0x40000000)


@pytest.mark.parametrize("blob_args, error", [
    # The board has 1 GiB (QEMU's -m, in its device tree): a blob's word is not taken for it.
    (dict(ram_size=2 << 30), "board RAM size 0x80000000, but the board has 0x40000000 "
                             "(the firmware's device tree)"),
    # A part of the emulated ECAM would be mapped past its MSI steering.
    (dict(records=[partition(flags=abi.PF_UNCONFINED_DMA,
                             regions=[(0x30100000, 0x30100000, 0x100000)])]),
     "partition rt: region 0x30100000+0x100000 is part of the ECAM at 0x30000000+0x10000000"),
    # One PCIe bridge, two owners: the ECAM to one, the memory window to the other.
    (dict(records=[partition(flags=abi.PF_UNCONFINED_DMA, regions=[ECAM]),
                   partition(name="other", cpus=(2,), ram_hpa=0x86000000,
                             pristine_image_hpa=0x8A400000, pristine_dtb_hpa=0x8A600000,
                             flags=abi.PF_UNCONFINED_DMA, regions=[MEMORY_WINDOW])],
          board_cpus=3),
     "partition other: region 0x40000000 is part of a device rt has a part of"),
    (dict(records=[partition(flags=abi.PF_UNCONFINED_DMA, regions=[ECAM]),
                   partition(name="other", cpus=(2,), ram_hpa=0x86000000,
                             pristine_image_hpa=0x8A400000, pristine_dtb_hpa=0x8A600000,
                             irqs={33})],
          board_cpus=3),
     "partition other: interrupt 33 is part of a device rt has a part of"),
], ids=["ram-beyond-the-board", "ecam-part", "bridge-split-window", "bridge-split-intx"])
def test_the_board_check_refuses_what_the_tool_never_writes(tmp_path, blob_args, error):
    records = blob_args.pop("records", [partition()])
    log, rc = run_board(tmp_path, blob(*records, **blob_args), cpus=3)
    lines = tern_lines(log)
    assert len(lines) == 2 and lines[1].startswith("tern: error: system description: "), log
    assert error in lines[1], log
    assert rc == 0, log


def image_loads(record, image=SBI_SMOKE):
    """Where QEMU puts a partition's image: in its RAM, and the pristine copy restarts reload."""
    at = record.ram_hpa + (record.image_ipa - record.ram_ipa)
    return [(image, at), (image, record.pristine_image_hpa)]


def sbi_results(log, name="rt"):
    prefix = f"[{name}] SBI-JSON "
    return {r["check"]: (r["error"], r["value"])
            for r in (json.loads(line.rstrip("\r")[len(prefix):])
                      for line in log.splitlines() if line.startswith(prefix))}


def test_a_partition_gets_the_sbi(tmp_path):
    record = partition(cpus=(1, 2), image_size=SBI_SMOKE.stat().st_size)
    log, rc = run_board(tmp_path, blob(record, board_cpus=3), cpus=3, loads=image_loads(record))
    results = sbi_results(log)
    assert results == SBI_SMOKE_RESULTS, log
    assert "[rt] SBI-DONE" in log, log
    lines = tern_lines(log)
    assert lines[-2:] == ["tern: partition rt off", "tern: all partitions ended, board off"], log
    assert rc == 0, log


@pytest.mark.parametrize("flags", [0, abi.PF_IRQ_DIRECT], ids=["trap", "direct"])
@pytest.mark.parametrize("aia_guests", [1, 2, 3, 5])
def test_harts_find_their_files_whatever_the_guest_files(tmp_path, aia_guests, flags):
    # QEMU gives each hart 2^ceil(log2(guests + 1)) pages of IMSIC files: a kick (HSM's start
    # of vCPU 1, an IPI) and a trap-less vCPU's own file must be found on its own hart.
    record = partition(cpus=(1, 2), image_size=SBI_SMOKE.stat().st_size, flags=flags)
    log, rc = run_board(tmp_path, blob(record, board_cpus=3), cpus=3, loads=image_loads(record),
                        aia_guests=aia_guests)
    assert sbi_results(log) == SBI_SMOKE_RESULTS, log
    assert "[rt] SBI-DONE" in log, log
    assert tern_lines(log)[-1] == "tern: all partitions ended, board off", log
    assert rc == 0, log


def test_a_fault_is_contained_and_the_neighbour_runs_on(tmp_path):
    # "bad" starts at an address with nothing loaded: an all-zero word is an illegal
    # instruction, which goes to the guest's own handler, as on the board; stvec is still 0
    # there, outside its memory, and that fetch is the fault.
    good = partition(name="good", cpus=(1,), image_size=SBI_SMOKE.stat().st_size)
    bad = partition(name="bad", cpus=(2,), ram_hpa=0x86000000, pristine_image_hpa=0x8A400000,
                    pristine_dtb_hpa=0x8A600000, entry_ipa=0x80300000,
                    image_size=SBI_SMOKE.stat().st_size)
    log, rc = run_board(tmp_path, blob(good, bad, board_cpus=3), cpus=3,
                        loads=image_loads(good) + image_loads(bad))
    lines = tern_lines(log)
    fault = [line for line in lines if line.startswith("tern: fault partition=bad vcpu=0 ")]
    assert len(fault) == 1 and "fetch outside its memory: gpa=0x0 pc=0x0" in fault[0], log
    assert "tern: partition bad stopped" in lines, log
    assert sbi_results(log, "good")["hart_start_foreign"] == (-3, 0), log
    assert "[good] SBI-DONE" in log and "tern: partition good off" in lines, log
    assert lines[-1] == "tern: all partitions ended, board off", log
    assert rc == 0, log
