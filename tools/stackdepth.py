#!/usr/bin/env python3
"""Worst-case stack depth of every hypervisor entry point, checked against the stack size.

Reads what the compiler says each C function's frame is (-fstack-usage: one .su file per
object) and the call graph of the linked image (llvm-objdump -d), then walks it from each
entry point the assembly enters.  Fails when the graph has a cycle (recursion: no bound), when
something it cannot bound is reachable (a frame of dynamic size, an indirect call nobody
listed, an assembly routine without a figure), or when an entry point's worst case, with the
guest frame the trap entry pushes, exceeds STACK_SIZE (arch/<isa>/include/arch/cpu.h).

Both ISAs the hypervisor runs on, each with its own tables below: arm64 (`bl` calls, `b` and
`cbz`/... tail calls, `blr`/`br` through INDIRECT) and riscv64 (`jal`/`auipc ra + jalr ra`
calls, `j`/`auipc t1 + jr t1` and branches to another function as tail calls, any other
`jalr`/`jr` through INDIRECT).  The ISA is the ELF header's unless --arch says.

    stackdepth.py --elf build/arm64/tern.elf --header arch/arm64/include/arch/cpu.h \
                  [--arch arm64|riscv64] [--report build/arm64/stack-usage.txt] build/arm64/**/*.su
"""

import argparse
import bisect
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# What lies on the stack below an entry point when the assembly enters it (both ISAs):
#   "top":   the very top of the core's stack
#   "idle":  the top of the core's stack below the guest frame's place, which set_stack and
#            arch_cpu_return_to_idle keep free: arch_vcpu_run builds the frame there
#            (GUEST_FRAME_SIZE)
#   "guest": the guest frame the vector pushed at the top (GUEST_FRAME_SIZE; an arm64 shared
#            core pushes it in the vCPU's context and starts C at the very top: less)
#   "nested": an exception in the hypervisor itself, which can come at any depth of its own
#            code: the guest frame's worth of registers pushed below the deepest other entry
#            point
#   "panic": the same exception, taken on the core's own panic stack (PANIC_STACK_SIZE: the
#            faulting stack may be the fault, run into its guard page): the guest frame's
#            worth of registers at its top

# ---- arm64 ------------------------------------------------------------------------------

# The C functions boot.S and vectors.S enter.
ARM64_ENTRIES = {
    "arm64_boot_primary": "idle",
    "arm64_boot_secondary": "idle",
    "cpu_idle": "idle",
    "arm64_guest_sync": "guest",
    "arm64_guest_irq": "guest",
    "arm64_guest_fiq": "guest",
    "arm64_guest_wfi": "guest",
    "arm64_guest_async_abort": "guest",
    "arm64_hyp_panic": "panic",
}

# Calls through function pointers: the only ones are the emulated devices' MMIO handlers,
# registered at boot (core/mmio.c, mmio_add) and called by mmio_emulate (a channel's doorbell
# page is one: core/channel.c), and the partition UART's register model behind uart_access
# (platform.uart_model).
# The schedulers' operations (core/sched*.c), reached through struct sched_ops on both ISAs.
_SCHEDULERS = ("null", "a653", "rtds", "credit")
_SCHED_OPS = {op: tuple(f"{k}_{op}" for k in _SCHEDULERS)
              for op in ("pick", "wake", "block", "ran", "check", "apply", "added")}
SCHED_INDIRECT = {
    "sched_core_init": _SCHED_OPS["check"] + _SCHED_OPS["apply"],
    "sched_add": _SCHED_OPS["check"] + _SCHED_OPS["apply"] + _SCHED_OPS["added"],
    "sched_pick": _SCHED_OPS["pick"],
    "sched_wake": _SCHED_OPS["wake"],
    "sched_unpause": _SCHED_OPS["wake"],
    "sched_block": _SCHED_OPS["block"],
    "sched_ran": _SCHED_OPS["ran"],
    "sched_params": _SCHED_OPS["check"] + _SCHED_OPS["apply"],
    "shared_core_post_params": _SCHED_OPS["check"],
    "shared_core_post_timeline": _SCHED_OPS["check"],
}

ARM64_INDIRECT = {
    "mmio_emulate": ("uart_access", "vpci_access", "vgicd_access", "vgicr_access", "doorbell_access"),
    "mmio_trap": ("uart_access", "vpci_access", "vgicd_access", "vgicr_access",
                  "doorbell_access"),  # mmio_emulate inlined
    "uart_access": ("vpl011_access",),  # the board's model (qemu-virt: VUART := pl011)
    **SCHED_INDIRECT,
}

