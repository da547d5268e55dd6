"""`tern bench`: the latency lab.

Runs one matrix of systems x scenarios on the emulated board under icount and writes
results.json, plots and docs/benchmarks.md. Under icount (`-icount shift=N,align=off,sleep=off`)
virtual time follows the instruction count: results are deterministic and comparable between
systems of one run, but they count instructions, not cycles.

A system is how the guest runs (natively, in a Tern partition, ...); a scenario is what it
measures (timer latency, IPIs, priority order, interference, the real-time partition beside
Linux, cyclictest inside Linux, boot). Each (system, scenario, shift) is one QEMU run (a few for
the Linux scenarios) whose guest output becomes records.
"""

import gzip
import json
import math
import os
import shlex
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

from . import devicetree, initramfs, layout, pathtrace, qemu, results, runner, xen
from .config import PciDevice, dump_toml
from .errors import ToolError
from .units import MiB

REPO = runner.REPO_ROOT
LAT = REPO / "guests" / "build" / "arm64" / "lat.img"
LAT_ELF = REPO / "guests" / "build" / "arm64" / "lat.elf"
HYPERVISOR_ELF = REPO / "hypervisor" / "build" / "arm64" / "tern.elf"
PROBE = REPO / "guests" / "build" / "arm64" / "probe.img"
LAT_RISCV64 = REPO / "guests" / "build" / "riscv64" / "lat.img"
NOISE = REPO / "guests" / "build" / "arm64" / "noise.img"
LINUX_IMAGE = REPO / "build" / "linux" / "Image"
LINUX_INITRD = REPO / "build" / "linux" / "initramfs.cpio.gz"

TIMER_TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy")
IPI_TESTS = ("sgi-wfi", "sgi-busy")
DEVICE_TESTS = ("edu-wfi", "edu-busy")
RISCV64_TESTS = ("sstc-wfi", "sstc-busy", "sbi-timer-wfi", "sbi-timer-busy", "ipi-wfi", "ipi-busy",
                 "sbi-ipi-wfi", "sbi-ipi-busy", "edu-wfi", "edu-busy", "intx-wfi", "intx-busy")
# edu's tests: its MSI, and its INTx line through the APLIC.
RISCV64_DEVICE_TESTS = ("edu-wfi", "edu-busy", "intx-wfi", "intx-busy")
# What a riscv64 partition of each delivery mode can run: the guest's Sstc timer and IMSIC
# file exist only with irq = "direct", and so do edu's MSIs; edu's INTx reaches both, through
# the partition's APLIC (MSI mode into its file, or direct mode, emulated). A partition that
# runs a device test owns the PCIe bus.
RISCV64_PARTITION_TESTS = {
    "direct": ("sstc-wfi", "sstc-busy", "sbi-timer-wfi", "sbi-timer-busy", "ipi-wfi", "ipi-busy",
               "sbi-ipi-wfi", "sbi-ipi-busy", "edu-wfi", "edu-busy", "intx-wfi", "intx-busy"),
    "trap": ("sbi-timer-wfi", "sbi-timer-busy", "sbi-ipi-wfi", "sbi-ipi-busy", "intx-wfi",
             "intx-busy"),
}
# Traps per interrupt, riscv64: each (Tern system, test) runs alone twice more, with this many
# samples and twice as many. Under icount both runs are the same up to the last sample of the
# first, so the hypervisor's counters (tern-stats) differ by exactly what the extra samples
# cost: the difference over TRAP_SAMPLES is the count per sample, boot and the test's set-up
# left out. Small: the count does not depend on it; each run takes a fraction of a second.
TRAP_SAMPLES = 20
# Which tern-stats counters are hypervisor entries (the rest count what those entries did:
# irq_injected, exception_injected) or are no trap (restarts, console_dropped).
TRAP_PREFIXES = ("exit_", "sbi_")
# The device scenario's board: QEMU's edu on the PCIe bus; in Tern the measured partition
# owns the host bridge it sits behind.
DEVICE_PCI = ("edu",)
DEVICE_OWNED = ("pcie",)
# Every run gets the same instruction budget between samples whatever the shift:
# 20000 instructions, 20 us at shift 0 (1 ns each), 320 us at shift 4 (16 ns each).
BUDGET_INSTRUCTIONS = 20000
STAT_KEYS = ("avg", "ema", "min", "max", "warm_max", "p50", "p99", "p999", "samples")

# Mixed criticality, as examples/linux-rt.toml: the latency guest in partition "rt" on core 1,
# its neighbours on cores 2 and 3 (Linux: one partition of two vCPUs, trap-and-inject whatever
# rt uses, the only way Linux partitions run today).
RT_CORE = 1
NEIGHBOUR_CORES = (2, 3)
BESIDE_BOARD_CPUS = 4
LINUX_MEMORY = "256MiB"
LINUX_CONSOLE = "console=ttyAMA0 quiet"
# Linux's /init says `ready` about 15 s of emulated time (icount shift 4) after the board's
# reset; rt sleeps this long (lat.start_delay_us) so that every sample is taken with Linux busy.
# Each run checks it: the neighbour's "busy" line must come before rt's LAT-START.
LINUX_START_DELAY_US = 25_000_000
# Bare-metal neighbours are busy within a millisecond.
NOISE_START_DELAY_US = 100_000
# cyclictest as a neighbour runs this many 1 ms loops: longer than rt measures; the run ends
# with `stop linux` typed on the hypervisor console when rt prints LAT-DONE.
NEIGHBOUR_CYCLICTEST_LOOPS = 1_000_000
# Debian's arm64 kernel ticks at 250 Hz (CONFIG_HZ=250): the control neighbours take their
# timer interrupt as often.
LINUX_TICK_US = 4000
# rt-path: rt alone and beside Linux busy, every instruction of rt's core traced. A trace of
# the busy tests logs each spin of the wait loop: few samples keep it to a few hundred MB.
TRACE_SAMPLES = 30
LAT_WARMUP = 8                  # the latency guest's default lat.warmup
# Beside Linux, tracing is switched on when rt prints LAT-SOON, this long before it measures
# (the first part of its start delay, Linux booting, runs untraced and at full speed).
TRACE_NOTICE_US = 200_000


def delta_us(shift):
    return BUDGET_INSTRUCTIONS * (1 << shift) // 1000


@dataclass
class System:
    """One way of running the guests."""

    name: str
    kind: str                 # "native", "tern" or "xen"
    wfi: str = "trap"         # tern: the partitions' wfi setting
    irq: str = "trap"         # tern: "trap" (trap-and-inject) or "direct"
    xen_args: str = ""        # xen: command line beyond xen.BASE_ARGS
    xen_binary: Path = None   # xen: which build
    only: tuple = ()          # runs only these scenarios (by name), if given

    def describe(self):
        if self.kind == "native":
            return "the guest alone on the bare board"
        if self.kind == "tern":
            return f"Tern partition, irq = \"{self.irq}\", wfi = \"{self.wfi}\""
        build = {xen.XEN_NULL: "Xen 4.17 built from Debian's source with the null scheduler",
                 xen.XEN_SCHED: "Xen 4.17 built from Debian's source with RTDS, ARINC 653 and "
                                "boot-time cpupools (the shared-core rows: the pool's scheduler "
                                "is the scenario's)"}.get(self.xen_binary,
                                                          "Debian's Xen 4.17 binary (credit2)")
        return f"{build}, dom0less, no dom0; Xen command line `{xen.BASE_ARGS} {self.xen_args}`"

    def available(self):
        """Why this system cannot run here, or None."""
        if self.kind == "xen" and self.xen_binary == xen.XEN_NULL and not xen.XEN_NULL.is_file():
            return "no null-scheduler Xen build (make xen-null)"
        if self.kind == "xen" and self.xen_binary == xen.XEN_SCHED and not xen.XEN_SCHED.is_file():
            return "no Xen build with RTDS, ARINC 653 and boot-time cpupools (make xen-sched)"
        return None

    def can_run(self, scenario):
        """Why this system cannot run `scenario` on this emulator, or None."""
        if self.kind == "xen" and scenario.name == "device":
            return ("Xen 4.17 has no PCI pass-through for Arm guests; handing the whole host "
                    "bridge to a dom0less domU as a platform device (a xen,passthrough partial "
                    "device tree) was not attempted, so the edu device has no Xen cell")
        if self.kind == "tern" and self.irq == "trap" and scenario.name == "channel":
            return ("under icount QEMU 7.2 leaves the pinger's core halted after the GIC raised "
                    "that core's IRQ for the answer's doorbell (trace: gicv3_cpuif_set_irqs "
                    "IRQ 1 for that core, then no ICC_IAR1 read by it, the line lowered again "
                    "at the next distributor update), so the ping-pong stops part way, the "
                    "same each run (wfi=trap at sample 228 of 1000; wfi=native at 388 since "
                    "the doorbell's fast path shortened the sender's ring); without icount both "
                    "complete, and tests/system/test_channels.py runs trap-and-inject under "
                    "icount with 50 samples")
        if self.kind == "native" and scenario.name == "riscv64-virtio-blk":
            return ("Debian's riscv64 kernel on the bare riscv virt board (AIA, one or two harts) "
                    "printed nothing after `cma: Failed to reserve 128 MiB` within 60 s under "
                    "icount, with or without the disk; without icount, with the disk, its CPU 0 "
                    "locked up (watchdog: hard LOCKUP, RCU stalls). Not investigated further: no "
                    "native row on this board (the same kernel runs in Tern's partitions)")
        if self.kind == "xen" and scenario.name in SHARED_SCENARIOS and \
                scenario.name.endswith("arinc653"):
            return XEN_ARINC653_DOM0LESS
        if self.kind == "xen" and scenario.cpus > 1:
            return ("Xen 4.17 on two or more cores stops booting under QEMU 7.2 icount (last line "
                    "'P2M: 3 levels ...'); it boots without icount, which would not be comparable")
        return None


# Counted from an execution trace, not timed (run_switch_trace): Xen's ARINC 653 runs here.
SWITCH_TRACE_SCENARIO = "shared-switch-trace-arinc653"

SYSTEMS = (
    System("native", "native"),
    System("tern wfi=trap", "tern", "trap"),
    System("tern wfi=native", "tern", "native"),
    System("tern direct", "tern", "native", irq="direct"),
    System("xen credit2", "xen", xen_binary=xen.XEN_DEBIAN),
    System("xen credit2 slop=0", "xen", xen_args="timer_slop=0", xen_binary=xen.XEN_DEBIAN),
    System("xen credit2 vwfi=native", "xen", xen_args="vwfi=native", xen_binary=xen.XEN_DEBIAN),
    System("xen credit2 vwfi=native slop=0", "xen", xen_args="vwfi=native timer_slop=0",
           xen_binary=xen.XEN_DEBIAN),
    System("xen null vwfi=native", "xen", xen_args="sched=null vwfi=native",
           xen_binary=xen.XEN_NULL),
    # A shared core's guests must trap WFI (their idle gives the core away): Xen's default.
    System("xen sched", "xen", xen_binary=xen.XEN_SCHED,
           only=tuple(f"shared-{what}-{s}" for what in ("lat", "switch")
                      for s in ("credit", "rtds", "arinc653")) + (SWITCH_TRACE_SCENARIO,)),
)


@dataclass
class Plan:
    samples: int
    prio_runs: int
    shifts: tuple
    timeout: float = 300
    cyclictest_loops: int = 1000    # the cyclictest scenario's loops (1 ms each)


QUICK = Plan(samples=100, prio_runs=20, shifts=(4,), cyclictest_loops=200)
FULL = Plan(samples=1000, prio_runs=50, shifts=(4, 0), cyclictest_loops=1000)


@dataclass
class Outcome:
    """What one run produced: records for results.json, or an error."""

    records: list = field(default_factory=list)
    error: str = None
    workdir: str = None
    skipped: bool = False     # error says why the cell cannot run yet (not a failure)


def _partition(name, cpus, image, wfi, bootargs, memory="64MiB", irq="trap", devices=(),
               initrd=None, unconfined_dma=False):
    """One [[partition]] table of a system description, as a dict for _system_toml."""
    table = {"name": name, "cpus": list(cpus), "memory": memory, "image": str(image)}
    if initrd:
        table["initrd"] = str(initrd)
    table.update(wfi=wfi, irq=irq, bootargs=bootargs, devices=list(devices),
                 unconfined_dma=unconfined_dma)
    return table


