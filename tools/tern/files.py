"""The files tern reads and writes, handled so that no input can hang it or exhaust it and
no output lands on a file tern did not make.

Reading: a path is stat'ed first and must be a regular file (a FIFO would block open()
until a writer comes, /dev/zero never ends); it is then opened without blocking and
checked again on the open descriptor, and read in bounded amounts.

Writing: a file tern makes appears under its name only once complete (written beside it
under a temporary name, then renamed over), so an interrupted run leaves no half-written
file, and the rename replaces a name in tern's own work directory, never writes through
a link into someone else's file.  The temporary is removed whatever happens.
"""

import errno
import os
import stat
import tempfile
from pathlib import Path

from .errors import show_path
from .units import format_size

CHUNK = 1 << 20                   # bytes read or copied at a time


class NotAFile(Exception):
    """A path that is not a readable regular file; `problem` says what it is instead."""

    def __init__(self, problem, path):
        super().__init__(problem)
        self.problem = problem
        self.path = path

    def __str__(self):
        return f"{self.problem}: {show_path(self.path)}"


def kind(mode):
    """What a file of `mode` is, for messages: "a directory", "a FIFO", ..."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a file")):
        if test(mode):
            return name
    return "not a file"


def os_problem(e):
    """An OSError from stat or open, said as a message says it."""
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return "no such file"
    if e.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if e.errno == errno.ENAMETOOLONG:
        return "file name too long"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return f"cannot read ({(e.strerror or str(e)).lower()})"


def check_regular(path):
    """The stat of `path`, which must be a regular file (links followed); raises NotAFile.

    Only stat: nothing is opened, so a FIFO or a device is refused without touching it.
    """
    try:
        info = os.stat(path)
    except OSError as e:
        raise NotAFile(os_problem(e), path) from None
    except ValueError:                       # a NUL in the path
        raise NotAFile("no such file", path) from None
    if not stat.S_ISREG(info.st_mode):
        raise NotAFile(f"is {kind(info.st_mode)}, not a file", path)
    return info


def open_regular(path):
    """(binary file, stat) of the regular file at `path`; raises NotAFile.

    Opened with O_NONBLOCK, and checked again on the descriptor: were the path swapped
    for a FIFO between the stat and the open, the open still would not wait for it.
    """
    check_regular(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise NotAFile(os_problem(e), path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"is {kind(info.st_mode)}, not a file", path)
        return os.fdopen(fd, "rb"), info
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path, limit):
    """The bytes of the regular file at `path`, refused (NotAFile) past `limit` bytes."""
    f, info = open_regular(path)
    with f:
        if info.st_size > limit:
            raise NotAFile(f"is {format_size(info.st_size, round_up=True)}, more than the "
                           f"{format_size(limit)} tern reads", path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotAFile(f"is more than the {format_size(limit)} tern reads", path)
    return data


def copy_range(src, dst, size, sparse=True):
    """Copy `size` bytes from src's position to dst's, CHUNK at a time.  With `sparse`,
    runs of zeros are skipped over (dst must read as zeros there: a new file); returns
    how many bytes came (fewer when src ended)."""
    done = 0
    while done < size:
        chunk = src.read(min(CHUNK, size - done))
        if not chunk:
            break
        if sparse and chunk.count(0) == len(chunk):
            dst.seek(len(chunk), os.SEEK_CUR)
        else:
            dst.write(chunk)
        done += len(chunk)
    return done


class NewFile:
    """A file tern writes: `with NewFile(path) as f: f.write(...)` creates it beside
    `path` under a temporary name and renames it over `path` once the block ends well;
    otherwise (an error, a signal) the temporary goes away and `path` is untouched."""

    def __init__(self, path, mode=0o644, text=False):
        self.path = Path(path)
        self.mode = mode
        self.text = text
        self.file = None
        self.tmp = None

    def __enter__(self):
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                   dir=self.path.parent)
        self.tmp = tmp
        try:
            os.fchmod(fd, self.mode)
            self.file = os.fdopen(fd, "w" if self.text else "wb",
                                  **({"encoding": "utf-8"} if self.text else {}))
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        return self.file

    def __exit__(self, kind_, value, traceback):
        try:
            self.file.close()
            if kind_ is None:
                os.replace(self.tmp, self.path)
                self.tmp = None
        finally:
            if self.tmp is not None:
                try:
                    os.unlink(self.tmp)
                except OSError:
                    pass
        return False


def create_text(path, mode=0o644):
    """A new, empty text file at `path` for tern to write as it goes (serial.log): what was
    there under that name is unlinked first, so nothing is written through a link."""
    path = Path(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    return os.fdopen(fd, "w", encoding="utf-8")


def write_new(path, data, mode=0o644):
    """Write `data` (bytes or text) to `path` as NewFile does."""
    with NewFile(path, mode, text=isinstance(data, str)) as f:
        f.write(data)
    return Path(path)
