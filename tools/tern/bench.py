"""`tern bench`: the latency lab.

Runs one matrix of systems x scenarios on the emulated board under icount and writes
results.json, plots and docs/benchmarks.md. Under icount (`-icount shift=N,align=off,sleep=off`)
virtual time follows the instruction count: results are deterministic and comparable between
systems of one run, but they count instructions, not cycles.

A system is how the guest runs (natively, in a Tern partition, ...); a scenario is what it
measures (timer latency, IPIs, priority order, interference, boot). Each (system, scenario,
shift) is one QEMU run whose guest output becomes records.
"""

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import runner, xen
from .errors import ToolError

REPO = runner.REPO_ROOT
LAT = REPO / "guests" / "build" / "lat.img"
PROBE = REPO / "guests" / "build" / "probe.img"
NOISE = REPO / "guests" / "build" / "noise.img"

TIMER_TESTS = ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy")
IPI_TESTS = ("sgi-wfi", "sgi-busy")
DEVICE_TESTS = ("edu-wfi", "edu-busy")
# The device scenario's board: QEMU's edu on the PCIe bus; in Tern the measured partition
# owns the host bridge it sits behind.
DEVICE_PCI = ("edu",)
DEVICE_OWNED = ("pcie",)
# Scenarios whose records compare with the native figure of the same test.
LATENCY_SCENARIOS = ("timer", "ipi", "device")
# Every run gets the same instruction budget between samples whatever the shift:
# 20000 instructions, 20 us at shift 0 (1 ns each), 320 us at shift 4 (16 ns each).
BUDGET_INSTRUCTIONS = 20000
STAT_KEYS = ("avg", "ema", "min", "max", "warm_max", "p50", "p99", "p999", "samples")


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

    def describe(self):
        if self.kind == "native":
            return "the guest alone on the bare board"
        if self.kind == "tern":
            return f"Tern partition, irq = \"{self.irq}\", wfi = \"{self.wfi}\""
        build = "Xen 4.17 built from Debian's source with the null scheduler" \
            if self.xen_binary == xen.XEN_NULL else "Debian's Xen 4.17 binary (credit2)"
        return f"{build}, dom0less, no dom0; Xen command line `{xen.BASE_ARGS} {self.xen_args}`"

    def available(self):
        """Why this system cannot run here, or None."""
        if self.kind == "xen" and self.xen_binary == xen.XEN_NULL and not xen.XEN_NULL.is_file():
            return "no null-scheduler Xen build (make xen-null)"
        return None

    def can_run(self, scenario):
        """Why this system cannot run `scenario` on this emulator, or None."""
        if self.kind == "xen" and scenario.name == "device":
            return ("Xen 4.17 has no PCI pass-through for Arm guests; handing the whole host "
                    "bridge to a dom0less domU as a platform device (a xen,passthrough partial "
                    "device tree) was not attempted, so the edu device has no Xen cell")
        if self.kind == "xen" and scenario.cpus > 1:
            return ("Xen 4.17 on two or more cores stops booting under QEMU 7.2 icount (last line "
                    "'P2M: 3 levels ...'); it boots without icount, which would not be comparable")
        return None


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
)


@dataclass
class Scenario:
    name: str
    title: str
    shifts: tuple = (4, 0)
    kinds: tuple = ("native", "tern", "xen")
    cpus: int = 1             # cores the measured system needs (vCPUs + neighbours)


SCENARIOS = (
    Scenario("timer", "timer interrupt latency (virtual and EL1 physical timer, WFI and busy)"),
    Scenario("ipi", "IPI: SGI from vCPU 1 to vCPU 0 of one partition, receive latency", cpus=2),
    Scenario("device", "device interrupt latency: QEMU's edu PCI device raises its INTx (a "
             "level-triggered SPI) through its own register, time to the guest's handler"),
    Scenario("prio", "priority order: ten SGIs pending at once, served in priority order",
             shifts=(4,)),
    Scenario("noise-burst", "timer latency with a second partition streaming memory and taking "
             "interrupts in bursts separated by WFI", kinds=("tern", "xen"), cpus=2),
    Scenario("noise-spin", "timer latency with a second partition streaming memory and taking "
             "interrupts without pause (emulator artefact: see the caveat)", kinds=("tern", "xen"),
             shifts=(4,), cpus=2),
    Scenario("boot", "boot: board reset to the guest's first instruction", shifts=(4,)),
)


def images_for(scenario):
    """The guest images a scenario boots."""
    if scenario.name == "prio":
        return (PROBE,)
    if scenario.name.startswith("noise-"):
        return (LAT, NOISE)
    return (LAT,)


@dataclass
class Plan:
    samples: int
    prio_runs: int
    shifts: tuple
    timeout: float = 300


QUICK = Plan(samples=100, prio_runs=20, shifts=(4,))
FULL = Plan(samples=1000, prio_runs=50, shifts=(4, 0))


@dataclass
class Outcome:
    """What one run produced: records for results.json, or an error."""

    records: list = field(default_factory=list)
    error: str = None
    workdir: str = None


