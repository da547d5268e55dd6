"""The Linux guest's initramfs (newc cpio writer, ELF and module readers, build) and disk image."""

import gzip
import hashlib
import io
import lzma
import os
import posixpath
import re
import shutil
import stat
import struct
import subprocess
import tarfile

import pytest
from tern import diskimage, initramfs
from tern.errors import ToolError
from tern.image import ELF_HEADER, ELF_PHDR
from tern.initramfs import Archive, build, elf_dependencies, load_order, modinfo

NEWC_FIELDS = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor", "devminor",
               "rdevmajor", "rdevminor", "namesize", "check")


def parse_newc(data):
    """[(name, header fields, data)] of a newc archive, checking magic, padding and the trailer."""
    members, pos = [], 0
    while True:
        assert pos % 4 == 0, f"member at {pos} is not 4-byte aligned"
        assert data[pos:pos + 6] == b"070701"
        fields = dict(zip(NEWC_FIELDS, (int(data[pos + 6 + 8 * i:pos + 14 + 8 * i], 16)
                                        for i in range(13))))
        name_end = pos + 110 + fields["namesize"]
        assert data[name_end - 1] == 0, "name not NUL-terminated"
        name = data[pos + 110:name_end - 1].decode()
        data_start = name_end + (-name_end % 4)
        assert data[name_end:data_start] == bytes(data_start - name_end), "name padding not zero"
        data_end = data_start + fields["filesize"]
        pos = data_end + (-data_end % 4)
        assert data[data_end:pos] == bytes(pos - data_end), "data padding not zero"
        if name == "TRAILER!!!":
            assert pos == len(data), "bytes after the trailer"
            return members
        members.append((name, fields, data[data_start:data_end]))


def test_cpio_round_trip():
    archive = Archive()
    archive.add_dir("etc", 0o700)
    archive.add_file("bin/tool", b"#!/bin/sh\n", 0o755)
    archive.add_file("/etc/conf", b"abc")
    archive.add_symlink("bin/sh", "busybox")
    archive.add_char_device("dev/console", 5, 1)
    members = parse_newc(archive.to_bytes())

    assert [name for name, _, _ in members] == ["etc", "bin", "bin/tool", "etc/conf", "bin/sh",
                                                "dev", "dev/console"]
    by_name = {name: (fields, data) for name, fields, data in members}
    assert by_name["etc"][0]["mode"] == stat.S_IFDIR | 0o700
    assert by_name["bin"][0]["mode"] == stat.S_IFDIR | 0o755
    assert by_name["bin"][0]["nlink"] == 2
    assert by_name["bin/tool"][0]["mode"] == stat.S_IFREG | 0o755
    assert by_name["bin/tool"][1] == b"#!/bin/sh\n"
    assert by_name["etc/conf"][0]["mode"] == stat.S_IFREG | 0o644
    assert (by_name["etc/conf"][0]["filesize"], by_name["etc/conf"][1]) == (3, b"abc")
    assert by_name["bin/sh"][0]["mode"] == stat.S_IFLNK | 0o777
    assert by_name["bin/sh"][1] == b"busybox"
    console = by_name["dev/console"][0]
    assert console["mode"] == stat.S_IFCHR | 0o600
    assert (console["rdevmajor"], console["rdevminor"], console["filesize"]) == (5, 1, 0)
    assert [f["ino"] for _, f, _ in members] == list(range(1, 8))
    assert all(f["uid"] == f["gid"] == f["mtime"] == 0 for _, f, _ in members)


@pytest.mark.parametrize("name", ["a", "ab", "abc", "abcd", "abcde"])
@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5])
def test_cpio_padding(name, size):
    data = Archive()
    data.add_file(name, b"x" * size)
    raw = data.to_bytes()
    member = 110 + len(name) + 1
    member += -member % 4
    member += size + (-size % 4)
    assert len(raw) == member + 124  # the trailer: 110 + len("TRAILER!!!\0"), padded
    assert parse_newc(raw)[0][2] == b"x" * size


def test_cpio_exact_header():
    archive = Archive()
    archive.add_file("x", b"abc", 0o600)
    raw = archive.to_bytes()
    assert raw[:110] == (b"070701" + b"00000001" + b"00008180" + b"00000000" * 2 + b"00000001"
                         + b"00000000" + b"00000003" + b"00000000" * 4 + b"00000002" + b"00000000")
    assert raw[110:116] == b"x\0abc\0"


def test_cpio_same_member_twice():
    archive = Archive()
    archive.add_file("lib/libc.so.6", b"elf")
    archive.add_file("lib/libc.so.6", b"elf")
    assert list(archive.entries) == ["lib", "lib/libc.so.6"]
    with pytest.raises(ValueError, match="lib/libc.so.6: added twice"):
        archive.add_file("lib/libc.so.6", b"other")


@pytest.mark.skipif(shutil.which("cpio") is None, reason="cpio not installed")
def test_cpio_tool_reads_it(tmp_path):
    archive = Archive()
    archive.add_file("usr/bin/hello", b"hello\n", 0o755)
    archive.add_symlink("bin/hi", "../usr/bin/hello")
    proc = subprocess.run(["cpio", "-it"], input=archive.to_bytes(), capture_output=True,
                          check=True)
    assert proc.stdout.decode().split() == ["usr", "usr/bin", "usr/bin/hello", "bin", "bin/hi"]