# Assembly that moves the stack pointer back to the top of the core's stack and never
# returns: whatever called it has left the stack, so a chain ends there.
ARM64_STACK_RESETS = {
    "arch_cpu_return_to_idle": "boot.S: back to cpu_idle on an empty stack",
    "guest_enter": "vectors.S: sp = the guest frame at the top, then eret",
}

# Assembly that C calls and that returns, with the bytes of stack it uses: none so far.
ARM64_ASSEMBLY = {}

ARM64_BRANCHES = {"b", "cbz", "cbnz", "tbz", "tbnz"}

# ---- riscv64 ----------------------------------------------------------------------------

# The C functions boot.S and vectors.S enter.  A trap from a guest (trap_entry) saves the
# guest frame at the top; one taken in HS-mode (from_hs) pushes 256 bytes of registers at the
# top of the core's panic stack, which the panic entry's guest frame (272) covers.
RISCV64_ENTRIES = {
    "riscv_boot_primary": "idle",
    "riscv_boot_secondary": "idle",
    "cpu_idle": "idle",
    "riscv_guest_trap": "guest",
    "riscv_hyp_panic": "panic",
}

# As on arm64: mmio_emulate's MMIO handlers (the partition UART, the emulated PCI ECAM, the
# virtual APLIC, channels' doorbell pages) and uart_access's register model.
RISCV64_INDIRECT = {
    "mmio_emulate": ("uart_access", "vpci_access", "vaplic_access", "doorbell_access"),
    "mmio_trap": ("uart_access", "vpci_access", "vaplic_access", "doorbell_access"),  # mmio_emulate inlined
    "uart_access": ("vns16550_access",),  # the board's model (VUART := ns16550)
    "riscv_probe_exec": (),     # calls a `ret` in data, which must fault (the boot check)
    **SCHED_INDIRECT,
}

RISCV64_STACK_RESETS = {
    "arch_cpu_return_to_idle": "boot.S: back to cpu_idle on an empty stack",
    "guest_enter": "vectors.S: the guest's registers from the frame at the top, then sret",
}

RISCV64_ASSEMBLY = {
    "riscv_fetch_guest_insn": (0, "vectors.S: two HLVX reads with stvec pointed at its own code"),
    "riscv_probe_load": (0, "boot.S: one load with stvec pointed at its own code"),
    "riscv_probe_store": (0, "boot.S: one AMO with stvec pointed at its own code"),
    "riscv_probe_exec": (0, "boot.S: one call with stvec pointed at its own code"),
    "riscv_fp_save": (0, "fp.S: stores f0-f31 and fcsr, no stack"),
    "riscv_fp_restore": (0, "fp.S: loads f0-f31 and fcsr, no stack"),
}

RISCV64_BRANCHES = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez",
                    "bltz", "bgtz", "bgt", "ble", "bgtu", "bleu"}


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


def parse_objdump_arm64(text):
    """Functions and their branches from `llvm-objdump -d` of the linked arm64 image."""
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
        elif base in ARM64_BRANCHES and t and t.group(1) != current.name:
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


# riscv64: the operands llvm-objdump prints.  `jalr 48(ra)` is `jalr ra, 48(ra)`, `jr a5` is
# `jalr zero, 0(a5)`; older versions print `jalr rd, rs1, imm`.
ADDRESS = re.compile(r"(?:^|[\s,])0x([0-9a-f]+)(?:\s+<[^>]*>)?$")
RV_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(?:(?:[0-9a-f]{2} ){2,4}\s*)?([a-z][\w.]*)\s*(.*)$")
RV_OFFSET_BASE = re.compile(r"(-?\d+)\((\w+)\)")
RV_LINKLESS = {"zero", "x0"}


def _rv_jalr(mnemonic, operands):
    """(rd, rs1, offset) of a jalr or jr."""
    ops = [o.strip() for o in operands.split(",")]
    rd = "zero" if mnemonic == "jr" else "ra"
    if mnemonic == "jalr" and len(ops) > 1 and not ops[1].lstrip("-").isdigit():
        rd = ops.pop(0)
    m = RV_OFFSET_BASE.fullmatch(ops[0])
    if m:
        return rd, m.group(2), int(m.group(1))
    return rd, ops[0], int(ops[1], 0) if len(ops) > 1 else 0


def _rv_auipc_target(prev, rs1, offset):
    """The address `auipc rs1, hi` just before at `prev` and a jalr's offset make, or None."""
    if prev is None:
        return None
    pc, mnemonic, operands = prev
    ops = [o.strip() for o in operands.split(",")]
    if mnemonic != "auipc" or len(ops) != 2 or ops[0] != rs1:
        return None
    hi = int(ops[1], 0) & 0xfffff        # printed as the unsigned 20-bit field
    if hi & 0x80000:
        hi -= 0x100000
    return pc + (hi << 12) + offset


