"""What prepare_system writes into the config blob, read back with abi.unpack."""

import shutil

import pytest
from tern import abi, build
from tern.config import GiB, MiB, load_system
from tern.layout import place
from tern_test_files import partition, write_image, write_toml

pytestmark = pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")


def blob_of(tmp_path, text):
    """The config blob `tern run` would hand the hypervisor for the system `text`."""
    system = load_system(write_toml(tmp_path, text))
    hypervisor = write_image(tmp_path / "tern.img")
    build.prepare_system(system, place(system), tmp_path / "work", hypervisor)
    return abi.unpack((tmp_path / "work" / "config.bin").read_bytes())


def test_header_carries_the_board_ram_size(tmp_path, stub_image):
    blob = blob_of(tmp_path, '[board]\nmemory = "1536MiB"\n' + partition())
    assert blob.version == 4
    assert blob.ram_size == 1536 * MiB


def test_default_board_ram_size(tmp_path, stub_image):
    assert blob_of(tmp_path, partition()).ram_size == 2 * GiB