def elf_program(interp=None, needed=()):
    """An ELF64 with PT_INTERP (if interp), a PT_LOAD of the whole file at 0x400000 and a
    PT_DYNAMIC naming the needed libraries."""
    vaddr = 0x400000
    phdrs = 3 if interp else 2
    interp_off = ELF_HEADER.size + phdrs * ELF_PHDR.size
    interp_bytes = interp.encode() + b"\0" if interp else b""
    strtab_off = interp_off + len(interp_bytes)
    strtab, names = b"\0", []
    for name in needed:
        names.append(len(strtab))
        strtab += name.encode() + b"\0"
    dyn_off = strtab_off + len(strtab) + (-(strtab_off + len(strtab)) % 8)
    dynamic = b"".join(struct.pack("<qQ", 1, n) for n in names)
    dynamic += struct.pack("<qQ", 5, vaddr + strtab_off) + struct.pack("<qQ", 0, 0)
    size = dyn_off + len(dynamic)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    out = ELF_HEADER.pack(ident, 3, 183, 1, 0, ELF_HEADER.size, 0, 0, ELF_HEADER.size,
                          ELF_PHDR.size, phdrs, 0, 0, 0)
    if interp:
        out += ELF_PHDR.pack(3, 4, interp_off, vaddr + interp_off, 0, len(interp_bytes),
                             len(interp_bytes), 1)
    out += ELF_PHDR.pack(1, 5, 0, vaddr, 0, size, size, 0x1000)
    out += ELF_PHDR.pack(2, 6, dyn_off, vaddr + dyn_off, 0, len(dynamic), len(dynamic), 8)
    out += interp_bytes + strtab
    return out + bytes(dyn_off - len(out)) + dynamic


def elf_module(info):
    """A relocatable ELF64 whose .modinfo section holds info ({key: value})."""
    shstrtab = b"\0.shstrtab\0.modinfo\0"
    section = b"".join(f"{key}={value}\0".encode() for key, value in info.items())
    modinfo_off = ELF_HEADER.size + len(shstrtab)
    shoff = modinfo_off + len(section) + (-(modinfo_off + len(section)) % 8)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    out = ELF_HEADER.pack(ident, 1, 183, 1, 0, 0, shoff, 0, ELF_HEADER.size, 0, 0, 64, 3, 1)
    out += shstrtab + section
    out += bytes(shoff - len(out))
    shdr = struct.Struct("<IIQQQQIIQQ")
    out += shdr.pack(*[0] * 10)
    out += shdr.pack(1, 3, 0, 0, ELF_HEADER.size, len(shstrtab), 0, 0, 1, 0)
    out += shdr.pack(11, 1, 0, 0, modinfo_off, len(section), 0, 0, 1, 0)
    return out


def test_elf_dependencies():
    data = elf_program("/lib/ld-linux-aarch64.so.1", ["libnuma.so.1", "libc.so.6"])
    assert elf_dependencies(data) == ("/lib/ld-linux-aarch64.so.1",
                                      ["libnuma.so.1", "libc.so.6"])
    assert elf_dependencies(elf_program()) == (None, [])


def test_elf_dependencies_not_elf():
    with pytest.raises(ValueError, match="not a little-endian ELF64"):
        elf_dependencies(b"\x7fELF\x01\x01" + bytes(64))


def test_modinfo():
    data = elf_module({"license": "GPL", "depends": "virtio_pci_modern_dev,virtio_ring",
                       "name": "virtio_pci"})
    assert modinfo(data) == {"license": "GPL", "depends": "virtio_pci_modern_dev,virtio_ring",
                             "name": "virtio_pci"}


def test_load_order_puts_dependencies_first_and_once():
    depends = {"net": ["failover_net", "ring"], "failover_net": ["failover"], "failover": [],
               "blk": ["ring"], "ring": []}
    assert load_order(["net", "blk"], depends.__getitem__) == [
        "failover", "failover_net", "ring", "net", "blk"]


def test_load_order_cycle():
    depends = {"a": ["b"], "b": ["a"]}
    with pytest.raises(ToolError, match="cycle: a -> b -> a"):
        load_order(["a"], depends.__getitem__)