def _system_toml(board_cpus, *partitions, pci=(), arch="arm64", channels=(), pools=()):
    """The system description of `partitions` (_partition() tables), `channels` ([[channel]]
    tables) and `pools` ([[pool]] tables) as TOML text."""
    description = {"board": {"arch": arch, "cpus": board_cpus, "pci": list(pci)},
                   "partition": list(partitions)}
    if channels:
        description["channel"] = list(channels)
    if pools:
        description["pool"] = list(pools)
    return dump_toml(description)


class Runs:
    """Runs guests on one system and returns the output of the partition that measures."""

    def __init__(self, system, workdir, timeout):
        self.system = system
        self.workdir = workdir
        self.timeout = timeout

    def _dir(self, label):
        """The run's work directory (runner.make_workdir: tern's own), before the system
        description is written into it."""
        return runner.make_workdir(self.workdir / label)

    def guest(self, label, image, bootargs, shift, vcpus=1, neighbours=(), pci=(), arch="arm64"):
        """Run `image` with `bootargs` measured on core 1 (and 2.. for more vCPUs).

        neighbours: (name, image, bootargs) partitions on the following cores (Tern only).
        pci: QEMU PCI devices on the board; in Tern the measured partition owns the host
        bridge. Returns (RunResult, PartitionOutput-like with .lat/.probe/.lines).
        """
        d = self._dir(label)
        if self.system.kind == "xen":
            domains = [xen.Domain("rt", xen.xen_variant(image), bootargs, vcpus=vcpus)]
            domains += [xen.Domain(name, xen.xen_variant(n_image), n_args)
                        for name, n_image, n_args in neighbours]
            result = xen.run_xen(domains, self.system.xen_args, xen=self.system.xen_binary,
                                 icount=shift, timeout=self.timeout, workdir=d)
            return result, result.partitions.get("rt")
        if self.system.kind == "native":
            result = runner.run_native(image, bootargs=bootargs, cpus=max(2, vcpus), icount=shift,
                                       timeout=self.timeout, workdir=d, pci=pci)
            return result, result
        cores = list(range(1, 1 + vcpus))
        # The riscv64 board has no IOMMU: owning its PCIe bus means accepting unconfined DMA.
        parts = [_partition("rt", cores, image, self.system.wfi, bootargs, irq=self.system.irq,
                            devices=DEVICE_OWNED if pci else (),
                            unconfined_dma=bool(pci) and arch == "riscv64")]
        next_core = 1 + vcpus
        for name, n_image, n_args in neighbours:
            parts.append(_partition(name, [next_core], n_image, "trap", n_args))
            next_core += 1
        toml_path = d / "system.toml"
        toml_path.write_text(_system_toml(next_core, *parts, pci=pci, arch=arch))
        result = runner.run_system(toml_path, icount=shift, timeout=self.timeout, workdir=d)
        return result, result.partitions.get("rt")

    def tern_system(self, label, shift, partitions, board_cpus, console=None, qemu_args=(),
                    arch="arm64", channels=(), pools=()):
        """Tern: the partitions (_partition() tables), and channels between them, on a board
        of `board_cpus` cores."""
        d = self._dir(label)
        toml_path = d / "system.toml"
        toml_path.write_text(_system_toml(board_cpus, *partitions, arch=arch, channels=channels,
                                          pools=pools))
        return runner.run_system(toml_path, icount=shift, timeout=self.timeout, workdir=d,
                                 console=console, qemu_args=qemu_args)

    def native_linux(self, label, shift, bootargs, dtb=None, memory=1024 * MiB):
        """The Linux guest alone on the bare board (2 cores); QEMU's device tree or `dtb`."""
        return runner.run_native(LINUX_IMAGE, bootargs=bootargs, cpus=2, icount=shift,
                                 timeout=self.timeout, workdir=self._dir(label), memory=memory,
                                 initrd=LINUX_INITRD, dtb=dtb)


def _stats(record):
    return {k: record.get(k) for k in STAT_KEYS if k in record}


def _lat_records(scenario, system, shift, part, extra=None):
    out = []
    for r in getattr(part, "lat", []) or []:
        rec = {"system": system.name, "scenario": scenario, "test": r.get("test"), "shift": shift,
               "unit": "ticks", "freq_hz": r.get("freq_hz"), **_stats(r),
               "hist": r.get("hist")}
        if "sender" in r:
            rec["sender"] = r["sender"]
        if "error" in r:
            rec["error"] = r["error"]
        if extra:
            rec.update(extra)
        out.append(rec)
    return out


def trap_entries(stats):
    """The tern-stats counters that are hypervisor entries, by name."""
    return {k: v for k, v in stats.items()
            if k.startswith(TRAP_PREFIXES) and isinstance(v, int) and not isinstance(v, bool)}


def per_sample(few, more, samples):
    """(total, by cause) per sample from the entry counters of runs of `samples` and
    2 x `samples` samples; causes that did not move are left out."""
    a, b = trap_entries(few), trap_entries(more)
    causes = {k: (b.get(k, 0) - a.get(k, 0)) / samples for k in sorted(set(a) | set(b))}
    causes = {k: int(v) if float(v).is_integer() else round(v, 2)
              for k, v in causes.items() if v}
    total = sum(causes.values())
    return (int(total) if float(total).is_integer() else round(total, 2)), causes


def traps_per_interrupt(tests, run_counters, samples=TRAP_SAMPLES):
    """Per test, the hypervisor's entries per sample (per measured interrupt): the test alone
    with `samples` and twice as many, the counters' difference over `samples`.
    run_counters(test, n) -> (tern-stats of the measured partition, None) or (None, failure).
    Returns ({test: {"traps_per_interrupt": N, "traps_by_cause": {...}}}, None), or what was
    counted so far and the first failure."""
    out = {}
    for test in tests:
        stats = []
        for n in (samples, 2 * samples):
            counters, failure = run_counters(test, n)
            if counters is None:
                return out, failure
            stats.append(counters)
        total, causes = per_sample(stats[0], stats[1], samples)
        out[test] = {"traps_per_interrupt": total, "traps_by_cause": causes}
    return out, None


def count_traps(runs, label, tests, shift, samples=TRAP_SAMPLES, vcpus=2, pci=()):
    """traps_per_interrupt of a riscv64 partition on the main run's board: (counts, None), or
    (None, why)."""
    def run_counters(test, n):
        result, _ = runs.guest(f"{label}-traps-{test}-{n}", LAT_RISCV64,
                               f"lat.samples={n} lat.tests={test}", shift, vcpus=vcpus,
                               pci=pci, arch="riscv64")
        if not result.ok or "rt" not in result.stats:
            return None, f"counting traps of {test} ({n} samples): {result.reason or 'no tern-stats'}"
        return result.stats["rt"], None

    out, why = traps_per_interrupt(tests, run_counters, samples)
    return (None, why) if why else (out, None)


def _label(scenario, shift):
    return f"{scenario.name}-s{shift}"


def _lat_args(plan, shift, tests=None):
    """The latency guest's command line: the plan's samples at the shift's budget."""
    args = f"lat.samples={plan.samples} lat.delta_us={delta_us(shift)}"
    return args if tests is None else f"{args} lat.tests={','.join(tests)}"


def _outcome(result, records):
    """A run's Outcome: its records, or why there are none."""
    error = None if result.ok else result.reason
    if not records and not error:
        error = "no results in the guest's output"
    return Outcome(records, error, str(result.workdir) if result.workdir else None)


def run_timer(scenario, system, shift, plan, runs):
    result, part = runs.guest(_label(scenario, shift), LAT, _lat_args(plan, shift), shift)
    return _outcome(result, _lat_records(scenario.name, system, shift, part))


def run_ipi(scenario, system, shift, plan, runs):
    result, part = runs.guest(_label(scenario, shift), LAT, _lat_args(plan, shift, IPI_TESTS),
                              shift, vcpus=2)
    return _outcome(result, _lat_records(scenario.name, system, shift, part))


def run_device(scenario, system, shift, plan, runs):
    result, part = runs.guest(_label(scenario, shift), LAT, _lat_args(plan, shift, DEVICE_TESTS),
                              shift, pci=DEVICE_PCI)
    return _outcome(result, _lat_records(scenario.name, system, shift, part))


def run_riscv64(scenario, system, shift, plan, runs):
    """Every riscv64 test natively; in Tern, what the partition's delivery mode runs, and the
    hypervisor's entries per interrupt of each (count_traps)."""
    label = _label(scenario, shift)
    if system.kind == "native":
        result, part = runs.guest(label, LAT_RISCV64, _lat_args(plan, shift, RISCV64_TESTS),
                                  shift, vcpus=2, pci=DEVICE_PCI)
        return _outcome(result, _lat_records(scenario.name, system, shift, part))
    tests = RISCV64_PARTITION_TESTS[system.irq]
    pci = DEVICE_PCI if set(RISCV64_DEVICE_TESTS) & set(tests) else ()
    result, part = runs.guest(label, LAT_RISCV64, _lat_args(plan, shift, tests), shift, vcpus=2,
                              pci=pci, arch="riscv64")
    records = _lat_records(scenario.name, system, shift, part)
    if result.ok:
        traps, why = count_traps(runs, label, tests, shift, pci=pci)
        if why:
            return Outcome(records, why, str(result.workdir))
        for r in records:
            r.update(traps.get(r["test"], {}), traps_samples=TRAP_SAMPLES)
    return _outcome(result, records)


CHANNEL = "bench"


def run_channel(scenario, system, shift, plan, runs):
    """Two partitions of the latency guest, member 0 on core 1 and member 1 on core 2 of a
    channel: member 0 measures the round trip (chan-rtt) and its ring's cost (the sender),
    member 1 the one-way doorbell latency, each in the system's delivery mode."""
    image = LAT_RISCV64 if scenario.arch == "riscv64" else LAT
    args = f"{_lat_args(plan, shift, ('chan',))} lat.chan={CHANNEL}"
    members = ("ping", "pong")
    parts = [_partition(name, [core], image, system.wfi, args, irq=system.irq)
             for core, name in enumerate(members, start=1)]
    result = runs.tern_system(_label(scenario, shift), shift, parts, 1 + len(members),
                              arch=scenario.arch,
                              channels=[{"name": CHANNEL, "size": "64KiB", "members": list(members)}])
    records = []
    for name in members:
        records += _lat_records(scenario.name, system, shift, result.partitions.get(name))
    return _outcome(result, records)


def run_prio(scenario, system, shift, plan, runs):
    result, part = runs.guest(_label(scenario, shift), PROBE,
                              f"probe.tests=prio probe.prio_runs={plan.prio_runs}", shift)
    records = [{"system": system.name, "scenario": "prio", "test": "prio", "shift": shift,
                "runs": r.get("runs"), "in_order": r.get("in_order"),
                "expected": r.get("expected"), "first_wrong": r.get("first_wrong")}
               for r in getattr(part, "probe", []) or [] if r.get("test") == "prio"]
    return _outcome(result, records)


def run_noise(scenario, system, shift, plan, runs):
    """The timer tests beside a partition streaming memory (noise.mode: the name's tail)."""
    mode = scenario.name.split("-", 1)[1]
    # The noise partition outlives the measurement, then powers off by itself.
    until_us = 2 * len(TIMER_TESTS) * plan.samples * delta_us(shift) + 200000
    noise = ("noise", NOISE, f"noise.mode={mode} noise.until_us={until_us}")
    result, part = runs.guest(_label(scenario, shift), LAT, _lat_args(plan, shift), shift,
                              neighbours=[noise])
    return _outcome(result, _lat_records(scenario.name, system, shift, part))


def run_boot(scenario, system, shift, plan, runs):
    result, part = runs.guest(_label(scenario, shift), LAT, "lat.samples=1 lat.tests=vtimer-busy",
                              shift)
    records = []
    entry = _guest_boot(getattr(part, "lines", None) or result.log)
    if entry:
        rec = {"system": system.name, "scenario": "boot", "test": "boot", "shift": shift,
               "freq_hz": entry["freq_hz"], "first_instruction": entry["entry_counter"]}
        hyp = _boot_line(result.log)
        if hyp:  # Tern's own timestamps
            first = next(iter(hyp["partitions"].values()))
            rec.update(hyp_entry=hyp["entry"], mmu_on=hyp["mmu_on"],
                       created=first["created"], eret=first["first_entry"])
        records.append(rec)
    return _outcome(result, records)


def run_riscv64_boot(scenario, system, shift, plan, runs):
    # The arm64 boot scenario's run on the riscv64 board: one vCPU on core 1 of two, a
    # test every delivery mode runs; `cycle` counts instructions at shift 0.
    result, part = runs.guest(_label(scenario, shift), LAT_RISCV64,
                              "lat.samples=1 lat.tests=sbi-timer-busy", shift, arch="riscv64")
    rec = riscv64_boot_record(system.name, shift, getattr(part, "lines", None) or result.log,
                              result.log)
    return _outcome(result, [rec] if rec else [])


