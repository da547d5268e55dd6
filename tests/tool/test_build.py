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


def test_partitions_carry_their_restart_policy(tmp_path, stub_image):
    blob = blob_of(tmp_path, "[board]\ncpus = 4\n"
                   + partition("rt", "[1]")
                   + partition("linux", "[2]", extra='on_fault = "restart"\nmax_restarts = 5\n'
                                                     'restart_backoff = "10ms"')
                   + partition("c", "[3]", extra='max_restarts = 1000000\n'
                                                 'restart_backoff = "60 s"'))
    rt, linux, c = blob.partitions
    assert (rt.fault_policy, rt.max_restarts, rt.restart_backoff_us) == (abi.FAULT_STOP, 0, 0)
    assert (linux.fault_policy, linux.max_restarts, linux.restart_backoff_us) == \
        (abi.FAULT_RESTART, 5, 10_000)
    assert (c.fault_policy, c.max_restarts, c.restart_backoff_us) == \
        (abi.FAULT_STOP, 1_000_000, 60_000_000)
    # What the hypervisor reads, at the header's offsets: fault_policy at 528 of the record.
    data = (tmp_path / "work" / "config.bin").read_bytes()
    record = data[abi.HEADER.size + abi.PARTITION.size:][:abi.PARTITION.size]
    assert record[528:544] == (1).to_bytes(4, "little") + (5).to_bytes(4, "little") \
        + (10_000).to_bytes(8, "little")
