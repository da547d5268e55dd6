"""The hypervisor's own map as the hardware enforces it, on both ISAs: a guard page below every
core's stack, and (riscv64) HS-mode's W^X map checked at boot.

Each misdeed is compiled into a test build of its own (`make -C hypervisor TEST_HOOK=NAME`,
into a temporary BUILD): the product image has none of them.  The boot core commits it right
after its map is on and checked, before the config blob is read, so no blob is loaded.
"""

import re
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
from tern import qemu  # noqa: E402

PLATFORMS = {"arm64": "qemu-virt-arm64", "riscv64": "qemu-virt-riscv64"}
TIMEOUT = 60


def build(tmp_path, arch, hook):
    out = tmp_path / f"{arch}-{hook.lower()}"
    done = subprocess.run(["make", "-s", "-C", str(REPO / "hypervisor"), f"PLATFORM={PLATFORMS[arch]}",
                           f"BUILD={out}", f"TEST_HOOK={hook}"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "tern.img"


def boot(arch, image):
    """The serial log's `tern` lines and QEMU's exit code: the board must power itself off."""
    if arch == "riscv64":
        cmd = qemu.riscv64_board_args(2, 1 << 30)
    else:
        cmd = qemu.board_args("cortex-a53", 2, 1 << 30)
    try:
        done = subprocess.run(cmd + ["-kernel", str(image)], capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired as e:
        log = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"the board did not power off within {TIMEOUT} s; serial log:\n{log}")
    log = done.stdout.replace("\0", "")
    return [line.rstrip("\r") for line in log.splitlines() if line.startswith("tern")], \
        done.returncode, log


@pytest.mark.parametrize("arch", ["arm64", "riscv64"])
def test_a_stack_overflow_hits_the_guard_page_and_panics(tmp_path, arch):
    # The boot core moves its stack pointer one stack's size down, past its own stack, and
    # stores there.  Without the guard page that store lands in the core below's stack (its
    # guest frame) and boot goes on; with it, it faults, and the report, which must not push
    # on the faulting stack, runs on the core's panic stack.
    lines, rc, log = boot(arch, build(tmp_path, arch, "STACK_OVERFLOW"))
    panics = [line for line in lines if line.startswith("tern: PANIC")]
    assert panics, log
    # The boot core: OpenSBI enters the hypervisor on whichever hart won its boot lottery.
    assert re.match(r"tern: PANIC cpu=\d+ .*stack overflow .*\(its guard page\)", panics[0]), log
    assert not any("Tern hypervisor on" in line for line in lines), log
    assert rc == 0, f"the board did not power off cleanly (exit {rc}):\n{log}"


def test_riscv64_refuses_to_boot_without_its_wx_map(tmp_path):
    # The map built but not switched on (satp bare, as HS-mode ran before it had one): the
    # boot check's stores into text and calls into data go through, and boot stops there.
    lines, rc, log = boot("riscv64", build(tmp_path, "riscv64", "WX_BROKEN"))
    assert lines[0] == "tern: error: HS-mode's map is not W^X, or a stack's guard page is mapped", log
    assert not any("Tern hypervisor on" in line for line in lines), log
    assert rc == 0, f"the board did not power off cleanly (exit {rc}):\n{log}"
