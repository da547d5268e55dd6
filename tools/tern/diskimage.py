"""Raw disk images whose content is a tar archive, for the Linux guest's `tern.run=blk` test.

The guest reads a file straight off the block device (`tar -xOf /dev/vda hello.txt`), so the
disk needs no partition table and no filesystem: a ustar archive padded with zeros to whole
sectors.

    PYTHONPATH=tools python3 -m tern.diskimage build/linux/disk.img "hello.txt=hello from the disk"
"""

import argparse
import io
import sys
import tarfile
from pathlib import Path

SECTOR = 512
MIN_SIZE = 1 << 20


def tar_disk(files, min_size=MIN_SIZE):
    """A disk image (bytes) holding a tar archive of files ({name: bytes}), mode 0644, mtime 0.

    The size is a whole number of sectors and at least min_size.
    """
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    archive = buf.getvalue()
    size = -(-max(len(archive), min_size) // SECTOR) * SECTOR
    return archive.ljust(size, b"\0")


def _file_arg(text):
    name, sep, content = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=TEXT (got {text!r})")
    return name, content.encode()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m tern.diskimage",
        description="Write a raw disk image holding a tar archive of the given files.")
    parser.add_argument("out", type=Path, help="the disk image to write")
    parser.add_argument("files", nargs="+", type=_file_arg, metavar="NAME=TEXT",
                        help="a file of the archive and its exact content")
    parser.add_argument("--min-size", type=int, default=MIN_SIZE, metavar="BYTES",
                        help=f"smallest image size (default {MIN_SIZE})")
    args = parser.parse_args(argv)
    image = tar_disk(dict(args.files), args.min_size)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(image)
    print(f"diskimage: {args.out} ({len(image)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
