#!/usr/bin/env python3
"""Worst-case stack depth of every hypervisor entry point, checked against the stack size.

Reads what the compiler says each C function's frame is (-fstack-usage: one .su file per
object) and the call graph of the linked image (llvm-objdump -d: `bl` calls, `b` tail calls,
`blr`/`br` through the INDIRECT table), then walks it from each entry point the assembly
enters.  Fails when the graph has a cycle (recursion: no bound), when something it cannot
bound is reachable (a frame of dynamic size, an indirect call nobody listed, an assembly
routine without a figure), or when an entry point's worst case, with the guest frame the
vectors push, exceeds STACK_SIZE (arch/arm64/include/arch/cpu.h).

    stackdepth.py --elf build/tern.elf --header arch/arm64/include/arch/cpu.h \
                  [--report build/stack-usage.txt] build/**/*.su
"""

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The C functions boot.S and vectors.S enter, and what lies on the stack below them then.
#   "top":   the very top of the core's stack
#   "idle":  the top of the core's stack below the guest frame's place, which set_stack and
#            arch_cpu_return_to_idle keep free: arch_vcpu_run builds the frame there
#            (GUEST_FRAME_SIZE)
#   "guest": the guest frame the vector pushed at the top (GUEST_FRAME_SIZE)
#   "nested": an exception at EL2, which can come at any depth of the hypervisor's own code:
#            the guest frame's worth of registers pushed below the deepest other entry point
ENTRIES = {
    "arm64_boot_primary": "idle",
    "arm64_boot_secondary": "idle",
    "cpu_idle": "idle",
    "arm64_guest_sync": "guest",
    "arm64_guest_irq": "guest",
    "arm64_guest_fiq": "guest",
    "arm64_guest_wfi": "guest",
    "arm64_guest_async_abort": "guest",
    "arm64_hyp_panic": "nested",
}

# Calls through function pointers: the only ones are the emulated devices' MMIO handlers,
# registered at boot (core/mmio.c, mmio_register) and called by mmio_emulate.
INDIRECT = {
    "mmio_emulate": ("uart_access", "vgicd_access", "vgicr_access"),
    "uart_access": ("vpl011_access", "vns16550_access"),
}

# Assembly that moves the stack pointer back to the top of the core's stack and never
# returns: whatever called it has left the stack, so a chain ends there.
STACK_RESETS = {
    "arch_cpu_return_to_idle": "boot.S: back to cpu_idle on an empty stack",
    "guest_enter": "vectors.S: sp = the guest frame at the top, then eret",
}

BRANCHES = {"b", "cbz", "cbnz", "tbz", "tbnz"}


class StackError(Exception):
    """The stack cannot be bounded, or the bound is over budget."""


@dataclass
class Frame:
    size: int
    qualifier: str      # static, dynamic, dynamic,bounded
    where: str          # file:line


@dataclass
class Function:
    name: str
    address: int
    calls: list = field(default_factory=list)       # names, frame kept (bl)
    tails: list = field(default_factory=list)       # names, frame released first (b)
    indirect_calls: int = 0                         # blr
    indirect_tails: int = 0                         # br that is not a jump table
    strays: list = field(default_factory=list)      # branches into another function's middle


def parse_su(text, source="<su>"):
    """Frames from -fstack-usage output: `file:line[:col]:function<TAB>bytes<TAB>qualifier`."""
    frames = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[1].isdigit():
            raise StackError(f"{source}:{n}: not a stack-usage line: {line!r}")
        loc, size, qualifier = parts
        where, _, name = loc.rpartition(":")
        frames[name] = Frame(int(size), qualifier.strip(), where)
    return frames


def merge_frames(per_file):
    """One table from several .su files; a name defined twice cannot be told apart."""
    frames = {}
    for source, table in per_file:
        for name, frame in table.items():
            if name in frames:
                raise StackError(f"function {name} is defined twice ({frames[name].where}, "
                                 f"{frame.where}): give one another name")
            frames[name] = frame
    return frames


HEADER = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(?:(?:[0-9a-f]{2} ){4}\s*)?([a-z][\w.]*)\s*(.*)$")
TARGET = re.compile(r"<([^>+]+)(\+0x[0-9a-f]+)?>")


