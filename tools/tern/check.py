"""`tern check`: validate a system description and show where everything goes.

As text for people (the layout table), or with --json as one JSON object for scripts and
editors: the layout and the findings.  Addresses and sizes in the JSON are numbers (bytes);
`rows` holds the table the text shows.  Loading stops at the first error, so `findings` holds
at most one error; notes (what tern does differently than one may expect, refusing nothing)
join it with severity "note", and the text prints them after the table.
"""

import json

from . import layout, results
from .config import format_size, load_system
from .errors import ConfigError, TernError, show_path

ROW_KEYS = ("region", "hpa", "size", "ipa", "notes")
TEXT_HEADERS = ("REGION", "BOARD ADDRESS (HPA)", "SIZE", "PARTITION ADDRESS (IPA)", "NOTES")


def run(paths, as_json=False):
    """Check each file in turn; the first error ends the command as every error does (its
    line on stderr, its exit status).  With `as_json` every file is checked and the JSON
    printed before that error is raised."""
    if as_json:
        return _check_json(paths)
    for n, path in enumerate(paths):
        if n:
            print()
        _check_text(path)
    return 0


def _check_text(path):
    system = load_system(path)
    placed = layout.place(system)
    board = system.board
    count = len(system.partitions)
    channels = len(system.channels)
    shared = f", {channels} channel{'s' if channels != 1 else ''}" if channels else ""
    devices = len(system.virtio)
    shared += f", {devices} virtio device{'s' if devices != 1 else ''}" if devices else ""
    pools = len(system.pools)
    shared += f", {pools} pool{'s' if pools != 1 else ''}" if pools else ""
    print(f"{show_path(path)}: ok: {count} partition{'s' if count != 1 else ''}{shared} on "
          f"{board.cpus} x {board.cpu}, {format_size(board.memory)} RAM")
    print(results.format_table(TEXT_HEADERS, layout.describe(system, placed)))
    ram_base = placed.board.ram_base
    used = placed.end - ram_base
    print(f"RAM used: {format_size(used, round_up=True)} of {format_size(board.memory)} "
          f"(0x{ram_base:x}-0x{placed.end:x})")
    for field, message in layout.notes(system, placed):
        print(f"{show_path(path)}: note: {field}: {message}")


def _check_json(paths):
    docs, errors = [], []
    for path in paths:
        doc, error = check_doc(path)
        docs.append(doc)
        if error is not None:
            errors.append(error)
    if len(docs) == 1:
        print(json.dumps(docs[0], indent=2))
    else:
        print(json.dumps({"ok": not errors, "files": docs}, indent=2))
    if errors:
        raise errors[0]
    return 0


def check_doc(path):
    """(the JSON object of one file, the error that made it fail or None)."""
    doc = {"file": str(path), "ok": False, "layout": None, "findings": []}
    try:
        system = load_system(path)
        placed = layout.place(system)
    except (TernError, OSError) as e:
        doc["findings"].append(finding(e))
        return doc, e
    doc["ok"] = True
    doc["layout"] = layout_doc(system, placed)
    doc["findings"] += [{"severity": "note", "field": field, "message": message}
                        for field, message in layout.notes(system, placed)]
    return doc, None


def finding(error, severity="error"):
    """One finding: {severity, field, message} (field None when it is about no one key)."""
    if isinstance(error, ConfigError):
        return {"severity": severity, "field": error.field or None, "message": error.message}
    if isinstance(error, OSError):
        where = f"{show_path(error.filename)}: " if error.filename else ""
        return {"severity": severity, "field": None,
                "message": f"{where}{(error.strerror or str(error)).lower()}"}
    return {"severity": severity, "field": None, "message": str(error)}


def _range(hpa, size, ipa=None):
    out = {"hpa": hpa, "size": size}
    if ipa is not None:
        out["ipa"] = ipa
    return out


def layout_doc(system, placed):
    """The system as `tern check` lays it out, as plain data."""
    board, virt = system.board, placed.board
    dtb_start, dtb_end = placed.qemu_dtb
    functions = layout.member_functions(placed)
    return {
        "board": {"arch": board.arch, "cpus": board.cpus, "cpu": board.cpu,
                  "memory": board.memory, "ram_base": virt.ram_base,
                  "pci": [{"model": d.model, **({"disk": str(d.disk)} if d.disk else {})}
                          for d in board.pci]},
        "hypervisor": {**_range(virt.hyp_base, virt.hyp_size), "firmware": virt.firmware or None,
                       "image_hpa": virt.hyp_image_hpa, "config_hpa": virt.config_hpa},
        "qemu_dtb": _range(dtb_start, dtb_end - dtb_start),
        "partitions": [_partition_doc(system, p, pl, virt)
                       for p, pl in zip(system.partitions, placed.partitions)],
        "channels": [_channel_doc(n, ch, functions) for n, ch in
                     enumerate(placed.channels[:len(system.channels)])],
        "virtio": [_virtio_doc(system, placed, v, functions) for v in placed.virtio],
        "pools": [_pool_doc(system, q) for q in system.pools],
        "ram_used": {"bytes": placed.end - virt.ram_base, "start": virt.ram_base,
                     "end": placed.end},
        "rows": [dict(zip(ROW_KEYS, row)) for row in layout.describe(system, placed)],
    }