def _rv_jump_table(reg, recent):
    """clang's jump table: `auipc t, hi; addi t, t, lo; add y, index, t; ld reg, 0(y); jr reg`:
    the register was just loaded from a PC-relative table indexed by a register."""
    for i, (_, mnemonic, operands) in enumerate(recent):
        ops = [o.strip() for o in operands.split(",")]
        if mnemonic != "ld" or len(ops) != 2 or ops[0] != reg:
            continue
        m = RV_OFFSET_BASE.fullmatch(ops[1])
        if not m or m.group(1) != "0":
            continue
        y = m.group(2)
        auipcs = {o.split(",")[0].strip() for _, op, o in recent[:i] if op == "auipc"}
        for _, op, o in recent[:i]:
            a = [x.strip() for x in o.split(",")]
            if op == "add" and len(a) == 3 and a[0] == y and y in a[1:] and \
                    (set(a[1:]) - {y}) & auipcs:
                return True
    return False


def parse_objdump_riscv64(text):
    """Functions and their branches from `llvm-objdump -d` of the linked riscv64 image.

    Branch targets are resolved by address, not by objdump's annotation: the assembler keeps
    local labels (.Lpcrel_hi*, .LBB*) in the symbol table, which are no functions, and calls
    come as `auipc ra, hi; jalr lo(ra)` pairs that objdump does not annotate."""
    bodies = {}         # name -> [(address, mnemonic, operands)]
    current = None
    for line in text.splitlines():
        m = HEADER.match(line)
        if m:
            name = m.group(2)
            if name.startswith(".L") or name.startswith("$"):
                continue        # a local label inside a function
            if name in bodies:
                raise StackError(f"symbol {name} appears twice in the image: give one another name")
            current = name
            bodies[name] = (int(m.group(1), 16), [])
            continue
        m = RV_INSN.match(line)
        if m and current is not None:
            bodies[current][1].append((int(m.group(1), 16), m.group(2), m.group(3)))

    starts = sorted((address, name) for name, (address, _) in bodies.items())
    by_address = dict(starts)
    addresses = [a for a, _ in starts]

    def where(target):
        """(function, offset) of an address, or (None, address) below every function."""
        i = bisect.bisect_right(addresses, target) - 1
        if i < 0:
            return None, target
        return starts[i][1], target - starts[i][0]

    functions = {}
    for name, (address, insns) in bodies.items():
        fn = functions[name] = Function(name, address)

        def branch(mnemonic, target, call):
            owner, offset = where(target)
            if owner is None:
                fn.strays.append(f"{mnemonic} {target:#x}")
            elif offset:
                if owner != name:
                    fn.strays.append(f"{mnemonic} {owner}+{offset:#x}")
            elif call:
                fn.calls.append(owner)          # a call to itself included: recursion
            elif owner != name:
                fn.tails.append(owner)          # a jump to its own start is a loop

        recent = []     # the last few instructions, for auipc pairs and jump tables
        for at, mnemonic, operands in insns:
            prev = recent[-1] if recent else None
            t = ADDRESS.search(operands)
            if mnemonic in ("jal", "call") and t:
                rd = operands.split(",")[0].strip() if "," in operands else "ra"
                branch(mnemonic, int(t.group(1), 16), rd not in RV_LINKLESS)
            elif mnemonic in ("j", "tail") and t:
                branch(mnemonic, int(t.group(1), 16), False)
            elif mnemonic in RISCV64_BRANCHES and t:
                branch(mnemonic, int(t.group(1), 16), False)
            elif mnemonic in ("jalr", "jr"):
                rd, rs1, offset = _rv_jalr(mnemonic, operands)
                call = rd not in RV_LINKLESS
                target = _rv_auipc_target(prev, rs1, offset)
                if target is not None:
                    branch(f"auipc+{mnemonic}", target, call)
                elif call:
                    fn.indirect_calls += 1
                elif rs1 == "ra" and offset == 0:
                    pass        # jr ra: a return
                elif not _rv_jump_table(rs1, recent):
                    fn.indirect_tails += 1
            recent = (recent + [(at, mnemonic, operands)])[-8:]
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
    def __init__(self, frames, functions, entries=None, indirect=None, resets=None,
                 assembly=None):
        self.frames = frames
        self.functions = functions
        self.entries = ARM64_ENTRIES if entries is None else entries
        self.indirect = ARM64_INDIRECT if indirect is None else indirect
        self.resets = ARM64_STACK_RESETS if resets is None else resets
        self.assembly = ARM64_ASSEMBLY if assembly is None else assembly
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
        if frame is None and f in self.assembly:
            size, why = self.assembly[f]
            frame = Frame(size, "static", why)
        if frame is None:
            raise StackError(f"no stack figure for {f} (assembly?): give it one in ASSEMBLY, "
                             "or list it in STACK_RESETS if it leaves the stack "
                             "(tools/stackdepth.py)")
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
    stack: int = 0          # the size of the stack it runs on

    @property
    def total(self):
        return self.below + self.chain.depth