def _partition(name, cpus, image, wfi, bootargs, memory="64MiB", irq="trap", devices=()):
    cpu_list = ", ".join(str(c) for c in cpus)
    return (f'[[partition]]\nname = "{name}"\ncpus = [{cpu_list}]\nmemory = "{memory}"\n'
            f'image = {json.dumps(str(image))}\nwfi = "{wfi}"\nirq = "{irq}"\n'
            f'bootargs = "{bootargs}"\ndevices = {json.dumps(list(devices))}\n')


def _system_toml(board_cpus, *partitions, pci=()):
    return (f"[board]\ncpus = {board_cpus}\npci = {json.dumps(list(pci))}\n\n"
            + "\n".join(partitions))


class Runs:
    """Runs guests on one system and returns the output of the partition that measures."""

    def __init__(self, system, workdir, timeout):
        self.system = system
        self.workdir = workdir
        self.timeout = timeout

    def _dir(self, label):
        d = self.workdir / label
        d.mkdir(parents=True, exist_ok=True)
        return d

    def guest(self, label, image, bootargs, shift, vcpus=1, neighbours=(), pci=()):
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
        parts = [_partition("rt", cores, image, self.system.wfi, bootargs, irq=self.system.irq,
                            devices=DEVICE_OWNED if pci else ())]
        next_core = 1 + vcpus
        for name, n_image, n_args in neighbours:
            parts.append(_partition(name, [next_core], n_image, "trap", n_args))
            next_core += 1
        toml_path = d / "system.toml"
        toml_path.write_text(_system_toml(next_core, *parts, pci=pci))
        result = runner.run_system(toml_path, icount=shift, timeout=self.timeout, workdir=d)
        return result, result.partitions.get("rt")


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


def run_scenario(scenario, system, shift, plan, runs):
    """One (scenario, system, shift) cell of the matrix."""
    label = f"{scenario.name}-s{shift}"
    samples = f"lat.samples={plan.samples} lat.delta_us={delta_us(shift)}"
    if scenario.name == "timer":
        result, part = runs.guest(label, LAT, samples, shift)
        records = _lat_records("timer", system, shift, part)
    elif scenario.name == "ipi":
        result, part = runs.guest(label, LAT, f"{samples} lat.tests={','.join(IPI_TESTS)}", shift,
                                  vcpus=2)
        records = _lat_records("ipi", system, shift, part)
    elif scenario.name == "device":
        result, part = runs.guest(label, LAT, f"{samples} lat.tests={','.join(DEVICE_TESTS)}",
                                  shift, pci=DEVICE_PCI)
        records = _lat_records("device", system, shift, part)
    elif scenario.name == "prio":
        result, part = runs.guest(label, PROBE, f"probe.tests=prio probe.prio_runs={plan.prio_runs}",
                                  shift)
        records = [{"system": system.name, "scenario": "prio", "test": "prio", "shift": shift,
                    "runs": r.get("runs"), "in_order": r.get("in_order"),
                    "expected": r.get("expected"), "first_wrong": r.get("first_wrong")}
                   for r in getattr(part, "probe", []) or [] if r.get("test") == "prio"]
    elif scenario.name.startswith("noise-"):
        mode = scenario.name.split("-", 1)[1]
        # The noise partition outlives the measurement, then powers off by itself.
        until_us = 2 * len(TIMER_TESTS) * plan.samples * delta_us(shift) + 200000
        noise = ("noise", NOISE, f"noise.mode={mode} noise.until_us={until_us}")
        result, part = runs.guest(label, LAT, samples, shift, neighbours=[noise])
        records = _lat_records(scenario.name, system, shift, part)
    elif scenario.name == "boot":
        result, part = runs.guest(label, LAT, "lat.samples=1 lat.tests=vtimer-busy", shift)
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
    else:
        raise ToolError(f"unknown scenario {scenario.name}")
    error = None if result.ok else result.reason
    if not records and not error:
        error = "no results in the guest's output"
    return Outcome(records, error, str(result.workdir) if result.workdir else None)


def _guest_boot(lines):
    """The guest's LAT-BOOT record: the counter at its first instruction."""
    for line in lines:
        if line.startswith("LAT-BOOT {"):
            return json.loads(line[len("LAT-BOOT "):])
    return None


def _boot_line(log):
    for line in log:
        if line.startswith("tern-boot "):
            return json.loads(line[len("tern-boot "):])
    return None


def add_extra_over_native(records):
    """`extra`: AVG and WARM_MAX minus the native figure of the same test and shift."""
    native = {(r["test"], r["shift"]): r for r in records
              if r["system"] == "native" and r["scenario"] in LATENCY_SCENARIOS and "avg" in r}
    for r in records:
        base = native.get((r["test"], r["shift"]))
        if base is None or r["system"] == "native" or "avg" not in r:
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
            if sy.kind not in sc.kinds:
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
                           "error": outcome.error, "workdir": outcome.workdir})
            if progress:
                print(f"bench:   failed: {outcome.error} ({outcome.workdir})", file=progress)
    add_extra_over_native(records)
    return records, errors
