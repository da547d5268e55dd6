"""tern survives any input: no traceback, no hang, no memory blow-up, no file of the
user's overwritten, and every failure one line with a documented exit status.

Each test runs the `tern` command in a child with a deadline (a FIFO opened for reading
would wait for ever) and, where reading too much is the danger, a cap on its address
space (a whole multi-GiB image read into memory fails with MemoryError under it).
No QEMU runs here: where a command would start one, it is refused before that.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from tern import cli, runner
from tern.errors import ToolError
from tern.image import ELF_HEADER, ELF_PHDR, inspect
from tern_test_files import partition, write_image, write_toml

LAUNCHER = str(Path(__file__).resolve().parents[2] / "tern")
MiB = 1 << 20
GiB = 1 << 30
# Enough address space for tern itself (it needs about 60 MiB), far too little for a
# GiB-sized file read whole.
ADDRESS_SPACE = 256 * MiB
EM_AARCH64 = 183

needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None,
                                reason="needs qemu-system-aarch64")

# Starts Python with its address space capped, then runs tern in it.
CAPPED = ("import os, resource, sys; "
          "resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2); "
          "os.execv(sys.executable, [sys.executable] + sys.argv[2:])")


def tern(*args, cwd, timeout=30, address_space=None, stdout=subprocess.PIPE):
    """Run `tern ARGS` in `cwd`; a child that outlives `timeout` fails the test."""
    command = [sys.executable, LAUNCHER, *map(str, args)]
    if address_space:
        command = [sys.executable, "-c", CAPPED, str(address_space)] + command[1:]
    return subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def one_error(proc, status=2):
    """The one line a failed tern printed (asserting it was one line, the status, and no
    traceback); returned without its `tern: error: ` prefix."""
    assert proc.returncode == status, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.split("\n")
    assert len(lines) == 2 and lines[1] == "", proc.stderr[-3000:]
    assert lines[0].startswith("tern: error: "), lines[0]
    assert all(ch.isprintable() for ch in lines[0]), repr(lines[0])
    return lines[0][len("tern: error: "):]


def sparse_elf(path, file_size, segment_size, paddr=0x4008_0000):
    """An AArch64 ELF of `file_size` bytes, almost all of it a hole: one PT_LOAD segment of
    `segment_size` bytes (a few non-zero bytes at its start), the rest of the file after it
    never loaded (debug information, say)."""
    data_off = 0x1000
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    head = ELF_HEADER.pack(ident, 2, EM_AARCH64, 1, paddr, ELF_HEADER.size, 0, 0,
                           ELF_HEADER.size, ELF_PHDR.size, 1, 0, 0, 0)
    head += ELF_PHDR.pack(1, 5, data_off, paddr, paddr, segment_size, segment_size, 0x1000)
    with open(path, "wb") as f:
        f.write(head)
        f.seek(data_off)
        f.write(b"\x14\x00\x00\x14" * 4)       # the segment's first bytes: not a hole
        f.truncate(file_size)
    return path


# --- paths that are not regular files ---------------------------------------------------------

def make_fifo(path):
    os.mkfifo(path)


def make_directory(path):
    path.mkdir()


def make_device(path):
    path.symlink_to("/dev/zero")


def make_loop(path):
    path.symlink_to(path.name)                 # a link to itself


KINDS = [(make_fifo, "is a FIFO, not a file"), (make_directory, "is a directory, not a file"),
         (make_device, "is a character device, not a file"),
         (make_loop, "is a symbolic link loop")]
KIND_IDS = ["fifo", "directory", "device", "loop"]


@pytest.mark.parametrize("make, problem", KINDS, ids=KIND_IDS)
def test_a_description_that_is_not_a_regular_file(tmp_path, make, problem):
    # A FIFO would block open() for ever, /dev/zero fill memory until MemoryError.
    make(tmp_path / "sys.toml")
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == f"sys.toml: {problem}"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_given_as_the_description(tmp_path, device):
    proc = tern("check", device, cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == f"{device}: is a character device, not a file"


def test_a_description_too_big_to_be_one(tmp_path):
    with open(tmp_path / "sys.toml", "wb") as f:
        f.truncate(4 * GiB)                    # sparse: costs no disk
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == "sys.toml: is 4 GiB, more than the 1 MiB tern reads"


@pytest.mark.parametrize("make, problem", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("field, text", [
    ("partition[0].image", partition(image="thing")),
    ("partition[0].initrd", partition(initrd="thing")),
    ("board.pci[0].disk", '[board]\npci = [{model = "virtio-blk", disk = "thing"}]\n'
                          + partition()),
], ids=["image", "initrd", "disk"])
def test_a_file_in_the_description_that_is_not_a_regular_file(tmp_path, stub_image, make,
                                                              problem, field, text):
    make(tmp_path / "thing")
    write_toml(tmp_path, text)
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == f"sys.toml: {field}: {problem}: thing"


@pytest.mark.parametrize("make, problem", KINDS, ids=KIND_IDS)
def test_a_hypervisor_that_is_not_a_regular_file(tmp_path, stub_image, make, problem):
    make(tmp_path / "hyp")
    write_toml(tmp_path, partition())
    proc = tern("run", "sys.toml", "--hypervisor", "hyp", "--workdir", "work", "--timeout", 5,
                cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == f"hypervisor image: {problem}: hyp"
    assert not (tmp_path / "work").exists()


@pytest.mark.parametrize("make, problem", KINDS, ids=KIND_IDS)
def test_a_native_image_that_is_not_a_regular_file(tmp_path, make, problem):
    make(tmp_path / "guest")
    proc = tern("native", "guest", "--workdir", "work", "--timeout", 5, cwd=tmp_path,
                address_space=ADDRESS_SPACE)
    assert one_error(proc) == f"image: {problem}: guest"
    assert not (tmp_path / "work").exists()


# --- big files --------------------------------------------------------------------------------

def test_a_huge_elf_is_refused_from_its_headers(tmp_path):
    # 6 GiB of file, 5 GiB of it one segment: refused from the program headers, in a
    # process that could not hold the file once (it used to be read whole, twice).
    sparse_elf(tmp_path / "big.elf", 6 * GiB, 5 * GiB)
    write_toml(tmp_path, partition(image="big.elf"))
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == \
        "sys.toml: partition[0].image: big.elf needs 5 GiB, more than the partition's 64 MiB of RAM"


def test_a_huge_image_is_refused_by_its_size(tmp_path):
    write_image(tmp_path / "big.img")
    with open(tmp_path / "big.img", "r+b") as f:
        f.truncate(5 * GiB)
    write_toml(tmp_path, partition(image="big.img"))
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert one_error(proc) == \
        "sys.toml: partition[0].image: big.img is 5 GiB, more than the partition's 64 MiB of RAM"


def test_a_big_file_with_a_small_segment_is_read_no_further_than_its_headers(tmp_path):
    # A 4 GiB ELF (debug information, say) whose one segment is 4 KiB: checked in a
    # process that could not hold it.
    sparse_elf(tmp_path / "g.elf", 4 * GiB, 4096)
    write_toml(tmp_path, partition(image="g.elf"))
    proc = tern("check", "sys.toml", cwd=tmp_path, address_space=ADDRESS_SPACE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("sys.toml: ok: 1 partition")


FLATTEN = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tern import build, config, layout
system = config.load_system(Path(sys.argv[2]))
build.prepare_system(system, layout.place(system), Path(sys.argv[3]), Path(sys.argv[4]))
"""


