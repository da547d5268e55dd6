"""tools/stackdepth.py: worst-case stack per entry point, from synthetic .su and objdump text."""

import dataclasses
import stat
import textwrap
from pathlib import Path

import pytest

import stackdepth
from stackdepth import (StackError, analyse, elf_arch, merge_frames, parse_header, report,
                        parse_objdump_arm64 as parse_objdump, parse_objdump_riscv64, parse_su,
                        run)

HYPERVISOR = Path(__file__).resolve().parents[2] / "hypervisor"


def dis(text):
    """objdump -d --no-show-raw-insn text, indented freely in the test."""
    return textwrap.dedent(text).strip("\n") + "\n"


# Two entry points: the boot path (top of the stack) and one vector (below the guest frame).
# boot.S enters `boot`; vectors.S calls `handler`.  A tail call, a call and a jump table.
IMAGE = dis("""
    build/tern.elf:	file format elf64-littleaarch64

    Disassembly of section .text:

    0000000040080000 <_start>:
    40080000:      	b	0x40080100 <boot>

    0000000040080004 <$d.1>:
    40080004:	00 00 00 00	.word	0x00000000

    0000000040080040 <vector>:
    40080040:      	sub	sp, sp, #272
    40080044:      	bl	0x40080200 <handler>
    40080048:      	b	0x40080060 <exit>

    0000000040080060 <exit>:
    40080060:      	eret

    0000000040080100 <boot>:
    40080100:      	stp	x29, x30, [sp, #-32]!
    40080104:      	bl	0x40080300 <work>
    40080108:      	b.ne	0x40080100 <boot>
    4008010c:      	bl	0x40080400 <reset_stack>

    0000000040080200 <handler>:
    40080200:      	stp	x29, x30, [sp, #-16]!
    40080204:      	adr	x10, #16
    40080208:      	ldrb	w11, [x9, x8]
    4008020c:      	add	x10, x10, x11, lsl #2
    40080210:      	br	x10
    40080214:      	ldp	x29, x30, [sp], #16
    40080218:      	b	0x40080300 <work>

    0000000040080300 <work>:
    40080300:      	sub	sp, sp, #96
    40080304:      	bl	0x40080340 <leaf>
    40080308:      	cbz	x0, 0x40080310 <work+0x10>
    4008030c:      	ret

    0000000040080340 <leaf>:
    40080340:      	ret

    0000000040080400 <reset_stack>:
    40080400:      	mov	sp, x1
    40080404:      	b	0x40080100 <boot>
""")

SU = {
    "boot": "core/boot.c:10:boot\t32\tstatic\n",
    "main": "core/main.c:5:handler\t16\tstatic\ncore/main.c:20:work\t96\tstatic\n"
            "core/main.c:40:leaf\t16\tstatic\n",
}
ENTRIES = {"boot": "top", "handler": "guest"}
RESETS = {"reset_stack": "back to the top"}


def frames_of(su=SU):
    return merge_frames((name, parse_su(text, name)) for name, text in su.items())


def check(image=IMAGE, su=SU, stack=16384, guest=272, entries=ENTRIES, indirect=None,
          resets=None):
    return {r.entry: r for r in analyse(frames_of(su), parse_objdump(image), stack, guest,
                                        entries=entries, indirect=indirect or {},
                                        resets=RESETS if resets is None else resets)}


def test_su_lines_clang_and_gcc_style():
    frames = parse_su("core/a.c:16:f\t48\tstatic\ncore/a.c:20:3:g\t0\tdynamic,bounded\n\n")
    assert (frames["f"].size, frames["f"].qualifier, frames["f"].where) == (48, "static", "core/a.c:16")
    assert (frames["g"].size, frames["g"].qualifier) == (0, "dynamic,bounded")


def test_su_malformed_line_is_an_error():
    with pytest.raises(StackError, match="x.su:2: not a stack-usage line"):
        parse_su("core/a.c:1:f\t8\tstatic\ncore/a.c:2:g 8 static\n", "x.su")


def test_same_function_name_in_two_files_is_refused():
    with pytest.raises(StackError, match="spi_owned is defined twice"):
        merge_frames([("a", parse_su("core/config.c:43:spi_owned\t16\tstatic\n")),
                      ("b", parse_su("arch/vgicv3.c:73:spi_owned\t0\tstatic\n"))])