def fake_root(root, modules_builtin=("pci_host_generic", "amba_pl011"),
              compress=lambda path, data: (path, data)):
    """The unpacked packages' layout, with synthetic programs, libraries and modules.

    compress(path, data) gives a module's file name (after kernel/drivers/) and contents.
    """
    def write(path, data, mode=0o644):
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)
        full.chmod(mode)

    def link(path, target):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(target)

    write("bin/busybox", b"busybox", 0o755)
    write("usr/bin/cyclictest", elf_program("/lib/ld-linux-aarch64.so.1",
                                            ["libnuma.so.1", "libc.so.6"]), 0o755)
    link("lib/ld-linux-aarch64.so.1", "aarch64-linux-gnu/ld-linux-aarch64.so.1")
    write("lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", elf_program(), 0o755)
    write("lib/aarch64-linux-gnu/libc.so.6", elf_program(needed=["ld-linux-aarch64.so.1"]))
    link("usr/lib/aarch64-linux-gnu/libnuma.so.1", "libnuma.so.1.0.0")
    write("usr/lib/aarch64-linux-gnu/libnuma.so.1.0.0", elf_program(needed=["libc.so.6"]))
    base = "lib/modules/6.1.0-9-arm64"
    write(f"{base}/modules.builtin", "".join(f"kernel/drivers/{name.replace('_', '-')}.ko\n"
                                             for name in modules_builtin).encode())
    modules = {"virtio/virtio_mmio": "", "virtio/virtio_pci": "virtio_pci_modern_dev",
               "virtio/virtio_pci_modern_dev": "", "block/virtio_blk": "",
               "net/virtio_net": "net_failover", "net/net_failover": "failover",
               "net/core/failover": "", "char/virtio_console": "", "gpu/unused": "",
               "uio/uio_pci_generic": "uio", "uio/uio": "", "net/tun": "",
               "vsock/vmw_vsock_virtio_transport": "vmw_vsock_virtio_transport_common,vsock",
               "vsock/vmw_vsock_virtio_transport_common": "vsock", "vsock/vsock": ""}
    for path, depends in modules.items():
        name, data = compress(path + ".ko", elf_module({"depends": depends}))
        write(f"{base}/kernel/drivers/{name}", data)


def test_build(tmp_path):
    fake_root(tmp_path)
    archive, modules = build(tmp_path)
    members = {name: (fields, data) for name, fields, data in parse_newc(archive.to_bytes())}

    kernel = "lib/modules/6.1.0-9-arm64/kernel/drivers/"
    assert modules == [kernel + m + ".ko" for m in (
        "virtio/virtio_mmio", "virtio/virtio_pci_modern_dev", "virtio/virtio_pci",
        "block/virtio_blk", "net/core/failover", "net/net_failover", "net/virtio_net",
        "char/virtio_console", "uio/uio", "uio/uio_pci_generic", "net/tun", "vsock/vsock",
        "vsock/vmw_vsock_virtio_transport_common", "vsock/vmw_vsock_virtio_transport")]
    assert members["etc/modules"][1].decode().split() == ["/" + m for m in modules]
    assert kernel + "gpu/unused.ko" not in members
    assert "usr/bin/tern-chan" not in members       # only when given

    assert members["init"][0]["mode"] == stat.S_IFREG | 0o755
    assert members["init"][1].startswith(b"#!/bin/sh\n")
    assert members["bin/sh"][1] == b"busybox"
    assert members["dev/console"][0]["mode"] == stat.S_IFCHR | 0o600
    assert members["usr/bin/cyclictest"][0]["mode"] == stat.S_IFREG | 0o755
    assert members["lib/ld-linux-aarch64.so.1"][1] == b"aarch64-linux-gnu/ld-linux-aarch64.so.1"
    assert members["usr/lib/aarch64-linux-gnu/libnuma.so.1"][1] == b"libnuma.so.1.0.0"
    for lib in ("lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", "lib/aarch64-linux-gnu/libc.so.6",
                "usr/lib/aarch64-linux-gnu/libnuma.so.1.0.0"):
        assert stat.S_ISREG(members[lib][0]["mode"]), lib
    for mount_point in ("proc", "sys", "tmp", "sbin", "usr/sbin"):
        assert stat.S_ISDIR(members[mount_point][0]["mode"]), mount_point


def riscv64_usr_merged_root(root):
    """sid's riscv64 packages: /usr merged (everything under usr/, no /bin, /sbin, /lib), the
    loader named /lib/ld-linux-riscv64-lp64d.so.1 by programs, modules xz-compressed, the
    UART's and PCIe host bridge's drivers built in."""
    def write(path, data, mode=0o644):
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)
        full.chmod(mode)

    loader = "ld-linux-riscv64-lp64d.so.1"
    write("usr/bin/busybox", b"busybox", 0o755)
    write("usr/bin/cyclictest", elf_program(f"/lib/{loader}", ["libcpupower.so.1", "libc.so.6"]),
          0o755)
    write(f"usr/lib/riscv64-linux-gnu/{loader}", elf_program(), 0o755)
    (root / f"usr/lib/{loader}").symlink_to(f"riscv64-linux-gnu/{loader}")
    write("usr/lib/riscv64-linux-gnu/libc.so.6", elf_program(needed=[loader]))
    write("usr/lib/riscv64-linux-gnu/libcpupower.so.1", elf_program(needed=["libc.so.6"]))
    base = "usr/lib/modules/7.2.13+deb14-riscv64"
    write(f"{base}/modules.builtin", b"kernel/drivers/pci/controller/pci-host-generic.ko\n"
                                     b"kernel/drivers/virtio/virtio_pci.ko\n"
                                     b"kernel/drivers/char/virtio_console.ko\n")
    for path, depends in (("virtio/virtio_mmio", ""), ("block/virtio_blk", ""),
                          ("net/virtio_net", ""), ("uio/uio", ""),
                          ("uio/uio_pci_generic", "uio"), ("net/tun", ""), ("vsock/vsock", ""),
                          ("vsock/vmw_vsock_virtio_transport_common", "vsock"),
                          ("vsock/vmw_vsock_virtio_transport",
                           "vmw_vsock_virtio_transport_common,vsock")):
        write(f"{base}/kernel/drivers/{path}.ko.xz", lzma.compress(elf_module({"depends": depends})))