@pytest.mark.skipif(shutil.which("dtc") is None, reason="needs dtc")
def test_an_elf_is_flattened_in_chunks(tmp_path, repo_root):
    # A 384 MiB segment, flattened by a process with 256 MiB of address space: streamed
    # (it used to be read whole, then copied into a blob of its own size), and the
    # flattened copy keeps the segment's hole a hole.
    size = 384 * MiB
    sparse_elf(tmp_path / "g.elf", 0x1000 + size, size)
    write_toml(tmp_path, partition(memory="1GiB", image="g.elf"))
    hypervisor = write_image(tmp_path / "tern.img")
    command = [sys.executable, "-c", CAPPED, str(ADDRESS_SPACE), "-c", FLATTEN,
               str(repo_root / "tools"), str(tmp_path / "sys.toml"), str(tmp_path / "work"),
               str(hypervisor)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    flat = tmp_path / "work" / "rt.img"
    assert flat.stat().st_size == size
    assert flat.stat().st_blocks * 512 < 16 * MiB
    with open(flat, "rb") as f:
        assert f.read(16) == b"\x14\x00\x00\x14" * 4
        f.seek(size - 4096)
        assert f.read() == bytes(4096)
    assert [p.name for p in (tmp_path / "work").iterdir() if p.name.endswith(".tmp")] == []


def test_inspect_reads_headers_only(tmp_path):
    path = sparse_elf(tmp_path / "g.elf", 2 * GiB, 4096)
    tracemalloc.start()
    try:
        img = inspect(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (img.kind, img.file_size, img.mem_size) == ("ELF", 2 * GiB, 4096)
    assert peak < MiB


# --- tracebacks -------------------------------------------------------------------------------

@pytest.mark.parametrize("nested", ["[" * 600 + "]" * 600, "{a = " * 600 + "1" + "}" * 600],
                         ids=["arrays", "inline-tables"])
def test_deeply_nested_toml(tmp_path, stub_image, nested):
    write_toml(tmp_path, f"[board]\ncpus = {nested}\n" + partition())
    assert one_error(tern("check", "sys.toml", cwd=tmp_path)) == \
        "sys.toml: TOML syntax: arrays or tables nested too deeply"


def test_a_number_with_thousands_of_digits(tmp_path, stub_image):
    write_toml(tmp_path, f"[board]\ncpus = {'9' * 5000}\n" + partition())
    assert one_error(tern("check", "sys.toml", cwd=tmp_path)) == \
        "sys.toml: TOML syntax: a number too long to read (more than 4300 digits)"


@pytest.mark.parametrize("value", ['"' + "9" * 5000 + 'MiB"', "9" * 4000])
def test_a_size_with_thousands_of_digits(tmp_path, stub_image, value):
    write_toml(tmp_path, partition(memory=None, raw=f"memory = {value}"))
    message = one_error(tern("check", "sys.toml", cwd=tmp_path))
    assert message.startswith("sys.toml: partition[0].memory: ")
    assert len(message) < 300


@pytest.mark.parametrize("value, shown", [("inf", "inf"), ("1e400", "1e400"), ("nan", "nan"),
                                          ("-inf", "-inf"), ("0", "0"), ("1e9", "1e9")])
def test_a_timeout_that_is_no_number_of_seconds(tmp_path, stub_image, value, shown):
    # inf passed the old check, and the run overflowed the clock once QEMU was running.
    proc = tern("native", stub_image, f"--timeout={value}", "--workdir", "work", cwd=tmp_path)
    assert one_error(proc) == (f"argument --timeout: must be more than 0 and at most "
                               f"604800 s (got {shown}) (see tern native --help)")
    assert not (tmp_path / "work").exists()


def test_options_tern_cannot_read(tmp_path, stub_image):
    assert one_error(tern("native", stub_image, "--icount", "x", cwd=tmp_path)) == \
        "argument --icount: not a whole number: x (see tern native --help)"
    assert one_error(tern("native", stub_image, "--cpus", "\x1b[2J", cwd=tmp_path)) == \
        'argument --cpus: not a whole number: "\\u001B[2J" (see tern native --help)'
    assert one_error(tern("frobnicate", cwd=tmp_path)).startswith(
        "argument COMMAND: invalid choice: 'frobnicate'")
    assert one_error(tern(cwd=tmp_path)) == \
        "the following arguments are required: COMMAND (see tern --help)"


@pytest.mark.parametrize("make, problem", [
    (lambda p: p.write_text("mine"), "work: is a file, not a directory"),
    (lambda p: os.mkfifo(p), "work: is a FIFO, not a directory"),
], ids=["file", "fifo"])
def test_a_workdir_that_is_not_a_directory(tmp_path, stub_image, make, problem):
    make(tmp_path / "work")
    proc = tern("native", stub_image, "--workdir", "work", "--timeout", 5, cwd=tmp_path)
    assert one_error(proc) == f"work directory {problem}"


def test_a_workdir_that_cannot_be_created(tmp_path, stub_image):
    (tmp_path / "file").write_text("mine")
    proc = tern("native", stub_image, "--workdir", "file/work", "--timeout", 5, cwd=tmp_path)
    assert one_error(proc) == \
        "work directory file/work: cannot create it (a parent is not a directory)"
    assert (tmp_path / "file").read_text() == "mine"


def test_a_closed_output_ends_tern_as_sigpipe_would(tmp_path, stub_image):
    write_toml(tmp_path, partition())
    read, write = os.pipe()
    os.close(read)                             # nobody will read what `tern check` prints
    try:
        proc = tern("check", "sys.toml", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    assert one_error(proc, 128 + signal.SIGPIPE) == "output closed (broken pipe)"


def test_a_bug_in_tern_is_one_line_and_status_70(tmp_path, monkeypatch, capsys):
    def broken(args):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "cmd_check", broken)
    assert cli.main(["check", "x.toml"]) == 70
    assert capsys.readouterr().err == \
        "tern: error: internal error: KeyError: 'oops' (--debug shows where)\n"
    assert cli.main(["check", "x.toml", "--debug"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and "KeyError: 'oops'" in err
    assert err.endswith("\ntern: error: internal error: KeyError: 'oops' (--debug shows where)\n")


def test_main_puts_the_signal_handlers_back():
    before = {s: signal.getsignal(s) for s in cli.ENDING_SIGNALS}
    cli.main(["check", "/nonexistent/x.toml"])
    assert {s: signal.getsignal(s) for s in cli.ENDING_SIGNALS} == before


# --- the work directory: tern writes only files it created ------------------------------------

@needs_qemu
def test_a_run_does_not_overwrite_the_users_image(tmp_path):
    # The user's ELF is mine/rt.img; `--workdir mine` used to flatten it over itself.
    mine = tmp_path / "mine"
    mine.mkdir()
    sparse_elf(mine / "rt.img", 0x2000, 0x1000)
    before = (mine / "rt.img").read_bytes()
    write_toml(tmp_path, partition(image="mine/rt.img"))
    hypervisor = write_image(tmp_path / "tern.img")
    proc = tern("run", "sys.toml", "--workdir", "mine", "--hypervisor", hypervisor,
                "--timeout", 3, cwd=tmp_path)
    assert one_error(proc) == ("work directory mine: not empty, and not one tern made (tern "
                               "writes only in a new or empty directory, or one it made before)")
    assert (mine / "rt.img").read_bytes() == before
    assert sorted(p.name for p in mine.iterdir()) == ["rt.img"]


@needs_qemu
def test_an_image_inside_terns_own_workdir_is_not_overwritten(tmp_path):
    work = runner.make_workdir(tmp_path / "work")
    sparse_elf(work / "rt.img", 0x2000, 0x1000)
    before = (work / "rt.img").read_bytes()
    write_toml(tmp_path, partition(image="work/rt.img"))
    hypervisor = write_image(tmp_path / "tern.img")
    proc = tern("run", "sys.toml", "--workdir", "work", "--hypervisor", hypervisor,
                "--timeout", 3, cwd=tmp_path)
    assert one_error(proc) == (
        "sys.toml: partition[0].image: work/rt.img is in the work directory, "
        f"where the run writes its own rt.img: move it, or choose another --workdir")
    assert (work / "rt.img").read_bytes() == before


def test_make_workdir_takes_only_what_is_terns(tmp_path, monkeypatch):
    fresh = runner.make_workdir(tmp_path / "a" / "b")
    assert (fresh / runner.WORKDIR_MARKER).is_file()
    (fresh / "serial.log").write_text("old run")
    assert runner.make_workdir(fresh) == fresh              # tern's own: taken again
    (tmp_path / "empty").mkdir()
    assert (runner.make_workdir(tmp_path / "empty") / runner.WORKDIR_MARKER).is_file()
    (tmp_path / "users").mkdir()
    (tmp_path / "users" / "notes.txt").write_text("mine")
    with pytest.raises(ToolError, match="not empty, and not one tern made"):
        runner.make_workdir(tmp_path / "users")
    assert os.listdir(tmp_path / "users") == ["notes.txt"]
    monkeypatch.setattr(runner, "RUN_DIR", tmp_path / "runs")
    default = runner.make_workdir()
    assert default.parent == tmp_path / "runs" and (default / runner.WORKDIR_MARKER).is_file()


def test_files_are_replaced_not_written_through(tmp_path):
    # A link in tern's directory to someone's file: replacing the name leaves the file be.
    from tern.files import create_text, write_new
    (tmp_path / "theirs").write_text("theirs")
    (tmp_path / "config.bin").symlink_to(tmp_path / "theirs")
    (tmp_path / "serial.log").symlink_to(tmp_path / "theirs")
    write_new(tmp_path / "config.bin", b"blob")
    with create_text(tmp_path / "serial.log") as log:
        log.write("line\n")
    assert (tmp_path / "theirs").read_text() == "theirs"
    assert (tmp_path / "config.bin").read_bytes() == b"blob"
    assert not (tmp_path / "config.bin").is_symlink()
    assert (tmp_path / "serial.log").read_text() == "line\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.bin", "serial.log", "theirs"]


# --- sizes: ASCII digits and the documented units only ---------------------------------------

@pytest.mark.parametrize("value, shown", [
    (r"64MiB\n", r"64MiB\n"),                   # a trailing newline
    (r"\uff16\uff14MiB", "\uff16\uff14MiB"),       # fullwidth digits, which \d takes for 64
    (r"\u0664\u0660MiB", "\u0664\u0660MiB"),       # Arabic-Indic digits
    (r"64\u00a0MiB", r"64\u00A0MiB"),            # a no-break space
    ("64 MB", "64 MB"), ("64mib", "64mib"),
])
def test_a_size_in_other_digits_or_units(tmp_path, stub_image, value, shown):
    write_toml(tmp_path, partition(memory=None, raw=f'memory = "{value}"'))
    assert one_error(tern("check", "sys.toml", cwd=tmp_path)) == (
        f'sys.toml: partition[0].memory: "{shown}" is not a size (use bytes, or "N KiB", '
        f'"N MiB", "N GiB", "N TiB")')


# --- messages: one line, escaped, readable ----------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    (partition("rt\nx"),
     'partition[0].name: "rt\\nx" must be 1 to 15 characters from a-z, 0-9, _ and -'),
    (partition("\x1b[2J\x1b[31m"),
     'partition[0].name: "\\u001B[2J\\u001B[31m" must be 1 to 15 characters from a-z, 0-9, '
     "_ and -"),
    ('[board]\n"\\u001b]0;owned\\u0007" = 1\n' + partition(),
     'board."\\u001B]0;owned\\u0007": unknown key'),
    ('"\\nboard" = 1\n' + partition(),
     '"\\nboard": unknown key (expected [board], [[partition]], [[channel]], [[virtio]] and [[pool]])'),
    (partition(**{"a b": 1}), 'partition[0]."a b": unknown key'),
    (partition(image="no\x1b[2Jsuch"),
     'partition[0].image: no such file: "no\\u001B[2Jsuch"'),
    (partition(on_fault=["\x1b[2J"]),
     'partition[0].on_fault: must be "inject", "stop" or "restart" (got ["\\u001B[2J"])'),
    (partition(on_fault=[[[[["deep"]]]]]),
     'partition[0].on_fault: must be "inject", "stop" or "restart" (got [[[[...]]]])'),
    (partition(max_restarts=123456789012345678901234567890123),
     "partition[0].max_restarts: must be a whole number from 0 (no limit) to 1000000 "
     "(got a number of about 33 digits)"),
    (partition(raw="on_fault = 1979-05-27T07:32:00Z"),
     'partition[0].on_fault: must be "inject", "stop" or "restart" (got 1979-05-27T07:32:00+00:00)'),
], ids=["newline", "escape-in-name", "escape-in-key", "newline-in-key", "blank-in-key",
        "escape-in-path", "escape-in-list", "deep-list", "huge-int", "datetime"])
