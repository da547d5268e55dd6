#!/usr/bin/env python3
"""Run the latency guest as the only domU of real Xen, dom0less, on the emulated board.

A thin command line over tools/tern/xen.py (which `tern bench` uses):

    scripts/xen/run-xen.py --samples 200
    scripts/xen/run-xen.py --xen-args "vwfi=native timer_slop=0"
    scripts/xen/run-xen.py --xen build/xen-null/xen --xen-args "sched=null vwfi=native"
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

from tern import xen  # noqa: E402
from tern.errors import TernError  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--xen", type=Path, default=xen.XEN_DEBIAN, help="Xen binary")
    p.add_argument("--xen-args", default="", help=f"after: {xen.BASE_ARGS}")
    p.add_argument("--samples", type=int, default=100)
    p.add_argument("--delta-us", type=int, default=320,
                   help="timer deadline (default 320: 20000 instructions at icount shift 4)")
    p.add_argument("--tests", default="", help="lat.tests")
    p.add_argument("--vcpus", type=int, default=1)
    p.add_argument("--icount", type=lambda s: None if s == "off" else int(s), default=4)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json-out", type=Path)
    p.add_argument("-v", "--verbose", action="store_true", help="stream the serial console")
    args = p.parse_args()

    bootargs = f"lat.samples={args.samples} lat.delta_us={args.delta_us}"
    if args.tests:
        bootargs += f" lat.tests={args.tests}"
    image = REPO / "guests" / "build" / "arm64" / "lat-xen.img"
    domain = xen.Domain("lat", image, bootargs, args.vcpus)
    try:
        result = xen.run_xen([domain], args.xen_args, xen=args.xen, icount=args.icount,
                             timeout=args.timeout, quiet=not args.verbose, workdir=args.workdir)
    except TernError as e:
        print(f"run-xen: {e}", file=sys.stderr)
        return 2
    records = result.partitions["lat"].lat
    for r in records:
        print("LAT-JSON " + json.dumps(r))
    if args.json_out:
        args.json_out.write_text(json.dumps({"xen_args": args.xen_args, "records": records},
                                            indent=1) + "\n")
    print(f"run-xen: {result.reason}; serial log {result.workdir / 'serial.log'}", file=sys.stderr)
    if not result.ok:
        for line in result.tail():
            print("  | " + line, file=sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
