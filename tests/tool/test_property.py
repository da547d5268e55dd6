"""Property: whatever document `tern check` is given, it never raises, exits 0 or 2, and
on 2 says one line naming the file.

Hypothesis writes the documents: well-formed TOML built from a valid system with fields
replaced by values of every TOML type (strings with control characters and escapes,
huge and odd numbers, dates, nested arrays and tables, unknown keys), and raw text and
bytes (mostly syntax errors, byte order marks, deep nesting).  tern runs in this process
(cli.main), so a traceback would be an exception here.
"""

import contextlib
import io
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tern import cli
from tern_test_files import write_elf, write_image

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def workspace():
    """A directory with the files descriptions may name: a stub Image, a stub ELF, a disk,
    a FIFO, a directory and a link loop."""
    root = Path(tempfile.mkdtemp(prefix="tern-property-"))
    write_image(root / "lat.img")
    write_elf(root / "g.elf", [(0x4008_0000, 0x4008_0000, b"\0" * 64, 64)], 0x4008_0000)
    (root / "disk.img").write_bytes(bytes(512))
    os.mkfifo(root / "fifo")
    (root / "dir").mkdir()
    (root / "loop").symlink_to("loop")
    yield root
    shutil.rmtree(root)


# --- TOML text from Python values -------------------------------------------------------------

def toml_string(text):
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable() and ch != "\x7f":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
    return '"' + "".join(out) + '"'


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}"
                               for k, v in value.items()) + "}"
    return value.isoformat()          # dates and times


def _is_table(value):
    return isinstance(value, dict) or (isinstance(value, list) and bool(value)
                                       and all(isinstance(v, dict) for v in value))


def toml_document(doc, headers):
    """`doc` as TOML: [board] and [[partition]] as headers or as inline values."""
    lines = []
    if headers:                       # what follows a header is in its table: plain keys first
        doc = dict(sorted(doc.items(), key=lambda kv: _is_table(kv[1])))
    for key, value in doc.items():
        if headers and isinstance(value, dict):
            lines.append(f"[{toml_string(key)}]")
            lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()]
        elif headers and isinstance(value, list) and _is_table(value):
            for table in value:
                lines.append(f"[[{toml_string(key)}]]")
                lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in table.items()]
        else:
            lines.append(f"{toml_string(key)} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


# --- strategies -------------------------------------------------------------------------------

texts = st.text(max_size=40) | st.sampled_from(
    ["", " ", "\n", "\x1b[2J", "\u202e", "\ufeff", "64MiB\n", "\uff16\uff14MiB", "64 MiB",
     "1TiB", "4GiB", "2MiB", "3MiB", "10ms", "60 s", "61 s", "99999999999999999999999 ms",
     "rt", "RT", "a" * 16, "restart", "stop", "direct", "native", "trap", "pcie", "edu",
     "virtio-blk", "cortex-a53", "max", "lat.img", "g.elf", "fifo", "dir", "loop",
     "/dev/zero", "/dev/null", "disk.img", "missing", "lat.img/x", "../" * 40, "x" * 5000])
integers = st.integers() | st.sampled_from([0, 1, -1, 2, 8, 9, 2 ** 63, -2 ** 63, 2 ** 64,
                                            10 ** 100, 67108864, 1 << 40])
scalars = (texts | integers | st.booleans() | st.floats() | st.datetimes() | st.dates()
           | st.times())
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=12)
files = st.sampled_from(["lat.img", "g.elf", "disk.img", "fifo", "dir", "loop", "/dev/zero",
                         "missing", "lat.img/x", ""])
sizes = st.sampled_from(["4MiB", "64MiB", "128MiB", "2GiB", "3GiB", "3MiB", "1TiB", "64 MiB",
                         67108864, 0, -1]) | texts | integers