def test_build_riscv64_with_usr_merged(tmp_path):
    riscv64_usr_merged_root(tmp_path)
    archive, modules = build(tmp_path, "riscv64")
    members = {name: (fields, data) for name, fields, data in parse_newc(archive.to_bytes())}

    for top in ("bin", "sbin", "lib"):   # the links a merged /usr has, to directories
        assert stat.S_ISLNK(members[top][0]["mode"]) and members[top][1] == f"usr/{top}".encode()
        assert stat.S_ISDIR(members[f"usr/{top}"][0]["mode"])
    assert not [name for name in members if name.startswith(("bin/", "sbin/", "lib/"))]
    assert members["usr/bin/sh"][1] == b"busybox"
    assert stat.S_ISREG(members["usr/bin/busybox"][0]["mode"])
    assert members["usr/lib/ld-linux-riscv64-lp64d.so.1"][1] == \
        b"riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1"
    for lib in ("ld-linux-riscv64-lp64d.so.1", "libc.so.6", "libcpupower.so.1"):
        assert stat.S_ISREG(members[f"usr/lib/riscv64-linux-gnu/{lib}"][0]["mode"]), lib
    kernel = "usr/lib/modules/7.2.13+deb14-riscv64/kernel/drivers/"
    assert modules == [kernel + m + ".ko" for m in (
        "virtio/virtio_mmio", "block/virtio_blk", "net/virtio_net", "uio/uio",
        "uio/uio_pci_generic", "net/tun", "vsock/vsock", "vsock/vmw_vsock_virtio_transport_common",
        "vsock/vmw_vsock_virtio_transport")]
    assert members["etc/modules"][1].decode().split() == ["/" + m for m in modules]
    assert members["init"][1] == initramfs.INIT.encode()      # the same /init on every arch
    for mount_point in ("proc", "sys", "tmp", "root", "usr/sbin"):
        assert stat.S_ISDIR(members[mount_point][0]["mode"]), mount_point


def test_build_riscv64_names_its_library_dirs(tmp_path):
    riscv64_usr_merged_root(tmp_path)
    (tmp_path / "usr/lib/riscv64-linux-gnu/libcpupower.so.1").unlink()
    with pytest.raises(ToolError, match="needs libcpupower.so.1, which is in none of "
                                        "lib/riscv64-linux-gnu, usr/lib/riscv64-linux-gnu"):
        build(tmp_path, "riscv64")


def test_main_takes_the_arch(tmp_path, capsys):
    riscv64_usr_merged_root(tmp_path / "root")
    out = tmp_path / "initramfs.cpio.gz"
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out),
                           "--arch", "riscv64"]) == 0
    assert "modules: virtio_mmio virtio_blk virtio_net" in capsys.readouterr().out
    # arm64, the default, looks for libraries where arm64's packages have them.
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out)]) == 2
    assert "which is in none of lib/aarch64-linux-gnu" in capsys.readouterr().err


def cyclictest_summary(output):
    """The TERN-LINUX lines /init's awk program makes of cyclictest's output (the host's awk)."""
    program = initramfs.INIT.split("    awk '\n", 1)[1].split("' /tmp/cyclictest.out", 1)[0]
    proc = subprocess.run(["awk", program], input=output, capture_output=True, text=True,
                          check=True)
    return proc.stdout.splitlines()


HISTOGRAM = "".join(f"{i:06d} {n:06d}\n" for i, n in enumerate([0, 0, 0, 7, 2, 0] + [0] * 4))


@pytest.mark.skipif(shutil.which("awk") is None, reason="awk not installed")
@pytest.mark.parametrize("total", ["# Total: 000000009\n", ""], ids=["rt-tests-2.4", "2.10"])
def test_cyclictest_summary_counts_the_buckets_and_overflows(total):
    # rt-tests 2.4 (Debian 12) prints the buckets' sum as "# Total:", 2.10 (sid) does not.
    output = ("# /dev/cpu_dma_latency set to 0us\n# Histogram\n" + HISTOGRAM + total +
              "# Min Latencies: 00003\n# Avg Latencies: 00004\n# Max Latencies: 00012\n"
              "# Histogram Overflows: 00001\n# Histogram Overflow at cycle number:\n"
              "# Thread 0: 00005\n")
    assert cyclictest_summary(output) == [
        "TERN-LINUX: cyclictest min=3 avg=4 max=12 samples=10",
        "TERN-LINUX: cyclictest-hist 3 7",
        "TERN-LINUX: cyclictest-hist 4 2",
        "TERN-LINUX: cyclictest-overflows 1",
    ]


