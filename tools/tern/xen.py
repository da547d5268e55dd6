"""Real Xen on the same board: Debian's Xen 4.17, booted dom0less (no dom0 but an optional
toolstack stand-in), for the latency lab.

Xen reads its domains from the device tree: QEMU's own tree (dumped with the same machine
options) gets `xen,xen-bootargs` and one `xen,domain` node per guest under /chosen. A domU sees
Xen's guest memory map, not the board's, so it runs the `*-xen.img` build of our guests (GIC at
Xen's addresses, console on Xen's emulated PL011). A domU's SYSTEM_OFF does not stop the board:
the run ends when every guest has printed its DONE line.
"""

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import qemu, results, runner
from .errors import ToolError
from .files import write_new

REPO = runner.REPO_ROOT
XEN_DEBIAN = REPO / "build" / "xen" / "root" / "boot" / "xen-4.17-arm64"
XEN_NULL = REPO / "build" / "xen-null" / "xen"
XEN_SCHED = REPO / "build" / "xen-sched" / "xen"
FETCH_SCRIPT = REPO / "scripts" / "xen" / "fetch-xen.sh"

# Console on the board UART; domU output shown; no background scrubbing of free RAM after boot
# (it delays wake-ups from WFI for the first hundreds of ms and is a boot artefact).
BASE_ARGS = "console=dtuart dtuart=/pl011@9000000 guest_loglvl=all loglvl=all bootscrub=off"
DOMU_BASE = 0x5000_0000     # clear of Xen itself and of QEMU's device tree at 0x4800_0000
DOM0_BASE = 0x4c00_0000     # an optional dom0's kernel module: between the tree and the domUs
DOMU_STRIDE = 0x0400_0000
DONE_MARKERS = ("LAT-DONE", "PROBE-DONE", "NOISE-DONE")

# Xen prints a domU's vpl011 output as "(XEN) DOM<n>: <chunk>", flushing at a newline or when
# 126 characters are pending: a chunk of exactly 126 characters continues on the next line.
GUEST_LINE = re.compile(r"^\(XEN\) DOM(\d+): (.*)$")
VPL011_CHUNK = 126


# What a dom0less boot of Xen 4.17 can set of the schedulers, with no dom0 and no toolstack
# (docs/benchmarks.md, "Method"): a boot-time cpupool's cores and scheduler (`xen,cpupool`,
# CONFIG_BOOT_TIME_CPUPOOLS) and which pool a domU starts in (`domain-cpupool`). No per-domain
# parameter: every vCPU has its scheduler's defaults (RTDS 4 ms every 10 ms, credit weight
# 256), and the command line sets only global ones (sched_credit_tslice_ms, sched_ratelimit_us).
# ARINC 653 gives default windows (10 ms) to domain 0's vCPUs alone; dom0less domUs are
# domains 1.., so in an ARINC 653 pool they never run until a toolstack sets a schedule. A dom0
# stand-in (Dom0, arinc653_dom0: guests/xen/arinc-dom0) sets one. It cannot share the domUs'
# pool: a window names its vCPU by domain handle and vCPU id, every domain has the all-zero
# handle at boot (dom0's included), and Xen resolves a window to the newest vCPU that matches,
# so dom0's default window runs the last domU created and dom0 never runs. Beside the domUs'
# ARINC 653 pool, in Pool-0 on another core, it runs, and the domUs alternate in its windows;
# but Xen 4.17 stops booting on two cores under icount (tests/system/test_xen_pools.py).
SCHEDULERS = ("credit", "credit2", "rtds", "arinc653", "null")
RTDS_DEFAULT_BUDGET_US = 4000
RTDS_DEFAULT_PERIOD_US = 10000
CREDIT_TSLICE_MS = 30       # sched_credit_tslice_ms's default
CREDIT_RATELIMIT_US = 1000  # sched_ratelimit_us's default


@dataclass
class Pool:
    """A boot-time cpupool: board cores (cpu@N of QEMU's tree) and their scheduler. The pool
    holding core 0 becomes Pool-0 (Xen's rule), so on a one-core board it sets Pool-0's
    scheduler."""
    name: str
    cpus: tuple = (0,)
    sched: str = "credit2"


@dataclass
class Domain:
    name: str
    image: Path               # a *-xen.img guest
    bootargs: str = ""
    vcpus: int = 1
    memory_kib: int = 64 * 1024
    pool: str = None          # a Pool's name: the domU starts there (else in Pool-0)


