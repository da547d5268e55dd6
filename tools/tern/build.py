"""Fill a work directory with what QEMU loads for a system, and say where.

For each partition: its device tree (NAME.dts, NAME.dtb), its image (the
file itself for an arm64 Image, NAME.img for a flattened ELF); then the
config blob (config.bin) and the QEMU command line (qemu.sh, to rerun by hand).
The run adds serial.log and, while QEMU runs, qemu.pid (runner.py).  Every file is
written complete under a temporary name and renamed into place (files.NewFile).
"""

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from . import abi, devicetree, layout, qemu
from .errors import ConfigError, ToolError, show_path
from .files import NewFile, NotAFile, check_regular, write_new
from .image import ARCHS, ImageError, inspect, require_arch

# config.Partition.on_fault -> tern_config_partition.fault_policy
FAULT_POLICIES = {"inject": abi.FAULT_INJECT, "stop": abi.FAULT_STOP, "restart": abi.FAULT_RESTART}


@dataclass
class Prepared:
    """A system ready to boot."""

    workdir: Path
    blob: abi.ConfigBlob
    loads: list = field(default_factory=list)   # (path, board address, what)
    command: list = field(default_factory=list)


def check_hypervisor(path, board=layout.QEMU_VIRT_ARM64):
    """The hypervisor image for `board` (layout.VirtBoard) must exist and, once loaded, stay
    below the config blob.  arm64's is an Image; riscv64's may also be a flat binary, which
    QEMU loads as it is at board.hyp_image_hpa."""
    path = Path(path)
    try:
        size = check_regular(path).st_size
        try:
            # Where a flat binary may do, any header is read to say whose it is.
            hyp = inspect(path, ARCHS if board.raw_hypervisor else (board.arch,))
        except ImageError:
            if not board.raw_hypervisor:
                raise
            hyp = None            # no header: a flat binary
        if hyp is not None:
            require_arch(hyp, (board.arch,))
    except NotAFile as e:
        hint = " (build it first, or pass --hypervisor)" if e.problem == "no such file" else ""
        raise ToolError(f"hypervisor image: {e}{hint}") from None
    except ImageError as e:
        raise ToolError(f"hypervisor image: {e}") from None
    if hyp is None:
        end = board.hyp_image_hpa + size
    elif hyp.kind == "Image":
        end = board.ram_base + hyp.text_offset + hyp.mem_size
    else:
        return path               # an ELF is loaded at its own addresses
    if end > board.config_hpa:
        raise ToolError(f"hypervisor image {show_path(path)} ends at 0x{end:x}, past the "
                        f"config blob at 0x{board.config_hpa:x}")
    return path


# What a run writes in its work directory besides NAME.dts, NAME.dtb and NAME.img.
RUN_FILES = ("config.bin", "qemu.sh", "qemu.pid", "serial.log")


def written_names(system):
    """The names of every file a run of `system` writes in its work directory."""
    names = set(RUN_FILES)
    for p in system.partitions:
        names |= {f"{p.name}.dts", f"{p.name}.dtb", f"{p.name}.img"}
    return names


def check_inputs_outside(system, workdir, hypervisor):
    """Refuse a run that would replace one of its own inputs: an image, initrd, disk or
    hypervisor that sits in the work directory under a name the run writes there."""
    workdir = Path(workdir).resolve()
    names = written_names(system)
    inputs = [(f"{p.toml_key}.image", p.image_path) for p in system.partitions]
    inputs += [(f"{p.toml_key}.initrd", p.initrd_path) for p in system.partitions
               if p.initrd_path]
    inputs += [(f"{v.toml_key}.disk", v.disk_path) for v in system.virtio if v.disk_path]
    inputs += [(f"board.pci[{i}].disk", d.disk) for i, d in enumerate(system.board.pci)
               if d.disk]
    for key, path in inputs:
        where = Path(path).resolve()
        if where.parent == workdir and where.name in names:
            raise ConfigError(key, f"{show_path(path)} is in the work directory, where the run "
                                   f"writes its own {where.name}: move it, or choose another "
                                   f"--workdir", file=system.source)
    where = Path(hypervisor).resolve()
    if where.parent == workdir and where.name in names:
        raise ToolError(f"hypervisor image {show_path(hypervisor)} is in the work directory, "
                        f"where the run writes its own {where.name}")