def test_objdump_branches():
    fns = parse_objdump(IMAGE)
    assert "$d.1" not in fns
    assert fns["boot"].calls == ["work", "reset_stack"]
    assert fns["boot"].tails == []                    # a branch to itself is a loop
    assert fns["vector"].calls == ["handler"] and fns["vector"].tails == ["exit"]
    assert fns["handler"].tails == ["work"]
    assert fns["handler"].indirect_tails == 0         # adr + add + br: a jump table
    assert fns["work"].calls == ["leaf"] and fns["work"].tails == []


def test_objdump_with_raw_bytes_and_indirect_calls():
    fns = parse_objdump(dis("""
        0000000040083200 <mmio_emulate>:
        40083254: 05 01 40 f9  	ldr	x5, [x8]
        40083258: a0 00 3f d6  	blr	x5
        4008325c: a0 00 1f d6  	br	x5
        40083260: 00 00 00 94  	bl	0x40083300 <other+0x8>
    """))
    f = fns["mmio_emulate"]
    assert (f.indirect_calls, f.indirect_tails) == (1, 1)
    assert f.strays == ["bl other+0x8"]


def test_depths_frames_and_tail_calls():
    r = check()
    # boot: its frame, then work's and leaf's below it; reset_stack ends a chain.
    assert r["boot"].below == 0 and r["boot"].chain.depth == 32 + 96 + 16
    assert [n for n, _ in r["boot"].chain.path] == ["boot", "work", "leaf"]
    # handler releases its 16 bytes before the tail call: work's chain alone, under the guest frame.
    assert r["handler"].below == 272 and r["handler"].chain.depth == 96 + 16
    assert r["handler"].total == 272 + 96 + 16


def test_idle_entries_leave_the_guest_frame_free():
    """The boot and idle code run below the guest frame's place, which they must not use."""
    r = check(entries={"boot": "idle", "handler": "guest"})
    assert r["boot"].below == 272 and r["boot"].total == 272 + 32 + 96 + 16


def test_recursion_is_reported_with_its_cycle():
    image = IMAGE.replace("40080304:      	bl	0x40080340 <leaf>",
                          "40080304:      	bl	0x40080340 <leaf>\n"
                          "40080306:      	bl	0x40080200 <handler>")
    with pytest.raises(StackError, match=r"recursion, so no bound: work -> handler -> work"):
        check(image)


def test_direct_recursion_is_reported():
    image = IMAGE.replace("40080340:      	ret", "40080340:      	bl	0x40080340 <leaf>")
    with pytest.raises(StackError, match=r"recursion, so no bound: leaf -> leaf"):
        check(image)


def test_over_budget_chain_fails():
    with pytest.raises(StackError, match=r"handler needs 384 bytes of 300: handler \(0\) -> work \(96\) -> leaf \(16\)"):
        check(stack=300)
    assert check(stack=384)["handler"].total == 384   # exactly full is within budget


def test_nested_entry_sits_below_the_deepest_other():
    image = IMAGE + dis("""
        0000000040080500 <panic_vector>:
        40080500:      	bl	0x40080600 <panic>

        0000000040080600 <panic>:
        40080600:      	ret
    """)
    su = dict(SU, panic="arch/cpu.c:9:panic\t48\tstatic\n")
    r = check(image, su, entries=dict(ENTRIES, panic="nested"))
    assert r["panic"].below == r["handler"].total + 272
    assert r["panic"].total == 272 + 96 + 16 + 272 + 48
    assert r["panic"].on_top_of == "handler"


def test_panic_entry_runs_on_its_own_stack_and_is_held_to_its_size():
    # The exception entry leaves the faulting stack (it may be the fault: a stack run into its
    # guard page), so the report counts from the top of the panic stack, not below the rest.
    image = IMAGE + dis("""
        0000000040080500 <panic_vector>:
        40080500:      	bl	0x40080600 <panic>

        0000000040080600 <panic>:
        40080600:      	bl	0x40080300 <work>
        40080604:      	ret
    """)
    su = dict(SU, panic="arch/cpu.c:9:panic\t48\tstatic\n")
    entries = dict(ENTRIES, panic="panic")
    args = (frames_of(su), parse_objdump(image), 16384, 272)
    r = {x.entry: x for x in analyse(*args, entries=entries, indirect={}, resets=RESETS,
                                     panic_stack_size=4096)}
    assert (r["panic"].below, r["panic"].total, r["panic"].stack) == (272, 272 + 48 + 96 + 16, 4096)
    assert r["handler"].stack == 16384 and not r["panic"].on_top_of
    with pytest.raises(StackError, match=r"panic needs 432 bytes of 400"):
        analyse(*args, entries=entries, indirect={}, resets=RESETS, panic_stack_size=400)
    with pytest.raises(StackError, match="defines no PANIC_STACK_SIZE"):
        analyse(*args, entries=entries, indirect={}, resets=RESETS)
    lines = report(list(r.values()), 16384, 272)
    assert any(line.split()[0] == "panic" and line.endswith("of the 4096-byte panic stack")
               for line in lines[2:])