@dataclass
class Dom0:
    """A dom0 beside the dom0less domUs (the ARINC 653 peer's toolstack stand-in,
    guests/xen/arinc-dom0): one vCPU, `memory_mib` of RAM, `bootargs` its command line."""
    image: Path
    bootargs: str = ""
    memory_mib: int = 32


def dom0_args(dom0):
    """What Xen's command line needs for `dom0` (empty without one)."""
    if dom0 is None:
        return ""
    return f"dom0_mem={dom0.memory_mib}M dom0_max_vcpus=1"


def pool_ids(pools):
    """{pool name: the cpupool id Xen 4.17 gives it}: device-tree order from 0, and the pool
    holding core 0 swapped with id 0 (xen/common/sched/boot-cpupool.c)."""
    ids = {p.name: i for i, p in enumerate(pools)}
    first = next((p.name for p in pools if 0 in p.cpus), None)
    if first is not None:
        other = next(n for n, i in ids.items() if i == 0)
        ids[first], ids[other] = 0, ids[first]
    return ids


ARINC_DOM0 = REPO / "guests" / "build" / "arm64" / "arinc-dom0.img"
ARINC_MAX_WINDOWS = 64      # ARINC653_MAX_DOMAINS_PER_SCHEDULE


def arinc653_dom0(domains, pools, pool, major_frame_us, windows, image=ARINC_DOM0):
    """The Dom0 that sets cpupool `pool`'s ARINC 653 schedule as `xl sched-arinc653` would
    (guests/xen/arinc-dom0): a major frame of `major_frame_us` and `windows`, [(domain name,
    us)] in window order, vCPU 0 of each. Dom0less domUs are domains 1.. in `domains` order.
    Refuses what Xen's putinfo would (EINVAL) before booting anything."""
    ids = {d.name: i + 1 for i, d in enumerate(domains)}
    kinds = {p.name: p.sched for p in pools}
    if kinds.get(pool) != "arinc653":
        raise ToolError(f"xen: cpupool {pool!r} is not an ARINC 653 pool")
    if not 0 < len(windows) <= ARINC_MAX_WINDOWS:
        raise ToolError(f"xen: ARINC 653 takes 1 to {ARINC_MAX_WINDOWS} windows, not "
                        f"{len(windows)}")
    for name, us in windows:
        if name not in ids:
            raise ToolError(f"xen: ARINC 653 window for unknown domain {name!r}")
        if us <= 0:
            raise ToolError(f"xen: ARINC 653 window of {name} is {us} us")
    if major_frame_us < sum(us for _, us in windows):
        raise ToolError(f"xen: ARINC 653 windows ({sum(us for _, us in windows)} us) longer "
                        f"than the major frame ({major_frame_us} us)")
    spec = ",".join(f"{ids[name]}:{us}" for name, us in windows)
    return Dom0(image, f"arinc.pool={pool_ids(pools)[pool]} arinc.frame_us={major_frame_us} "
                       f"arinc.windows={spec}")


def xen_variant(image):
    """guests/build/arm64/lat.img -> guests/build/arm64/lat-xen.img"""
    image = Path(image)
    return image.with_name(image.stem + "-xen" + image.suffix)


def ensure_xen(binary=XEN_DEBIAN):
    """The Xen binary, fetching Debian's package on first use."""
    binary = Path(binary)
    if binary.is_file():
        return binary
    if binary == XEN_DEBIAN:
        proc = subprocess.run([str(FETCH_SCRIPT)], capture_output=True, text=True)
        if proc.returncode == 0 and binary.is_file():
            return binary
        raise ToolError(f"could not fetch Debian's Xen: {(proc.stderr or proc.stdout).strip()}")
    if binary == XEN_NULL:
        raise ToolError(f"no null-scheduler Xen at {binary}: run `make xen-null` (a few minutes)")
    if binary == XEN_SCHED:
        raise ToolError(f"no Xen with RTDS and ARINC 653 at {binary}: run `make xen-sched` "
                        "(a few minutes)")
    raise ToolError(f"no Xen binary at {binary}")


class GuestLines:
    """Turns Xen's chunked domU console output into `[name] text` lines."""

    def __init__(self, names):
        self.names = names
        self.pending = {}

    def feed(self, line):
        m = GUEST_LINE.match(line)
        if not m:
            return None
        dom, chunk = int(m.group(1)), m.group(2)
        text = self.pending.pop(dom, "") + chunk
        if len(chunk) == VPL011_CHUNK:
            self.pending[dom] = text
            return None
        name = self.names[dom - 1] if 0 < dom <= len(self.names) else f"dom{dom}"
        return f"[{name}] {text}"