def test_build_decompresses_modules(tmp_path):
    packers = {"virtio/virtio_mmio.ko": (".xz", lzma.compress),
               "net/virtio_net.ko": (".gz", gzip.compress)}

    def compress(path, data):
        suffix, pack = packers.get(path, ("", bytes))
        return path + suffix, pack(data)

    fake_root(tmp_path, compress=compress)
    archive, modules = build(tmp_path)
    kernel = "lib/modules/6.1.0-9-arm64/kernel/drivers/"
    assert kernel + "virtio/virtio_mmio.ko" in modules
    assert kernel + "net/virtio_net.ko" in modules
    assert archive.entries[kernel + "virtio/virtio_mmio.ko"].data == elf_module({"depends": ""})
    assert archive.entries[kernel + "net/virtio_net.ko"].data == elf_module(
        {"depends": "net_failover"})
    assert not [path for path in archive.entries if path.endswith((".xz", ".gz"))]


def test_build_module_dependency_missing(tmp_path):
    fake_root(tmp_path)
    (tmp_path / "lib/modules/6.1.0-9-arm64/kernel/drivers/net/core/failover.ko").unlink()
    with pytest.raises(ToolError, match="kernel 6.1.0-9-arm64 has no module failover"):
        build(tmp_path)


def test_build_missing_library(tmp_path):
    fake_root(tmp_path)
    (tmp_path / "usr/lib/aarch64-linux-gnu/libnuma.so.1").unlink()
    with pytest.raises(ToolError, match="usr/bin/cyclictest needs libnuma.so.1, which is in none"):
        build(tmp_path)


def test_build_module_neither_built_in_nor_shipped(tmp_path):
    fake_root(tmp_path, modules_builtin=("pci_host_generic",))
    with pytest.raises(ToolError, match="neither built in nor as a module: amba_pl011"):
        build(tmp_path)


def test_main_writes_gzip(tmp_path, capsys):
    fake_root(tmp_path / "root")
    out = tmp_path / "out" / "initramfs.cpio.gz"
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out)]) == 0
    names = [name for name, _, _ in parse_newc(gzip.decompress(out.read_bytes()))]
    assert "init" in names and "bin/busybox" in names
    assert "modules: virtio_mmio virtio_pci_modern_dev" in capsys.readouterr().out


def test_main_reports_missing_root(tmp_path, capsys):
    status = initramfs.main(["--root", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")])
    assert status == 2
    assert "initramfs: error: " in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def read_tar(image):
    with tarfile.open(fileobj=io.BytesIO(image)) as tar:
        return {m.name: (m.mode, tar.extractfile(m).read()) for m in tar.getmembers()}


def test_tar_disk():
    image = diskimage.tar_disk({"hello.txt": b"hello from the disk\n"})
    assert len(image) == 1 << 20
    assert read_tar(image) == {"hello.txt": (0o644, b"hello from the disk\n")}


@pytest.mark.parametrize("min_size, content, size", [
    (1000, b"", 10240),                      # tarfile pads an archive to 20 records of 512 bytes
    (10241, b"", 10752),                     # rounded up to a whole sector
    # header, data, two end-of-archive blocks, in whole records
    (1 << 20, b"y" * (1 << 20), -(-(512 + (1 << 20) + 1024) // 10240) * 10240),
])
def test_tar_disk_size(min_size, content, size):
    image = diskimage.tar_disk({"f": content}, min_size)
    assert len(image) == size
    assert read_tar(image)["f"][1] == content


def test_diskimage_main(tmp_path, capsys):
    out = tmp_path / "d" / "disk.img"
    assert diskimage.main([str(out), "hello.txt=hi there", "b=x=y"]) == 0
    image = out.read_bytes()
    assert len(image) % 512 == 0 and len(image) >= 1 << 20
    assert {name: data for name, (_, data) in read_tar(image).items()} == {
        "hello.txt": b"hi there", "b": b"x=y"}
    assert f"{out} ({len(image)} bytes)" in capsys.readouterr().out


def test_diskimage_main_bad_file_argument(tmp_path):
    with pytest.raises(SystemExit):
        diskimage.main([str(tmp_path / "disk.img"), "no-equals-sign"])


def test_build_adds_tern_chan(tmp_path):
    fake_root(tmp_path / "root")
    program = tmp_path / "tern-chan"
    program.write_bytes(elf_program())             # an aarch64 ELF64
    archive, modules = build(tmp_path / "root", "arm64", program)
    members = {name: (fields, data) for name, fields, data in parse_newc(archive.to_bytes())}
    assert members["usr/bin/tern-chan"][0]["mode"] == stat.S_IFREG | 0o755
    assert members["usr/bin/tern-chan"][1] == program.read_bytes()
    # uio_pci_generic after uio, which it needs: /etc/modules loads them in that order.
    names = [posixpath.basename(m) for m in modules]
    assert names.index("uio.ko") < names.index("uio_pci_generic.ko")


def test_build_refuses_a_tern_chan_of_another_arch(tmp_path):
    riscv64_usr_merged_root(tmp_path / "root")
    program = tmp_path / "tern-chan"
    program.write_bytes(elf_program())             # aarch64, not riscv64
    with pytest.raises(ToolError, match="not a 64-bit riscv64 ELF program"):
        build(tmp_path / "root", "riscv64", program)
    with pytest.raises(ToolError, match="make -C guests tern-chan"):
        build(tmp_path / "root", "riscv64", tmp_path / "missing")


def test_main_takes_tern_chan(tmp_path):
    fake_root(tmp_path / "root")
    program = tmp_path / "tern-chan"
    program.write_bytes(elf_program())
    out = tmp_path / "initramfs.cpio.gz"
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out),
                           "--tern-chan", str(program)]) == 0
    names = [name for name, _, _ in parse_newc(gzip.decompress(out.read_bytes()))]
    assert "usr/bin/tern-chan" in names


def test_build_adds_tern_vsock(tmp_path):
    fake_root(tmp_path / "root")
    program = tmp_path / "tern-vsock"
    program.write_bytes(elf_program())             # an aarch64 ELF64
    archive, _ = build(tmp_path / "root", "arm64", tern_vsock=program)
    members = {name: (fields, data) for name, fields, data in parse_newc(archive.to_bytes())}
    assert members[initramfs.TERN_VSOCK][0]["mode"] == stat.S_IFREG | 0o755
    assert members[initramfs.TERN_VSOCK][1] == program.read_bytes()
    with pytest.raises(ToolError, match="make -C guests tern-vsock"):
        build(tmp_path / "root", "arm64", tern_vsock=tmp_path / "missing")
    out = tmp_path / "initramfs.cpio.gz"
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out),
                           "--tern-vsock", str(program)]) == 0
    names = [name for name, _, _ in parse_newc(gzip.decompress(out.read_bytes()))]
    assert initramfs.TERN_VSOCK in names