def test_unlisted_indirect_call_is_an_error_and_the_table_resolves_it():
    image = IMAGE.replace("40080340:      	ret", "40080340:      	blr	x8")
    with pytest.raises(StackError, match="leaf calls through a pointer"):
        check(image)
    image += dis("""
        0000000040080700 <deep>:
        40080700:      	ret
    """)
    su = dict(SU, deep="core/x.c:1:deep\t1000\tstatic\n")
    r = check(image, su, indirect={"leaf": ("deep",)})
    assert r["boot"].chain.depth == 32 + 96 + 16 + 1000


def test_stack_reset_must_be_listed():
    with pytest.raises(StackError, match="no stack figure for reset_stack"):
        check(resets={})


def test_unbounded_frame_is_an_error():
    su = dict(SU, main=SU["main"].replace("work\t96\tstatic", "work\t96\tdynamic"))
    with pytest.raises(StackError, match="work .* unbounded size"):
        check(su=su)


def test_entry_points_must_match_what_the_assembly_enters():
    with pytest.raises(StackError, match="not listed entry points: handler"):
        check(entries={"boot": "top"})
    with pytest.raises(StackError, match="does not enter: work"):
        check(entries=dict(ENTRIES, work="top"))


def test_header_constants():
    consts = parse_header("#define STACK_SIZE      16384\n#define GUEST_FRAME_SIZE 272   /* x */\n"
                          "#define CPU_ID 0x2010\n#define NOT_A_NUMBER FOO\n")
    assert consts == {"STACK_SIZE": 16384, "GUEST_FRAME_SIZE": 272, "CPU_ID": 0x2010}


def fake_objdump(tmp_path, image):
    (tmp_path / "image.txt").write_text(image)
    tool = tmp_path / "objdump"
    tool.write_text(f"#!/bin/sh\ncat '{tmp_path / 'image.txt'}'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


def fake_elf(path, machine):
    """The first 20 bytes of a little-endian ELF64 header: enough for its e_machine."""
    path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + (2).to_bytes(2, "little")
                     + machine.to_bytes(2, "little"))
    return path


def test_isa_from_the_elf_header(tmp_path):
    assert elf_arch(fake_elf(tmp_path / "a.elf", 183)) == "arm64"
    assert elf_arch(fake_elf(tmp_path / "r.elf", 243)) == "riscv64"
    with pytest.raises(StackError, match="no tables for ELF machine 62"):
        elf_arch(fake_elf(tmp_path / "x.elf", 62))
    (tmp_path / "t.txt").write_text("not an image")
    with pytest.raises(StackError, match="not an ELF file"):
        elf_arch(tmp_path / "t.txt")