def _dts_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _board(cpus, cpu, memory_mib, icount, extra=""):
    """The same board as Tern's runs (qemu.board_args), entered at EL2; extra: more -M options."""
    return qemu.board_args(cpu, cpus, memory_mib * qemu.MiB, True, icount, machine_extra=extra)


def _node_name(name):
    """A pool's node name under /chosen (a device-tree node name, not the user's)."""
    return "cpupool-" + re.sub(r"[^A-Za-z0-9,._+-]", "-", name)


def check_pools(domains, pools, cpus):
    """Refuse what Xen would panic on or ignore: an unknown scheduler, a core not on the board
    or in two pools, a domain in an unknown pool."""
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise ToolError(f"xen: two cpupools of one name: {names}")
    seen = {}
    for p in pools:
        if p.sched not in SCHEDULERS:
            raise ToolError(f"xen: cpupool {p.name}: unknown scheduler {p.sched!r} "
                            f"(Xen 4.17: {', '.join(SCHEDULERS)})")
        if not p.cpus:
            raise ToolError(f"xen: cpupool {p.name}: no cores (Xen requires one at least)")
        for c in p.cpus:
            if not 0 <= c < cpus:
                raise ToolError(f"xen: cpupool {p.name}: core {c} is not on the {cpus}-core board")
            if c in seen:
                raise ToolError(f"xen: core {c} is in cpupools {seen[c]} and {p.name}")
            seen[c] = p.name
    for d in domains:
        if d.pool is not None and d.pool not in names:
            raise ToolError(f"xen: domain {d.name}: unknown cpupool {d.pool!r}")


def build_dtb(domains, xen_args, cpus, cpu, memory_mib, workdir, pools=(), dom0=None):
    """QEMU's device tree plus Xen's command line, the boot-time cpupools, one dom0less
    domain per guest and, if `dom0`, dom0's kernel module (loaded at DOM0_BASE)."""
    check_pools(domains, pools, cpus)
    raw = workdir / "qemu.dtb"
    subprocess.run(_board(cpus, cpu, memory_mib, None, f",dumpdtb={raw}"), check=True,
                   timeout=60, stdin=subprocess.DEVNULL, capture_output=True)
    dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(raw)], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    args = " ".join(a for a in (BASE_ARGS, dom0_args(dom0), xen_args) if a)
    nodes = [f"\t\txen,xen-bootargs = {_dts_string(args)};",
             "\t\t#address-cells = <0x02>;", "\t\t#size-cells = <0x02>;"]
    if dom0 is not None:
        # Directly under /chosen (not in a xen,domain node): Xen's dom0 kernel.
        size = Path(dom0.image).stat().st_size
        nodes += [f"\t\tmodule@{DOM0_BASE:x} {{",
                  '\t\t\tcompatible = "multiboot,kernel", "multiboot,module";',
                  f"\t\t\treg = <0x00 {DOM0_BASE:#x} 0x00 {size:#x}>;",
                  f"\t\t\tbootargs = {_dts_string(dom0.bootargs)};", "\t\t};"]
    # Path references: dtc gives QEMU's cpu nodes (and the pools) the phandles Xen follows.
    for p in pools:
        refs = " ".join(f"&{{/cpus/cpu@{c:x}}}" for c in p.cpus)
        nodes += [f"\t\t{_node_name(p.name)} {{", '\t\t\tcompatible = "xen,cpupool";',
                  f"\t\t\tcpupool-cpus = <{refs}>;",
                  f"\t\t\tcpupool-sched = {_dts_string(p.sched)};", "\t\t};"]
    for i, d in enumerate(domains):
        addr = DOMU_BASE + i * DOMU_STRIDE
        size = Path(d.image).stat().st_size
        nodes += [
            f"\t\tdomU{i + 1} {{",
            '\t\t\tcompatible = "xen,domain";',
            "\t\t\t#address-cells = <0x01>;", "\t\t\t#size-cells = <0x01>;",
            f"\t\t\tcpus = <{d.vcpus:#x}>;",
            f"\t\t\tmemory = <0x00 {d.memory_kib:#x}>;",
            "\t\t\tvpl011;",
        ] + ([f"\t\t\tdomain-cpupool = <&{{/chosen/{_node_name(d.pool)}}}>;"] if d.pool else []) + [
            f"\t\t\tmodule@{addr:x} {{",
            '\t\t\t\tcompatible = "multiboot,kernel", "multiboot,module";',
            f"\t\t\t\treg = <{addr:#x} {size:#x}>;",
            f"\t\t\t\tbootargs = {_dts_string(d.bootargs)};",
            "\t\t\t};", "\t\t};",
        ]
    # A second root block: dtc merges it into QEMU's /chosen.
    text = dts + "\n/ {\n\tchosen {\n" + "\n".join(nodes) + "\n\t};\n};\n"
    write_new(workdir / "xen.dts", text)
    out = workdir / "xen.dtb"
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(out), str(workdir / "xen.dts")],
                   check=True, timeout=60)
    return out


