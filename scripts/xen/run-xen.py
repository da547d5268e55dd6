#!/usr/bin/env python3
"""Boot Debian's Xen 4.17 dom0less (no dom0) on QEMU virt with the latency guest as the only domU.

Builds a device tree from QEMU's own (dumped with the same machine options), adds Xen's boot
arguments and one `xen,domain` node under /chosen, runs QEMU under a timeout, streams the serial
output to a log, stops QEMU once the guest prints LAT-DONE (a domU's SYSTEM_OFF does not stop
the board) and prints the guest's LAT-JSON lines on stdout.

    scripts/xen/fetch-xen.sh && make -C guests -f xen.mk
    scripts/xen/run-xen.py --samples 100
    scripts/xen/run-xen.py --xen-args "vwfi=native timer_slop=0"

Python 3.11 standard library only; needs qemu-system-aarch64 and dtc.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "xen"
DEFAULT_XEN = CACHE / "root" / "boot" / "xen-4.17-arm64"
DEFAULT_GUEST = ROOT / "guests" / "build" / "lat-xen.img"

GUEST_ADDR = 0x5000_0000  # domU image in board RAM: clear of Xen (0x4020_0000) and QEMU's DTB (0x4800_0000)
BASE_XEN_ARGS = "console=dtuart dtuart=/pl011@9000000 guest_loglvl=all loglvl=all"

LAT_JSON = re.compile(r"LAT-JSON (\{.*\})")
# Xen prints a domU's vpl011 output as "(XEN) DOM<n>: <chunk>", flushing its 128-byte buffer at
# a newline or when 126 characters are pending: a chunk of exactly 126 characters continues on
# the next DOM<n> line (which is empty when the newline came right after it).
GUEST_LINE = re.compile(r"^\(XEN\) DOM(\d+): (.*)$")
VPL011_CHUNK = 126


class GuestLines:
    """Reassembles a domU's console lines from Xen's chunked vpl011 output."""

    def __init__(self) -> None:
        self.pending: dict[str, str] = {}

    def feed(self, line: str) -> str | None:
        m = GUEST_LINE.match(line)
        if not m:
            return None
        dom, chunk = m.group(1), m.group(2)
        text = self.pending.pop(dom, "") + chunk
        if len(chunk) == VPL011_CHUNK:
            self.pending[dom] = text
            return None
        return text


def machine_opts(extra: str = "") -> list[str]:
    return ["-M", "virt,virtualization=on,gic-version=3" + extra]


def qemu_base(args: argparse.Namespace) -> list[str]:
    cmd = [args.qemu] + machine_opts() + [
        "-cpu", args.cpu, "-smp", str(args.smp), "-m", args.mem, "-nographic",
    ]
    if args.icount is not None:
        cmd += ["-icount", f"shift={args.icount},align=off,sleep=off"]
    return cmd


def dts_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_dtb(args: argparse.Namespace, workdir: Path, guest_size: int) -> Path:
    """QEMU's DTB plus /chosen xen,xen-bootargs and a dom0less domain node."""
    raw = workdir / "qemu.dtb"
    cmd = [args.qemu] + machine_opts(f",dumpdtb={raw}") + [
        "-cpu", args.cpu, "-smp", str(args.smp), "-m", args.mem, "-nographic",
    ]
    subprocess.run(cmd, check=True, timeout=60, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(raw)], check=True,
                         capture_output=True, text=True, timeout=60).stdout

    xen_args = " ".join(a for a in (BASE_XEN_ARGS, args.xen_args) if a)
    guest_args = [f"lat.samples={args.samples}"]
    if args.tests:
        guest_args.append(f"lat.tests={args.tests}")
    if args.delta_us is not None:
        guest_args.append(f"lat.delta_us={args.delta_us}")
    if args.guest_args:
        guest_args.append(args.guest_args)
    vpl011 = "\t\t\tvpl011;\n" if args.console == "vpl011" else ""
    node = (
        f"\t\txen,xen-bootargs = {dts_string(xen_args)};\n"
        "\t\t#address-cells = <0x02>;\n"
        "\t\t#size-cells = <0x02>;\n"
        "\t\tdomU1 {\n"
        '\t\t\tcompatible = "xen,domain";\n'
        "\t\t\t#address-cells = <0x01>;\n"
        "\t\t\t#size-cells = <0x01>;\n"
        "\t\t\tcpus = <0x01>;\n"
        f"\t\t\tmemory = <0x00 {args.guest_mem_kib:#x}>;\n"
        f"{vpl011}"
        f"\t\t\tmodule@{GUEST_ADDR:x} {{\n"
        '\t\t\t\tcompatible = "multiboot,kernel", "multiboot,module";\n'
        f"\t\t\t\treg = <{GUEST_ADDR:#x} {guest_size:#x}>;\n"
        f"\t\t\t\tbootargs = {dts_string(' '.join(guest_args))};\n"
        "\t\t\t};\n"
        "\t\t};\n"
    )
    # A second root block: dtc merges it into QEMU's /chosen.
    new = dts + "\n/ {\n\tchosen {\n" + node + "\t};\n};\n"
    (workdir / "xen.dts").write_text(new)
    out = workdir / "xen.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(out),
                    str(workdir / "xen.dts")], check=True, timeout=60)
    return out


