"""Errors the tern tool reports to its user as one line, never as a traceback.

Every failure reaches the user through cli.main as one line,
``tern: error: FILE: FIELD: message``, and one of the exit statuses below
(README.md and docs/configuration.md have the same table).  Values taken from the
user's input are shown through show_value, show_path and show_key: escaped, so that
a newline or an escape sequence cannot break the line or reach the terminal, and
cut to a readable length.
"""

import datetime
import math
import os
import reprlib
import signal
from pathlib import Path

# Exit statuses of the tern command.
EXIT_OK = 0
EXIT_FAILED = 1            # the run ended, but not well (a partition stopped, QEMU failed)
EXIT_BAD_INPUT = 2         # the description, an option, a file or a tool the run needs
EXIT_PANIC = 3             # the hypervisor panicked
EXIT_INTERNAL = 70         # a bug in tern itself (--debug shows the traceback)
EXIT_TIMEOUT = 124         # --timeout passed
EXIT_SIGNAL_BASE = 128     # + N: ended by signal N (129 SIGHUP, 130 SIGINT, 131 SIGQUIT,
#                            141 SIGPIPE, 143 SIGTERM)


class TernError(Exception):
    """A problem the user can fix (bad input, missing tool or file).

    The CLI prints ``tern: error: <str(err)>`` and exits with ``status``.
    """

    status = EXIT_BAD_INPUT


class ConfigError(TernError):
    """Something wrong in a system description.

    ``field`` names the offending key the way a reader finds it in the TOML
    (``partition[1].cpus``); ``file`` is filled in by whoever knows which file
    was being read, so that lower layers need not carry the path around.
    """

    def __init__(self, field, message, file=None):
        super().__init__(message)
        self.field = field
        self.message = message
        self.file = file

    def __str__(self):
        parts = []
        if self.file:
            parts.append(show_path(self.file))
        if self.field:
            parts.append(str(self.field))
        parts.append(self.message)
        return one_line(": ".join(parts))


class ToolError(TernError):
    """A host tool or input file the run depends on is missing or failed."""

    def __str__(self):
        return one_line(super().__str__())


class UsageError(TernError):
    """A command line tern cannot make sense of (argparse's complaint, on one line)."""


class Interrupted(BaseException):
    """Raised in the main thread by the CLI's signal handlers (SIGINT, SIGTERM, SIGHUP,
    SIGQUIT): like KeyboardInterrupt, it unwinds through every `finally`, which ends QEMU
    and removes temporary files; the CLI then exits with 128 + the signal's number."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self):
        return EXIT_SIGNAL_BASE + self.signum

    @property
    def name(self):
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


# How much of a value a message shows.
MAX_SHOWN = 60                    # a value (a string's characters, escaped)
MAX_PATH_SHOWN = 160              # a path
MAX_LINE = 1000                   # a whole message, as a last resort

# How a TOML basic string writes the characters a message must not show raw.
TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
                "\f": "\\f", "\r": "\\r"}


def _pieces(text):
    """`text` as printable pieces: each character, or the escape that writes it."""
    for ch in text:
        if ch in TOML_ESCAPES:
            yield TOML_ESCAPES[ch]
        elif not ch.isprintable():
            code = ord(ch)
            yield f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"
        else:
            yield ch


def escape(text):
    """`text` with backslashes, quotes and unprintable characters escaped as TOML writes
    them (\\n, \\u001B, ...): what is left prints as it is, on one line."""
    return "".join(_pieces(text))


def _head(pieces, limit, backwards=False):
    """Whole pieces, at most `limit` characters in all; `backwards`: the pieces come last
    first, and are put back in their order."""
    out, size = [], 0
    for piece in pieces:
        if size + len(piece) > limit:
            break
        out.append(piece)
        size += len(piece)
    return "".join(reversed(out) if backwards else out)


def quote(text, limit=MAX_SHOWN):
    """A string from the user, in double quotes, escaped, cut to `limit` characters
    (then its length is said: "aaaa..." (1048576 characters))."""
    escaped = escape(text)
    if len(escaped) <= limit:
        return f'"{escaped}"'
    return f'"{_head(_pieces(text), limit)}..." ({len(text)} characters)'


class _ValueRepr(reprlib.Repr):
    """Bounded TOML-like rendering of values from a parsed TOML document."""

    def __init__(self):
        super().__init__()
        self.maxlevel = 3
        self.maxlist = 6
        self.maxdict = 4
        self.maxstring = 30

    def repr_str(self, x, level):
        return quote(x, self.maxstring)

    def repr_bool(self, x, level):
        return "true" if x else "false"

    def repr_int(self, x, level):
        return show_int(x)

    def repr_float(self, x, level):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)

    def repr_dict(self, x, level):
        return "a table"

    def repr_instance(self, x, level):
        if isinstance(x, (datetime.date, datetime.time)):
            return x.isoformat()
        return f"a {type(x).__name__}"


_value_repr = _ValueRepr()


def show_int(n):
    """An integer, or its size when it has too many digits to be worth reading."""
    if abs(n) < 10 ** 30:
        return str(n)
    digits = int(abs(n).bit_length() * math.log10(2)) + 1
    return f"{'-' if n < 0 else ''}a number of about {digits} digits"


def show_value(value):
    """A value from the description as it looks in TOML: strings quoted and escaped, true
    and false, tables as "a table"; long strings, lists and numbers cut short."""
    if isinstance(value, str):
        return quote(value)
    try:
        shown = _value_repr.repr(value)
    except (RecursionError, ValueError):
        shown = f"a {type(value).__name__}"
    return shown if len(shown) <= 2 * MAX_SHOWN else shown[:2 * MAX_SHOWN] + "..."


BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def show_key(key):
    """A TOML key as a message's field shows it: bare if TOML allows it bare, else quoted."""
    key = str(key)
    if key and len(key) <= MAX_SHOWN and all(ch in BARE_KEY for ch in key):
        return key
    return quote(key)


def cwd_relative(path):
    """`path` relative to the working directory when it is under it, else as it is."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def show_path(path):
    """A path as a message shows it: as it is when it prints plainly on one line, else
    quoted and escaped; a very long one is cut in the middle."""
    text = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
    plain = all(ch.isprintable() and ch not in '"\\' for ch in text) and text.strip() == text
    if plain and len(text) <= MAX_PATH_SHOWN:
        return text
    escaped = escape(text)
    if len(escaped) <= MAX_PATH_SHOWN:
        return f'"{escaped}"'
    half = MAX_PATH_SHOWN // 2
    head = _head(_pieces(text), half)
    tail = _head(reversed(list(_pieces(text[-half:]))), half, backwards=True)
    return f'"{head}...{tail}" ({len(text)} characters)'


def one_line(message, limit=MAX_LINE):
    """A whole message made safe to print: anything unprintable escaped, at most `limit`
    characters.  Messages escape the values they show already; this is the last guard."""
    if not all(ch.isprintable() for ch in message):
        message = "".join(ch if ch.isprintable() else escape(ch) for ch in message)
    if len(message) > limit:
        message = message[:limit] + "..."
    return message
