"""Debian's Linux in a partition beside the real-time latency guest (mixed criticality)."""

import re

import pytest
from conftest import LAT, REPO, partition

from tern import run_system
from tern.diskimage import tar_disk

KERNEL = REPO / "build" / "linux" / "Image"
INITRD = REPO / "build" / "linux" / "initramfs.cpio.gz"
RT = partition("rt", [1], LAT, "lat.samples=200 lat.tests=vtimer-wfi,vtimer-busy", irq="direct",
               memory="64MiB")
READY = re.compile(r"TERN-LINUX: ready cpus=(\d+) kernel=(\S+)")


@pytest.fixture(scope="module", autouse=True)
def linux_built():
    assert KERNEL.exists() and INITRD.exists(), \
        f"missing {KERNEL} or {INITRD}: run `make linux` first"


def linux(run, devices=()):
    text = partition("linux", [2, 3], KERNEL, f"console=ttyAMA0 quiet tern.run={run}",
                     memory="256MiB", devices=devices)
    return text + f'initrd = "{INITRD}"\n'


def linux_lines(result):
    return [line[len("[linux] "):] for line in result.log if line.startswith("[linux] TERN-LINUX")]


def system(tmp_path, *parts, pci="", cpu="cortex-a53"):
    path = tmp_path / "system.toml"
    path.write_text(f'[board]\ncpus = 4\ncpu = "{cpu}"\nmemory = "1GiB"\npci = [{pci}]\n\n'
                    + "\n".join(parts))
    return path


def test_linux_boots_beside_the_latency_guest(tmp_path):
    result = run_system(system(tmp_path, RT, linux("cyclictest tern.loops=100")), timeout=120)
    assert result.ok, result.explain()
    lines = linux_lines(result)
    ready = [READY.search(line) for line in lines if READY.search(line)]
    assert ready and ready[0].group(1) == "2", result.explain()       # both vCPUs online
    stats = [line for line in lines if line.startswith("TERN-LINUX: cyclictest ")]
    assert stats and "samples=100" in stats[0], result.explain()
    assert [r["test"] for r in result.partitions["rt"].lat] == ["vtimer-wfi", "vtimer-busy"]
    assert all(r["samples"] == 200 for r in result.partitions["rt"].lat)
    for name in ("rt", "linux"):
        assert result.stats[name]["faults"] == 0, result.stats[name]


def test_linux_boots_on_cpu_max(tmp_path):
    # QEMU's max core has SVE, SME and pointer authentication, which Debian's kernel uses from
    # its first instructions (and its C library's string functions from user space's).
    result = run_system(system(tmp_path, linux("cyclictest tern.loops=20"), cpu="max"),
                        timeout=180)
    assert result.ok, result.explain()
    lines = linux_lines(result)
    ready = [READY.search(line) for line in lines if READY.search(line)]
    assert ready and ready[0].group(1) == "2", result.explain()
    stats = [line for line in lines if line.startswith("TERN-LINUX: cyclictest ")]
    assert stats and "samples=20" in stats[0], result.explain()
    assert result.stats["linux"]["faults"] == 0, result.stats["linux"]


def test_linux_reads_a_file_from_its_virtio_disk_through_the_smmu(tmp_path):
    disk = tmp_path / "disk.img"
    disk.write_bytes(tar_disk({"hello.txt": b"tern partition disk 42\n"}))
    path = system(tmp_path, RT, linux("blk", devices=("pcie",)),
                  pci=f'{{model = "virtio-blk", disk = "{disk}"}}')
    result = run_system(path, timeout=120)
    assert result.ok, result.explain()
    assert "TERN-LINUX: blk tern partition disk 42" in linux_lines(result), result.explain()
    assert result.stats["linux"]["dma_faults"] == 0, result.stats["linux"]


def test_a_device_given_to_two_partitions_is_refused_before_boot(tmp_path):
    from tern.errors import ConfigError
    rt = partition("rt", [1], LAT, "lat.samples=10", devices=("pcie",))
    with pytest.raises(ConfigError) as e:
        run_system(system(tmp_path, rt, linux("blk", devices=("pcie",)), pci='"edu"'))
    assert e.value.field == "partition[1].devices"
    assert '"pcie" is already given to partition "rt"' in str(e.value)