def run(args: argparse.Namespace) -> int:
    for tool in (args.qemu, "dtc"):
        if not shutil.which(tool):
            raise SystemExit(f"run-xen: {tool} not found")
    xen = Path(args.xen)
    guest = Path(args.guest)
    if not xen.is_file():
        raise SystemExit(f"run-xen: no Xen binary at {xen}: run scripts/xen/fetch-xen.sh")
    if not guest.is_file():
        raise SystemExit(f"run-xen: no guest at {guest}: run make -C guests -f xen.mk")

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    dtb = build_dtb(args, workdir, guest.stat().st_size)
    cmd = qemu_base(args) + [
        "-kernel", str(xen), "-dtb", str(dtb),
        "-device", f"loader,file={guest},addr={GUEST_ADDR:#x},force-raw=on",
    ]
    log_path = Path(args.log) if args.log else workdir / "serial.log"
    print("run-xen: " + " ".join(cmd), file=sys.stderr)

    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(args.timeout, on_timeout)
    timer.start()
    lines: list[str] = []
    guest_lines: list[str] = []
    joiner = GuestLines()
    done = False
    try:
        with open(log_path, "w", encoding="utf-8", errors="replace") as log:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                lines.append(line)
                log.write(line + "\n")
                log.flush()
                if args.verbose:
                    print(line, file=sys.stderr, flush=True)
                text = joiner.feed(line)
                if text is None:
                    continue
                guest_lines.append(text)
                if text.strip() == "LAT-DONE":
                    done = True
                    break
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    elapsed = time.monotonic() - start

    results = []
    for line in guest_lines:
        m = LAT_JSON.search(line)
        if m:
            print(m.group(0), flush=True)
            try:
                results.append(json.loads(m.group(1)))
            except json.JSONDecodeError:
                print(f"run-xen: unparsable line: {line}", file=sys.stderr)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"xen_args": args.xen_args, "icount": args.icount, "samples": args.samples,
             "results": results}, indent=1) + "\n")

    if done:
        print(f"run-xen: LAT-DONE after {elapsed:.1f} s, {len(results)} LAT-JSON lines, "
              f"log {log_path}", file=sys.stderr)
        return 0
    why = f"timed out after {args.timeout} s" if timed_out.is_set() else \
        f"QEMU exited with {proc.returncode}"
    print(f"run-xen: no LAT-DONE: {why}; serial log {log_path}:", file=sys.stderr)
    for line in lines[-args.tail:] if args.tail else lines:
        print("  | " + line, file=sys.stderr)
    return 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--icount", type=lambda s: None if s in ("off", "none") else int(s),
                   default=4, help="-icount shift (default 4; 'off' for none)")
    p.add_argument("--xen-args", default="", help="extra Xen command line arguments")
    p.add_argument("--samples", type=int, default=100, help="lat.samples (default 100)")
    p.add_argument("--tests", default="", help="lat.tests (default: the guest's, all four)")
    p.add_argument("--delta-us", type=int, default=None, help="lat.delta_us")
    p.add_argument("--guest-args", default="", help="more guest bootargs")
    p.add_argument("--guest-mem-kib", type=int, default=64 * 1024)
    p.add_argument("--console", choices=("vpl011",), default="vpl011")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds (default 300)")
    p.add_argument("--smp", type=int, default=1, help="board CPUs (default 1: -smp 2 stalls "
                   "under icount)")
    p.add_argument("--mem", default="2G")
    p.add_argument("--cpu", default="cortex-a53")
    p.add_argument("--qemu", default="qemu-system-aarch64")
    p.add_argument("--xen", default=str(DEFAULT_XEN))
    p.add_argument("--guest", default=str(DEFAULT_GUEST))
    p.add_argument("--workdir", default=str(CACHE / "run"))
    p.add_argument("--log", default="", help="serial log (default WORKDIR/serial.log)")
    p.add_argument("--json-out", default="", help="write the parsed results here")
    p.add_argument("--tail", type=int, default=60, help="log lines shown on failure (0: all)")
    p.add_argument("-v", "--verbose", action="store_true", help="stream the serial to stderr")
    args = p.parse_args()
    if os.environ.get("RUN_XEN_VERBOSE"):
        args.verbose = True
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