# ---- VirtIO: a disk and a network served by another partition (issue 28) ----

# Linux's directory (Image, initramfs packages under root/) and console on each board.
VIO_LINUX = {"arm64": (REPO / "build" / "linux", "console=ttyAMA0"),
             "riscv64": (REPO / "build" / "linux-riscv64", "console=ttyS0")}
VBACK = {arch: REPO / "guests" / "build" / arch / "vback.img" for arch in VIO_LINUX}
TERN_VIO = {arch: REPO / "guests" / "build" / arch / "tern-vio" for arch in VIO_LINUX}
# Which Tern system runs each board's VirtIO scenarios: trap-and-inject on arm64, trap-less on
# riscv64 (each Linux boot under icount is minutes of a shared host: one delivery mode per
# board).  arm64's guest WFI runs natively: a trapped WFI's entry hands over the interrupt that
# ends it, counted under exit_wfi and exit_irq both, which would blur the entries per request.
VIO_SYSTEM = {"arm64": "tern wfi=native", "riscv64": "tern direct"}
# The disk's bytes read per request size (O_DIRECT: each dd block one request up to the
# device's 28 KiB, SIZE_MAX 4096 x SEG_MAX 7), and the request sizes: two, so that the cost
# per KiB is their difference (vio_per_kib).
VIO_BLK_BYTES = 1 * MiB
VIO_BLK_SIZES = (4096, 16384)
# Entries per request: the mediated run again with twice the bytes; the frontend's counters
# differ by what the extra requests cost (as traps_per_interrupt: boot and set-up cancel).
VIO_NET_BYTES = 1 * MiB
VIO_MEMORY = "256MiB"
VIO_BOARD_MEMORY = "1GiB"
VIO_BACKEND_MEMORY = "64MiB"
# The request-path counters of the frontend's partition (tern-stats).
VIO_STAT_KEYS = ("virtio_notify", "virtio_request", "virtio_completion",
                 "virtio_refused_frontend", "virtio_refused_backend")


def vio_initrd(runs, arch):
    """The Linux guest's initramfs with this tree's /init and tern-vio, built once per run
    directory from `make linux`'s packages (the prebuilt archive may have an older /init)."""
    path = runs.workdir / f"initramfs-{arch}.cpio.gz"
    if not path.exists():
        archive, _ = initramfs.build(VIO_LINUX[arch][0] / "root", arch, tern_vio=TERN_VIO[arch])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(archive.to_bytes(), mtime=0))
    return path


def parse_blk_read(lines):
    """The `TERN-LINUX: blk-read` lines of a log as [{bytes, bs, ns}], or {"error": ...}."""
    out = []
    for line in lines:
        if "TERN-LINUX: " not in line:
            continue
        words = line.split("TERN-LINUX: ", 1)[1].split()
        if words and words[0] in ("blk-read-error", "error"):
            return {"error": " ".join(words)}
        if words and words[0] == "blk-read":
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if all(fields.get(k, "").isdigit() for k in ("bytes", "bs", "ns")):
                out.append({k: int(fields[k]) for k in ("bytes", "bs", "ns")})
    return out or {"error": "no blk-read lines in the output"}


def mb_per_s(nbytes, ns):
    """MB (10^6 bytes) per emulated second."""
    return round(nbytes * 1000 / ns, 2) if ns else None