def analyse(frames, functions, stack_size, guest_frame, entries=None, indirect=None, resets=None,
            assembly=None, panic_stack_size=None):
    """Each entry point's worst case; raises StackError if any is unbounded or over budget."""
    a = Analysis(frames, functions, entries, indirect, resets, assembly)
    a.check_entries()
    results = []
    for entry, kind in a.entries.items():
        if kind == "panic":
            if panic_stack_size is None:
                raise StackError(f"{entry} runs on the panic stack: the header defines no "
                                 "PANIC_STACK_SIZE")
            results.append(Result(entry, guest_frame, a.chain(entry), stack=panic_stack_size))
        elif kind != "nested":
            below = guest_frame if kind in ("guest", "idle") else 0
            results.append(Result(entry, below, a.chain(entry), stack=stack_size))
    deepest = max((r for r in results if r.stack == stack_size), key=lambda r: r.total, default=None)
    for entry, kind in a.entries.items():
        if kind == "nested":
            below = (deepest.total if deepest else 0) + guest_frame
            results.append(Result(entry, below, a.chain(entry), deepest.entry if deepest else "",
                                  stack=stack_size))
    results.sort(key=lambda r: (-r.total / r.stack, r.entry))
    over = [r for r in results if r.total > r.stack]
    if over:
        raise StackError("stack overflow possible: " + "; ".join(
            f"{r.entry} needs {r.total} bytes of {r.stack}: {format_path(r)}" for r in over))
    return results


def format_path(r):
    path = " -> ".join(f"{name} ({size})" for name, size in r.chain.path)
    return f"[{r.on_top_of}'s deepest + guest frame] -> {path}" if r.on_top_of else path


def report(results, stack_size, guest_frame, top=None):
    lines = [f"worst-case stack per entry point (STACK_SIZE {stack_size} bytes, guest frame "
             f"{guest_frame})",
             f"  {'entry point':26} {'below':>6} {'depth':>6} {'total':>6}  of stack"]
    for r in results[:top]:
        of = "" if r.stack == stack_size else f" of the {r.stack}-byte panic stack"
        lines.append(f"  {r.entry:26} {r.below:6} {r.chain.depth:6} {r.total:6}  "
                     f"{100 * r.total / r.stack:4.1f}%{of}")
    return lines


@dataclass(frozen=True)
class Isa:
    machine: int            # the ELF header's e_machine
    objdump_args: tuple     # what llvm-objdump needs to decode every instruction the build emits
    parse: object           # objdump text -> {name: Function}
    entries: dict
    indirect: dict
    resets: dict
    assembly: dict


ISAS = {
    "arm64": Isa(183, (), parse_objdump_arm64, ARM64_ENTRIES, ARM64_INDIRECT,
                 ARM64_STACK_RESETS, ARM64_ASSEMBLY),
    # rv64imac (the build's -march); the CSR instructions need nothing, the H extension's
    # (hfence, hlv, written as .word) show as <unknown> and branch nowhere.
    "riscv64": Isa(243, ("--mattr=+m,+a,+c",), parse_objdump_riscv64, RISCV64_ENTRIES,
                   RISCV64_INDIRECT, RISCV64_STACK_RESETS, RISCV64_ASSEMBLY),
}


def elf_arch(path):
    """The ISA of an ELF file, from its header's e_machine."""
    with open(path, "rb") as f:
        header = f.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        raise StackError(f"{path} is not an ELF file")
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    for name, isa in ISAS.items():
        if isa.machine == machine:
            return name
    raise StackError(f"{path}: no tables for ELF machine {machine} (ISAS, tools/stackdepth.py)")


def run(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elf", required=True, type=Path, help="the linked hypervisor")
    ap.add_argument("--header", required=True, type=Path, help="cpu.h: STACK_SIZE, GUEST_FRAME_SIZE")
    ap.add_argument("--arch", choices=sorted(ISAS), help="the image's ISA (default: its ELF header's)")
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
        isa = ISAS[args.arch or elf_arch(args.elf)]
        dis = subprocess.run([args.objdump, "-d", "--no-show-raw-insn", *isa.objdump_args,
                              str(args.elf)], check=True, capture_output=True, text=True).stdout
        results = analyse(frames, isa.parse(dis), stack_size, guest_frame, isa.entries,
                          isa.indirect, isa.resets, isa.assembly, consts.get("PANIC_STACK_SIZE"))
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