def prepare_system(system, placed, workdir, hypervisor, icount=None):
    """Write the work directory for `system` laid out as `placed`; return what to run."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    board = system.board.virt
    hypervisor = check_hypervisor(hypervisor, board).resolve()
    check_inputs_outside(system, workdir, hypervisor)
    # qemu.system_command gives an arm64 board QEMU's SMMUv3: the hypervisor takes it.
    # ram_size is the RAM QEMU is started with (-m), from the RAM base.
    flags = abi.CF_IOMMU if qemu.system_has_iommu(system.board.arch) else 0
    blob = abi.ConfigBlob(board_cpus=system.board.cpus, flags=flags, ram_size=system.board.memory,
                          irq_first=abi.SPI_FIRST if board.gic else 1)
    partition_loads = []
    for p, pl in zip(system.partitions, placed.partitions):
        # A fresh seed each run, as QEMU writes into the bare board's device tree: Linux
        # without one wakes up noticeably slower (docs/benchmarks.md, cyclictest).  A
        # restart reloads the same device tree, so the same seed, which Linux mixes with
        # what it gathers itself.
        dts = devicetree.system_partition_dts(system.board, p, pl,
                                              rng_seed=os.urandom(devicetree.RNG_SEED_BYTES),
                                              channels=placed.channels, virtio=placed.virtio)
        dtb_path = workdir / f"{p.name}.dtb"
        dtb = devicetree.compile_dts(dts, dtb_path)
        if len(dtb) > pl.dtb_area:
            raise ToolError(f"partition {p.name}: device tree is {len(dtb)} bytes, "
                            f"more than the {pl.dtb_area} reserved for it")
        if p.image.needs_flattening:
            image_path = workdir / f"{p.name}.img"
            try:
                with NewFile(image_path) as out:
                    p.image.write_payload(out)
            except (ImageError, NotAFile) as e:
                raise ConfigError(f"{p.toml_key}.image", str(e), file=system.source) from None
        else:
            image_path = p.image.path.resolve()
        partition_loads += [
            (image_path, pl.image_hpa, f"{p.name} image"),
            (dtb_path, pl.dtb_hpa, f"{p.name} dtb"),
            (image_path, pl.pristine_image_hpa, f"{p.name} pristine image"),
            (dtb_path, pl.pristine_dtb_hpa, f"{p.name} pristine dtb"),
        ]
        if pl.initrd_size:
            # Its own initrd, or the disk of a blk it serves: restored alike on a restart.
            initrd_path = system.initrd_of(p)[0].resolve()
            partition_loads += [
                (initrd_path, pl.initrd_hpa, f"{p.name} initrd"),
                (initrd_path, pl.pristine_initrd_hpa, f"{p.name} pristine initrd"),
            ]
        blob.partitions.append(abi.PartitionRecord(
            name=p.name, ram_ipa=pl.ram_ipa, ram_hpa=pl.ram_hpa, ram_size=pl.ram_size,
            entry_ipa=pl.entry_ipa, dtb_ipa=pl.dtb_ipa, image_ipa=pl.image_ipa,
            image_size=pl.image_size, pristine_image_hpa=pl.pristine_image_hpa,
            pristine_dtb_hpa=pl.pristine_dtb_hpa, dtb_size=len(dtb), cpus=tuple(p.cpus),
            flags=(abi.PF_WFI_NATIVE if p.wfi_native else 0)
            | (abi.PF_IRQ_DIRECT if p.irq_direct else 0)
            | (abi.PF_UNCONFINED_DMA if p.unconfined_dma else 0)
            | (abi.PF_MANAGER if p.manager else 0),
            regions=tuple(abi.Region(r.ipa, r.hpa, r.size, abi.RF_DEVICE) for r in pl.regions)
            + tuple(abi.Region(w.ipa, w.hpa, w.size, abi.RF_PARTITION_RAM) for w in pl.windows),
            irqs=pl.intids + pl.doorbell_irqs + pl.virtio_irqs, initrd_ipa=pl.initrd_ipa,
            initrd_size=pl.initrd_size,
            pristine_initrd_hpa=pl.pristine_initrd_hpa,
            fault_policy=FAULT_POLICIES[p.on_fault], max_restarts=p.max_restarts,
            restart_backoff_us=p.restart_backoff_us, **pool_fields(system, p)))

    blob.channels = channel_records(placed)
    blob.virtio = virtio_records(placed)
    blob.pools = pool_records(system)
    data = abi.pack(blob)
    if len(data) > board.config_max:
        raise ToolError(f"config blob is {len(data)} bytes, more than {board.config_max}")
    config_path = write_new(workdir / "config.bin", data)
    loads = [(config_path, board.config_hpa, "config blob")] + partition_loads
    command = qemu.system_command(system.board, hypervisor,
                                  [(path, addr) for path, addr, _ in loads], icount)
    write_command(workdir, command)
    return Prepared(workdir=workdir, blob=blob, loads=loads, command=command)


def pool_fields(system, p):
    """Partition p's pool (index in system.pools, abi.POOL_NONE: none) and its scheduling
    parameters, as its record carries them."""
    pool = system.pool_of(p)
    return {"pool": abi.POOL_NONE if pool is None else pool.index, "weight": p.weight,
            "cap": p.cap, "budget_us": p.budget_us, "period_us": p.period_us}


def pool_records(system):
    """The blob's pool records for the [[pool]]s of `system`."""
    index = {p.name: p.index for p in system.partitions}
    return [abi.PoolRecord(name=q.name, cpus=q.cpus, scheduler=abi.SCHEDULERS[q.scheduler],
                           major_frame_us=q.major_frame_us,
                           windows=tuple((index[w.partition], w.duration_us) for w in q.windows))
            for q in system.pools]


def channel_records(placed):
    """The blob's channel records for the channels of layout `placed`."""
    return [abi.ChannelRecord(
        name=ch.name, hpa=ch.hpa, size=ch.size, ipa=ch.ipa, doorbell_ipa=ch.doorbell_ipa,
        members=tuple(abi.ChannelMember(m.partition, _member_flags(m), m.irq)
                      for m in ch.members))
        for ch in placed.channels]


def _member_flags(m):
    return ((abi.CHF_WRITABLE if m.writable else 0)
            | (abi.CHF_FRONTEND if m.frontend else 0))


def virtio_records(placed):
    """The blob's virtio records for the [[virtio]] devices of layout `placed`."""
    return [abi.VirtioRecord(name=v.name, mmio_ipa=v.mmio_ipa, device_id=v.device_id,
                             frontend=v.frontend, backend=v.backend, channel=v.channel,
                             irq=v.irq, flags=abi.VF_BACKEND_TRUSTED if v.trusted else 0)
            for v in placed.virtio]


def write_command(workdir, command):
    """Save the command line as a script, to rerun or debug a run by hand."""
    return write_new(Path(workdir) / "qemu.sh",
                     "#!/bin/sh\nexec " + shlex.join(str(a) for a in command) + "\n", mode=0o755)
