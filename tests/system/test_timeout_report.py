"""A run that times out says where each core was: QEMU's monitor, asked before QEMU is killed.

A silent partition (its core stuck before the guest, or in the firmware) shows no line of its
own; the cores' PCs, and their registers in the work directory, are what tell why.
"""

import pytest

from conftest import REPO
from tern.config import dump_toml
from tern.runner import REGISTERS_FILE, STATUS_TIMEOUT, run_system

HOSTILE = {"arm64": REPO / "guests" / "build" / "arm64" / "hostile.img",
           "riscv64": REPO / "guests" / "build" / "riscv64" / "hostile.img"}
# The exception level or virtualization mode each port's parse shows: a guest's, the board's.
GUEST_MODE = {"arm64": "EL1", "riscv64": "V=1"}
HYPERVISOR_MODE = {"arm64": "EL2", "riscv64": "V=0"}
# Computing for 100 s, no exits (each port's hostile guest names the length its own way).
BUSY = {"arm64": "hostile.action=busy hostile.until_us=100000000",
        "riscv64": "hostile.action=busy hostile.busy_us=100000000"}
BOARD_CPUS = 3


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_a_timed_out_run_reports_each_cores_pc(tmp_path, arch):
    # The partition computes for 100 s; the run is given 6. No icount: the busy core must not
    # keep the others from their turns. irq direct: riscv64's busy guest arms its timer, which
    # then takes no exit, so the snapshot finds core 1 in the guest.
    busy = {"name": "busy", "cpus": [1], "memory": "32MiB", "image": str(HOSTILE[arch]),
            "irq": "direct", "wfi": "native", "bootargs": BUSY[arch]}
    path = tmp_path / "system.toml"
    path.write_text(dump_toml({"board": {"arch": arch, "cpus": BOARD_CPUS},
                               "partition": [busy]}))
    result = run_system(path, timeout=6)
    assert result.status == STATUS_TIMEOUT and result.timed_out, result.explain()
    assert [line.split()[0] for line in result.cores] == \
        [f"CPU#{i}" for i in range(BOARD_CPUS)], result.explain()
    # Core 1 runs the guest's loop; core 0 (the console's) and core 2 (no vCPU) wait in Tern.
    modes = {line.split()[0]: line.split()[2:] for line in result.cores}
    assert modes["CPU#1"] == [GUEST_MODE[arch]], result.explain()
    assert modes["CPU#0"] == [HYPERVISOR_MODE[arch]], result.explain()
    assert all(line.split()[1].startswith("pc=0x") for line in result.cores), result.explain()
    registers = (result.workdir / REGISTERS_FILE).read_text()
    assert registers.count("CPU#") == BOARD_CPUS, registers[:2000]
    assert "cores when it timed out" in result.explain()
