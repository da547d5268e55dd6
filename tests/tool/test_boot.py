"""Real QEMU boots with tiny stand-ins for the hypervisor and guests.

These check what tern hands QEMU (machine, loader addresses that QEMU accepts,
the config blob and device trees where the hypervisor looks for them) without
needing the real hypervisor or guests.  Skipped without QEMU, dtc or clang.
"""

import shutil

import pytest
from tern import abi, run_native, run_system
from tern_test_files import partition, write_elf, write_toml

pytestmark = [
    pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None, reason="needs QEMU"),
    pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc"),
]


def test_native_image(assemble, tmp_path):
    guest = assemble("hello_guest")
    result = run_native(guest, bootargs="x=1", icount=4, timeout=30, workdir=tmp_path)
    assert result.status == 0, result.explain()
    assert result.log[0] == "hello from the guest"
    assert result.lat == [{"test": "vtimer-wfi", "avg": 10, "min": 8, "max": 20, "warm_max": 12,
                           "p99": 19}]
    assert (tmp_path / "serial.log").read_text().startswith("hello from the guest\n")
    assert "-icount" in result.command and "virt,gic-version=3,highmem=off" in result.command
    assert "-nic" in result.command and "-device" not in result.command


def test_native_image_with_edu(assemble, tmp_path):
    result = run_native(assemble("hello_guest"), timeout=30, workdir=tmp_path, pci=["edu"])
    assert result.status == 0, result.explain()
    assert result.log[0] == "hello from the guest"
    assert result.command[result.command.index("-device") + 1] == \
        "edu,addr=2.0,dma_mask=0xffffffff"
    assert "edu,addr=2.0,dma_mask=0xffffffff" in (tmp_path / "qemu.sh").read_text()


def test_native_elf(assemble, tmp_path):
    code = assemble("hello_guest").read_bytes()
    elf = write_elf(tmp_path / "hello.elf",
                    [(0x4008_0000, 0x4008_0000, code, len(code) + 0x100)], 0x4008_0000)
    result = run_native(elf, timeout=30, workdir=tmp_path / "work")
    assert result.status == 0, result.explain()
    assert len(result.lat) == 1


def test_native_timeout(assemble, tmp_path):
    result = run_native(assemble("hello_guest", "HANG"), timeout=2, workdir=tmp_path)
    assert result.status == 124, result.explain()
    assert result.reason == "timed out after 2 s"
    assert result.log[0] == "hello from the guest"


def system(tmp_path, assemble, text):
    guest = assemble("hello_guest")
    (tmp_path / "guests" / "build" / "arm64").mkdir(parents=True)
    shutil.copy(guest, tmp_path / "guests" / "build" / "arm64" / "lat.img")
    return write_toml(tmp_path, text)


def test_system_with_a_stand_in_hypervisor(assemble, tmp_path):
    toml = system(tmp_path, assemble, "[board]\ncpus = 4\n"
                  + partition("rt", cpus=[1], wfi="native")
                  + partition("big", cpus=[2, 3], memory="256MiB"))
    result = run_system(toml, icount=4, timeout=30, workdir=tmp_path / "work",
                        hypervisor=assemble("fake_hyp"))
    assert result.status == 0, result.explain()
    assert result.partitions["rt"].lines == ["hello"]
    assert result.partitions["big"].state == "off"
    blob = abi.unpack((tmp_path / "work" / "config.bin").read_bytes())
    assert [p.name for p in blob.partitions] == ["rt", "big"]
    assert blob.partitions[0].flags == abi.PF_WFI_NATIVE and blob.partitions[1].cpus == (2, 3)
    assert (tmp_path / "work" / "rt.dts").is_file() and (tmp_path / "work" / "qemu.sh").is_file()


def test_system_with_a_device_passed_through(assemble, tmp_path):
    toml = system(tmp_path, assemble, '[board]\npci = ["edu"]\n'
                  + partition("rt", cpus=[1], devices=["pcie"], irq="direct")
                  + partition("b", cpus=[2]))
    result = run_system(toml, timeout=30, workdir=tmp_path / "work",
                        hypervisor=assemble("fake_hyp"))
    assert result.status == 0, result.explain()
    assert result.partitions["rt"].lines == ["hello"] and result.partitions["b"].state == "off"
    command = result.command
    assert command[command.index("-nic") + 1] == "none"
    assert command[command.index("-device") + 1] == "edu,addr=2.0,dma_mask=0xffffffff"
    # The board has QEMU's SMMUv3, and the blob tells the hypervisor so.
    assert command[command.index("-M") + 1].endswith(",iommu=smmuv3")
    blob = abi.unpack((tmp_path / "work" / "config.bin").read_bytes())
    assert blob.flags == abi.CF_IOMMU
    rt, b = blob.partitions
    assert rt.regions == ((0x1000_0000, 0x1000_0000, 0x2EFF_0000, abi.RF_DEVICE),
                          (0x3EFF_0000, 0x3EFF_0000, 0x1_0000, abi.RF_DEVICE),
                          (0x3F00_0000, 0x3F00_0000, 0x100_0000, abi.RF_DEVICE))
    assert rt.irqs == {35, 36, 37, 38}
    assert rt.flags == abi.PF_WFI_NATIVE | abi.PF_IRQ_DIRECT
    assert b.regions == () and b.irqs == frozenset()
    assert "pcie@10000000 {" in (tmp_path / "work" / "rt.dts").read_text()
    assert "pcie" not in (tmp_path / "work" / "b.dts").read_text()


def test_system_with_an_elf_guest(assemble, tmp_path):
    code = assemble("hello_guest").read_bytes()
    write_elf(tmp_path / "g.elf", [(0x4010_0000, 0x4010_0000, code, 0x1000)], 0x4010_0000)
    toml = write_toml(tmp_path, partition(image="g.elf"))
    result = run_system(toml, timeout=30, workdir=tmp_path / "work",
                        hypervisor=assemble("fake_hyp"))
    assert result.status == 0, result.explain()
    flat = (tmp_path / "work" / "rt.img").read_bytes()
    assert len(flat) == 0x1000 and flat.startswith(code)


def test_hypervisor_panic_is_status_3(assemble, tmp_path, monkeypatch):
    # Point dtb_ipa at the RAM base: the stand-in finds no device tree there,
    # prints a PANIC line and hangs, as a crashed hypervisor would.
    import tern.build
    real_pack = abi.pack

    def corrupt(blob):
        data = bytearray(real_pack(blob))
        data[56 + 48:56 + 56] = (0x4000_0000).to_bytes(8, "little")  # partition[0].dtb_ipa
        return bytes(data)

    monkeypatch.setattr(tern.build.abi, "pack", corrupt)
    monkeypatch.setattr("tern.runner.PANIC_GRACE", 0.5)
    toml = system(tmp_path, assemble, partition())
    result = run_system(toml, timeout=60, workdir=tmp_path / "work",
                        hypervisor=assemble("fake_hyp"))
    assert result.status == 3, result.explain()
    assert result.panic.startswith("tern: PANIC fake hypervisor")