def init_part(start, end):
    """The text of /init from the line starting with `start` to the next line `end`."""
    begin = initramfs.INIT.index("\n" + start) + 1
    return initramfs.INIT[begin:initramfs.INIT.index("\n" + end + "\n", begin) + len(end) + 2]


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
@pytest.mark.parametrize("status, extra", [
    (0, []), (1, []),
    (139, ["TERN-LINUX: chan error=tern-chan exited with status 139"]),
])
def test_init_chan_runs_tern_chan_with_the_command_lines_options(tmp_path, status, extra):
    cmdline = tmp_path / "cmdline"
    cmdline.write_text("console=ttyS0 quiet tern.run=chan tern.chan.count=5 "
                       "tern.chan.bdf=0000:00:02.0 tern.chan.size=8192 tern.chan.member=1\n")
    fake = tmp_path / "tern-chan"
    fake.write_text(f'#!/bin/sh\necho "tern-chan $*"\nexit {status}\n')
    fake.chmod(0o755)
    parse = init_part("set -f  # the command line", "set +f")
    run_chan = init_part("run_chan() {", "}")
    assert "/proc/cmdline" in parse and f"/{initramfs.TERN_CHAN} " in run_chan
    script = (parse.replace("/proc/cmdline", str(cmdline)) +
              run_chan.replace(f"/{initramfs.TERN_CHAN}", str(fake)) +
              'echo "run=$run"\nrun_chan pong chan\n')
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines() == [
        "run=chan",
        "tern-chan pong --count 5 --bdf 0000:00:02.0 --size 8192 --member 1"] + extra


def test_init_has_the_chan_modes():
    assert re.search(r"^chan\) run_chan pong chan ;;$", initramfs.INIT, re.M)
    assert re.search(r"^chan-probe\) run_chan probe chan-probe ;;$", initramfs.INIT, re.M)


def test_build_adds_tern_vio_and_its_disk(tmp_path):
    riscv64_usr_merged_root(tmp_path / "root")
    program = tmp_path / "tern-vio"
    data = bytearray(elf_program())
    struct.pack_into("<H", data, 18, 243)           # e_machine: EM_RISCV
    program.write_bytes(data)
    disk = tmp_path / "disk.img"
    disk.write_bytes(bytes(range(256)) * 8)
    archive, modules = build(tmp_path / "root", "riscv64", tern_vio=program, vio_disk=disk)
    members = {name: (fields, data) for name, fields, data in parse_newc(archive.to_bytes())}
    assert members[initramfs.TERN_VIO][0]["mode"] == stat.S_IFREG | 0o755
    assert members[initramfs.TERN_VIO][1] == program.read_bytes()
    assert members["srv/disk.img"][1] == disk.read_bytes()
    assert "usr/bin/tern-chan" not in members
    # /dev/net/tun for tern-vio net: tun is loaded with the other modules.
    assert any(m.endswith("/net/tun.ko") for m in modules)


def test_build_refuses_a_tern_vio_of_another_arch_or_a_missing_disk(tmp_path):
    riscv64_usr_merged_root(tmp_path / "root")
    program = tmp_path / "tern-vio"
    program.write_bytes(elf_program())             # aarch64, not riscv64
    with pytest.raises(ToolError, match="tern-vio: not a 64-bit riscv64 ELF program"):
        build(tmp_path / "root", "riscv64", tern_vio=program)
    with pytest.raises(ToolError, match="make -C guests tern-vio"):
        build(tmp_path / "root", "riscv64", tern_vio=tmp_path / "missing")
    with pytest.raises(ToolError, match="missing.img"):
        build(tmp_path / "root", "riscv64", vio_disk=tmp_path / "missing.img")


