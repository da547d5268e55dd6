"""Writing system descriptions as TOML: the one writer `demo`, `bench` and the tests use.

The standard library reads TOML (tomllib) but does not write it. This writes the subset a
system description needs: tables of str, int, float, bool, lists and nested tables, with
lists of tables as arrays of tables ([[partition]]) at the top level and as inline tables
below it. Strings are basic strings with every character TOML does not allow in one escaped
(a bootargs with `"` or `\\` stays the same string); other characters, non-ASCII included,
are written as they are (the file is UTF-8).
"""

import math
import re

# What a basic string cannot hold as it is: `"`, `\`, and the control characters (U+0000 to
# U+001F and U+007F), tab included so that a value reads the same whatever the editor does.
_ESCAPED = re.compile(r'["\\\x00-\x1f\x7f]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
                  "\r": "\\r"}
# A comment may hold a tab, but no other control character.
_NOT_IN_COMMENT = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dumps(doc, comment=None):
    """`doc` (a dict) as TOML text; `comment` (a line or lines) first, as # comments.

    Keys keep their order: a table's plain values first, then its sub-tables and arrays of
    tables, as TOML requires. Raises TypeError for what TOML cannot hold (None, bytes, ...)
    and ValueError for a comment with control characters in it."""
    if not isinstance(doc, dict):
        raise TypeError(f"a TOML document is a table, not {type(doc).__name__}")
    out = []
    if comment:
        lines = comment.split("\n")
        if any(_NOT_IN_COMMENT.search(line) for line in lines):
            raise ValueError("a TOML comment cannot hold control characters")
        out += [f"# {line}".rstrip() for line in lines]
    _table(doc, (), out)
    return "\n".join(out) + "\n" if out else ""


def _is_table_array(value):
    return isinstance(value, list) and value and all(isinstance(v, dict) for v in value)


def _table(table, path, out):
    """Append `table`'s plain keys, then its sub-tables, under headers for `path`."""
    plain = [(k, v) for k, v in table.items()
             if not isinstance(v, dict) and not _is_table_array(v)]
    nested = [(k, v) for k, v in table.items() if isinstance(v, dict) or _is_table_array(v)]
    for key, value in plain:
        out.append(f"{key_text(key)} = {value_text(value)}")
    for key, value in nested:
        sub = path + (key,)
        header = ".".join(key_text(k) for k in sub)
        for item in (value if isinstance(value, list) else [value]):
            if out:
                out.append("")
            out.append(f"[[{header}]]" if isinstance(value, list) else f"[{header}]")
            _table(item, sub, out)


def key_text(key):
    if not isinstance(key, str):
        raise TypeError(f"a TOML key is a string, not {type(key).__name__}")
    return key if _BARE_KEY.fullmatch(key) else string_text(key)


def string_text(text):
    """`text` as a TOML basic string."""
    return '"' + _ESCAPED.sub(lambda m: _SHORT_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"),
                              text) + '"'


def value_text(value):
    """One value as TOML (on one line: lists and tables inline)."""
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
        return string_text(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key_text(k)} = {value_text(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"TOML has no value for {type(value).__name__}")
