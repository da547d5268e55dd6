"""tern-vio's request logic (guests/linux/tern-vio/vio_serve.c) on the host: compiled with the
host's clang under ASan/UBSan with a channel in ordinary memory (tests/tool/fakes/
vio_serve_test.c), one case per test. What needs a kernel (uio, the tap, the file) is
tests/system/test_virtio_net.py's."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

# Not imported from conftest: run beside tests/system, that name is its conftest.
REPO_ROOT = Path(__file__).resolve().parents[2]
FAKES = Path(__file__).resolve().parent / "fakes"

HARNESS = FAKES / "vio_serve_test.c"
CASES = re.findall(r"^\tT\((test_\w+)\),$", HARNESS.read_text(), re.M)


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    clang = shutil.which("clang")
    if not clang:
        pytest.skip("needs clang")
    out = tmp_path_factory.mktemp("vio") / "vio_serve_test"
    subprocess.run([clang, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    f"-I{REPO_ROOT / 'guests/linux/tern-vio'}",
                    f"-I{REPO_ROOT / 'hypervisor/include'}",
                    str(HARNESS), str(REPO_ROOT / "guests/linux/tern-vio/vio_serve.c"),
                    "-o", str(out)], check=True)
    return out


def test_the_harness_has_its_cases():
    assert len(CASES) >= 14


@pytest.mark.parametrize("case", CASES)
def test_vio_serve(harness, case):
    proc = subprocess.run([str(harness), case], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [f"ok {case}"]
