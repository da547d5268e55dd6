"""config.dump_toml: what it writes, tomllib reads back as the same document."""

import math
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tern.config import dump_toml

keys = st.text(max_size=12) | st.sampled_from(["name", "a-b", "a_b", "1", "a.b", "a b", "é", ""])
strings = st.text(max_size=30) | st.sampled_from(
    ['"', "\\", '\\"', "\x00", "\x7f", "\x1b[2J", "\t\n\r\b\f", "\u202e", "\ufeff", "é ü 中",
     "'''", '"""', "#", "a = 1", "[[partition]]", "\ud7ff\ue000\U0010ffff"])
scalars = (strings | st.integers(-2 ** 63, 2 ** 63 - 1) | st.booleans()
           | st.floats(allow_nan=False))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(keys, inner, max_size=3), max_leaves=10)
tables = st.dictionaries(keys, values, max_size=4)
documents = st.dictionaries(keys, values | tables | st.lists(tables, min_size=1, max_size=3),
                            max_size=5)


@settings(max_examples=400, deadline=None)
@given(doc=documents)
def test_round_trip(doc):
    assert tomllib.loads(dump_toml(doc)) == doc


@settings(max_examples=100, deadline=None)
@given(doc=documents, comment=st.text(st.characters(blacklist_categories=("Cc", "Cs"))
                                       | st.just("\n"), max_size=40))
def test_round_trip_with_comment(doc, comment):
    assert tomllib.loads(dump_toml(doc, comment=comment)) == doc


def test_comment_without_control_characters():
    with pytest.raises(ValueError):
        dump_toml({}, comment="a\x1b[2J")


def test_system_description_layout():
    doc = {"board": {"arch": "riscv64", "cpus": 3, "pci": ["edu"]},
           "partition": [{"name": "rt", "cpus": [1, 2], "bootargs": 'a="b c" d=\\e'},
                         {"name": "b", "cpus": [3], "devices": []}]}
    text = dump_toml(doc, comment="Written by a test.")
    assert text == ('# Written by a test.\n\n[board]\narch = "riscv64"\ncpus = 3\npci = ["edu"]\n\n'
                    '[[partition]]\nname = "rt"\ncpus = [1, 2]\nbootargs = "a=\\"b c\\" d=\\\\e"\n\n'
                    '[[partition]]\nname = "b"\ncpus = [3]\ndevices = []\n')
    assert tomllib.loads(text) == doc


def test_plain_keys_come_before_tables():
    doc = {"board": {"cpus": 2}, "title": "x", "pci": [{"model": "edu"}], "n": 1}
    assert tomllib.loads(dump_toml(doc)) == doc


@pytest.mark.parametrize("text, written", [
    ('"', r'"\""'), ("\\", r'"\\"'), ("\x00", r'"\u0000"'), ("\x7f", r'"\u007F"'),
    ("\n", r'"\n"'), ("é", '"é"'), ("\u2028", '"\u2028"')])
def test_string_escapes(text, written):
    assert dump_toml({"s": text}) == f"s = {written}\n"


@pytest.mark.parametrize("value", [None, b"x", object(), math.nan])
def test_what_toml_cannot_hold(value):
    if isinstance(value, float):
        assert math.isnan(tomllib.loads(dump_toml({"x": value}))["x"])
    else:
        with pytest.raises(TypeError):
            dump_toml({"x": value})