def board_cpus(domains, pools=()):
    """Cores for `domains`: the pools' own, and a core per vCPU of the domains in no pool.
    Those start in Pool-0: the pool holding core 0 if there is one (they share its cores),
    else the cores no pool names."""
    named = {c for p in pools for c in p.cpus}
    free = sum(d.vcpus for d in domains if d.pool is None)
    if 0 in named:
        free = 0
    return max(1, len(named) + free, max(named, default=-1) + 1)


def run_xen(domains, xen_args="", xen=XEN_DEBIAN, icount=None, timeout=runner.DEFAULT_TIMEOUT,
            quiet=True, workdir=None, cpu="cortex-a53", memory_mib=2048, pools=(), finish=None,
            dom0=None, qemu_args=(), console=None):
    """Boot Xen with `domains` (and boot-time cpupools `pools`, and a Dom0 `dom0` if given);
    returns a runner.RunResult whose partitions are the domains. The run ends when the domains
    named in `finish` (all, if None) have printed their DONE line. qemu_args: more QEMU
    options (an execution trace's), in qemu.sh too; console: runner.run_qemu's, sees every
    serial line as it comes."""
    for tool in ("qemu-system-aarch64", "dtc"):
        if not shutil.which(tool):
            raise ToolError(f"{tool} not found (make deps)")
    xen = ensure_xen(xen)
    for d in list(domains) + ([dom0] if dom0 is not None else []):
        if not Path(d.image).is_file():
            raise ToolError(f"guest not found: {d.image} (make guests)")
    workdir = runner.make_workdir(workdir)
    cpus = board_cpus(domains, pools)
    dtb = build_dtb(domains, xen_args, cpus, cpu, memory_mib, workdir, pools, dom0)
    command = _board(cpus, cpu, memory_mib, icount) + ["-kernel", str(xen), "-dtb", str(dtb)]
    if dom0 is not None:
        command += ["-device", f"loader,file={dom0.image},addr={DOM0_BASE:#x},force-raw=on"]
    for i, d in enumerate(domains):
        command += ["-device", f"loader,file={d.image},addr={DOMU_BASE + i * DOMU_STRIDE:#x},"
                    "force-raw=on"]
    command += list(qemu_args)
    write_new(workdir / "qemu.sh", "#!/bin/sh\nexec " + " ".join(command) + "\n", mode=0o755)

    names = [d.name for d in domains]
    wanted = set(names if finish is None else finish)
    joiner = GuestLines(names)
    guest_lines = []
    done = set()

    def complete(line):
        text = joiner.feed(line)
        if text is None:
            return False
        guest_lines.append(text)
        name, _, body = text[1:].partition("] ")
        if body.strip() in DONE_MARKERS and name in wanted:
            done.add(name)
        return done == wanted

    run = runner.run_qemu(command, timeout, quiet=quiet, log_path=workdir / "serial.log",
                          stop_when=complete, console=console)
    parsed = results.parse_log(guest_lines, names)
    if done == wanted:
        status, reason = runner.STATUS_OK, "every domain finished" if finish is None else \
            f"{', '.join(sorted(wanted))} finished"
    elif run.timed_out:
        status, reason = runner.STATUS_TIMEOUT, f"timed out after {timeout:g} s"
    else:
        status, reason = runner.STATUS_FAILED, f"QEMU exited with status {run.returncode}"
    return runner.RunResult(status=status, reason=reason, log=run.lines,
                            partitions=parsed.partitions, timed_out=run.timed_out,
                            qemu_status=run.returncode, qemu_stderr=run.stderr, workdir=workdir,
                            command=command)