# For each key, values near the valid ones (most documents then get past the first key),
# and now and then anything at all.
PLAUSIBLE = {
    "name": st.sampled_from(["rt", "b", "linux", "a" * 15, "a" * 16, "Rt", "r t"]),
    "cpus": st.lists(st.integers(1, 3), min_size=1, max_size=2)
    | st.lists(st.integers(-1, 9), max_size=9),
    "memory": sizes,
    "image": files,
    "initrd": files,
    "wfi": st.sampled_from(["trap", "native", "sometimes"]),
    "irq": st.sampled_from(["trap", "direct", "fast"]),
    "bootargs": texts,
    "devices": st.sampled_from([[], ["pcie"], ["pcie", "pcie"], ["usb"], "pcie"]),
    "on_fault": st.sampled_from(["inject", "stop", "restart", "reboot"]),
    "max_restarts": st.integers(-2, 1_000_002) | integers,
    "restart_backoff": st.sampled_from([0, "10ms", "250 us", "60 s", "61 s", "5 min", 10]),
    "board.cpus": st.sampled_from([4, 2, 8, 1, 0, 9, -1]),
    "board.cpu": st.sampled_from(["cortex-a53", "cortex-a57", "max", "cortex-a72"]),
    "board.memory": st.sampled_from(["2GiB", "128MiB", "3GiB", "4GiB", "127MiB"]) | sizes,
    "board.pci": st.lists(st.sampled_from(["edu", "virtio-net", "e1000", "virtio-blk",
                                           {"model": "virtio-blk", "disk": "disk.img"},
                                           {"model": "virtio-blk", "disk": "fifo"},
                                           {"model": "edu", "disk": "disk.img"}]), max_size=5),
    "channel.name": st.sampled_from(["msg", "rt", "a" * 16, "Msg", ""]),
    "channel.size": st.sampled_from(["64KiB", "4KiB", 4096, "6KiB", "64MiB", "65MiB", "3GiB"])
    | sizes,
    "channel.members": st.lists(st.sampled_from(["rt", "b", "linux", "zz", 1]), max_size=9)
    | texts,
    "channel.readonly": st.lists(st.sampled_from(["rt", "b", "linux", "zz"]), max_size=3)
    | texts,
}
ONE_IN_TEN = st.sampled_from([False] * 9 + [True])   # Hypothesis favours the first
PARTITION_KEYS = ["name", "cpus", "memory", "image", "initrd", "wfi", "irq", "bootargs",
                  "devices", "on_fault", "max_restarts", "restart_backoff"]
VALID_PARTITION = {"name": "rt", "cpus": [1], "memory": "64MiB", "image": "lat.img"}
VALID_BOARD = {"cpus": 4, "cpu": "cortex-a53", "memory": "2GiB", "pci": []}
CHANNEL_KEYS = ["name", "size", "members", "readonly"]
VALID_CHANNEL = {"name": "msg", "size": "64KiB", "members": ["rt", "b"]}


@st.composite
def tables(draw, valid, known, prefix=""):
    """`valid` with values replaced (by a near one, or anything), keys dropped and keys
    added (known ones, now and then anything)."""
    table = {}
    for key, value in valid.items():
        fate = draw(st.sampled_from(["keep"] * 5 + ["near"] * 3 + ["any", "drop"]))
        if fate == "keep":
            table[key] = value
        elif fate == "near":
            table[key] = draw(PLAUSIBLE[prefix + key])
        elif fate == "any":
            table[key] = draw(values)
    for key in draw(st.lists(st.sampled_from(known), max_size=3)):
        table[key] = draw(PLAUSIBLE[prefix + key])
    if draw(ONE_IN_TEN):
        table[draw(texts)] = draw(values)
    return table


@st.composite
def documents(draw):
    doc = {}
    if draw(st.booleans()):
        doc["board"] = draw(tables(VALID_BOARD, list(VALID_BOARD), "board."))
    partitions = draw(st.lists(tables(VALID_PARTITION, PARTITION_KEYS), min_size=0,
                               max_size=3))
    if partitions or draw(st.booleans()):
        doc["partition"] = partitions
    channels = draw(st.lists(tables(VALID_CHANNEL, CHANNEL_KEYS, "channel."), max_size=2))
    if channels:
        doc["channel"] = channels
    if draw(ONE_IN_TEN):
        doc[draw(texts)] = draw(values)
    return doc


def nested(draw_depth, opener, closer):
    return "x = " + opener * draw_depth + ("1" if opener == "{a = " else "") + closer * draw_depth


raw_texts = (st.text(max_size=200)
             | st.builds(lambda d, o: nested(d, *o), st.integers(0, 2000),
                         st.sampled_from([("[", "]"), ("{a = ", "}")]))
             | st.builds(lambda t: "\ufeff" + t, st.text(max_size=50)))


# --- the property -----------------------------------------------------------------------------

def check(workspace, data):
    """Run `tern check` on `data` (bytes) in this process; assert the property."""
    path = workspace / "sys.toml"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(["check", str(path)])
    out, err = out.getvalue(), err.getvalue()
    assert status in (0, 2), (status, err)
    if status == 0:
        assert err == "" and out.startswith(f"{path}: ok: "), (out, err)
        return
    assert out == ""
    assert re.fullmatch(f"tern: error: {re.escape(str(path))}: [^\n]+\n", err), err
    assert all(ch.isprintable() for ch in err[:-1]), err
    assert len(err) < 1200, err


@SETTINGS
@given(doc=documents(), headers=st.booleans())
def test_generated_descriptions(workspace, doc, headers):
    check(workspace, toml_document(doc, headers).encode())


@SETTINGS
@given(text=raw_texts)
def test_generated_text(workspace, text):
    check(workspace, text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(data=st.binary(max_size=300))
def test_generated_bytes(workspace, data):
    check(workspace, data)
