"""rt's core, instruction by instruction: the interrupt path read from a QEMU execution trace.

Under icount all emulated cores share one instruction clock and QEMU runs them in turns, so a
latency measured in emulated time beside busy cores also counts the instructions the *other*
cores ran while the real-time core waited for its turn (docs/benchmarks.md). What Tern does on
the real-time core itself does not depend on that: this module counts it exactly, from a trace
of every instruction (`-singlestep -d exec,nochain,int`), per interrupt the latency guest
takes:

- hyp: hypervisor (EL2) instructions that delivered the interrupt, from the physical interrupt
  (its exception, or the wake-up from the hypervisor's own WFI) to the `eret` that returns to the
  guest; 0 with direct delivery;
- vector: guest (EL1) instructions from the interrupt's exception entry to the handler's
  counter read (the latency guest's timestamp);
- exceptions: every exception the core took since the previous sample, by kind (interference
  from anything else shows there).

The trace logs a block (one instruction with -singlestep) when it is entered; a block the
core then leaves before executing it (its turn ended, or an interrupt is taken first) shows
twice or is followed by an asynchronous exception whose ELR is its address: both are dropped.
"""

import bisect
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from .errors import ToolError

# QEMU's exception names (target/arm/internals.h via arm_log_exception) for interrupts.
ASYNC = frozenset({"IRQ", "FIQ", "Virtual IRQ", "Virtual FIQ"})
# A64 TB flags: bits 4..7 are the MMU index; 6 is EL2's (non-VHE) regime in QEMU 7.2.
MMUIDX_SHIFT, MMUIDX_MASK, MMUIDX_EL2 = 4, 0xF, 6
# The latency guest's IRQ vector slot: `msr tpidr_el1, x0` then the counter read.
VECTOR_IRQ_SLOT, COUNTER_READ_OFFSET = 5 * 128, 4

_TRACE = re.compile(r"^Trace (\d+): \S+ \[[0-9a-f]+/([0-9a-f]+)/([0-9a-f]+)/")
_TAKING = re.compile(r"^Taking exception \d+ \[([^\]]+)\] on CPU (\d+)")
_TO_EL = re.compile(r"^\.\.\.to EL(\d) PC ")
_ELR = re.compile(r"^\.\.\.with ELR 0x([0-9a-f]+)")
_ERET = re.compile(r"^Exception return from AArch64 EL(\d) to AArch64 EL(\d)")
_WFI = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} ){4}\s*wfi\b", re.M)


@dataclass
class Points:
    """Addresses the parser needs: the guest's timestamp reads and the hypervisor's WFIs."""

    counter_reads: dict            # EL1 address -> "virt" / "phys"
    hyp_wfis: frozenset            # EL2 addresses of WFI instructions


def _nm(elf):
    out = _tool(["llvm-nm", str(elf)])
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