def test_main_takes_tern_vio_and_the_disk(tmp_path):
    fake_root(tmp_path / "root")
    program = tmp_path / "tern-vio"
    program.write_bytes(elf_program())
    disk = tmp_path / "disk.img"
    disk.write_bytes(b"\1" * 1024)
    out = tmp_path / "initramfs.cpio.gz"
    assert initramfs.main(["--root", str(tmp_path / "root"), "--out", str(out),
                           "--tern-vio", str(program), "--vio-disk", str(disk)]) == 0
    members = {name: data for name, _, data in parse_newc(gzip.decompress(out.read_bytes()))}
    assert members["usr/bin/tern-vio"] == program.read_bytes()
    assert members["srv/disk.img"] == b"\1" * 1024


def test_init_has_the_vio_modes():
    assert re.search(r"^vio-net-backend\) run_vio_net_backend ;;$", initramfs.INIT, re.M)
    assert re.search(r"^vio-net-frontend\) run_vio_net_frontend ;;$", initramfs.INIT, re.M)
    assert re.search(r"^vio-blk-backend\) run_vio_blk_backend ;;$", initramfs.INIT, re.M)
    assert f"/{initramfs.TERN_VIO} blk /{initramfs.VIO_DISK} $vio_args\n" in initramfs.INIT


def fake_commands(tmp_path, **scripts):
    """A directory of sh scripts named as the keys (underscores for dashes): PATH for /init's
    functions, so that they run on the host with these in place of the guest's applets."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in scripts.items():
        path = bin_dir / name.replace("_", "-")
        path.write_text("#!/bin/sh\n" + text)
        path.chmod(0o755)
    return bin_dir


def fake_nc(log, listen, connect):
    """An nc for /init's vio-net functions, which use it only with -e: log the call, then run
    the -e command with its stdin from `listen` (a listener: what the peer sends) or its stdout
    to `connect` (a connection: what the peer receives), both sh fragments given "$@"."""
    return (f'echo "nc $*" >>{log}\n'
            'listen=\nport=\n'
            'while [ $# -gt 0 ] && [ "$1" != -e ]; do\n'
            '    case $1 in -l) listen=1 ;; -p) ;; *) port=$1 ;; esac; shift\n'
            'done\n'
            'shift\n'
            f'if [ -n "$listen" ]; then {listen}; else {connect}; fi\n')


def vio_script(tmp_path, net, body):
    """/init's helpers and vio functions with /sys/class/net and tern-vio in tmp_path."""
    helpers = (init_part("oneline() {", "}") + init_part("wait_for() {", "}") +
               init_part("size_md5() {", "}"))
    functions = (init_part("run_vio_net_backend() {", "}") +
                 init_part("run_vio_net_frontend() {", "}"))
    # The guest's clock, standing still: every transfer takes 0 ns.
    timer_list = tmp_path / "timer_list"
    timer_list.write_text("Timer List Version: v0.9\nnow at 1000 nsecs\n")
    return (helpers + functions).replace("/sys/class/net", str(net)).replace(
        f"/{initramfs.TERN_VIO}", str(tmp_path / "bin/tern-vio")).replace(
        "/proc/timer_list", str(timer_list)) + body


@pytest.mark.skipif(shutil.which("sh") is None or shutil.which("md5sum") is None,
                    reason="no sh or md5sum")
def test_init_vio_net_frontend_pings_then_sends_the_pattern(tmp_path):
    net = tmp_path / "net"
    (net / "eth0").mkdir(parents=True)
    log = tmp_path / "log"
    received = tmp_path / "received"
    bin_dir = fake_commands(
        tmp_path,
        ip=f'echo "ip $*" >>{log}\n',
        ping=f'echo "ping $*" >>{log}\n'
             'echo "5 packets transmitted, 5 packets received, 0% packet loss"\n'
             'echo "round-trip min/avg/max = 0.972/1.084/1.317 ms"\n',
        nc=fake_nc(log, listen='printf "bytes=1 md5=x" | "$@"',
                   connect=f'if [ "$port" = 5001 ]; then "$@" >{received}; '
                           'else "$@" >/dev/null; fi'))
    script = vio_script(tmp_path, net, "vio_bytes=100000\nrun_vio_net_frontend\n")
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    pattern = (b"Tern virtio-net 0123456789abcdefghijklmnopqrstuvwxyz\n" * 2000)[:100000]
    assert received.read_bytes() == pattern
    md5 = hashlib.md5(pattern).hexdigest()
    assert proc.stdout.splitlines() == [
        "TERN-LINUX: vio-net ping 5 packets transmitted, 5 packets received, 0% packet loss",
        "TERN-LINUX: vio-net rtt round-trip min/avg/max = 0.972/1.084/1.317 ms",
        f"TERN-LINUX: vio-net sent bytes=100000 md5={md5}",
        "TERN-LINUX: vio-net acknowledged bytes=1 md5=x"]
    calls = log.read_text().splitlines()
    assert calls[:4] == [
        "ip addr add 10.0.2.2/24 dev eth0", "ip link set eth0 up",
        "ping -c 1 -W 1 10.0.2.1", "ping -c 5 10.0.2.1"]
    # The acknowledgement's listener runs beside the transfer: in either order; then the
    # word to the receiver that the acknowledgement arrived.
    assert sorted(calls[4:6]) == ["nc -l -p 5002 -e sh -c cat >/tmp/ack",
                                  "nc 10.0.2.1 5001 -e cat /tmp/tx"]
    assert calls[6:] == ["nc 10.0.2.1 5003 -e true"]