def parse_objdump(text):
    """Functions and their branches from `llvm-objdump -d` of the linked image."""
    functions = {}
    current = None
    recent = []     # the last few instructions of the current function, for jump tables
    for line in text.splitlines():
        m = HEADER.match(line)
        if m:
            name = m.group(2)
            if name.startswith("$"):
                continue        # a mapping symbol ($x code, $d data) inside a function
            if name in functions:
                raise StackError(f"symbol {name} appears twice in the image: give one another name")
            current = functions[name] = Function(name, int(m.group(1), 16))
            recent = []
            continue
        m = INSN.match(line)
        if not m or current is None:
            continue
        mnemonic, operands = m.group(2), m.group(3)
        base = mnemonic.split(".")[0]
        t = TARGET.search(operands)
        if mnemonic == "bl" and t:
            if t.group(2):
                current.strays.append(f"bl {t.group(1)}{t.group(2)}")
            else:
                current.calls.append(t.group(1))
        elif base in BRANCHES and t and t.group(1) != current.name:
            if t.group(2):
                current.strays.append(f"{mnemonic} {t.group(1)}{t.group(2)}")
            else:
                current.tails.append(t.group(1))
        elif mnemonic == "blr":
            current.indirect_calls += 1
        elif mnemonic == "br":
            reg = operands.split()[0].rstrip(",")
            # A jump table: the register was just made from a PC-relative address (adr).
            if not any(op == "adr" and args.startswith(reg + ",") for op, args in recent):
                current.indirect_tails += 1
        recent = (recent + [(mnemonic, operands)])[-8:]
    return functions