def test_command_line_report_and_exit_status(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(stackdepth.ISAS, "arm64", dataclasses.replace(
        stackdepth.ISAS["arm64"], entries=ENTRIES, resets=RESETS, indirect={}))
    su = []
    for name, text in SU.items():
        (tmp_path / f"{name}.c.su").write_text(text)
        su.append(str(tmp_path / f"{name}.c.su"))
    su.append(str(tmp_path / "no-functions.c.su"))        # absent: the file defines none
    header = tmp_path / "cpu.h"
    header.write_text("#define GUEST_FRAME_SIZE 272\n#define STACK_SIZE 4096\n")
    objdump = fake_objdump(tmp_path, IMAGE)
    out = tmp_path / "stack-usage.txt"

    elf = fake_elf(tmp_path / "tern.elf", 183)
    argv = ["--elf", str(elf), "--header", str(header), "--objdump", str(objdump),
            "--report", str(out)] + su
    assert run(argv) == 0
    printed = capsys.readouterr().out
    assert "384" in printed and "deepest: handler (0) -> work (96) -> leaf (16)" in printed
    assert "boot: boot (32) -> work (96) -> leaf (16)" in out.read_text()

    header.write_text("#define GUEST_FRAME_SIZE 272\n#define STACK_SIZE 256\n")
    out.unlink()
    assert run(argv) == 1
    assert "stack overflow possible" in capsys.readouterr().err
    assert not out.exists()                                # a failed check leaves no report


# riscv64: the same program as IMAGE, as llvm-objdump prints a riscv64 image.  Calls and tail
# calls from C are auipc + jalr pairs without a target annotation; the assembler's local
# labels (.Lpcrel_hi*, .LBB*) show as symbols inside functions.
RV_IMAGE = dis("""
    build/riscv64/tern.elf:	file format elf64-littleriscv

    Disassembly of section .text:

    0000000080200000 <_start>:
    80200000:      	auipc	ra, 0
    80200004:      	jalr	64(ra)
    80200008:      	auipc	t1, 0
    8020000c:      	jr	248(t1)

    0000000080200010 <.Lpcrel_hi0>:
    80200010:      	auipc	t0, 1
    80200014:      	addi	t0, t0, -16
    80200018:      	j	0x80200010 <.Lpcrel_hi0>

    0000000080200040 <set_stack>:
    80200040:      	addi	sp, t0, -272
    80200044:      	ret

    0000000080200060 <trap_entry>:
    80200060:      	mv	a0, sp
    80200062:      	jal	0x80200200 <handler>
    80200066:      	j	0x80200080 <guest_enter>

    0000000080200080 <guest_enter>:
    80200080:      	sret

    0000000080200100 <boot>:
    80200100:      	addi	sp, sp, -32
    80200102:      	sd	ra, 24(sp)
    80200104:      	auipc	ra, 0
    80200108:      	jalr	508(ra)
    8020010c:      	bnez	a0, 0x80200100 <boot>
    80200110:      	auipc	ra, 0
    80200114:      	jalr	752(ra)

    0000000080200200 <handler>:
    80200200:      	addi	sp, sp, -16
    80200202:      	slli	a0, a0, 3

    0000000080200204 <.LBB1_1>:
    80200204:      	auipc	a1, 1
    80200208:      	addi	a1, a1, -512
    8020020c:      	add	a0, a0, a1
    8020020e:      	ld	a0, 0(a0)
    80200210:      	jr	a0
    80200212:      	addi	sp, sp, 16
    80200214:      	auipc	t1, 0
    80200218:      	jr	236(t1)

    0000000080200300 <work>:
    80200300:      	addi	sp, sp, -96
    80200304:      	jal	0x80200340 <leaf>
    80200308:      	beqz	a0, 0x80200310 <.LBB2_1>
    8020030c:      	ret

    0000000080200310 <.LBB2_1>:
    80200310:      	<unknown>
    80200314:      	ret

    0000000080200340 <leaf>:
    80200340:      	ret

    0000000080200400 <reset_stack>:
    80200400:      	mv	sp, a1
    80200402:      	j	0x80200100 <boot>
""")


def rv_check(image=RV_IMAGE, su=SU, stack=16384, entries=ENTRIES, indirect=None, assembly=None):
    return {r.entry: r for r in analyse(frames_of(su), parse_objdump_riscv64(image), stack, 272,
                                        entries=entries, indirect=indirect or {}, resets=RESETS,
                                        assembly=assembly or {})}


def test_riscv64_objdump_branches():
    fns = parse_objdump_riscv64(RV_IMAGE)
    assert not [name for name in fns if name.startswith(".L")]
    assert fns["_start"].calls == ["set_stack"] and fns["_start"].tails == ["boot"]
    assert fns["trap_entry"].calls == ["handler"] and fns["trap_entry"].tails == ["guest_enter"]
    assert fns["boot"].calls == ["work", "reset_stack"]
    assert fns["boot"].tails == []                    # a branch to its own start is a loop
    assert fns["handler"].tails == ["work"]           # auipc t1 + jr: a tail call
    assert fns["handler"].indirect_tails == 0         # auipc + addi + add + ld + jr: a jump table
    assert fns["work"].calls == ["leaf"] and fns["work"].tails == []
    assert fns["reset_stack"].tails == ["boot"]
    assert not any(f.strays or f.indirect_calls or f.indirect_tails for f in fns.values())


def test_riscv64_auipc_pairs_either_way_and_branches_out():
    """The 20-bit upper immediate is printed unsigned: 1048575 is -1, a call 4 KiB back."""
    fns = parse_objdump_riscv64(RV_IMAGE + dis("""
        0000000080201000 <far>:
        80201000:      	auipc	ra, 1048575
        80201004:      	jalr	64(ra)
        80201008:      	auipc	t1, 1048575
        8020100c:      	jalr	zero, 248(t1)
        80201010:      	auipc	t0, 0
        80201014:      	jalr	t0, -3280(t0)
        80201018:      	bltu	a0, a1, 0x80200340 <leaf>
        8020101c:      	jal	zero, 0x80200340 <leaf>
    """))
    assert fns["far"].calls == ["set_stack", "leaf"]  # t0: the alternate link register
    assert fns["far"].tails == ["boot", "leaf", "leaf"]


def test_riscv64_indirect_calls_returns_and_strays():
    fns = parse_objdump_riscv64(dis("""
        0000000080203000 <mmio_emulate>:
        80203000:      	ld	a5, 16(a4)
        80203004:      	jalr	a5
        80203006:      	jalr	t0, 0(a5)
        8020300a:      	jr	ra
        8020300c:      	ret
        8020300e:      	jr	a5
        80203010:      	jal	0x80203304 <other+0x4>
        80203014:      	bnez	a0, 0x80203302 <other+0x2>
        80203018:      	auipc	ra, 0
        8020301c:      	jalr	-4120(ra)

        0000000080203300 <other>:
        80203300:      	ret
    """))
    f = fns["mmio_emulate"]
    assert (f.indirect_calls, f.indirect_tails) == (2, 1)
    assert f.strays == ["jal other+0x4", "bnez other+0x2", "auipc+jalr 0x80202000"]


def test_riscv64_depths_and_tail_calls():
    r = rv_check()
    assert r["boot"].chain.depth == 32 + 96 + 16
    assert [n for n, _ in r["boot"].chain.path] == ["boot", "work", "leaf"]
    assert r["handler"].total == 272 + 96 + 16       # its frame is gone before the tail call


def test_riscv64_recursion_is_reported():
    image = RV_IMAGE.replace("80200304:      	jal	0x80200340 <leaf>",
                             "80200304:      	jal	0x80200340 <leaf>\n"
                             "80200306:      	auipc	ra, 0\n"
                             "8020030a:      	jalr	-262(ra)")
    assert parse_objdump_riscv64(image)["work"].calls == ["leaf", "handler"]
    with pytest.raises(StackError, match=r"recursion, so no bound: work -> handler -> work"):
        rv_check(image)


def test_riscv64_indirect_jalr_unlisted_is_an_error_and_listed_resolves():
    image = RV_IMAGE.replace("80200340:      	ret", "80200340:      	jalr	a5") + dis("""
        0000000080200700 <deep>:
        80200700:      	ret
    """)
    with pytest.raises(StackError, match="leaf calls through a pointer"):
        rv_check(image)
    su = dict(SU, deep="core/x.c:1:deep\t1000\tstatic\n")
    assert rv_check(image, su, indirect={"leaf": ("deep",)})["boot"].chain.depth == \
        32 + 96 + 16 + 1000


def test_riscv64_assembly_called_from_c_needs_a_figure():
    image = RV_IMAGE.replace("80200340:      	ret", "80200340:      	jal	0x80200700 <fetch>") + dis("""
        0000000080200700 <fetch>:
        80200700:      	csrr	t2, stvec
        80200704:      	ret
    """)
    with pytest.raises(StackError, match="no stack figure for fetch"):
        rv_check(image)
    r = rv_check(image, assembly={"fetch": (8, "boot.S")})
    assert r["boot"].chain.path[-1] == ("fetch", 8)
    assert r["boot"].chain.depth == 32 + 96 + 16 + 8


def built_su(build):
    """The .su files of one build directory, not those of the builds nested in it."""
    nested = [d for d in build.iterdir() if d.is_dir() and (d / "tern.elf").exists()]
    return [str(p) for p in build.rglob("*.su")
            if not any(n in p.parents for n in nested) and "lint" not in p.parts]


@pytest.mark.parametrize("arch, build", [("arm64", "build/arm64"), ("riscv64", "build/riscv64")])
def test_the_built_image(arch, build, tmp_path, capsys):
    """The check on the image `make -s all` built, if it did: every entry point bounded."""
    build = HYPERVISOR / build
    if not (build / "tern.elf").exists():
        pytest.skip(f"{build}/tern.elf not built")
    out = tmp_path / "stack-usage.txt"
    argv = ["--elf", str(build / "tern.elf"), "--report", str(out),
            "--header", str(HYPERVISOR / "arch" / arch / "include" / "arch" / "cpu.h")]
    assert run(argv + built_su(build)) == 0, capsys.readouterr().err
    report = out.read_text()
    for entry in stackdepth.ISAS[arch].entries:
        assert f"\n  {entry}: " in report
