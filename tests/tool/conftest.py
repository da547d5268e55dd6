"""Shared fixtures for the tern tool's unit tests (no QEMU needed unless skipped)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

FAKES = Path(__file__).resolve().parent / "fakes"


@pytest.fixture
def repo_root():
    return REPO_ROOT


@pytest.fixture
def stub_image(tmp_path):
    """A minimal arm64 Image (a 64-byte header) at guests/build/arm64/lat.img under tmp_path."""
    from tern_test_files import write_image
    return write_image(tmp_path / "guests" / "build" / "arm64" / "lat.img")


@pytest.fixture(scope="session")
def assemble(tmp_path_factory):
    """Build tests/tool/fakes/NAME.S into a flat binary; skip without an AArch64 assembler."""
    clang = shutil.which("clang")
    objcopy = shutil.which("llvm-objcopy")
    if not clang or not objcopy:
        pytest.skip("needs clang and llvm-objcopy to assemble the fake guests")
    out_dir = tmp_path_factory.mktemp("fakes")

    def build(name, *defines):
        obj = out_dir / f"{name}{''.join(defines)}.o"
        out = obj.with_suffix(".img")
        args = [clang, "--target=aarch64-none-elf", "-c", str(FAKES / f"{name}.S"), "-o", str(obj)]
        args += [f"-D{d}" for d in defines]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode:
            pytest.skip(f"clang cannot assemble AArch64 here: {proc.stderr.strip()[:200]}")
        subprocess.run([objcopy, "-O", "binary", "-j", ".text", str(obj), str(out)], check=True)
        return out

    return build


def needs(tool):
    return pytest.mark.skipif(shutil.which(tool) is None, reason=f"{tool} not installed")