def parse_header(text):
    """The #define'd integers of a header (STACK_SIZE, GUEST_FRAME_SIZE)."""
    return {m.group(1): int(m.group(2), 0)
            for m in re.finditer(r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", text, re.M)}


@dataclass
class Chain:
    depth: int              # bytes below the point the entry is entered at
    path: list              # (function, its frame) from the entry down


class Analysis:
    def __init__(self, frames, functions, entries=None, indirect=None, resets=None):
        self.frames = frames
        self.functions = functions
        self.entries = ENTRIES if entries is None else entries
        self.indirect = INDIRECT if indirect is None else indirect
        self.resets = STACK_RESETS if resets is None else resets
        self.memo = {}
        self.active = []

    def _callees(self, f):
        fn = self.functions.get(f)
        if fn is None:
            raise StackError(f"{f} is not in the image")
        if fn.strays:
            raise StackError(f"{f} branches into the middle of another function: "
                             f"{', '.join(fn.strays)}")
        targets = self.indirect.get(f)
        if (fn.indirect_calls or fn.indirect_tails) and targets is None:
            raise StackError(f"{f} calls through a pointer: list what it can call in INDIRECT "
                             "(tools/stackdepth.py)")
        calls = list(fn.calls) + (list(targets) if fn.indirect_calls else [])
        tails = list(fn.tails) + (list(targets) if fn.indirect_tails else [])
        return calls, tails

    def chain(self, f):
        """The deepest chain from f: its frame, then its deepest callee's."""
        if f in self.resets:
            return Chain(0, [(f, 0)])
        if f in self.memo:
            return self.memo[f]
        if f in self.active:
            cycle = self.active[self.active.index(f):] + [f]
            raise StackError("recursion, so no bound: " + " -> ".join(cycle))
        frame = self.frames.get(f)
        if frame is None:
            raise StackError(f"no stack figure for {f} (assembly?): give it one, or list it "
                             "in STACK_RESETS if it leaves the stack (tools/stackdepth.py)")
        if frame.qualifier not in ("static", "dynamic,bounded"):
            raise StackError(f"{f} ({frame.where}) has a frame of unbounded size ({frame.qualifier})")
        self.active.append(f)
        calls, tails = self._callees(f)
        best = Chain(frame.size, [(f, frame.size)])
        for callee in calls:
            c = self.chain(callee)
            if frame.size + c.depth > best.depth:
                best = Chain(frame.size + c.depth, [(f, frame.size)] + c.path)
        for callee in tails:
            c = self.chain(callee)  # f's frame is gone before it branches
            if c.depth > best.depth:
                best = Chain(c.depth, [(f, 0)] + c.path)
        self.active.pop()
        self.memo[f] = best
        return best

    def check_entries(self):
        """Every C function the assembly branches to is a listed entry point, and vice versa."""
        from_asm = set()
        for fn in self.functions.values():
            if fn.name in self.frames:
                continue        # C
            for target in fn.calls + fn.tails:
                if target in self.frames:
                    from_asm.add(target)
        unlisted = sorted(from_asm - set(self.entries))
        if unlisted:
            raise StackError("the assembly enters C functions that are not listed entry points: "
                             + ", ".join(unlisted) + " (ENTRIES, tools/stackdepth.py)")
        stale = sorted(set(self.entries) - from_asm)
        if stale:
            raise StackError("listed entry points the assembly does not enter: " + ", ".join(stale))


@dataclass
class Result:
    entry: str
    below: int              # bytes on the stack when it is entered
    chain: Chain
    on_top_of: str = ""     # a nested entry: the deepest entry point it may interrupt

    @property
    def total(self):
        return self.below + self.chain.depth


def analyse(frames, functions, stack_size, guest_frame, entries=None, indirect=None, resets=None):
    """Each entry point's worst case; raises StackError if any is unbounded or over budget."""
    a = Analysis(frames, functions, entries, indirect, resets)
    a.check_entries()
    results = []
    for entry, kind in a.entries.items():
        if kind != "nested":
            below = guest_frame if kind in ("guest", "idle") else 0
            results.append(Result(entry, below, a.chain(entry)))
    deepest = max(results, key=lambda r: r.total, default=None)
    for entry, kind in a.entries.items():
        if kind == "nested":
            below = (deepest.total if deepest else 0) + guest_frame
            results.append(Result(entry, below, a.chain(entry), deepest.entry if deepest else ""))
    results.sort(key=lambda r: (-r.total, r.entry))
    over = [r for r in results if r.total > stack_size]
    if over:
        raise StackError("stack overflow possible: " + "; ".join(
            f"{r.entry} needs {r.total} bytes of {stack_size}: {format_path(r)}" for r in over))
    return results


def format_path(r):
    path = " -> ".join(f"{name} ({size})" for name, size in r.chain.path)
    return f"[{r.on_top_of}'s deepest + guest frame] -> {path}" if r.on_top_of else path


def report(results, stack_size, guest_frame, top=None):
    lines = [f"worst-case stack per entry point (STACK_SIZE {stack_size} bytes, guest frame "
             f"{guest_frame})",
             f"  {'entry point':26} {'below':>6} {'depth':>6} {'total':>6}  of stack"]
    for r in results[:top]:
        lines.append(f"  {r.entry:26} {r.below:6} {r.chain.depth:6} {r.total:6}  "
                     f"{100 * r.total / stack_size:4.1f}%")
    return lines


def run(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elf", required=True, type=Path, help="the linked hypervisor")
    ap.add_argument("--header", required=True, type=Path, help="cpu.h: STACK_SIZE, GUEST_FRAME_SIZE")
    ap.add_argument("--objdump", default="llvm-objdump")
    ap.add_argument("--report", type=Path, help="write every entry point's deepest chain here")
    ap.add_argument("su", nargs="+", type=Path, help=".su files of the hypervisor's C objects")
    args = ap.parse_args(argv)

    try:
        consts = parse_header(args.header.read_text())
        try:
            stack_size, guest_frame = consts["STACK_SIZE"], consts["GUEST_FRAME_SIZE"]
        except KeyError as e:
            raise StackError(f"{args.header} does not define {e.args[0]}") from None
        # A file that defines no function has no .su; a function without a figure that is
        # reached is an error below.
        frames = merge_frames((str(p), parse_su(p.read_text(), str(p)))
                              for p in args.su if p.exists())
        dis = subprocess.run([args.objdump, "-d", "--no-show-raw-insn", str(args.elf)],
                             check=True, capture_output=True, text=True).stdout
        results = analyse(frames, parse_objdump(dis), stack_size, guest_frame)
    except (StackError, OSError, subprocess.CalledProcessError) as e:
        print(f"stackdepth: error: {e}", file=sys.stderr)
        return 1

    summary = report(results, stack_size, guest_frame, top=4)
    summary.append(f"  deepest: {format_path(results[0])}")
    print("\n".join(summary))
    if args.report:
        full = report(results, stack_size, guest_frame)
        full += ["", "deepest chain of each (function, its frame in bytes; 0: a tail call or "
                 "a stack reset):"]
        full += [f"  {r.entry}: {format_path(r)}" for r in results]
        tmp = args.report.with_suffix(".tmp")
        tmp.write_text("\n".join(full) + "\n")
        tmp.replace(args.report)
    return 0


if __name__ == "__main__":
    sys.exit(run())