def vio_per_kib(reads, shift):
    """(instructions per request, instructions per KiB) from reads of two request sizes:
    under icount the time of a request is a + b x size, so two sizes give a and b; at shift N
    an instruction is 2^N ns. None if the reads do not have two sizes."""
    by_bs = {r["bs"]: r["ns"] / (r["bytes"] // r["bs"]) for r in reads if r["bytes"] >= r["bs"]}
    if len(by_bs) < 2:
        return None
    small, large = min(by_bs), max(by_bs)
    per_byte = (by_bs[large] - by_bs[small]) / (large - small)
    per_request = by_bs[small] - per_byte * small
    scale = 1 << shift
    return round(per_request / scale), round(per_byte * 1024 / scale)


def per_request(few, more):
    """(entries per request, by cause) from the frontend's counters of a run and of the same
    run with more requests: the counters' difference over the requests' difference."""
    requests = more.get("virtio_request", 0) - few.get("virtio_request", 0)
    if requests <= 0:
        return None, {}
    total, causes = per_sample(few, more, requests)
    return total, causes


def parse_vio_net(client, server):
    """The vio-net lines of a run: ping's counts and round trip (ms), the transfer's bytes and
    the receiver's time for them; or {"error": ...}."""
    out = {}
    for line in client + server:
        if "TERN-LINUX: " not in line:
            continue
        text = line.split("TERN-LINUX: ", 1)[1]
        words = text.split()
        if words and (words[0].startswith("vio-net-error") or words[0] == "error"):
            return {"error": text}
        if text.startswith("vio-net ping ") and "packets transmitted" in text:
            numbers = [w for w in words if w.isdigit()]
            if len(numbers) >= 2:
                out["ping_sent"], out["ping_received"] = int(numbers[0]), int(numbers[1])
        elif text.startswith("vio-net rtt ") and "=" in text:
            values = text.split("=", 1)[1].split()[0].split("/")
            try:
                out["rtt_min_ms"], out["rtt_avg_ms"], out["rtt_max_ms"] = map(float, values[:3])
            except ValueError:
                pass
        elif text.startswith("vio-net receive-time "):
            fields = dict(w.split("=", 1) for w in words[2:] if "=" in w)
            if fields.get("bytes", "").isdigit() and fields.get("ns", "").isdigit():
                out["bytes"], out["ns"] = int(fields["bytes"]), int(fields["ns"])
    missing = [k for k in ("ping_received", "rtt_avg_ms", "bytes") if k not in out]
    if missing:
        return {"error": f"no {', '.join(missing)} in the output"}
    return out


def _failure(result):
    """Why a run failed, or None (a run that ended well has a reason too)."""
    return None if result.ok else result.reason


def _vio_linux(name, cores, arch, system, initrd, run, devices=(), unconfined_dma=False):
    directory, console = VIO_LINUX[arch]
    return _partition(name, cores, directory / "Image", system.wfi, f"{console} quiet {run}",
                      memory=VIO_MEMORY, irq=system.irq, devices=devices, initrd=initrd,
                      unconfined_dma=unconfined_dma)


def _vio_board(arch, cpus, pci=()):
    return {"arch": arch, "cpus": cpus, "memory": VIO_BOARD_MEMORY, "pci": list(pci)}


def _vio_run(runs, label, shift, description, console=None):
    d = runs._dir(label)
    toml_path = d / "system.toml"
    toml_path.write_text(dump_toml(description))
    return runner.run_system(toml_path, icount=shift, timeout=runs.timeout, workdir=d,
                             console=console)


def _stop_backend_when_off(frontend, backend):
    """A console script: stop `backend` once `frontend` has ended (a backend serves for ever)."""
    sent = False

    def console(line):
        nonlocal sent
        if sent or not line.startswith(f"tern: partition {frontend} "):
            return None
        sent = True
        return f"stop {backend}\r"

    return console


def _blk_disk(runs, nbytes):
    """A raw disk of `nbytes` (a pattern, so that no read is of zeros a device might skip)."""
    path = runs.workdir / f"vio-disk-{nbytes}.img"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        block = bytes(range(256)) * 16
        path.write_bytes(block * (nbytes // len(block)) + block[:nbytes % len(block)])
    return path


def _blk_records(scenario, system, shift, path, reads, extra=None):
    records = []
    for r in reads:
        rec = {"system": system.name, "scenario": scenario.name, "test": f"blk-read-{r['bs']}",
               "path": path, "shift": shift, "arch": scenario.arch,
               "unit": "MB per emulated second", "bytes": r["bytes"], "bs": r["bs"],
               "ns": r["ns"], "mb_s": mb_per_s(r["bytes"], r["ns"])}
        records.append(rec)
    costs = vio_per_kib(reads, shift)
    if costs:
        records.append({"system": system.name, "scenario": scenario.name, "test": "blk-cost",
                        "path": path, "shift": shift, "arch": scenario.arch,
                        "unit": "instructions", "sizes": sorted({r["bs"] for r in reads}),
                        "per_request": costs[0], "per_kib": costs[1], **(extra or {})})
    return records


def run_vio_blk(scenario, system, shift, plan, runs):
    """virtio-blk sequential reads in Linux: natively from QEMU's virtio-blk (PCI); in Tern from
    the same device passed through, and from the board's virtio-mmio slot served by the
    bare-metal backend, mediated and trusted (_served_blk)."""
    arch, nbytes = scenario.arch, VIO_BLK_BYTES
    initrd = vio_initrd(runs, arch)
    sizes = ",".join(str(s) for s in VIO_BLK_SIZES)
    run = f"tern.run=blk-read tern.blk.bytes={nbytes} tern.blk.sizes={sizes}"
    disk = _blk_disk(runs, 2 * nbytes)
    label = _label(scenario, shift)
    pci = [PciDevice("virtio-blk", disk)]
    if system.kind == "native":
        directory, console = VIO_LINUX[arch]
        result = runner.run_native(directory / "Image", bootargs=f"{console} quiet {run}",
                                   cpus=1, icount=shift, timeout=runs.timeout,
                                   workdir=runs._dir(label), memory=256 * MiB, pci=pci,
                                   initrd=initrd, arch=arch)
        reads = parse_blk_read(result.log)
        if isinstance(reads, dict):
            return Outcome([], _failure(result) or reads["error"], str(result.workdir))
        return _outcome(result, _blk_records(scenario, system, shift, "native", reads))

    errors, records, workdir = [], [], None
    owned = _vio_linux("linux", [1], arch, system, initrd, run, devices=("pcie",),
                       unconfined_dma=arch == "riscv64")
    result = _vio_run(runs, f"{label}-pass-through", shift,
                      {"board": _vio_board(arch, 2, [{"model": "virtio-blk", "disk": str(disk)}]),
                       "partition": [owned]})
    reads = parse_blk_read(getattr(result.partitions.get("linux"), "lines", []))
    if not result.ok or isinstance(reads, dict):
        errors.append(f"pass-through: {_failure(result) or reads['error']}")
    else:
        records += _blk_records(scenario, system, shift, "pass-through", reads)

    failed_in = None
    for path in ("mediated", "trusted"):
        served, why, where = _served_blk(scenario, system, shift, runs, initrd, run, disk, path)
        records += served
        workdir = where or workdir
        if why:
            errors.append(why)
            failed_in = failed_in or where
    workdir = failed_in or workdir       # an error's own run's files
    return Outcome(records, "; ".join(errors) or None, str(workdir) if workdir else None)


def _served_blk(scenario, system, shift, runs, initrd, run, disk, path):
    """The disk at the board's virtio-mmio slot, served by vback: `mediated` (the hypervisor
    copies) or `trusted` (backend_trusted: vback moves the data through its window onto the
    frontend's RAM), run twice, the second with twice the bytes, for the entries per request.
    (records, error or None, the last run's workdir)."""
    arch, nbytes = scenario.arch, VIO_BLK_BYTES
    label = _label(scenario, shift)
    counters, workdir, first = [], None, None
    for n in (1, 2):
        frontend = _vio_linux("linux", [1], arch, system, initrd,
                              run.replace(f"bytes={nbytes}", f"bytes={n * nbytes}"))
        store = _partition("store", [2], VBACK[arch], "trap", "", memory=VIO_BACKEND_MEMORY)
        device = {"name": "disk0", "device": "blk", "frontend": "linux", "backend": "store",
                  "disk": str(disk)}
        if path == "trusted":
            device["backend_trusted"] = True
        result = _vio_run(runs, f"{label}-{path}-{n}", shift,
                          {"board": _vio_board(arch, 3), "partition": [frontend, store],
                           "virtio": [device]},
                          console=_stop_backend_when_off("linux", "store"))
        workdir = result.workdir
        reads = parse_blk_read(getattr(result.partitions.get("linux"), "lines", []))
        stats = result.stats.get("linux")
        why = _failure(result) or (reads["error"] if isinstance(reads, dict) else None) or \
            (None if stats else "no tern-stats")
        if why:
            return [], f"{path} ({n * nbytes} bytes): {why}", workdir
        refused = {k: stats.get(k) for k in ("virtio_refused_frontend", "virtio_refused_backend")
                   if stats.get(k)}
        if refused:
            return [], f"{path} ({n * nbytes} bytes): requests refused {refused}", workdir
        counters.append(stats)
        if n == 1:
            first = reads
    total, causes = per_request(counters[0], counters[1])
    extra = {"entries_per_request": total, "entries_by_cause": causes,
             "requests": {"first": counters[0]["virtio_request"],
                          "second": counters[1]["virtio_request"]},
             "frontend_stats": {k: counters[1].get(k) for k in VIO_STAT_KEYS}}
    return _blk_records(scenario, system, shift, path, first, extra), None, workdir


def run_vio_net(scenario, system, shift, plan, runs):
    """virtio-net between two Linux partitions: the client's ping round trip to the server,
    and a TCP transfer's throughput on the server's clock."""
    arch, nbytes = scenario.arch, VIO_NET_BYTES
    initrd = vio_initrd(runs, arch)
    server = _vio_linux("server", [1], arch, system, initrd,
                        "tern.run=vio-net-backend tern.vio.transfers=1")
    client = _vio_linux("client", [2], arch, system, initrd,
                        f"tern.run=vio-net-frontend tern.vio.bytes={nbytes}")
    # The figures are printed once the server has answered; the client's wait for the answer
    # itself can outlive the server (its last segment lost when tern-vio stops): stopped then.
    result = _vio_run(runs, _label(scenario, shift), shift,
                      {"board": _vio_board(arch, 3), "partition": [server, client],
                       "virtio": [{"name": "net0", "device": "net", "frontend": "client",
                                   "backend": "server"}]},
                      console=_stop_backend_when_off("server", "client"))
    parsed = parse_vio_net(getattr(result.partitions.get("client"), "lines", []),
                           getattr(result.partitions.get("server"), "lines", []))
    if not result.ok or "error" in parsed:
        return Outcome([], _failure(result) or parsed["error"],
                       str(result.workdir) if result.workdir else None)
    stats = result.stats.get("client") or {}
    base = {"system": system.name, "scenario": scenario.name, "shift": shift, "arch": arch,
            "path": "mediated"}
    records = [
        {**base, "test": "ping", "unit": "ms (emulated)", "sent": parsed["ping_sent"],
         "received": parsed["ping_received"], "rtt_min_ms": parsed["rtt_min_ms"],
         "rtt_avg_ms": parsed["rtt_avg_ms"], "rtt_max_ms": parsed["rtt_max_ms"]},
        {**base, "test": "tcp", "unit": "MB per emulated second", "bytes": parsed["bytes"],
         "ns": parsed["ns"], "mb_s": mb_per_s(parsed["bytes"], parsed["ns"]),
         "frontend_stats": {k: stats.get(k) for k in VIO_STAT_KEYS}}]
    return _outcome(result, records)


def run_scenario(scenario, system, shift, plan, runs):
    """One (scenario, system, shift) cell of the matrix."""
    return scenario.run(system, shift, plan, runs)


@dataclass
class Neighbour:
    """A partition beside rt in a "beside" scenario, and the line it prints once busy."""

    name: str
    cpus: tuple
    image: Path
    bootargs: str
    busy_line: str
    initrd: Path = None
    memory: str = "64MiB"
    irq: str = "trap"
    wfi: str = "trap"

    def table(self):
        return _partition(self.name, self.cpus, self.image, self.wfi, self.bootargs, self.memory,
                          self.irq, initrd=self.initrd)

    def toml(self):
        return dump_toml({"partition": [self.table()]})


def beside_setup(scenario_name):
    """(neighbours, rt's start delay in us, what they do) of a "beside" scenario."""
    if scenario_name.startswith("linux-"):
        if scenario_name == "linux-stress":
            run, busy = "stress", "TERN-LINUX: stress running"
            doing = "Linux busy: `tern.run=stress`, a shell busy loop pinned on each of its 2 vCPUs"
        else:
            run = f"cyclictest tern.loops={NEIGHBOUR_CYCLICTEST_LOOPS}"
            busy = "TERN-LINUX: ready"
            doing = ("Linux busy: `tern.run=cyclictest`, one SCHED_FIFO thread waking every "
                     "1000 us")
        linux = Neighbour("linux", NEIGHBOUR_CORES, LINUX_IMAGE,
                          f"{LINUX_CONSOLE} tern.run={run}", busy, initrd=LINUX_INITRD,
                          memory=LINUX_MEMORY)
        return [linux], LINUX_START_DELAY_US, doing
    if scenario_name == "noise-pair":
        args = f"noise.mode=spin noise.irq_us={LINUX_TICK_US} noise.until_us=1000000000"
        pair = [Neighbour(f"noise{i}", (core,), NOISE, args, "noise: mode", irq="direct",
                          wfi="native") for i, core in enumerate(NEIGHBOUR_CORES, 1)]
        return pair, NOISE_START_DELAY_US, ("two bare-metal partitions streaming memory, a timer "
                                            f"interrupt every {LINUX_TICK_US} us, irq = \"direct\"")
    raise ToolError(f"unknown scenario {scenario_name}")


def _stop_when_rt_done(names):
    """A console script: once rt has finished (or ended), stop the neighbours, which would not."""
    sent = False

    def console(line):
        nonlocal sent
        if sent or not (line == "[rt] LAT-DONE" or line.startswith("tern: partition rt ")):
            return None
        sent = True
        return "".join(f"stop {n}\r" for n in names)

    return console


def _index(log, test):
    return next((i for i, line in enumerate(log) if test(line)), None)


def check_beside(log, neighbours):
    """Why the run did not measure rt with every neighbour busy throughout, or None."""
    start = _index(log, lambda line: line.startswith("[rt] LAT-START "))
    done = _index(log, lambda line: line == "[rt] LAT-DONE")
    if start is None or done is None:
        return "rt printed no LAT-START / LAT-DONE"
    for n in neighbours:
        busy = _index(log, lambda line: line.startswith(f"[{n.name}] {n.busy_line}"))
        if busy is None or busy > start:
            return (f"{n.name} was not busy yet when rt started measuring (no \"{n.busy_line}\" "
                    "before LAT-START): raise the start delay")
        ended = _index(log, lambda line: line.startswith(f"tern: partition {n.name} "))
        if ended is not None and ended < done:
            return f"{n.name} ended before rt had finished"
    return None


def _repo_relative(text):
    return text.replace(str(REPO) + "/", "")


RT_STAT_KEYS = ("exit_irq", "exit_wfi", "exit_mmio", "exit_sysreg", "irq_injected")


def run_beside(scenario, system, shift, plan, runs):
    """rt's timer tests alone, then the same beside the scenario's neighbours: one record per
    test with the neighbours busy, the alone figures under `alone`."""
    neighbours, delay, doing = beside_setup(scenario.name)
    rt_args = (f"lat.samples={plan.samples} lat.delta_us={delta_us(shift)} "
               f"lat.start_delay_us={delay}")
    rt = _partition("rt", (RT_CORE,), LAT, system.wfi, rt_args, irq=system.irq)
    label = f"{scenario.name}-s{shift}"
    alone = runs.tern_system(f"{label}-alone", shift, [rt], BESIDE_BOARD_CPUS)
    parts = [rt] + [n.table() for n in neighbours]
    busy = runs.tern_system(label, shift, parts, BESIDE_BOARD_CPUS,
                       console=_stop_when_rt_done([n.name for n in neighbours]))
    error = None
    if not alone.ok:
        error = f"rt alone: {alone.reason}"
    elif not busy.ok:
        error = busy.reason
    else:
        error = check_beside(busy.log, neighbours)
    alone_lat = {r.get("test"): r for r in getattr(alone.partitions.get("rt"), "lat", []) or []}
    records = []
    if not error:
        for r in _lat_records(scenario.name, system, shift, busy.partitions.get("rt")):
            base = alone_lat.get(r["test"])
            if base is None or "avg" not in r or "avg" not in base:
                continue
            r["irq"], r["wfi"] = system.irq, system.wfi
            r["alone"] = _stats(base)
            r["extra_avg_over_alone"] = round(r["avg"] - base["avg"], 2)
            r["extra_warm_max_over_alone"] = r["warm_max"] - base["warm_max"]
            records.append(r)
        rt_stats = busy.stats.get("rt") or {}
        records.append({
            "system": system.name, "scenario": scenario.name, "test": "setup", "shift": shift,
            "neighbours": doing, "start_delay_us": delay,
            "system_toml": _repo_relative((busy.workdir / "system.toml").read_text()),
            "console": "types " + " and ".join(f"`stop {n.name}`" for n in neighbours) +
                       " on the hypervisor console when rt prints `LAT-DONE`",
            "rt_stats": {k: rt_stats[k] for k in RT_STAT_KEYS if k in rt_stats}})
    return Outcome(records, error, str(busy.workdir) if busy.workdir else None)


def _traced_console(monitor, neighbours):
    """_stop_when_rt_done's console, with QEMU's trace on from rt's LAT-SOON to its end."""
    stop = _stop_when_rt_done(neighbours)
    on = False

    def console(line):
        nonlocal on
        if not on and line.startswith("[rt] LAT-SOON "):
            on = True
            qemu.trace_on(monitor)
            return None
        reply = stop(line)
        if reply and on:
            qemu.trace_off(monitor)
        return reply

    return console


def _path_samples(trace, pts, errors, what):
    try:
        with open(trace, encoding="utf-8", errors="replace") as f:
            samples = pathtrace.parse(f, RT_CORE, pts)
        return pathtrace.group(samples, TIMER_TESTS, TRACE_SAMPLES)
    except (OSError, ToolError) as e:
        errors.append(f"{what}: {e}")
        return None


def run_rt_path(system, shift, runs):
    """rt's timer tests alone and beside Linux running `stress`, each run traced instruction by
    instruction (QEMU -singlestep -d exec,nochain,int): per test, the hypervisor instructions
    that delivered each interrupt on rt's core, the guest's vector up to its timestamp, and
    every exception the core took, alone and beside."""
    pts = pathtrace.points(LAT_ELF, HYPERVISOR_ELF)
    neighbours, delay, doing = beside_setup("linux-stress")
    rt_args = (f"lat.samples={TRACE_SAMPLES} lat.delta_us={delta_us(shift)} "
               f"lat.start_delay_us={delay} lat.notice_us={TRACE_NOTICE_US}")
    rt = _partition("rt", (RT_CORE,), LAT, system.wfi, rt_args, irq=system.irq)
    label = f"rt-path-s{shift}"
    errors = []
    # Alone, rt sleeps through its start delay in no time (nothing else runs): trace from boot.
    alone_trace = runs._dir(f"{label}-alone") / "trace.log"
    alone = runs.tern_system(f"{label}-alone", shift, [rt], BESIDE_BOARD_CPUS,
                             qemu_args=qemu.trace_args(alone_trace))
    with tempfile.TemporaryDirectory(prefix="tern-mon-") as tmp:
        monitor = Path(tmp) / "monitor.sock"       # short: UNIX socket paths have a limit
        busy_trace = runs._dir(label) / "trace.log"
        busy = runs.tern_system(label, shift, [rt] + [n.table() for n in neighbours],
                                BESIDE_BOARD_CPUS,
                                console=_traced_console(monitor, [n.name for n in neighbours]),
                                qemu_args=qemu.trace_args(busy_trace, from_boot=False,
                                                          monitor=monitor))
    if not alone.ok:
        errors.append(f"rt alone: {alone.reason}")
    if not busy.ok:
        errors.append(busy.reason)
    elif check_beside(busy.log, neighbours):
        errors.append(check_beside(busy.log, neighbours))
    alone_tests = _path_samples(alone_trace, pts, errors, "rt alone") if alone.ok else None
    busy_tests = _path_samples(busy_trace, pts, errors, "rt beside Linux") if busy.ok else None
    for trace in (alone_trace, busy_trace):
        trace.unlink(missing_ok=True)           # hundreds of MB; the records keep the counts
    records = []
    if not errors:
        alone_lat = {r.get("test"): r for r in getattr(alone.partitions.get("rt"), "lat", []) or []}
        busy_lat = {r.get("test"): r for r in getattr(busy.partitions.get("rt"), "lat", []) or []}
        for test in TIMER_TESTS:
            a = pathtrace.summary(alone_tests[test], LAT_WARMUP)
            b = pathtrace.summary(busy_tests[test], LAT_WARMUP)
            records.append({
                "system": system.name, "scenario": "rt-path", "test": test, "shift": shift,
                "irq": system.irq, "wfi": system.wfi, "unit": "instructions",
                "alone": a, "beside": b,
                "extra_hyp_max_over_alone": b["hyp_max"] - a["hyp_max"],
                "extra_vector_max_over_alone": b["vector_max"] - a["vector_max"],
                "extra_exceptions_over_alone": (sum(b["exceptions"].values()) -
                                                sum(a["exceptions"].values())),
                "warm_max_ticks": {"alone": (alone_lat.get(test) or {}).get("warm_max"),
                                   "beside": (busy_lat.get(test) or {}).get("warm_max")}})
        records.append({
            "system": system.name, "scenario": "rt-path", "test": "setup", "shift": shift,
            "neighbours": doing, "start_delay_us": delay, "samples": TRACE_SAMPLES,
            "system_toml": _repo_relative((busy.workdir / "system.toml").read_text()),
            "trace": " ".join(qemu.trace_args("trace.log")),
            "console": (f"switches the trace on through QEMU's monitor (`singlestep on`, `log "
                        f"{qemu.TRACE_ITEMS}`) when rt prints LAT-SOON, off at LAT-DONE, then "
                        "types `stop linux`")})
    return Outcome(records, "; ".join(errors) or None, str(busy.workdir) if busy.workdir else None)


def parse_cyclictest(lines):
    """The TERN-LINUX cyclictest lines of a log (with or without a "[name] " prefix) as a dict:
    min, avg, max (us), samples, hist_us ([[us, count], ...]), overflows, p50/p99; or error."""
    out = {"hist_us": [], "overflows": 0}
    for line in lines:
        if "TERN-LINUX: " not in line:
            continue
        words = line.split("TERN-LINUX: ", 1)[1].split()
        if not words:
            continue
        if words[0] == "ready":
            out.update(dict(w.split("=", 1) for w in words[1:] if "=" in w))
        elif words[0] == "cyclictest":
            for w in words[1:]:
                key, _, value = w.partition("=")
                if key in ("min", "avg", "max", "samples") and value.isdigit():
                    out[key] = int(value)
        elif words[0] == "cyclictest-hist" and len(words) == 3:
            out["hist_us"].append([int(words[1]), int(words[2])])
        elif words[0] == "cyclictest-overflows" and len(words) == 2:
            out["overflows"] = int(words[1])
        elif words[0] in ("cyclictest-error", "error"):
            return {"error": " ".join(words)}
    if "samples" not in out:
        return {"error": "no cyclictest statistics in the output"}
    if "cpus" in out:
        out["cpus"] = int(out["cpus"])
    total = out["samples"]
    for q, key in ((0.5, "p50"), (0.99, "p99")):
        need, acc = math.ceil(q * total), 0
        out[key] = None        # past the histogram (overflows)
        for us, count in out["hist_us"]:
            acc += count
            if acc >= need:
                out[key] = us
                break
    return out


CYCLICTEST_KEYS = ("min", "avg", "max", "p50", "p99", "samples", "overflows", "hist_us", "cpus",
                   "kernel")


def _cyclictest_record(system_name, shift, loops, lines, how, command):
    parsed = parse_cyclictest(lines)
    if "error" in parsed:
        return None, parsed["error"]
    rec = {"system": system_name, "scenario": "cyclictest", "test": "cyclictest", "shift": shift,
           "unit": "us", "loops": loops, "linux": how, "command": command}
    rec.update({k: parsed[k] for k in CYCLICTEST_KEYS if k in parsed})
    return rec, None


NATIVE_PARTITION_DT = "native, partition's device tree"
NATIVE_PARTITION_DT_NO_SEED = "native, partition's device tree without rng-seed"


def run_cyclictest(system, shift, plan, runs):
    """cyclictest in Linux with 2 vCPUs: natively (with QEMU's device tree and with the one Tern
    gives the partition), or in a Tern partition on cores 2 and 3."""
    loops = plan.cyclictest_loops
    bootargs = f"{LINUX_CONSOLE} tern.run=cyclictest tern.loops={loops}"
    label = f"cyclictest-s{shift}"
    records, errors, workdir = [], [], None
    if system.kind == "native":
        d = runs._dir(f"{label}-dtb")
        dtb, unseeded = d / "partition.dtb", d / "partition-no-rng-seed.dtb"
        for path, seed in ((dtb, bytes(devicetree.RNG_SEED_BYTES)), (unseeded, None)):
            devicetree.compile_dts(devicetree.partition_dts(
                "linux", 2, "cortex-a53", layout.QEMU_VIRT_ARM64.partition_ram_ipa, 256 * MiB,
                bootargs, rng_seed=seed), path)
        for name, how, kwargs, sub in (
                (system.name, "QEMU's own device tree (with rng-seed), 1 GiB", {}, label),
                (NATIVE_PARTITION_DT, "the device tree Tern writes for a 2-vCPU, 256 MiB "
                 "partition (QEMU's -dtb)", {"dtb": dtb, "memory": 256 * MiB},
                 f"{label}-partition-dt"),
                (NATIVE_PARTITION_DT_NO_SEED, "the same without its rng-seed",
                 {"dtb": unseeded, "memory": 256 * MiB}, f"{label}-partition-dt-no-seed")):
            result = runs.native_linux(sub, shift, bootargs, **kwargs)
            workdir = workdir or result.workdir
            command = _repo_relative(shlex.join(str(c) for c in result.command))
            rec, why = _cyclictest_record(name, shift, loops, result.log, how, command)
            if not result.ok:
                why = result.reason
            if rec and not why:
                records.append(rec)
            else:
                errors.append(f"{name}: {why}")
    else:
        linux = _partition("linux", NEIGHBOUR_CORES, LINUX_IMAGE, system.wfi, bootargs,
                           memory=LINUX_MEMORY, irq=system.irq, initrd=LINUX_INITRD)
        result = runs.tern_system(label, shift, [linux], BESIDE_BOARD_CPUS)
        workdir = result.workdir
        part = result.partitions.get("linux")
        how = f"a Tern partition, irq = \"{system.irq}\", wfi = \"{system.wfi}\", 256 MiB"
        rec, why = _cyclictest_record(system.name, shift, loops, getattr(part, "lines", []), how,
                                      _repo_relative((result.workdir / "system.toml").read_text()))
        if not result.ok:
            why = result.reason
        if rec and not why:
            stats = result.stats.get("linux") or {}
            rec["linux_stats"] = {k: stats[k] for k in RT_STAT_KEYS if k in stats}
            records.append(rec)
        else:
            errors.append(why)
    return Outcome(records, "; ".join(errors) or None, str(workdir) if workdir else None)


def _guest_boot(lines):
    """The guest's LAT-BOOT record: the counter at its first instruction."""
    for line in lines:
        if line.startswith("LAT-BOOT {"):
            return json.loads(line[len("LAT-BOOT "):])
    return None


def _boot_line(log, tag="tern-boot"):
    for line in log:
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1:])
    return None


def riscv64_boot_record(system_name, shift, guest_lines, log):
    """The riscv64 boot record: instructions (`cycle` at shift 0) from the board's reset to
    the guest's first instruction and, in Tern, to the hypervisor's (tern-boot-cycle), with
    tern-boot's `time` stamps in between (10 MHz: 100 instructions a tick at shift 0)."""
    entry = _guest_boot(guest_lines)
    if not entry or "entry_cycle" not in entry:
        return None
    rec = {"system": system_name, "scenario": "riscv64-boot", "test": "boot", "shift": shift,
           "arch": "riscv64", "unit": "instructions", "freq_hz": entry["cycle_hz"],
           "first_instruction": entry["entry_cycle"]}
    hyp = _boot_line(log, "tern-boot-cycle")
    times = _boot_line(log)
    if hyp and times:
        per_tick = entry["cycle_hz"] // times["freq_hz"]
        first = next(iter(times["partitions"].values()))
        rec.update(hyp_entry=hyp["entry"], hypervisor_part=entry["entry_cycle"] - hyp["entry"],
                   time_resolution=per_tick, created=first["created"] * per_tick,
                   ready=times["ready"] * per_tick, eret=first["first_entry"] * per_tick)
    return rec


# ---- Shared cores (issue 29): two guests on one core, in Tern's pools and Xen's cpupools ----

SHARED_SCHEDULERS = ("credit", "rtds", "arinc653")
# Tern's shared core is core 1 of a 2-core board (the latency guest's core in every scenario);
# Xen's the only core of a 1-core board (Xen 4.17 stops booting on two under icount), so that
# its pool is Pool-0.
TERN_SHARED_CORE = 1
SHARED_POOL = "shared"
# What both sides run with: Xen's defaults wherever a dom0less Xen takes no other (xen.py):
# RTDS 4 ms every 10 ms for every vCPU, credit weight 256 each. ARINC 653 (Tern only under
# icount, XEN_ARINC653_DOM0LESS): a 20 ms major frame, a 10 ms window per guest.
SHARED_RTDS_BUDGET_US = xen.RTDS_DEFAULT_BUDGET_US
SHARED_RTDS_PERIOD_US = xen.RTDS_DEFAULT_PERIOD_US
SHARED_MAJOR_FRAME_US = 20000
SHARED_WINDOW_US = 10000
# Tern credit's slice: SCHED_CREDIT_SLICE_NS (hypervisor/include/tern/sched.h, a tool test
# holds the two equal); Xen credit's is sched_credit_tslice_ms.
TERN_CREDIT_SLICE_US = 10000
ARM64_COUNTER_HZ = 62_500_000   # QEMU virt's CNTFRQ: at icount shift 4, a tick an instruction
XEN_ARINC653_DOM0LESS = (
    "Xen 4.17's ARINC 653 scheduler gives its default windows (10 ms each) to domain 0's vCPUs "
    "only; other domains run once a toolstack sets a schedule (xl sched-arinc653, "
    "XEN_SYSCTL_SCHEDOP_putinfo). A dom0 that does (guests/xen/arinc-dom0) never runs on the "
    "one core Xen boots on under icount: its default window names its vCPU by the all-zero "
    "handle every domain has at boot, and Xen resolves that to the newest matching vCPU, "
    "domain 2's, which then holds the core. Beside the domUs' pool, on a second core, it sets "
    "the schedule and the domUs take turns (tests/system/test_xen_pools.py), but Xen 4.17 does "
    "not boot on two cores under icount: no figure comparable with Tern's")
# The busy partition: streams memory without a pause and takes no interrupt (no timer of its
# own); it runs until rt is done, then is stopped (Tern) or left behind (Xen).
SHARED_NOISE = "noise.mode=spin noise.irq_us=0 noise.until_us=1000000000"
SHARED_TESTS = ("vtimer-wfi",)
# The switch rows: two slices guests measure their counter's gaps up to this counter time
# (from the board's reset: Xen boots in about 0.5 s of it at icount shift 4).
SWITCH_UNTIL_US = 1_500_000
SWITCH_MAX_GAPS = 1024          # the guest's buffer: every gap kept


def shared_scheduler(scenario):
    """shared-lat-rtds -> rtds"""
    return scenario.name.rsplit("-", 1)[1]


def shared_bound_us(kind, scheduler):
    """(us, what) the scheduler promises a guest that wants the core, beyond the path itself:
    how long the other guest may hold it."""
    if scheduler == "rtds":
        return (SHARED_RTDS_PERIOD_US - SHARED_RTDS_BUDGET_US,
                "RTDS: period - budget (+ the path)")
    if scheduler == "arinc653":
        return (SHARED_MAJOR_FRAME_US - SHARED_WINDOW_US,
                "ARINC 653: the other windows' length (+ the path)")
    slice_us = TERN_CREDIT_SLICE_US if kind == "tern" else xen.CREDIT_TSLICE_MS * 1000
    return slice_us, "credit: the slice"


def _tern_pool(scheduler, members):
    pool = {"name": SHARED_POOL, "cpus": [TERN_SHARED_CORE], "scheduler": scheduler}
    if scheduler == "arinc653":
        pool.update(major_frame_us=SHARED_MAJOR_FRAME_US,
                    windows=[{"partition": m, "duration_us": SHARED_WINDOW_US} for m in members])
    return pool


def _tern_shared_partition(name, image, bootargs, scheduler, budget_us=SHARED_RTDS_BUDGET_US):
    table = _partition(name, [TERN_SHARED_CORE], image, "trap", bootargs)
    table["pool"] = SHARED_POOL
    if scheduler == "rtds":
        table.update(budget_us=budget_us, period_us=SHARED_RTDS_PERIOD_US)
    return table


# Tern's RTDS servers are not work-conserving: at Xen's 4 ms every 10 ms each, two spinning
# guests leave the core idle 2 ms a period, and a guest's last read before that idle time to
# the other's first after it is no switch.  The switch rows give Tern's two servers half the
# period each, so that every turn goes straight from one guest to the other, as Xen's (which
# runs RTDS with extra time on: work-conserving) do.
SWITCH_RTDS_BUDGET_US = SHARED_RTDS_PERIOD_US // 2


# The hypervisor's refusal of a pool it cannot run yet (core/config.c).
SHARED_REFUSAL = "is not built yet (only null pools run)"


def guest_log(system, result, names):
    """The run's lines with each guest's as `[name] text`, in the order they came: Tern's
    log has them so; Xen's has its console's `(XEN) DOMn:` chunks, joined here."""
    if system.kind != "xen":
        return result.log
    joiner = xen.GuestLines(list(names))
    out = []
    for line in result.log:
        text = joiner.feed(line)
        out.append(line if text is None else text)
    return out


def shared_refused(result):
    """The hypervisor's line refusing a shared pool, or None."""
    return next((line for line in result.log if SHARED_REFUSAL in line), None)


def run_shared(runs, label, shift, scheduler, guests, finish, budget_us=SHARED_RTDS_BUDGET_US,
               arch="arm64"):
    """`guests` ((name, image, bootargs), ...) on one core in a pool of `scheduler`; the run
    ends when the guests in `finish` are done (the others are stopped or left). Returns the
    RunResult, or an Outcome when the cell cannot run yet."""
    names = [g[0] for g in guests]
    if runs.system.kind == "xen":
        pools = [xen.Pool(SHARED_POOL, (0,), scheduler)]
        domains = [xen.Domain(name, xen.xen_variant(image), args, pool=SHARED_POOL)
                   for name, image, args in guests]
        return xen.run_xen(domains, runs.system.xen_args, xen=runs.system.xen_binary,
                           icount=shift, timeout=runs.timeout, workdir=runs._dir(label),
                           pools=pools, finish=finish)
    parts = [_tern_shared_partition(name, image, args, scheduler, budget_us)
             for name, image, args in guests]
    others = [n for n in names if n not in finish]
    console = _stop_when_rt_done(others) if others else None
    result = runs.tern_system(label, shift, parts, TERN_SHARED_CORE + 1, console=console,
                              pools=[_tern_pool(scheduler, names)], arch=arch)
    refused = shared_refused(result)
    if refused is not None:
        # One wording for every cell, so that the report says it once.
        return Outcome(error=f"shared cores not built (this hypervisor refuses every pool but "
                             f"null: \"{SHARED_REFUSAL}\")", workdir=str(result.workdir),
                       skipped=True)
    return result


# An IPI to a trap-less vCPU that is not running: WFI only (a busy receiver keeps the core,
# so its sender runs only after the receiver's slice).
SHARED_DIRECT_TESTS = ("ipi-wfi",)


def run_riscv64_shared_ipi(scenario, system, shift, plan, runs):
    """Both vCPUs of one trap-less partition on one core of a credit pool: the receiver waits
    (its WFI trapped, so it is switched out) when its sibling stores the IPI into its guest
    interrupt file; the SGEI that raises wakes it, and it takes the IPI at its next run. The
    record is that delivery, next to the bare board's ipi-wfi."""
    table = _partition("rt", [TERN_SHARED_CORE, TERN_SHARED_CORE], LAT_RISCV64, "trap",
                       _lat_args(plan, shift, SHARED_DIRECT_TESTS), irq="direct")
    table["pool"] = SHARED_POOL
    result = runs.tern_system(_label(scenario, shift), shift, [table], TERN_SHARED_CORE + 1,
                              arch="riscv64", pools=[_tern_pool("credit", ["rt"])])
    return _outcome(result, _lat_records(scenario.name, system, shift,
                                         result.partitions.get("rt")))


def run_shared_lat(scenario, system, shift, plan, runs):
    """The latency guest (rt) sharing its core with a busy partition (noise), in a pool of
    the scenario's scheduler, on the scenario's board: its timer latency and the bound the
    scheduler gives."""
    board = SHARED_BOARDS[scenario.arch]
    scheduler = shared_scheduler(scenario)
    bound_us, what = shared_bound_us(system.kind, scheduler)
    args = (f"{_lat_args(plan, shift, board.lat_tests)} "
            f"lat.start_delay_us={NOISE_START_DELAY_US}")
    guests = [("rt", board.lat, args), ("noise", board.noise, board.busy)]
    result = run_shared(runs, _label(scenario, shift), shift, scheduler, guests, ("rt",),
                        arch=scenario.arch)
    if isinstance(result, Outcome):
        return result
    extra = {"scheduler": scheduler, "bound_us": bound_us, "bound": what,
             "bound_ticks": bound_us * (board.lat_hz >> shift if board.lat_hz_scales else
                                        board.lat_hz) // 1_000_000}
    if scenario.arch != "arm64":
        extra = {"arch": scenario.arch, **extra}
    records = _lat_records(scenario.name, system, shift, result.partitions.get("rt"), extra)
    if result.ok and records:
        log = guest_log(system, result, [g[0] for g in guests])
        busy = _index(log, lambda line: line.startswith("[noise] noise: mode"))
        start = _index(log, lambda line: line.startswith("[rt] LAT-START "))
        if busy is None or start is None or busy > start:
            return Outcome([], "noise was not busy yet when rt started measuring (no \"noise: "
                               "mode\" line before rt's LAT-START)", str(result.workdir))
    return _outcome(result, records)


def _runs_of(record):
    """[(first read, last read)] of one guest's parse_slices record: between its gaps."""
    points = [record["start"]] + [x for gap in record["gaps"] for x in gap] + [record["end"]]
    return [(points[i], points[i + 1]) for i in range(0, len(points), 2)]


def switch_costs(records):
    """What two (or more) slices guests on one core say of its switches: every run of each
    guest inside the time all were measuring, in time order; a switch is one guest's last read
    to the next one's first (`switches`, in ticks), a gap of one guest with nobody else's run
    inside is the core busy with something else (`interruptions`, its length). Returns
    {"switches": [...], "interruptions": [...], "starts": {name: [first reads of its runs that
    follow a switch]}}."""
    lo = max(r["start"] for r in records.values())
    hi = min(r["end"] for r in records.values())
    runs = sorted((a, b, name) for name, r in records.items() for a, b in _runs_of(r)
                  if b >= lo and a <= hi)
    out = {"switches": [], "interruptions": [], "starts": {n: [] for n in records}}
    for (a0, b0, n0), (a1, b1, n1) in zip(runs, runs[1:]):
        if a0 < lo or b1 > hi:     # a run cut by a measurement's edge
            continue
        if n0 == n1:
            out["interruptions"].append(a1 - b0)
        else:
            out["switches"].append(a1 - b0)
            out["starts"][n1].append(a1)
    return out


def window_jitter(starts, major_ticks):
    """Ticks between the earliest and the latest window start of one guest, each taken
    relative to its frame (the first start + n major frames)."""
    if len(starts) < 2:
        return None
    offsets = [(s - starts[0]) % major_ticks for s in starts]
    offsets = [o - major_ticks if o > major_ticks // 2 else o for o in offsets]
    return max(offsets) - min(offsets)


def hypervisor_window_starts(log, lo, hi):
    """Tern's own ARINC 653 window starts on its shared core (tern-sched, docs/design.md
    "Scheduling"): each window's first guest entry, ticks after its boundary, over the windows
    that start in [lo, hi] (the guests' common measurement, so that their console lines, which
    trap, are not in it) among the first the hypervisor logs.  {"n", "min", "max", "jitter":
    the widest spread of one window's entries frame to frame}, or None without the lines."""
    record = results.parse_sched(log).get(TERN_SHARED_CORE)
    if record is None:
        return None
    late = results.window_lateness(record, lo, hi)
    values = [v for vs in late.values() for v in vs]
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": min(values), "max": max(values),
            "jitter": max(max(vs) - min(vs) for vs in late.values())}


def _spread(values):
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {"n": len(values), "min": ordered[0], "avg": round(sum(values) / len(values), 2),
            "p50": ordered[len(ordered) // 2], "max": ordered[-1]}


def run_shared_switch(scenario, system, shift, plan, runs):
    """Two slices guests (a, b) spinning on one core of the scenario's board: the core's switch
    from one to the other (the last read of one to the first of the next), what else
    interrupts them, and under ARINC 653 the jitter of each window's start."""
    board = SHARED_BOARDS[scenario.arch]
    scheduler = shared_scheduler(scenario)
    names = ("a", "b")
    args = (f"noise.mode=slices noise.until_us={board.switch_until_us} "
            f"noise.max_gaps={SWITCH_MAX_GAPS}")
    if board.gap_ticks is not None:
        args += f" noise.gap_ticks={board.gap_ticks}"
    guests = [(n, board.noise, f"{args} noise.name={n}") for n in names]
    result = run_shared(runs, _label(scenario, shift), shift, scheduler, guests, names,
                        budget_us=SWITCH_RTDS_BUDGET_US, arch=scenario.arch)
    if isinstance(result, Outcome):
        return result
    parsed = results.parse_slices(guest_log(system, result, names))
    missing = [n for n in names if n not in parsed or not parsed[n]["complete"]]
    if not result.ok or missing:
        dropped = {n: (result.stats.get(n) or {}).get("console_dropped") for n in missing}
        why = result.reason if not result.ok else \
            "no complete noise-slices output from " + ", ".join(
                n + (f" (its console dropped {dropped[n]} bytes)" if dropped[n] else "")
                for n in missing)
        return Outcome([], why, str(result.workdir))
    lost = [n for n in names if parsed[n]["kept"] != parsed[n]["count"]]
    measured = switch_costs({n: parsed[n] for n in names})
    rec = {"system": system.name, "scenario": scenario.name, "test": "switch", "shift": shift,
           "unit": "ticks", "freq_hz": board.counter_hz}
    if board.instructions_per_tick is not None:
        rec.update(arch=scenario.arch, instructions_per_tick=board.instructions_per_tick << shift)
    rec.update(scheduler=scheduler, switch=_spread(measured["switches"]),
               interruption=_spread(measured["interruptions"]),
               ran={n: parsed[n]["ran"] for n in names}, gap_ticks=parsed["a"]["gap_ticks"])
    if scheduler == "arinc653":
        major = SHARED_MAJOR_FRAME_US * board.counter_hz // 1_000_000
        rec["window_jitter"] = {n: window_jitter(measured["starts"][n], major) for n in names}
        if system.kind == "tern":
            starts = hypervisor_window_starts(result.log, max(parsed[n]["start"] for n in names),
                                              min(parsed[n]["end"] for n in names))
            if starts is not None:
                rec["window_start"] = starts
    error = f"gaps not all kept by {', '.join(lost)}" if lost else None
    if not measured["switches"]:
        error = "no switch between the two guests measured"
    return Outcome([rec], error, str(result.workdir))


# ---- The ARINC 653 window switch by execution trace: Tern against Xen, in instructions ----
#
# Xen's ARINC 653 needs its dom0 stand-in on a second core, and Xen 4.17 does not boot on two
# cores under icount (XEN_ARINC653_DOM0LESS): no timed figure. An execution trace counts the
# instructions a core executes whatever the clock, so this row counts, on the shared core, the
# EL2 instructions of every path from the interrupt that ends one guest's window to the eret
# into the other's (pathtrace.parse_switches). Only the hypervisor's text is traced (-dfilter);
# the trace streams through a FIFO into the parser, never to disk.

SWITCH_TRACE_CORE = 1           # Tern's shared core; Xen's ARINC 653 pool (dom0 on core 0)
# The function that saves the outgoing vCPU: a path through it is a switch.
SWITCH_TRACE_MARKER = {"tern": "arch_vcpu_save", "xen": "__context_switch"}
XEN_SCHED_SYMS = xen.XEN_SCHED.parent / "xen-syms"
# Each guest ends after this many turns away from the core (noise.slices), not at a counter
# time: without icount a traced Xen boots in minutes of the host's time, which its counter
# follows. On Xen the first guest spins for about 150 turns (3 s of the host's time, a traced
# run) while the second prints its first lines through Xen's console; the switches counted
# are those after both spin, and a few frames would do (the counts repeat to the
# instruction): Tern's guests print at once, and its runs are traced at full length.
# No gap is printed (max_gaps 0): a line through Xen's console takes seconds, traced.
SWITCH_TRACE_SLICES = {"tern": 16, "xen": 300}
# A turn away is a window (10 ms); a shorter gap is the host not running QEMU.
SWITCH_TRACE_GAP_TICKS = ARM64_COUNTER_HZ // 200
SWITCH_TRACE_MAX_GAPS = 0
# Counted: the switches while both guests spin, from both guests' "noise: mode" lines to the
# first guest's results (the other's turns then run its console output, or nothing once it
# is done: idle in its windows). The parser reads at most a pipe's worth behind QEMU, well
# under a switch's lines, so the first switch after the start mark is dropped.
SWITCH_TRACE_MODE_LINE = "noise: mode slices"
SWITCH_TRACE_RESULT_LINES = ("noise-gap ", "noise-slices ")   # the first guest's end
XEN_SWITCH_TRACE_MEMORY_MIB = 512
# How long the parser may take to drain the FIFO once QEMU has gone.
SWITCH_TRACE_DRAIN_S = 60


def switch_trace_elf(system):
    return HYPERVISOR_ELF if system.kind == "tern" else XEN_SCHED_SYMS


def switch_trace_args(fifo, syms):
    """QEMU options tracing every instruction of the hypervisor's text into `fifo`, all cores
    in one thread so that the lines of one core's exception stay together."""
    lo, hi = syms.text()
    return ["-accel", "tcg,thread=single", "-singlestep", "-d", qemu.TRACE_ITEMS,
            "-dfilter", f"{lo:#x}+{hi - lo:#x}", "-D", str(fifo)]


class TraceReader:
    """pathtrace.SwitchParser on a FIFO, in a thread, while QEMU writes into it; `console` is
    the run's console callback, marking where the switches between two guests that both spin
    begin and end."""

    def __init__(self, fifo, syms, core=SWITCH_TRACE_CORE):
        self.fifo = Path(fifo)
        self.core = core
        self.parser = pathtrace.SwitchParser(syms)
        self.result = None
        self.error = None
        self.marks = {}
        self.modes = 0
        self.opened = threading.Event()
        os.mkfifo(self.fifo)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            with open(self.fifo, encoding="utf-8", errors="replace") as f:
                self.opened.set()
                for line in f:
                    self.parser.feed(line)
            self.result = self.parser.finish()
        except (OSError, ToolError, ValueError) as e:
            self.error = str(e)

    def mark(self, name):
        """How far the parser is on the core: (switches, other paths)."""
        if name not in self.marks:
            out = self.parser.cores.get(self.core) or pathtrace.Switches()
            self.marks[name] = (len(out.counts), out.others)

    def console(self, line):
        if SWITCH_TRACE_MODE_LINE in line:
            self.modes += 1
            if self.modes == 2:
                self.mark("start")
        elif any(tag in line for tag in SWITCH_TRACE_RESULT_LINES):
            self.mark("end")
        return None

    def finish(self, timeout=SWITCH_TRACE_DRAIN_S):
        """(the core's Switches while both guests spun, its Switches of the whole run) once
        QEMU is gone, or raise ToolError. A QEMU that never opened the FIFO leaves the reader
        in open(): a writer that opens and closes it ends that. Opening for writing fails
        (ENXIO) until the reader is in open(), which its thread may not have reached yet."""
        deadline = time.monotonic() + timeout
        while self.thread.is_alive() and not self.opened.is_set() and \
                time.monotonic() < deadline:
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError:
                self.opened.wait(0.05)
        self.thread.join(max(0.0, deadline - time.monotonic()))
        self.fifo.unlink(missing_ok=True)
        if self.thread.is_alive():
            raise ToolError(f"trace: the parser did not finish within {timeout} s")
        if self.error:
            raise ToolError(f"trace: {self.error}")
        whole = (self.result or {}).get(self.core) or pathtrace.Switches()
        missing = [m for m in ("start", "end") if m not in self.marks]
        if missing:
            raise ToolError(f"trace: no console line for the {' and '.join(missing)} of the "
                            f"guests' spinning (\"{SWITCH_TRACE_MODE_LINE}\" from both, then "
                            "the first result line)")
        start = self.marks["start"]
        return pathtrace.between(whole, (min(start[0] + 1, self.marks["end"][0]), start[1]),
                                 self.marks["end"]), whole


def _switch_trace_guests(kind):
    args = (f"noise.mode=slices noise.slices={SWITCH_TRACE_SLICES[kind]} "
            f"noise.max_gaps={SWITCH_TRACE_MAX_GAPS} noise.gap_ticks={SWITCH_TRACE_GAP_TICKS}")
    return [(n, NOISE, f"{args} noise.name={n}") for n in ("a", "b")]


def run_switch_trace_system(runs, label, shift, qemu_args, console):
    """The shared-switch-arinc653 configuration (two slices guests, 10 ms windows in a 20 ms
    frame) on core SWITCH_TRACE_CORE, with `qemu_args`. Tern at icount `shift`; Xen without
    icount, dom0 stand-in in Pool-0 on core 0 setting the other core's schedule."""
    guests = _switch_trace_guests(runs.system.kind)
    names = [g[0] for g in guests]
    windows = [(n, SHARED_WINDOW_US) for n in names]
    if runs.system.kind == "xen":
        pools = [xen.Pool("p0", (0,), "credit2"),
                 xen.Pool(SHARED_POOL, (SWITCH_TRACE_CORE,), "arinc653")]
        domains = [xen.Domain(n, xen.xen_variant(image), args, pool=SHARED_POOL)
                   for n, image, args in guests]
        dom0 = xen.arinc653_dom0(domains, pools, SHARED_POOL, SHARED_MAJOR_FRAME_US, windows)
        return xen.run_xen(domains, runs.system.xen_args, xen=runs.system.xen_binary, icount=None,
                           timeout=runs.timeout, workdir=runs._dir(label), pools=pools,
                           dom0=dom0, memory_mib=XEN_SWITCH_TRACE_MEMORY_MIB,
                           qemu_args=qemu_args, console=console)
    parts = [_tern_shared_partition(n, image, args, "arinc653") for n, image, args in guests]
    return runs.tern_system(label, shift, parts, SWITCH_TRACE_CORE + 1, console=console,
                            pools=[_tern_pool("arinc653", names)], qemu_args=qemu_args)


def switch_trace_record(scenario, system, shift, marker, spinning, whole):
    """(record, error) of one traced run: the core's Switches while both guests spun, and of
    the whole run (boot, console output, a guest done and its windows idle: for reference)."""
    s = pathtrace.switch_summary(spinning)
    w = pathtrace.switch_summary(whole, top=0)
    keys = ("n", "min", "avg", "max", "median")
    rec = {"system": system.name, "scenario": scenario.name, "test": "switch-trace",
           "shift": shift if system.kind == "tern" else None, "unit": "instructions",
           "scheduler": "arinc653", "core": SWITCH_TRACE_CORE, "marker": marker,
           "hyp_instructions": {k: s[k] for k in keys if k in s},
           "other_paths": s["others"], "functions": s.get("functions", []),
           "whole_run": {**{k: w[k] for k in keys if k in w}, "others": w["others"]},
           "slices": SWITCH_TRACE_SLICES[system.kind], "major_frame_us": SHARED_MAJOR_FRAME_US,
           "window_us": SHARED_WINDOW_US}
    error = None if s["n"] else (f"no switch on core {SWITCH_TRACE_CORE} while both guests "
                                 f"spun (no interrupt from EL1 whose path ran {marker})")
    return rec, error


def run_switch_trace(scenario, system, shift, plan, runs):
    """The ARINC 653 window switch on the shared core, by execution trace: the hypervisor's
    instructions from the interrupt that ends one guest's window to the eret into the other's."""
    marker = SWITCH_TRACE_MARKER[system.kind]
    syms = pathtrace.symbols(switch_trace_elf(system), marker)
    label = _label(scenario, shift if system.kind == "tern" else "-")
    reader = TraceReader(runs._dir(label) / "trace.fifo", syms)
    try:
        result = run_switch_trace_system(runs, label, shift, switch_trace_args(reader.fifo, syms),
                                         reader.console)
    finally:
        try:
            (spinning, whole), trace_error = reader.finish(), None
        except ToolError as e:
            trace_error = str(e)
    workdir = str(result.workdir) if result.workdir else None
    if not result.ok:
        return Outcome([], result.explain(20), workdir)
    if trace_error:
        return Outcome([], trace_error, workdir)
    rec, error = switch_trace_record(scenario, system, shift, marker, spinning, whole)
    return Outcome([] if error else [rec], error, workdir)


# ---- The shared-core rows on the riscv64 board: Tern only (Xen 4.17 runs no riscv64 guest) ----

NOISE_RISCV64 = REPO / "guests" / "build" / "riscv64" / "noise.img"
RISCV64_SHARED_SHIFT = 0
# The latency guest's samples are `cycle`, which under icount counts virtual nanoseconds: at
# shift 0 a tick is an instruction.
RISCV64_CYCLE_HZ = 1_000_000_000
# The slices guests read `time`, and so does the hypervisor for its tern-sched lines (htimedelta
# is 0: one counter): the board's 10 MHz timebase, at shift 0 a tick of 100 instructions.
RISCV64_TIMEBASE_HZ = 10_000_000
RISCV64_INSTRUCTIONS_PER_TICK = RISCV64_CYCLE_HZ // RISCV64_TIMEBASE_HZ
# A trap-and-emulate partition has no Sstc: its timer is SBI set_timer, its WFI trapped.
RISCV64_SHARED_TESTS = ("sbi-timer-wfi",)
# riscv64's noise guest has only the slices mode, so the busy partition spins on `time` with
# interrupts masked (it is stopped before it would print anything but its first line).
RISCV64_SHARED_BUSY = "noise.mode=slices noise.max_gaps=0 noise.until_us=1000000000"
# Tern boots here in a few ms of counter time (arm64's SWITCH_UNTIL_US leaves Xen its 0.5 s).
# What bounds the run is each guest's console share (16 KiB at once, then the UART's rate, of
# counter time, docs/design.md "Console"): at shift 0 a guest prints its gaps in far less
# counter time than at shift 4, so all of them must fit the burst.  RTDS's guest a sees about
# 2.6 gaps (64 bytes each) per 10 ms period: 1 s of them was 17 KiB and lost its last lines,
# 0.6 s is about 10 KiB.
RISCV64_SWITCH_UNTIL_US = 600_000
# A step of the slices loop is under 100 instructions, a read 0 or 1 tick after the one before:
# a gap of more than one tick is time the guest did not run.
RISCV64_SWITCH_GAP_TICKS = 1
RISCV64_SHARED_SYSTEMS = ("tern wfi=trap",)


@dataclass(frozen=True)
class SharedBoard:
    """A board's shared-core rows: the latency guest's image, timer tests and counter (its
    samples' Hz, and whether that scales with the icount shift), the busy partition's image
    and bootargs, and the switch rows' run (until, the slices guests' gap threshold: None for
    their default) and counter (theirs and the hypervisor's tern-sched lines), with the
    instructions in one of its ticks where that is not 1 at the row's shift."""
    lat: Path
    lat_tests: tuple
    lat_hz: int
    lat_hz_scales: bool
    noise: Path
    busy: str
    switch_until_us: int
    gap_ticks: object
    counter_hz: int
    instructions_per_tick: object


SHARED_BOARDS = {
    "arm64": SharedBoard(LAT, SHARED_TESTS, ARM64_COUNTER_HZ, False, NOISE, SHARED_NOISE,
                         SWITCH_UNTIL_US, None, ARM64_COUNTER_HZ, None),
    "riscv64": SharedBoard(LAT_RISCV64, RISCV64_SHARED_TESTS, RISCV64_CYCLE_HZ, True,
                           NOISE_RISCV64, RISCV64_SHARED_BUSY, RISCV64_SWITCH_UNTIL_US,
                           RISCV64_SWITCH_GAP_TICKS, RISCV64_TIMEBASE_HZ,
                           RISCV64_INSTRUCTIONS_PER_TICK),
}


@dataclass(frozen=True)
class Scenario:
    """What the lab measures: on which board, on which kinds of system, with which guest
    images, and how (`measure`, which returns an Outcome).  `report` says how its records
    are reported: "latency" ones compare with the native figure of the same test, "beside"
    ones with rt alone; the others have tables of their own."""

    name: str
    title: str
    measure: Callable            # (scenario, system, shift, plan, runs) -> Outcome
    images: tuple                # the guest images (and ELF files) it needs
    report: str
    shifts: tuple = (4, 0)
    kinds: tuple = ("native", "tern", "xen")
    cpus: int = 1                # cores the measured system needs (vCPUs + neighbours)
    arch: str = "arm64"          # the board
    systems: tuple = ()          # only these systems of its kinds (by name), if given

    def run(self, system, shift, plan, runs):
        """One (system, shift) cell of this scenario."""
        return self.measure(self, system, shift, plan, runs)


def _cyclictest(scenario, system, shift, plan, runs):
    return run_cyclictest(system, shift, plan, runs)


def _rt_path(scenario, system, shift, plan, runs):
    return run_rt_path(system, shift, runs)


_LINUX = (LINUX_IMAGE, LINUX_INITRD)

# The shared-core rows' systems: Tern's trap-and-inject partitions (a shared core's guests
# trap WFI) and Xen's build with the schedulers.
SHARED_SYSTEMS = ("tern wfi=trap", "xen sched")

# The registry, in the order the matrix runs and the report shows them.
SCENARIOS = (
    Scenario("timer", "timer interrupt latency (virtual and EL1 physical timer, WFI and busy)",
             run_timer, (LAT,), "latency"),
    Scenario("ipi", "IPI: SGI from vCPU 1 to vCPU 0 of one partition, receive latency", run_ipi,
             (LAT,), "latency", cpus=2),
    Scenario("device", "device interrupt latency: QEMU's edu PCI device raises its INTx (a "
             "level-triggered SPI) through its own register, time to the guest's handler",
             run_device, (LAT,), "latency"),
    Scenario("riscv64", "RISC-V board (QEMU riscv virt, AIA, Sstc, OpenSBI), natively and in a "
             "Tern partition: timer through Sstc and SBI set_timer, IPI by an IMSIC store and SBI "
             "send_ipi, edu's MSI into the IMSIC (natively and in a trap-less partition, which owns "
             "the PCIe bus)", run_riscv64, (LAT_RISCV64,), "latency", kinds=("native", "tern"),
             shifts=(0,), cpus=2, arch="riscv64"),
    Scenario("channel", "channel between two partitions: member 1's doorbell latency (one way, "
             "from before member 0 writes its message), member 0's round trip and its ring's cost",
             run_channel, (LAT,), "latency", kinds=("tern",), shifts=(4,), cpus=3),
    Scenario("riscv64-channel", "channel between two partitions on the RISC-V board: doorbell "
             "latency (one way), round trip and the ring's cost", run_channel, (LAT_RISCV64,),
             "latency", kinds=("tern",), shifts=(0,), cpus=3, arch="riscv64"),
    Scenario("prio", "priority order: ten SGIs pending at once, served in priority order",
             run_prio, (PROBE,), "prio", shifts=(4,)),
    Scenario("noise-burst", "timer latency with a second partition streaming memory and taking "
             "interrupts in bursts separated by WFI", run_noise, (LAT, NOISE), "noise",
             kinds=("tern", "xen"), cpus=2),
    Scenario("noise-spin", "timer latency with a second partition streaming memory and taking "
             "interrupts without pause (emulator artefact: see the caveat)", run_noise,
             (LAT, NOISE), "noise", kinds=("tern", "xen"), shifts=(4,), cpus=2),
    Scenario("linux-stress", "real-time partition alone and beside Linux (2 vCPUs) running a busy "
             "loop on each vCPU (tern.run=stress)", run_beside, (LAT,) + _LINUX, "beside",
             kinds=("tern",), shifts=(4,), cpus=3),
    Scenario("linux-cyclictest", "real-time partition alone and beside Linux (2 vCPUs) running "
             "cyclictest (tern.run=cyclictest)", run_beside, (LAT,) + _LINUX, "beside",
             kinds=("tern",), shifts=(4,), cpus=3),
    Scenario("noise-pair", "control: real-time partition alone and beside two bare-metal "
             "partitions that stream memory with a 4 ms timer (Linux's tick) and take it "
             "directly (irq = \"direct\"): no hypervisor on any core's interrupt path",
             run_beside, (LAT, NOISE), "beside", kinds=("tern",), shifts=(4,), cpus=3),
    Scenario("rt-path", "real-time partition alone and beside busy Linux, instruction by "
             "instruction on its own core (QEMU execution trace)", _rt_path,
             (LAT, LAT_ELF, HYPERVISOR_ELF) + _LINUX, "rt-path", kinds=("tern",), shifts=(4,),
             cpus=3),
    Scenario("cyclictest", "cyclictest inside Linux (2 vCPUs): natively on the board and in a Tern "
             "partition", _cyclictest, _LINUX, "cyclictest", kinds=("native", "tern"),
             shifts=(4,), cpus=2),
    Scenario("virtio-blk", "virtio-blk sequential read in Linux: natively (QEMU's virtio-blk on "
             "PCI), in a Tern partition owning that device (pass-through), and from a virtio-mmio "
             "slot served by a bare-metal partition (mediated)", run_vio_blk,
             _LINUX + (VBACK["arm64"], TERN_VIO["arm64"]), "virtio", kinds=("native", "tern"),
             shifts=(4,), cpus=3, systems=("native", VIO_SYSTEM["arm64"])),
    Scenario("virtio-net", "virtio-net between two Linux partitions, one serving the other's "
             "network (tern-vio): ping round trip and TCP throughput", run_vio_net,
             _LINUX + (TERN_VIO["arm64"],), "virtio", kinds=("tern",), shifts=(4,), cpus=3,
             systems=(VIO_SYSTEM["arm64"],)),
    Scenario("riscv64-virtio-blk", "virtio-blk sequential read in Linux on the RISC-V board: "
             "natively, pass-through and mediated", run_vio_blk,
             (VIO_LINUX["riscv64"][0] / "Image", VBACK["riscv64"], TERN_VIO["riscv64"]), "virtio",
             kinds=("native", "tern"), shifts=(0,), cpus=3, arch="riscv64",
             systems=("native", VIO_SYSTEM["riscv64"])),
    Scenario("riscv64-virtio-net", "virtio-net between two Linux partitions on the RISC-V board: "
             "ping round trip and TCP throughput", run_vio_net,
             (VIO_LINUX["riscv64"][0] / "Image", TERN_VIO["riscv64"]), "virtio", kinds=("tern",),
             shifts=(0,), cpus=3, arch="riscv64", systems=(VIO_SYSTEM["riscv64"],)),
    *(Scenario(f"shared-lat-{sched}", f"latency guest sharing one core with a busy partition "
               f"(streaming memory), {sched} pool", run_shared_lat, (LAT, NOISE), "shared",
               kinds=("tern", "xen"), shifts=(4,), systems=SHARED_SYSTEMS)
      for sched in SHARED_SCHEDULERS),
    *(Scenario(f"shared-switch-{sched}", f"two guests spinning on one core ({sched} pool): the "
               f"switch from one to the other, and what else interrupts them", run_shared_switch,
               (NOISE,), "shared", kinds=("tern", "xen"), shifts=(4,), systems=SHARED_SYSTEMS)
      for sched in SHARED_SCHEDULERS),
    Scenario(SWITCH_TRACE_SCENARIO, "ARINC 653 window switch on a shared core, by execution "
             "trace: the hypervisor's instructions from the interrupt that ends one guest's "
             "window to the eret into the other's (Tern at icount shift 4, Xen without icount)",
             run_switch_trace, (NOISE, HYPERVISOR_ELF), "switch-trace", kinds=("tern", "xen"),
             shifts=(4,), systems=SHARED_SYSTEMS),
    Scenario("riscv64-shared-ipi", "IPI by an IMSIC store to a trap-less vCPU switched out on "
             "the sender's own core (both vCPUs on one core of a credit pool): the SGEI, the "
             "switch, and the IPI taken from its guest file at its next run",
             run_riscv64_shared_ipi, (LAT_RISCV64,), "latency", kinds=("tern",), shifts=(0,),
             cpus=2, arch="riscv64", systems=("tern direct",)),
    *(Scenario(f"riscv64-shared-lat-{sched}", f"latency guest (SBI timer, WFI trapped) sharing "
               f"one core of the RISC-V board with a busy partition (spinning on its counter), "
               f"{sched} pool", run_shared_lat, (LAT_RISCV64, NOISE_RISCV64), "shared",
               kinds=("tern",), shifts=(RISCV64_SHARED_SHIFT,), cpus=2, arch="riscv64",
               systems=RISCV64_SHARED_SYSTEMS)
      for sched in SHARED_SCHEDULERS),
    *(Scenario(f"riscv64-shared-switch-{sched}", f"two guests spinning on one core of the RISC-V "
               f"board ({sched} pool): the switch from one to the other, and what else "
               f"interrupts them", run_shared_switch, (NOISE_RISCV64,), "shared",
               kinds=("tern",), shifts=(RISCV64_SHARED_SHIFT,), cpus=2, arch="riscv64",
               systems=RISCV64_SHARED_SYSTEMS)
      for sched in SHARED_SCHEDULERS),
    Scenario("boot", "boot: board reset to the guest's first instruction", run_boot, (LAT,),
             "boot", shifts=(4,)),
    Scenario("riscv64-boot", "boot on the RISC-V board: board reset (QEMU's reset vector, "
             "OpenSBI, Tern) to the guest's first instruction", run_riscv64_boot, (LAT_RISCV64,),
             "boot", kinds=("native", "tern"), shifts=(0,), arch="riscv64"),
)
SCENARIO_BY_NAME = {s.name: s for s in SCENARIOS}
# Scenarios whose records compare with the native figure of the same test.
LATENCY_SCENARIOS = tuple(s.name for s in SCENARIOS if s.report == "latency")
# rt's timer tests alone, then beside neighbours (beside_setup).
BESIDE_SCENARIOS = tuple(s.name for s in SCENARIOS if s.report == "beside")
SHARED_SCENARIOS = tuple(s.name for s in SCENARIOS if s.report == "shared")


def add_extra_over_native(records):
    """`extra`: AVG and WARM_MAX minus the native figure of the same test and shift.

    Records of the "beside" scenarios compare with their own `alone` run instead."""
    def board(r):  # tests of the same name on the two boards (edu-wfi) are not the same
        return SCENARIO_BY_NAME[r["scenario"]].arch if r["scenario"] in SCENARIO_BY_NAME \
            else "arm64"

    native = {(board(r), r["test"], r["shift"]): r for r in records
              if r["system"] == "native" and r["scenario"] in LATENCY_SCENARIOS and "avg" in r}
    for r in records:
        base = native.get((board(r), r["test"], r["shift"]))
        if base is None or r["system"] == "native" or "avg" not in r or "alone" in r:
            continue
        r["extra_avg"] = round(r["avg"] - base["avg"], 2)
        r["extra_warm_max"] = r["warm_max"] - base["warm_max"]


def run_matrix(plan, systems=SYSTEMS, scenarios=SCENARIOS, workdir=None, progress=sys.stderr):
    """Every (scenario, system, shift); returns (records, errors)."""
    workdir = runner.make_workdir(workdir)
    records, errors = [], []
    usable = []
    for system in systems:
        why = system.available()
        if why:
            errors.append({"system": system.name, "scenario": "-", "shift": "-", "error": why,
                           "workdir": None, "skipped": True})
            if progress:
                print(f"bench: skipping {system.name}: {why}", file=progress)
        else:
            usable.append(system)
    cells = []
    for sc in scenarios:
        for sy in usable:
            if sy.kind not in sc.kinds or (sc.systems and sy.name not in sc.systems) \
                    or (sy.only and sc.name not in sy.only):
                continue
            why = sy.can_run(sc)
            if why:
                errors.append({"system": sy.name, "scenario": sc.name, "shift": "-", "error": why,
                               "workdir": None, "skipped": True})
                continue
            cells += [(sc, sy, sh) for sh in sc.shifts if sh in plan.shifts]
    started = time.monotonic()
    for n, (scenario, system, shift) in enumerate(cells, 1):
        if progress:
            print(f"bench: [{n}/{len(cells)}] {scenario.name} on {system.name}, icount shift "
                  f"{shift} ({time.monotonic() - started:.0f} s)", file=progress, flush=True)
        runs = Runs(system, workdir / system.name.replace(" ", "-").replace("=", "-"),
                    plan.timeout)
        outcome = run_scenario(scenario, system, shift, plan, runs)
        records += outcome.records
        if outcome.error:
            errors.append({"system": system.name, "scenario": scenario.name, "shift": shift,
                           "error": outcome.error, "workdir": outcome.workdir,
                           **({"skipped": True} if outcome.skipped else {})})
            if progress:
                print(f"bench:   {'skipped' if outcome.skipped else 'failed'}: {outcome.error} "
                      f"({outcome.workdir})", file=progress)
    add_extra_over_native(records)
    return records, errors
