"""The Xen peer's plumbing that needs no QEMU: console reassembly, device tree, image names."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tern import runner, xen
from tern.errors import ToolError


def test_guest_lines_rejoin_xen_console_chunks():
    lines = xen.GuestLines(["rt", "noise"])
    first = "x" * xen.VPL011_CHUNK
    assert lines.feed(f"(XEN) DOM1: {first}") is None
    assert lines.feed("(XEN) DOM2: NOISE-DONE") == "[noise] NOISE-DONE"
    assert lines.feed("(XEN) DOM1: tail") == f"[rt] {first}tail"
    assert lines.feed("(XEN) Freed 344kB init memory.") is None
    assert lines.feed("(XEN) DOM7: who") == "[dom7] who"


def test_xen_variant_names():
    assert xen.xen_variant("guests/build/arm64/lat.img") == Path("guests/build/arm64/lat-xen.img")


@pytest.mark.skipif(subprocess.run(["which", "qemu-system-aarch64"], capture_output=True).returncode,
                    reason="needs qemu-system-aarch64 to dump the board's device tree")
def test_dom0less_device_tree_has_one_domain_per_guest(tmp_path):
    image = tmp_path / "g-xen.img"
    image.write_bytes(b"\0" * 4096)
    doms = [xen.Domain("a", image, "lat.samples=5", vcpus=1),
            xen.Domain("b", image, 'say "hi"', vcpus=2, memory_kib=32768)]
    xen.build_dtb(doms, "vwfi=native", cpus=3, cpu="cortex-a53", memory_mib=1024, workdir=tmp_path)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(tmp_path / "xen.dtb")],
                         capture_output=True, text=True, check=True).stdout
    assert dts.count('compatible = "xen,domain";') == 2
    assert "bootscrub=off vwfi=native" in dts
    assert f"module@{xen.DOMU_BASE + xen.DOMU_STRIDE:x}" in dts
    assert 'bootargs = "say \\"hi\\"";' in dts
    assert "cpus = <0x02>;" in dts and "memory = <0x00 0x8000>;" in dts


@pytest.mark.skipif(subprocess.run(["which", "qemu-system-aarch64"], capture_output=True).returncode,
                    reason="needs qemu-system-aarch64 to dump the board's device tree")
def test_boot_time_cpupools_in_device_tree(tmp_path):
    """Xen 4.17's boot-time cpupools (docs/misc/arm/device-tree/cpupools.txt): a `xen,cpupool`
    node under /chosen whose cpupool-cpus are phandles of the board's cpu nodes, and each domU's
    domain-cpupool the phandle of its pool's node."""
    image = tmp_path / "g-xen.img"
    image.write_bytes(b"\0" * 4096)
    pools = [xen.Pool("rt pool", (1,), "rtds"), xen.Pool("zero", (0,), "credit")]
    doms = [xen.Domain("a", image, pool="rt pool"), xen.Domain("b", image, pool="rt pool"),
            xen.Domain("c", image)]
    assert xen.board_cpus(doms, pools) == 2         # c shares Pool-0 ("zero", core 0)
    assert xen.board_cpus(doms, pools[:1]) == 2     # c on core 0, the cores no pool names
    assert xen.board_cpus(doms + [xen.Domain("d", image, vcpus=2)], pools[:1]) == 4
    assert xen.board_cpus(doms[:1], [xen.Pool("p", (0,), "rtds")]) == 1
    assert xen.board_cpus([xen.Domain("e", image, vcpus=2)]) == 2
    xen.build_dtb(doms, "", cpus=2, cpu="cortex-a53", memory_mib=1024, workdir=tmp_path,
                  pools=pools)
    dtb = str(tmp_path / "xen.dtb")

    def prop(path, name, kind="-tx"):
        return subprocess.run(["fdtget", kind, dtb, path, name], capture_output=True, text=True,
                              check=True).stdout.split()

    def phandle(path):
        return int(prop(path, "phandle")[0], 16)

    chosen = subprocess.run(["fdtget", "-l", dtb, "/chosen"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert "cpupool-rt-pool" in chosen and "cpupool-zero" in chosen
    for node, cpu, sched in (("cpupool-rt-pool", "cpu@1", "rtds"),
                             ("cpupool-zero", "cpu@0", "credit")):
        assert prop(f"/chosen/{node}", "compatible", "-ts") == ["xen,cpupool"]
        assert prop(f"/chosen/{node}", "cpupool-sched", "-ts") == [sched]
        assert [int(x, 16) for x in prop(f"/chosen/{node}", "cpupool-cpus")] == \
            [phandle(f"/cpus/{cpu}")]
    pool = phandle("/chosen/cpupool-rt-pool")
    domus = [n for n in chosen if n.startswith("domU")]
    assert [int(prop(f"/chosen/{n}", "domain-cpupool")[0], 16) for n in domus[:2]] == [pool, pool]
    assert subprocess.run(["fdtget", dtb, f"/chosen/{domus[2]}", "domain-cpupool"],
                          capture_output=True).returncode != 0


def test_cpupools_refused_where_xen_would_panic(tmp_path):
    image = tmp_path / "g-xen.img"
    cases = [
        ([xen.Pool("p", (0,), "sedf")], [], "unknown scheduler"),
        ([xen.Pool("p", (2,), "rtds")], [], "not on the 2-core board"),
        ([xen.Pool("p", (0,), "rtds"), xen.Pool("q", (0,), "credit")], [], "in cpupools p and q"),
        ([xen.Pool("p", (), "rtds")], [], "no cores"),
        ([xen.Pool("p", (0,), "rtds")], [xen.Domain("a", image, pool="x")], "unknown cpupool"),
    ]
    for pools, doms, why in cases:
        with pytest.raises(ToolError, match=why):
            xen.check_pools(doms, pools, 2)


BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "xen" / "build-xen-null.sh"


def build_config(*args):
    return subprocess.run(["sh", str(BUILD_SCRIPT), *args], capture_output=True, text=True,
                          timeout=30)


def test_build_variants_share_one_script_and_keep_the_null_builds_stamp():
    null = build_config("null", "--config")
    assert null.returncode == 0, null.stderr
    # The hash build/xen-null/xen.stamp records for builds made before the sched variant: an
    # existing null build stays up to date.
    assert null.stdout.splitlines()[0] == "config: 0b9a15c2b86717d1"
    sched = build_config("sched", "--config")
    assert sched.returncode == 0, sched.stderr
    lines = sched.stdout.splitlines()
    assert lines[0] != null.stdout.splitlines()[0]
    for option in ("CONFIG_SCHED_NULL=y", "CONFIG_SCHED_RTDS=y", "CONFIG_SCHED_ARINC653=y",
                   "CONFIG_BOOT_TIME_CPUPOOLS=y", "# CONFIG_DEBUG is not set"):
        assert option in lines
    bad = build_config("rtds")
    assert bad.returncode == 2 and "unknown variant" in bad.stderr


QEMU = pytest.mark.skipif(
    subprocess.run(["which", "qemu-system-aarch64"], capture_output=True).returncode,
    reason="needs qemu-system-aarch64 to dump the board's device tree")


@QEMU
def test_dom0_kernel_module_and_command_line_only_with_a_dom0(tmp_path):
    image = tmp_path / "g-xen.img"
    image.write_bytes(b"\0" * 4096)
    dom0_image = tmp_path / "dom0.img"
    dom0_image.write_bytes(b"\0" * 4904)
    doms = [xen.Domain("a", image)]
    dtb = str(tmp_path / "xen.dtb")

    def chosen(name, kind="-ts", path="/chosen"):
        return subprocess.run(["fdtget", kind, dtb, path] + ([name] if name else []),
                              capture_output=True, text=True, check=True).stdout.strip()

    xen.build_dtb(doms, "sched=credit", cpus=1, cpu="cortex-a53", memory_mib=1024,
                  workdir=tmp_path)
    assert "dom0_" not in chosen("xen,xen-bootargs")
    assert f"module@{xen.DOM0_BASE:x}" not in chosen("", "-l")

    (tmp_path / "xen.dtb").unlink()
    (tmp_path / "xen.dts").unlink()
    dom0 = xen.Dom0(dom0_image, "arinc.pool=0 arinc.windows=1:5")
    xen.build_dtb(doms, "sched=credit", cpus=1, cpu="cortex-a53", memory_mib=1024,
                  workdir=tmp_path, dom0=dom0)
    assert chosen("xen,xen-bootargs") == f"{xen.BASE_ARGS} dom0_mem=32M dom0_max_vcpus=1 " \
                                         "sched=credit"
    module = f"/chosen/module@{xen.DOM0_BASE:x}"
    # Directly under /chosen, where Xen looks for dom0's kernel; the domU's stays in its node.
    assert chosen("compatible", path=module).split() == ["multiboot,kernel", "multiboot,module"]
    assert chosen("reg", "-tx", module).split() == ["0", f"{xen.DOM0_BASE:x}", "0", "1328"]
    assert chosen("bootargs", path=module) == "arinc.pool=0 arinc.windows=1:5"
    assert chosen("", "-l").split().count(f"module@{xen.DOM0_BASE:x}") == 1


def test_cpupool_ids_follow_xen_device_tree_order_with_core_0s_pool_first():
    pool = xen.Pool
    assert xen.pool_ids([pool("s", (0,), "arinc653")]) == {"s": 0}
    assert xen.pool_ids([pool("p0", (0,)), pool("s", (1,), "arinc653")]) == {"p0": 0, "s": 1}
    assert xen.pool_ids([pool("s", (1,)), pool("t", (2,)), pool("z", (0,))]) == \
        {"z": 0, "t": 1, "s": 2}
    # No pool holds core 0: Xen puts core 0 in a pool of its own after the named ones.
    assert xen.pool_ids([pool("s", (1,))]) == {"s": 0}


def test_arinc653_dom0_command_line_names_domains_by_id_in_window_order():
    image = Path("g.img")
    doms = [xen.Domain("a", image, pool="s"), xen.Domain("b", image, pool="s")]
    pools = [xen.Pool("p0", (0,)), xen.Pool("s", (1,), "arinc653")]
    dom0 = xen.arinc653_dom0(doms, pools, "s", 20000, [("b", 10000), ("a", 10000)])
    assert dom0.image == xen.ARINC_DOM0 and dom0.memory_mib == 32
    assert dom0.bootargs == "arinc.pool=1 arinc.frame_us=20000 arinc.windows=2:10000,1:10000"
    cases = [
        ("p0", 20000, [("a", 1)], "not an ARINC 653 pool"),
        ("s", 20000, [], "1 to 64 windows"),
        ("s", 20000, [("a", 1)] * 65, "1 to 64 windows"),
        ("s", 20000, [("c", 1)], "unknown domain 'c'"),
        ("s", 20000, [("a", 0)], "window of a is 0 us"),
        ("s", 19999, [("a", 10000), ("b", 10000)], "longer than the major frame"),
    ]
    for pool, frame, windows, why in cases:
        with pytest.raises(ToolError, match=why):
            xen.arinc653_dom0(doms, pools, pool, frame, windows)


STAND_IN = Path(__file__).resolve().parents[2] / "guests" / "xen" / "arinc-dom0"
# What may locate code or data in the stand-in: PC-relative pages and the low 12 bits inside
# them, branches. Anything absolute (ABS64 in data, MOVW_UABS) would hold the link address, and
# Xen puts dom0 elsewhere.
PC_RELATIVE = re.compile(r"R_AARCH64_(ADR_PREL_PG_HI21|ADR_PREL_LO21|ADD_ABS_LO12_NC|"
                         r"LDST(8|16|32|64|128)_ABS_LO12_NC|CALL26|JUMP26|CONDBR19|TSTBR14|"
                         r"PREL32|PREL64|LD_PREL_LO19)$")


@pytest.mark.skipif(not shutil.which("clang") or not shutil.which("llvm-readelf"),
                    reason="needs clang and llvm-readelf")
@pytest.mark.parametrize("source", ["start.S", "arinc_dom0.c"])
def test_arinc_dom0_stand_in_is_position_independent(source, tmp_path):
    """Built as the guests' Makefile builds it, no relocation outside the debug sections may
    be absolute. (Its ABI structures' layouts are checked by _Static_assert when it builds.)"""
    obj = tmp_path / "x.o"
    subprocess.run(["clang", "--target=aarch64-none-elf", "-std=c11", "-ffreestanding",
                    "-fno-builtin", "-nostdlib", "-mgeneral-regs-only", "-mstrict-align", "-O2",
                    "-g", "-Wall", "-Wextra", "-Werror", "-c", str(STAND_IN / source), "-o",
                    str(obj)], check=True, timeout=120)
    out = subprocess.run(["llvm-readelf", "-r", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    section, relocs = None, []
    for line in out.splitlines():
        m = re.match(r"Relocation section '([^']+)'", line)
        if m:
            section = m.group(1)
        elif section and not section.startswith(".rela.debug") and \
                re.match(r"^[0-9a-f]{16} ", line):
            relocs.append((line.split()[2], line.split()[4], section))
    assert relocs, out
    # The Image header's image_size is a length the linker computes, not an address.
    absolute = [r for r in relocs if not PC_RELATIVE.match(r[0]) and r[1] != "_image_size"]
    assert absolute == [], out


def test_slices_lines_come_through_with_the_dom0_stand_in_on_the_console():
    """With the ARINC 653 dom0, Xen's console also carries dom0's own lines (unprefixed, from
    console_io) and Xen's switch of serial input to it: neither is a domU's, and the domUs'
    chunked lines still join into complete slices records."""
    from tern import results
    summary = ('noise-slices {"name":"long-name-' + "x" * 60 + '","start":100,"end":1000,'
               '"gaps":1,"kept":1,"ran":810,"gap_ticks":50}')
    assert len(summary) > xen.VPL011_CHUNK
    gap = '{"name":"long-name-' + "x" * 60 + '","i":0,"from":200,"to":290}'
    log = ["(XEN) *** Serial input to DOM0 (type 'CTRL-a' three times to switch input)",
           "ARINC-DOM0: schedule accepted: pool 1 frame_us 20000 windows 2 rc 0",
           f"(XEN) DOM2: noise-gap {gap}",
           f"(XEN) DOM2: {summary[:xen.VPL011_CHUNK]}",
           "ARINC-DOM0: a line of dom0's between the chunks",
           f"(XEN) DOM2: {summary[xen.VPL011_CHUNK:]}"]
    joiner = xen.GuestLines(["a", "b"])
    joined = [joiner.feed(line) for line in log]
    assert [j for j in joined if j] == [f"[b] noise-gap {gap}", f"[b] {summary}"]
    record = results.parse_slices([j or line for j, line in zip(joined, log)])
    assert list(record) == ["long-name-" + "x" * 60]
    assert record["long-name-" + "x" * 60]["complete"]
    assert record["long-name-" + "x" * 60]["gaps"] == [(200, 290)]



def test_run_xen_appends_extra_qemu_options_to_the_command_and_qemu_sh(tmp_path, monkeypatch):
    image = tmp_path / "g-xen.img"
    image.write_bytes(b"\0" * 16)
    monkeypatch.setattr(xen, "ensure_xen", lambda binary: Path("/xen"))
    monkeypatch.setattr(xen, "build_dtb", lambda *a, **k: tmp_path / "xen.dtb")
    seen = {}

    def run_qemu(command, timeout, **kw):
        seen["command"] = command
        lines = ["(XEN) DOM1: NOISE-DONE"]
        assert kw["stop_when"](lines[0])
        return runner.QemuRun(lines=lines, returncode=0, timed_out=False, stderr=[])
    monkeypatch.setattr(runner, "run_qemu", run_qemu)
    extra = ["-accel", "tcg,thread=single", "-D", "/tmp/fifo"]
    result = xen.run_xen([xen.Domain("g", image)], workdir=tmp_path / "w", qemu_args=extra)
    assert result.ok, result.explain()
    assert seen["command"][-4:] == extra
    assert (tmp_path / "w" / "qemu.sh").read_text().rstrip().endswith(" ".join(extra))