def test_messages_show_values_escaped_on_one_line(tmp_path, stub_image, text, expected):
    write_toml(tmp_path, text)
    assert one_error(tern("check", "sys.toml", cwd=tmp_path)) == \
        "sys.toml: " + expected.replace("{tmp}", str(tmp_path))


def test_a_long_value_makes_a_short_message(tmp_path, stub_image):
    write_toml(tmp_path, partition(memory="x" * 1_000_000))
    message = one_error(tern("check", "sys.toml", cwd=tmp_path))
    assert message == ('sys.toml: partition[0].memory: "' + "x" * 60 + '..." (1000000 '
                       'characters) is not a size (use bytes, or "N KiB", "N MiB", "N GiB", '
                       '"N TiB")')


def test_a_long_key_and_path_make_short_messages(tmp_path, stub_image):
    write_toml(tmp_path, partition(**{"k" * 1_000_000: 1}))
    assert len(one_error(tern("check", "sys.toml", cwd=tmp_path))) < 200
    write_toml(tmp_path, partition(image="d/" * 500_000))
    assert len(one_error(tern("check", "sys.toml", cwd=tmp_path))) < 300


def test_a_file_name_with_a_newline(tmp_path, stub_image):
    name = "odd\nname.toml"
    write_toml(tmp_path, partition(bogus=1), name=name)
    assert one_error(tern("check", name, cwd=tmp_path)) == \
        '"odd\\nname.toml": partition[0].bogus: unknown key'
    write_toml(tmp_path, partition(), name=name)
    proc = tern("check", name, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith('"odd\\nname.toml": ok: ')


def test_a_utf8_byte_order_mark_is_skipped(tmp_path, stub_image):
    (tmp_path / "sys.toml").write_bytes(b"\xef\xbb\xbf" + partition().encode())
    proc = tern("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("sys.toml: ok: 1 partition")


def test_text_that_is_not_utf8_names_its_line(tmp_path, stub_image):
    (tmp_path / "sys.toml").write_bytes(partition().encode() + b'\nbootargs = "\xff"\n')
    assert one_error(tern("check", "sys.toml", cwd=tmp_path)) == \
        "sys.toml: line 7: not UTF-8 text (invalid start byte)"


def test_a_hypervisor_message_is_one_line(capsys):
    result = runner.RunResult(status=1, reason="QEMU exited with status 1: bad\x1b[2J\nthing")
    assert cli._finish(result) == 1
    assert capsys.readouterr().err == \
        "tern: error: QEMU exited with status 1: bad\\u001B[2J\\nthing\n"


def test_an_error_line_is_never_a_paragraph():
    from tern.errors import one_line, quote, show_path, show_value
    assert quote("a" * 100) == '"' + "a" * 60 + '..." (100 characters)'
    assert quote("\x1b" * 100).startswith('"\\u001B\\u001B')
    assert len(quote("\x1b" * 100)) < 90
    assert show_value([1] * 100) == "[1, 1, 1, 1, 1, 1, ...]"
    assert show_value(10 ** 5000).startswith("a number of about 5001 digits")
    assert show_path("plain/path.img") == "plain/path.img"
    long = show_path("x" * 1000 + "\n" + "y" * 1000)
    assert long.startswith('"' + "x" * 80 + "...") and long.endswith('" (2001 characters)')
    assert "\n" not in long and len(long) < 200
    assert one_line("a\x1bb\nc" + "d" * 5000).startswith("a\\u001Bb\\nc")
    assert len(one_line("d" * 5000)) == 1003
