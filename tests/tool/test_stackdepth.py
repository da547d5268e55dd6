"""tools/stackdepth.py: worst-case stack per entry point, from synthetic .su and objdump text."""

import stat
import textwrap

import pytest

from stackdepth import (StackError, analyse, merge_frames, parse_header, parse_objdump,
                        parse_su, run)


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
                      ("b", parse_su("arch/vgic.c:73:spi_owned\t0\tstatic\n"))])


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


def test_command_line_report_and_exit_status(tmp_path, capsys, monkeypatch):
    import stackdepth
    monkeypatch.setattr(stackdepth, "ENTRIES", ENTRIES)
    monkeypatch.setattr(stackdepth, "STACK_RESETS", RESETS)
    monkeypatch.setattr(stackdepth, "INDIRECT", {})
    su = []
    for name, text in SU.items():
        (tmp_path / f"{name}.c.su").write_text(text)
        su.append(str(tmp_path / f"{name}.c.su"))
    su.append(str(tmp_path / "no-functions.c.su"))        # absent: the file defines none
    header = tmp_path / "cpu.h"
    header.write_text("#define GUEST_FRAME_SIZE 272\n#define STACK_SIZE 4096\n")
    objdump = fake_objdump(tmp_path, IMAGE)
    out = tmp_path / "stack-usage.txt"

    argv = ["--elf", "tern.elf", "--header", str(header), "--objdump", str(objdump),
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