def _tool(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise ToolError(f"{cmd[0]} failed on {cmd[-1]}: {e}") from e


def points(lat_elf, hyp_elf):
    syms = _nm(lat_elf)
    try:
        reads = {syms[f"lat_vectors_{kind}"] + VECTOR_IRQ_SLOT + COUNTER_READ_OFFSET: kind
                 for kind in ("virt", "phys")}
    except KeyError as e:
        raise ToolError(f"{lat_elf}: no symbol {e}") from e
    wfis = frozenset(int(m.group(1), 16) for m in _WFI.finditer(_tool(["llvm-objdump", "-d",
                                                                       str(hyp_elf)])))
    return Points(reads, wfis)


@dataclass
class Sample:
    counter: str                   # "virt" / "phys": which timer's vector read the counter
    hyp: int
    vector: int
    exceptions: Counter = field(default_factory=Counter)


class _Core:
    """The parser's state for the one core it follows."""

    def __init__(self, pts):
        self.pts = pts
        self.samples = []
        self.pending = None        # (pc, el2) logged, not yet known to have executed
        self.exc_kind = None
        self.in_episode = False    # delivering a physical interrupt at EL2
        self.episode = 0
        self.hyp = 0               # the last episode's count, for the next sample
        self.vector = None         # counting since the interrupt's EL1 entry
        self.exceptions = Counter()

    def executed(self, pc, el2):
        if el2:
            if self.in_episode:
                self.episode += 1
            if pc in self.pts.hyp_wfis:
                # Waiting in the hypervisor (a trapped guest WFI): the interrupt that wakes
                # it is delivered from the next instruction on.
                self.in_episode, self.episode = True, 0
            return
        if self.vector is not None:
            self.vector += 1
        kind = self.pts.counter_reads.get(pc)
        if kind is not None and self.vector is not None:
            self.samples.append(Sample(kind, self.hyp, self.vector, self.exceptions))
            self.hyp, self.vector, self.exceptions = 0, None, Counter()

    def trace(self, pc, el2):
        if self.pending is not None and self.pending != (pc, el2):
            self.executed(*self.pending)
        self.pending = (pc, el2)

    def flush(self):
        """The trace ended: its last entry counts as executed."""
        if self.pending is not None:
            self.executed(*self.pending)
            self.pending = None

    def taking(self, kind):
        self.exc_kind = kind

    def elr(self, address):
        if self.pending is not None:
            if not (self.exc_kind in ASYNC and address == self.pending[0]):
                self.executed(*self.pending)
            self.pending = None

    def entered(self, target_el):
        kind = self.exc_kind
        self.exceptions[kind] += 1
        if target_el == 2:
            self.in_episode, self.episode = kind in ASYNC, 0
        elif kind in ASYNC:
            self.vector = 0

    def eret(self, from_el):
        self.flush()
        if from_el == 2:
            if self.in_episode:
                self.hyp = self.episode
            self.in_episode = False


def parse(lines, cpu, pts):
    """The samples core `cpu` took, in order, from trace `lines` (an iterable of str)."""
    core = _Core(pts)
    last_cpu = None            # lines without a CPU number belong to the core that ran last
    for line in lines:
        m = _TRACE.match(line)
        if m:
            last_cpu = int(m.group(1))
            if last_cpu == cpu:
                flags = int(m.group(3), 16)
                core.trace(int(m.group(2), 16),
                           (flags >> MMUIDX_SHIFT) & MMUIDX_MASK == MMUIDX_EL2)
            continue
        m = _TAKING.match(line)
        if m:
            last_cpu = int(m.group(2))
            if last_cpu == cpu:
                core.taking(m.group(1))
            continue
        if last_cpu != cpu:
            continue
        m = _ELR.match(line)
        if m:
            core.elr(int(m.group(1), 16))
            continue
        m = _TO_EL.match(line)
        if m:
            core.entered(int(m.group(1)))
            continue
        m = _ERET.match(line)
        if m:
            core.eret(int(m.group(1)))
    core.flush()
    return core.samples


def group(samples, tests, per_test):
    """Split `samples` into the latency guest's timer tests, run in the order `tests` (names
    like "vtimer-wfi") with `per_test` samples each. Tests of one counter back to back form one
    run of samples; each test takes its share from the run's end (the start delay's wake-ups,
    if traced, are at the front). Returns {test: [Sample, ...]}.
    """
    runs = []
    for s in samples:
        if runs and runs[-1][0] == s.counter:
            runs[-1][1].append(s)
        else:
            runs.append((s.counter, [s]))
    out, i = {}, 0
    for counter, run in runs:
        names = []
        while i < len(tests) and _counter_of(tests[i]) == counter:
            names.append(tests[i])
            i += 1
        if not names:
            raise ToolError(f"trace: samples of the {counter} timer where none was expected")
        if len(run) < len(names) * per_test:
            raise ToolError(f"trace: {len(run)} samples for {', '.join(names)}, expected "
                            f"{per_test} each (did the trace start late?)")
        for k, name in enumerate(reversed(names)):
            end = len(run) - k * per_test
            out[name] = run[end - per_test:end]
    missing = [t for t in tests if t not in out]
    if missing:
        raise ToolError(f"trace: no samples for {', '.join(missing)}")
    return out


def _counter_of(test):
    return "virt" if test.startswith("vtimer") else "phys"


def summary(samples, warmup):
    """Stats of a test's samples: min/max of hyp and vector after `warmup`, exception census."""
    warm = samples[warmup:] if len(samples) > warmup else samples
    exceptions = Counter()
    for s in warm:
        exceptions.update(s.exceptions)
    return {"samples": len(samples), "warm": len(warm),
            "hyp_min": min(s.hyp for s in warm), "hyp_max": max(s.hyp for s in warm),
            "vector_min": min(s.vector for s in warm), "vector_max": max(s.vector for s in warm),
            "exceptions": dict(sorted(exceptions.items()))}


# ---- Guest-to-guest switches on a shared core (bench's shared-switch-trace-*) ----
#
# Any hypervisor, any core: a path starts at an IRQ or FIQ taken from EL1 to EL2 and ends at
# the first eret back to EL1; it is a switch if one of its EL2 instructions lies in a marker
# function (the one that saves the outgoing vCPU). Exceptions the hypervisor takes from EL2
# inside a path (a nested IRQ, a trap of its own) are part of it: the core ran them on the way.

_FROM_TO = re.compile(r"^\.\.\.from EL(\d) to EL(\d)")


@dataclass
class Symbols:
    """A hypervisor ELF's functions, sorted, and the marker function's [lo, hi)."""

    starts: list
    names: list
    marker: tuple
    _names: dict = field(default_factory=dict, repr=False)     # pc -> name, as looked up

    def name(self, pc):
        name = self._names.get(pc)
        if name is None:
            i = bisect.bisect_right(self.starts, pc) - 1
            name = self._names[pc] = self.names[i] if i >= 0 else "?"
        return name

    def text(self):
        """[lo, hi) of the functions (for QEMU's -dfilter)."""
        return self.starts[0], self.starts[-1] + 0x1000


def symbols(elf, marker):
    """The function symbols of `elf` (llvm-nm), with `marker`'s range."""
    funcs = {}
    for line in _tool(["llvm-nm", "-n", str(elf)]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            funcs.setdefault(int(parts[0], 16), parts[2])
    return symbols_of(sorted(funcs.items()), marker, elf)


def symbols_of(pairs, marker, where="symbols"):
    """Symbols from sorted (address, name) pairs."""
    starts = [a for a, _ in pairs]
    names = [n for _, n in pairs]
    if marker not in names:
        raise ToolError(f"{where}: no function {marker}")
    i = names.index(marker)
    later = [a for a in starts[i + 1:] if a > starts[i]]
    return Symbols(starts, names, (starts[i], later[0] if later else starts[i] + 0x1000))


@dataclass
class Switches:
    """One core's paths: the EL2 instruction count of each switch, in order, each switch's
    per-function counts, and how many paths did not switch."""

    counts: list = field(default_factory=list)
    functions: list = field(default_factory=list)
    others: int = 0


class _SwitchCore:
    def __init__(self, syms):
        self.syms = syms
        self.out = Switches()
        self.pending = None        # (pc, el2) logged, not yet known to have executed
        self.exc_kind = None
        self.from_to = None
        self.path = None           # [instructions, switched, Counter of functions]

    def executed(self, pc, el2):
        path = self.path
        if path is None or not el2:
            return
        path[0] += 1
        pcs = path[2]              # by address here, by function at the path's end
        pcs[pc] = pcs.get(pc, 0) + 1
        if not path[1] and self.syms.marker[0] <= pc < self.syms.marker[1]:
            path[1] = True

    def flush(self):
        if self.pending is not None:
            self.executed(*self.pending)
            self.pending = None

    def taking(self, kind):
        self.exc_kind, self.from_to = kind, None

    def from_el(self, src, dst):
        self.from_to = (src, dst)

    def elr(self, address):
        # An interrupt taken before the logged block ran returns to it: it did not execute.
        if self.pending is not None:
            if not (self.exc_kind in ASYNC and address == self.pending[0]):
                self.executed(*self.pending)
            self.pending = None

    def entered(self):
        if self.path is None and self.from_to == (1, 2) and self.exc_kind in ("IRQ", "FIQ"):
            self.path = [0, False, {}]
            self.pending = None    # outside a path Trace lines are not followed

    def eret(self, src, dst):
        self.flush()
        if src == 2 and dst == 1 and self.path is not None:
            count, switched, pcs = self.path
            if switched:
                funcs = Counter()
                for pc, n in pcs.items():
                    funcs[self.syms.name(pc)] += n
                self.out.counts.append(count)
                self.out.functions.append(funcs)
            else:
                self.out.others += 1
            self.path = None


class SwitchParser:
    """parse_switches one line at a time; `cores` ({cpu: Switches}) grows as it goes, so that
    another thread can note how far it got (a switch's index at a console line).

    Traces run to GBs and QEMU waits for a FIFO's reader: the Trace lines, nearly all of
    them, are cut at fixed offsets instead of matched, and skipped outright outside a path."""

    def __init__(self, syms):
        self.syms = syms
        self._cores = {}
        self._by_key = {}          # the CPU number as the line spells it -> _SwitchCore
        self._blocks = {}          # (pc, flags) as spelt -> (pc, el2)
        self._core = None
        self.cores = {}

    def _on(self, cpu):
        core = self._cores.get(cpu)
        if core is None:
            core = self._cores[cpu] = _SwitchCore(self.syms)
            self.cores[cpu] = core.out
        self._core = core
        return core

    def feed(self, line):
        if line.startswith("Trace "):
            colon = line.find(":", 6)
            key = line[6:colon]
            core = self._by_key.get(key)
            if core is None:
                if not key.isdigit():
                    return
                core = self._by_key[key] = self._on(int(key))
            self._core = core
            if core.path is None:
                return
            # "[cs_base/pc/flags/cflags]": %016x/%016x/%08x.
            at = line.find("[", colon) + 18
            spelt = line[at:at + 25]
            block = self._blocks.get(spelt)
            if block is None:
                m = _TRACE.match(line)
                if not m:
                    return
                flags = int(m.group(3), 16)
                block = self._blocks[spelt] = (
                    int(m.group(2), 16), (flags >> MMUIDX_SHIFT) & MMUIDX_MASK == MMUIDX_EL2)
            pending = core.pending
            if pending is not None and pending != block:
                core.executed(*pending)
            core.pending = block
            return
        if line.startswith("Taking"):
            m = _TAKING.match(line)
            if m:
                self._on(int(m.group(2))).taking(m.group(1))
            return
        core = self._core
        if core is None:
            return
        if line.startswith("..."):
            m = _FROM_TO.match(line)
            if m:
                core.from_el(int(m.group(1)), int(m.group(2)))
                return
            m = _ELR.match(line)
            if m:
                core.elr(int(m.group(1), 16))
                return
            if _TO_EL.match(line):
                core.entered()
            return
        if line.startswith("Exception return"):
            m = _ERET.match(line)
            if m:
                core.eret(int(m.group(1)), int(m.group(2)))

    def finish(self):
        """The trace ended: {cpu: Switches}."""
        for c in self._cores.values():
            c.flush()
        return dict(sorted(self.cores.items()))


def parse_switches(lines, syms):
    """{cpu: Switches} from trace `lines` (any iterable of str: read as it comes, so a FIFO
    QEMU writes into works, and a trace of GBs needs no room). A line without a CPU number
    (the ELR, the target, an eret) belongs to the core of the last line that had one: QEMU
    logs an exception's lines together, and an eret's right after its own instruction."""
    parser = SwitchParser(syms)
    for line in lines:
        parser.feed(line)
    return parser.finish()


def between(switches, start, end):
    """The Switches of `switches` from mark `start` to mark `end`, marks being (switches,
    other paths) counted so far (SwitchParser.cores at the time)."""
    return Switches(switches.counts[start[0]:end[0]], switches.functions[start[0]:end[0]],
                    end[1] - start[1])


def switch_summary(switches, top=12):
    """{"n", "min", "avg", "max", "others", "functions"} of one core's Switches: functions
    are the `top` most counted of the median switch (by its count), as [[name, n], ...]."""
    counts = switches.counts
    if not counts:
        return {"n": 0, "others": switches.others}
    order = sorted(range(len(counts)), key=lambda i: counts[i])
    median = switches.functions[order[len(order) // 2]]
    return {"n": len(counts), "min": min(counts), "avg": round(sum(counts) / len(counts), 2),
            "max": max(counts), "median": counts[order[len(order) // 2]],
            "others": switches.others,
            "functions": [[name, n] for name, n in median.most_common(top)]}
