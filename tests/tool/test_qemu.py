"""QEMU command lines: the board every run uses, and PCI devices on it."""

import pytest
from tern import cli, qemu, xen
from tern.config import Board, GiB, MiB
from tern.errors import ToolError

BOARD = ["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
         "-nic", "none"]
EDU = "edu,addr={}.0,dma_mask=0xffffffff"   # edu's DMA reaches all of the board's RAM


def test_system_command_with_pci_devices():
    board = Board(cpus=2, pci=("edu", "edu"))
    command = qemu.system_command(board, "/h/tern.img", [("/w/config.bin", 0x43F0_0000)],
                                  icount=4)
    assert command == [
        "qemu-system-aarch64", "-M",
        "virt,virtualization=on,gic-version=3,highmem=off,iommu=smmuv3",
        "-cpu", "cortex-a53", "-smp", "2", "-m", "2048M", *BOARD,
        "-device", EDU.format(2), "-device", EDU.format(3),
        "-icount", "shift=4,align=off,sleep=off",
        "-kernel", "/h/tern.img",
        "-device", "loader,file=/w/config.bin,addr=0x43f00000,force-raw=on"]


def test_system_command_without_pci_devices():
    command = qemu.system_command(Board(cpus=4, cpu="max", memory=3 * GiB), "t.img", [])
    assert command == [
        "qemu-system-aarch64", "-M",
        "virt,virtualization=on,gic-version=3,highmem=off,iommu=smmuv3",
        "-cpu", "max", "-smp", "4", "-m", "3072M", *BOARD, "-kernel", "t.img"]


def test_native_command():
    # The bare board: no SMMU, which only the hypervisor programs.
    assert qemu.native_command("lat.img", "a=1", pci=["edu"]) == [
        "qemu-system-aarch64", "-M", "virt,gic-version=3,highmem=off",
        "-cpu", "cortex-a53", "-smp", "2", "-m", "2048M", *BOARD,
        "-device", EDU.format(2), "-kernel", "lat.img", "-append", "a=1"]
    # Existing positional call sites keep working, with no PCI device.
    assert qemu.native_command("lat.img", "", "cortex-a57", 3, 256 * MiB, 2) == [
        "qemu-system-aarch64", "-M", "virt,gic-version=3,highmem=off",
        "-cpu", "cortex-a57", "-smp", "3", "-m", "256M", *BOARD,
        "-icount", "shift=2,align=off,sleep=off", "-kernel", "lat.img"]


def test_native_command_appends_extra_options_as_given():
    # A device no [board] pci model stands for (QEMU's ivshmem, tests/system/test_linux_chan.py).
    extra = ("-object", "memory-backend-ram,id=m,size=1M,share=on",
             "-device", "ivshmem-plain,memdev=m")
    args = qemu.native_command("Image", "a=1", initrd="i.gz", extra=extra)
    assert args[-len(extra):] == list(extra)
    assert args[:-len(extra)] == qemu.native_command("Image", "a=1", initrd="i.gz")


def test_native_command_riscv64():
    # QEMU's riscv virt with the AIA (IMSIC files, 4 guest files per hart), H and Sstc; the
    # same console, options and PCI slots as the arm64 board, OpenSBI as the firmware.
    assert qemu.native_command("lat.img", "a=1", pci=["edu"], icount=0, arch="riscv64") == [
        "qemu-system-riscv64", "-M", "virt,aia=aplic-imsic,aia-guests=4",
        "-cpu", "rv64,h=true,sstc=true", "-smp", "2", "-m", "2048M", *BOARD,
        "-device", EDU.format(2), "-icount", "shift=0,align=off,sleep=off",
        "-kernel", "lat.img", "-append", "a=1"]


@pytest.mark.parametrize("arch, binary, package", [
    ("arm64", "qemu-system-aarch64", "qemu-system-arm"),
    ("riscv64", "qemu-system-riscv64", "qemu-system-misc")])
def test_require_qemu_names_the_package(monkeypatch, arch, binary, package):
    monkeypatch.setattr(qemu.shutil, "which", lambda name: None)
    with pytest.raises(ToolError) as info:
        qemu.require_qemu(arch)
    assert str(info.value) == f"{binary} not found (install the {package} package)"


def test_pci_slots_start_at_2():
    assert qemu.pci_args(["edu"] * 4) == ["-device", EDU.format(2), "-device", EDU.format(3),
                                          "-device", EDU.format(4), "-device", EDU.format(5)]
    assert qemu.pci_args(()) == []


@pytest.mark.parametrize("models, message", [
    (["e1000"], 'unknown PCI device model "e1000" (allowed: edu, virtio-blk, virtio-net)'),
    (["edu"] * 5, "at most 4 PCI devices (got 5)")])