def _channel_doc(n, ch, functions):
    """Channel `n`: its memory on the board and in its members, each member's access,
    doorbell (a GIC INTID on arm64, an APLIC source on riscv64) and ivshmem PCI function (None
    for a member that owns the board's PCIe bridge), by member index."""
    return {"name": ch.name, **_range(ch.hpa, ch.size, ch.ipa),
            "doorbell_ipa": ch.doorbell_ipa,
            "members": [{"name": m.name, "access": "rw" if m.writable else "ro",
                         "doorbell_irq": m.irq, "pci": _function_doc(functions.get((n, k)))}
                        for k, m in enumerate(ch.members)]}


def _virtio_doc(system, placed, v, functions):
    """A [[virtio]] device: its frontend's slot (registers and interrupt), its backend and the
    channel it serves the device over, as `channels` has them.  mediated: the backend sees
    only what the hypervisor copies between the frontend's buffers and the channel; else
    (backend_trusted) `window` is where the backend maps all of the frontend's RAM.  A vsock
    device adds its frontend's guest_cid."""
    ch = placed.channels[v.channel]
    disk = system.virtio[placed.virtio.index(v)].disk_path
    extra = {"guest_cid": layout.vsock_cid(placed, v)} if v.device == "vsock" else {}
    return {"name": v.name, "device": v.device, "device_id": v.device_id,
            "frontend": system.partitions[v.frontend].name,
            "backend": system.partitions[v.backend].name,
            "slot": {"index": v.slot, "mmio": v.mmio_ipa, "size": v.mmio_size, "irq": v.irq},
            "channel": _channel_doc(v.channel, ch, functions),
            "disk": str(disk) if disk else None, "mediated": not v.trusted,
            "window": ({"frontend_ram": _range(placed.partitions[v.frontend].ram_hpa,
                                               placed.partitions[v.frontend].ram_size,
                                               v.window_ipa)} if v.trusted else None),
            **extra}


def _sched_params(system, p):
    """Partition p's parameters in its pool's scheduler: RTDS budget_us and period_us, credit
    weight and cap; {} for the others (and no pool)."""
    pool = system.pool_of(p)
    if pool is not None and pool.scheduler == "rtds":
        return {"budget_us": p.budget_us, "period_us": p.period_us}
    if pool is not None and pool.scheduler == "credit":
        return {"weight": p.weight, "cap": p.cap}
    return {}


def _pool_doc(system, q):
    """A [[pool]]: its cores, scheduler, the scheduler's parameters (ARINC 653: the major frame
    and its windows; {} for the others) and its members with theirs (parameters)."""
    parameters = {}
    if q.scheduler == "arinc653":
        parameters = {"major_frame_us": q.major_frame_us,
                      "windows": [{"partition": w.partition, "duration_us": w.duration_us}
                                  for w in q.windows]}
    return {"name": q.name, "cpus": list(q.cpus), "scheduler": q.scheduler,
            "parameters": parameters,
            "members": [{"name": p.name, "cpus": list(p.cpus),
                         "parameters": _sched_params(system, p)} for p in system.members(q)]}


def _function_doc(f):
    if f is None:
        return None
    return {"bdf": f.bdf, "device": f.device, "bar0": f.bar0, "bar2": f.bar2,
            "bar2_size": f.bar2_size}


def _partition_doc(system, p, pl, virt):
    pristine = {"image": _range(pl.pristine_image_hpa, pl.image_size),
                "dtb": _range(pl.pristine_dtb_hpa, pl.dtb_area)}
    if pl.initrd_size:
        pristine["initrd"] = _range(pl.pristine_initrd_hpa, pl.initrd_size)
    return {
        "name": p.name, "cores": list(p.cpus),
        # Its [[pool]] (None: an implicit null pool of its own cores) and its parameters there.
        "pool": p.pool, "scheduling": _sched_params(system, p),
        "wfi": "native" if p.wfi_native else "trap",
        "irq": "direct" if p.irq_direct else "trap",
        "bootargs": p.bootargs,
        "ram": _range(pl.ram_hpa, pl.ram_size, pl.ram_ipa),
        "image": {"path": str(p.image_path), "kind": p.image.kind, "arch": p.image.arch,
                  **_range(pl.image_hpa, pl.image_size, pl.image_ipa), "entry_ipa": pl.entry_ipa},
        "dtb": {**_range(pl.dtb_hpa, pl.dtb_area, pl.dtb_ipa), "register": virt.dtb_register},
        "initrd": ({"path": str(system.initrd_of(p)[0]),
                    **_range(pl.initrd_hpa, pl.initrd_size, pl.initrd_ipa)}
                   if pl.initrd_size else None),
        "devices": list(p.devices),
        "regions": [{"name": r.name, **_range(r.hpa, r.size, r.ipa)} for r in pl.regions],
        "windows": [{"frontend": w.frontend, **_range(w.hpa, w.size, w.ipa)}
                    for w in pl.windows],
        # The devices' wired interrupts as the hypervisor numbers them: GIC INTIDs on arm64,
        # APLIC sources on riscv64.
        "interrupts": list(pl.intids),
        "unconfined_dma": p.unconfined_dma,
        "manager": p.manager,
        "on_fault": p.on_fault, "max_restarts": p.max_restarts,
        "restart_backoff_us": p.restart_backoff_us,
        "pristine": pristine,
    }