@pytest.mark.skipif(shutil.which("sh") is None or shutil.which("md5sum") is None,
                    reason="no sh or md5sum")
def test_init_vio_net_backend_configures_vio0_and_reports_each_transfer(tmp_path):
    net = tmp_path / "net"
    net.mkdir()
    log = tmp_path / "log"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    calls = tmp_path / "calls"
    # tern-vio makes vio0 and serves until the second nc call tells it to stop; the first nc
    # call receives "hello", the second fails.
    bin_dir = fake_commands(
        tmp_path,
        tern_vio=f'mkdir {net}/vio0\nread -r line <{fifo}\n',
        ip=f'echo "ip $*" >>{log}\n',
        nc=fake_nc(log, listen=f'echo x >>{calls}\n'
                   f'if [ "$(wc -l <{calls})" -eq 1 ]; then printf hello | "$@"; exit 0; fi\n'
                   f'echo stop >{fifo}\nexit 3',
                   connect='"$@" >/dev/null'))
    script = vio_script(tmp_path, net, "run_vio_net_backend\n")
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, cwd=tmp_path, timeout=60)
    assert proc.stdout.splitlines() == [
        "TERN-LINUX: vio-net backend up",
        "TERN-LINUX: vio-net receive-time bytes=5 ns=0",
        f"TERN-LINUX: vio-net received bytes=5 md5={hashlib.md5(b'hello').hexdigest()}",
        "TERN-LINUX: vio-net-error nc exited with status 3"]
    assert log.read_text().splitlines() == [
        "ip addr add 10.0.2.1/24 dev vio0", "ip link set vio0 up",
        "nc -l -p 5001 -e /tmp/timed-cat", "nc 10.0.2.2 5002 -e cat /tmp/ack",
        "nc -l -p 5001 -e /tmp/timed-cat"]


@pytest.mark.skipif(shutil.which("sh") is None or shutil.which("md5sum") is None,
                    reason="no sh or md5sum")
def test_init_vio_net_backend_stops_after_the_transfers_asked(tmp_path):
    net = tmp_path / "net"
    net.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # tern-vio serves until it is killed: the fifo is never written.
    bin_dir = fake_commands(
        tmp_path,
        tern_vio=f'mkdir {net}/vio0\nexec 3<>{fifo}\nread -r line <&3\n',
        ip="",
        nc=fake_nc(tmp_path / "log", listen='printf abc | "$@"', connect='"$@" >/dev/null'))
    script = vio_script(tmp_path, net, "vio_transfers=2\nrun_vio_net_backend\necho returned\n")
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, timeout=60)
    md5 = hashlib.md5(b"abc").hexdigest()
    assert proc.stdout.splitlines() == [
        "TERN-LINUX: vio-net backend up",
        "TERN-LINUX: vio-net receive-time bytes=3 ns=0",
        f"TERN-LINUX: vio-net received bytes=3 md5={md5}",
        "TERN-LINUX: vio-net receive-time bytes=3 ns=0",
        f"TERN-LINUX: vio-net received bytes=3 md5={md5}",
        "returned"]


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh")
@pytest.mark.parametrize("status, extra", [
    (0, []), (1, []),
    (139, ["TERN-LINUX: vsock-echo error=tern-vsock exited with status 139",
           "TERN-LINUX: vsock-refused error=tern-vsock exited with status 139"]),
])
def test_init_vsock_echo_runs_tern_vsock_twice(tmp_path, status, extra):
    assert re.search(r"^vsock-echo\) run_vsock_echo ;;$", initramfs.INIT, re.M)
    fake = tmp_path / "tern-vsock"
    fake.write_text(f'#!/bin/sh\necho "tern-vsock $*"\nexit {status}\n')
    fake.chmod(0o755)
    run = init_part("run_vsock() {", "}") + init_part("run_vsock_echo() {", "}")
    assert f"/{initramfs.TERN_VSOCK} " in run
    proc = subprocess.run(["sh", "-c", run.replace(f"/{initramfs.TERN_VSOCK}", str(fake)) +
                           "run_vsock_echo\n"], capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    assert [line for line in lines if not line.startswith("TERN-LINUX")] == [
        "tern-vsock echo hello from Linux over vsock", "tern-vsock refused --port 4321"]
    assert [line for line in lines if line.startswith("TERN-LINUX")] == extra