def test_pci_args_refuse(models, message):
    with pytest.raises(ToolError) as info:
        qemu.pci_args(models)
    assert str(info.value) == message


def test_xen_runs_on_the_same_board():
    assert xen._board(3, "cortex-a53", 1024, 4, ",dumpdtb=/tmp/x.dtb") == [
        "qemu-system-aarch64", "-M",
        "virt,virtualization=on,gic-version=3,highmem=off,dumpdtb=/tmp/x.dtb",
        "-cpu", "cortex-a53", "-smp", "3", "-m", "1024M", *BOARD,
        "-icount", "shift=4,align=off,sleep=off"]


def test_cli_native_pci_option():
    parser = cli._parser()
    args = parser.parse_args(["native", "lat.img", "--pci", "edu", "--pci", "edu"])
    assert args.pci == ["edu", "edu"]
    assert parser.parse_args(["native", "lat.img"]).pci == []


def test_cli_native_refuses_an_unknown_pci_model(capsys):
    assert cli.main(["native", "lat.img", "--pci", "e1000"]) == 2
    assert capsys.readouterr().err == (
        "tern: error: argument --pci: invalid choice: 'e1000' (choose from 'edu', 'virtio-net') "
        "(see tern native --help)\n")


def test_pci_args_virtio_disk_and_network(tmp_path):
    from tern.config import PciDevice
    disk = tmp_path / "d,1.img"
    args = qemu.pci_args(["edu", PciDevice("virtio-blk", disk), PciDevice("virtio-net")])
    assert args == [
        "-device", "edu,addr=2.0,dma_mask=0xffffffff",
        "-drive", f"if=none,id=pci3,format=raw,file={tmp_path}/d,,1.img",
        "-device", "virtio-blk-pci,drive=pci3,addr=3.0,disable-legacy=on,iommu_platform=on",
        "-netdev", "user,id=pci4,restrict=on",
        "-device", "virtio-net-pci,netdev=pci4,addr=4.0,disable-legacy=on,iommu_platform=on",
    ]
    with pytest.raises(ToolError, match="needs one"):
        qemu.pci_args(["virtio-blk"])


def test_trace_args_from_boot_or_switched_on_through_the_monitor(tmp_path):
    from_boot = qemu.trace_args(tmp_path / "t.log")
    assert from_boot[:4] == ["-D", str(tmp_path / "t.log"), "-dfilter", qemu.TRACE_RANGE]
    assert "-singlestep" in from_boot and from_boot[-2:] == ["-d", qemu.TRACE_ITEMS]
    later = qemu.trace_args(tmp_path / "t.log", from_boot=False, monitor=tmp_path / "m.sock")
    assert "-singlestep" not in later and "-d" not in later
    assert later[-2:] == ["-monitor", f"unix:{tmp_path / 'm.sock'},server=on,wait=off"]


def test_hmp_types_each_command_and_waits_for_its_prompt(tmp_path):
    import socket
    import threading

    path = tmp_path / "m.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    got = []

    def monitor():
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"QEMU 7.2 monitor - type 'help' for more information\r\n(qemu) ")
            buf = b""
            while len(got) < 2:
                buf += conn.recv(100)
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    got.append(line.decode())
                    conn.sendall(line + b"\r\nok\r\n(qemu) ")

    t = threading.Thread(target=monitor, daemon=True)
    t.start()
    replies = qemu.hmp(path, "singlestep on", "log exec")
    t.join(5)
    server.close()
    assert got == ["singlestep on", "log exec"]
    assert [r.endswith("(qemu) ") and "ok" in r for r in replies] == [True, True]


def test_hmp_without_a_monitor_is_a_tool_error(tmp_path):
    with pytest.raises(ToolError):
        qemu.hmp(tmp_path / "none.sock", "info status", timeout=1)


def test_system_command_riscv64():
    # The riscv board of `tern native`, with the hypervisor as its S-mode kernel; no IOMMU.
    board = Board(cpus=3, cpu="rv64", memory=GiB, pci=("edu",), arch="riscv64")
    command = qemu.system_command(board, "/h/tern.img", [("/w/config.bin", 0x83F0_0000)],
                                  icount=2)
    assert command == [
        "qemu-system-riscv64", "-M", "virt,aia=aplic-imsic,aia-guests=4",
        "-cpu", "rv64,h=true,sstc=true", "-smp", "3", "-m", "1024M", *BOARD,
        "-device", EDU.format(2), "-icount", "shift=2,align=off,sleep=off",
        "-kernel", "/h/tern.img",
        "-device", "loader,file=/w/config.bin,addr=0x83f00000,force-raw=on"]
    assert qemu.system_has_iommu("arm64") and not qemu.system_has_iommu("riscv64")
