#!/usr/bin/env python3
"""Write the seed corpora of the vgic, vpl011, traps, psci, vpci, virtio and command fuzzers (corpus/TARGET/).

Each seed is a short, meaningful story in the target's input format (see fuzz_TARGET.c);
the config target's seeds come from the tool instead (make_config_corpus.py).
    python3 tests/fuzz/make_seeds.py
"""

import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent


def u8(v):
    return struct.pack("<B", v & 0xff)


def le(v, n):
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


# ---- vgic: kind, actor (0: trap vCPU 0, 1: trap vCPU 1, 2: direct vCPU 0), then per kind ----

def gicd(actor, off, size, value=0, write=True):
    how = {1: 0, 2: 1, 4: 2, 8: 3}[size] | (4 if write else 0)
    return u8(0) + u8(actor) + u8(how) + le(value, 8) + le(off, 2)


def gicr(actor, frame, off, size, value=0, write=True):
    how = {1: 0, 2: 1, 4: 2, 8: 3}[size] | (4 if write else 0) | 8 | (frame << 4)
    return u8(0) + u8(actor) + u8(how) + le(value, 8) + le(off, 3)


def irq(actor, intid):
    return u8(4) + u8(actor) + u8(200) + le(intid, 2)


def lr_step(actor, n):
    return u8(5) + u8(actor) + u8(n)


def maintenance(actor):
    return u8(6) + u8(actor)


def sgi1r(actor, value):
    return u8(7) + u8(actor) + le(value, 8)


SGI = 0x10000
VGIC = {
    "spi-enable-route-priority": (
        gicd(0, 0x104, 4, 1 << 3) + gicd(0, 0x104, 4, write=False) + gicd(0, 0x104, 4, 0xffffffff)
        + gicd(0, 0x184, 4, 0xffffffff) + gicd(0, 0x105, 4, 0xff) + gicd(0, 0x400 + 35, 1, 0x20)
        + gicd(0, 0x400 + 32, 4, 0x10203040) + gicd(0, 0x6000 + 8 * 35, 8, 1)
        + gicd(0, 0x6000 + 8 * 37, 4, 1) + gicd(0, 0x6004 + 8 * 37, 4, 1)
        + gicd(0, 0xc08, 4, 0xffffffff) + gicd(0, 0x84, 4, 0xffffffff) + gicd(0, 0x0, 4, 3)
        + gicd(0, 0x4, 4, write=False) + gicd(0, 0xffe8, 4, write=False)),
    "direct-spi": (
        gicd(2, 0x104, 4, 1 << 4) + gicd(2, 0x400 + 36, 1, 0x00) + gicd(2, 0x84, 4, 0)
        + gicd(2, 0x6000 + 8 * 36, 8, 1) + gicd(2, 0x6000 + 8 * 36, 8, 0x100)
        + gicd(2, 0x204, 4, 0xffffffff) + gicd(2, 0x284, 4, 0xffffffff)),
    "sibling-redistributor": (
        gicr(0, 2, SGI + 0x400 + 3, 1, 0x40) + gicr(0, 2, SGI + 0x80, 4, 0xffff)
        + gicr(0, 2, SGI + 0x100, 4, 0xffffffff) + gicr(0, 2, SGI + 0x200, 4, 0x8001)
        + gicr(0, 2, 0x14, 4, 0) + gicr(0, 2, 0x8, 8, write=False)
        + gicr(2, 1, SGI + 0x100, 4, 0xffffffff) + gicr(2, 1, SGI + 0x400, 4, 0)
        + gicr(2, 1, SGI + 0x80, 4, 0) + gicr(0, 5, SGI + 0x100, 4, 1)),
    "list-registers-overflow": (
        gicr(0, 0, SGI + 0x100, 4, (1 << 27) | (1 << 30) | 0xff) + gicd(0, 0x104, 4, 0x28)
        + gicr(0, 0, SGI + 0x400 + 27, 1, 0x80) + gicr(0, 0, SGI + 0x400 + 30, 1, 0x20)
        + irq(0, 27) + irq(0, 30) + irq(0, 35) + irq(0, 37) + sgi1r(0, (1 << 24) | 1)
        + sgi1r(0, (2 << 24) | 1) + irq(0, 27) + lr_step(0, 0) + lr_step(0, 0) + maintenance(0)
        + lr_step(0, 1) + lr_step(0, 2) + maintenance(0) + irq(0, 36) + irq(0, 1020)),
    "sgis": (
        sgi1r(0, (3 << 24) | 0b110) + sgi1r(0, (4 << 24) | (1 << 40)) + sgi1r(0, (5 << 24) | (1 << 16) | 1)
        + sgi1r(2, (15 << 24) | 1) + sgi1r(2, (2 << 24) | 0b11) + gicr(1, 1, SGI + 0x100, 4, 0xffff)
        + sgi1r(0, (6 << 24) | 0b10) + gicr(0, 1, SGI + 0x200, 4, 1 << 7)),
}

# ---- vpl011: how (bit 0: partition, bits 1-2: size, 0x10 write, 0x20 long offset, 0x40 long value) ----


def uart(p, off, size=4, value=0, write=True):
    how = p | ({1: 0, 2: 1, 4: 2, 8: 3}[size] << 1) | (0x10 if write else 0) | 0x20 | 0x40
    return u8(how) + le(off, 2) + le(value, 4)


def text(p, s):
    out = b""
    data = s.encode()
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out += u8(p | 0x10 | 0x80) + u8(0) + u8(0) + u8(len(chunk)) + chunk
    return out


def restart(p):
    return u8(0xfe | p)


VPL011 = {
    "lines": text(0, "hello\r\nworld\n") + text(1, "direct says hi\n") + text(0, "!\n"),
    "registers": (
        uart(0, 0x24, value=1) + uart(0, 0x28, value=2) + uart(0, 0x2c, value=0x70) + uart(0, 0x30, value=0x301)
        + uart(0, 0x30, write=False) + uart(0, 0x18, write=False) + uart(0, 0xfe0, write=False)
        + uart(0, 0xffc, write=False) + uart(0, 0x32, 2, 7) + uart(0, 0x33, 1, 7) + uart(0, 0x30, 8, 1)
        + uart(0, 0x1000, 4, 1) + uart(1, 0x38, value=0x50) + uart(1, 0x44, value=0x7ff)),
    "long-line-and-restart": text(0, "x" * 600) + text(1, "partial") + restart(1) + text(1, "again\n"),
}

# ---- traps: actor, exception class (index), ESR ISS, where, offset, FAR, ELR, SPSR, then registers ----

EC = {"unknown": 0, "wfx": 1, "cp15": 2, "hvc": 7, "smc": 8, "sysreg": 9, "iabt": 10, "dabt": 11}
WHERE = {"gicd": 0, "gicr": 1, "uart": 2, "ram": 3}
IL = 1 << 25


def trap(actor, ec, iss, where="gicd", off=0, spsr=0x3c5, regs=(), call=None):
    out = u8(actor) + u8(EC[ec]) + le(iss, 4) + u8(WHERE[where]) + le(off, 3) + u8(0) + le(0x100, 2)
    out += le(spsr, 4)
    if call is not None:
        fn_index, mpidr = call
        out += u8(fn_index) + u8(0) + u8(mpidr) + le(0x1000, 3) + le(0, 8)
    for n, value in regs:
        out += u8(n) + le(value, 8)
    return out


def dabt(write, size, rt, sign=False, wide=True):
    sas = {1: 0, 2: 1, 4: 2, 8: 3}[size]
    return IL | (1 << 24) | (sas << 22) | (int(sign) << 21) | (rt << 16) | (int(wide) << 15) | (int(write) << 6)


def sysreg(op0, op1, crn, crm, op2, rt, read):
    return IL | (op0 << 20) | (op2 << 17) | (op1 << 14) | (crn << 10) | (rt << 5) | (crm << 1) | int(read)


TRAPS = {
    "gicd-write": trap(0, "dabt", dabt(True, 4, 2), "gicd", 0x104, regs=[(2, 1 << 3)]),
    "uart-read-signed": trap(0, "dabt", dabt(False, 1, 5, sign=True, wide=False), "uart", 0xfe0),
    "gicd-misaligned": trap(1, "dabt", dabt(True, 4, 1), "gicd", 0x105),
    "gicr-wide-abort": trap(2, "dabt", dabt(False, 8, 3), "gicr", 0x10100),
    "outside": trap(0, "dabt", dabt(False, 4, 0), "ram", 0x7000000),
    "no-syndrome": trap(0, "dabt", IL, "uart", 0),
    "sgi1r": trap(0, "sysreg", sysreg(3, 0, 12, 11, 5, 1, False), regs=[(1, (2 << 24) | 2)]),
    "setway": trap(1, "sysreg", sysreg(1, 0, 7, 14, 2, 3, False), regs=[(3, 2)]),
    "impdef-sysreg": trap(2, "sysreg", sysreg(3, 1, 15, 2, 0, 4, True), spsr=0x3c4),
    "aarch32-wfi-in-it-block": trap(0, "wfx", (1 << 24) | (0x1 << 20), spsr=0x20 | (0x8 << 10) | (1 << 30)),
    "aarch32-cp15": trap(0, "cp15", IL | (0xe << 20) | (1 << 24), spsr=0x10),
    "psci-version": trap(0, "hvc", IL, call=(0, 0)),
    "psci-cpu-on-smc": trap(0, "smc", IL, call=(3, 2)),
    "iabt": trap(1, "iabt", IL | 0x7, "ram", 0x10),
    "unknown": trap(0, "unknown", 0),
}

# ---- psci: op (call: bit 7 SMC, the rest picks the vCPU), function index, MPIDR, entry, x3 ----


def call(actor, fn_index, mpidr=0, smc=False):
    """vCPU `actor` (0-2: trap's, 3-4: direct's) calls PSCI function ids[fn_index]."""
    op = next(v for v in range(0x80 if smc else 0, 0xf0) if v % 5 == actor)
    return u8(op) + u8(fn_index) + u8(mpidr * 2) + le(0x1000, 3) + u8(0) + le(0, 8)


def operator(p, what, t=0):
    if what == "time":
        return u8(0xf4 | p) + le(t, 2)
    return u8((0xf0 if what == "restart" else 0xf2) | p)


PSCI = {
    "cpu-on-off": call(0, 3, 1) + call(0, 5, 1) + call(0, 2, 2, smc=True) + call(1, 1) + call(2, 1)
    + call(0, 4, 1),
    "last-cpu-off-ends": call(0, 3, 1) + call(0, 1) + call(1, 1) + operator(0, "restart"),
    "reset-backoff": call(0, 8) + call(0, 8) + operator(0, "time", 200) + call(0, 8) + operator(0, "stop")
    + operator(0, "time", 5000) + operator(0, "restart"),
    "system-off-both": call(3, 7) + call(0, 7) + operator(0, "restart") + operator(1, "restart"),
    "odd-calls": call(0, 0) + call(0, 6) + call(0, 9) + call(0, 11) + call(0, 12) + call(3, 3, 3)
    + call(3, 3, 1) + call(3, 3, 1) + call(3, 10),
}

# ---- vpci: functions (count, then 6 bytes each), then accesses: how, sel, offset, value ----


def function(dev, bus=0, fn=0, multi=False, msi=False, b64=False, mask=False, msix=False, pcie=False,
             pm=False, vndr=False, loop=False, low=False, order=0, fill=0):
    """A function at bus:dev.fn; `order` and `fill` draw the list order and the slots."""
    loc = dev | (bus << 5) | ((fn << 6) | 0x200 if fn else 0) | (0x400 if multi else 0)
    caps = (msi and 0x01) | (b64 and 0x02) | (mask and 0x04) | (msix and 0x08) | (pcie and 0x10) \
        | (pm and 0x20) | (loop and 0x40) | (low and 0x80)
    return le(loc, 2) + u8(caps) + le((order & 0x7fff) | (0x8000 if vndr else 0), 2) + u8(fill)


def bus(*functions):
    return u8(len(functions) - 1) + b"".join(functions)


WHERE_VPCI = {"msi": 0, "msix": 3, "header": 4, "cap": 5, "raw": 6, "slot": 7}
KIND = {"raw": 0, "byte": 1, "doorbell": 2, "board": 3, "enable": 4, "zero": 5, "flip": 6, "ones": 7}
ACTOR = {"owner": 0, "owner1": 1, "other": 2}


def cfg(actor, fn, where, reg, size=4, write=False, kind="raw", value=b"", unaligned=False):
    """An access; `reg` is the offset's bytes for `where` (see pick_reg), `value` the value's."""
    how = {1: 0, 2: 1, 4: 2, 8: 3}[size] | (4 if write else 0) | (ACTOR[actor] << 3) | (WHERE_VPCI[where] << 5)
    sel = fn | (0x10 if unaligned else 0) | (KIND[kind] << 5)
    return u8(how) + u8(sel) + reg + (value if write else b"")


def doorbell(vcpu, offset=0):
    return u8(vcpu) + le(offset, 2)


def vpci_restart(owner=True):
    return u8(0x18 if owner else 0x98) + u8(0)


VPCI = {
    "steer-and-enable": bus(function(2, msi=True, b64=True, msix=True, pcie=True, order=1, fill=9))
    + cfg("owner", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(1, 0x40))
    + cfg("owner", 0, "msi", u8(8), write=True, kind="zero")
    + cfg("owner", 0, "msi", u8(4)) + cfg("owner1", 0, "msi", u8(5), 1) + cfg("owner", 0, "msi", u8(0))
    + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner", 0, "msi", u8(4), 1, write=True, kind="doorbell", value=doorbell(0, 0x10))
    + cfg("owner", 0, "msi", u8(4), write=True, kind="board", value=u8(3))
    + cfg("owner", 0, "msi", u8(8), write=True, kind="byte", value=u8(1))
    + cfg("owner", 0, "msi", u8(4)) + cfg("owner", 0, "msi", u8(0), write=True, kind="zero")
    + cfg("owner", 0, "header", u8(4), 2, write=True, kind="byte", value=u8(7))
    + cfg("owner", 0, "header", u8(0), 8),
    "msix-hidden": bus(function(3, msi=True, msix=True, pm=True, order=2, fill=3),
                       function(4, msix=True, pcie=True, order=0, fill=1))
    + cfg("owner", 0, "header", u8(0x34), 1) + cfg("owner", 1, "header", u8(0x34), 1)
    + cfg("owner", 0, "msix", u8(0x80), 1) + cfg("owner", 1, "msix", u8(0x80), 1)
    + cfg("owner", 0, "msix", u8(2), 2, write=True, kind="ones")
    + cfg("owner", 1, "msix", u8(0), 4, write=True, kind="enable")
    + cfg("owner", 1, "msix", u8(12), 4, write=True, kind="raw", value=le(0x12345678, 4))
    + cfg("owner", 0, "cap", u8(0x10)) + cfg("owner", 0, "cap", u8(0x21)) + cfg("owner", 0, "cap", u8(0x02)),
    "enable-needs-an-address": bus(function(5, msi=True, mask=True, order=0, fill=0x20))
    + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner", 0, "msi", u8(4), write=True, kind="raw", value=le(0x1234, 4))
    + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner1", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(0, 0x1000))
    + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner1", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(1, 0xffc))
    + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(2, 0))
    + vpci_restart() + cfg("owner", 0, "msi", u8(4)) + cfg("owner", 0, "msi", u8(2), 2, write=True, kind="enable")
    + vpci_restart(owner=False) + cfg("owner", 0, "header", u8(4), 2),
    "owners-only": bus(function(1, msi=True, order=0, fill=0), function(20, bus=1, msi=True),
                       function(3, bus=1, msi=True, b64=True, fill=0x41))
    + cfg("other", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(0))
    + cfg("other", 0, "header", u8(0)) + cfg("other", 0, "header", u8(1), 2, unaligned=True)
    + cfg("owner", 1, "msi", u8(4), write=True, kind="doorbell", value=doorbell(0))
    + cfg("owner", 1, "header", u8(0))
    + cfg("owner", 2, "msi", u8(8), write=True, kind="doorbell", value=doorbell(1, 4))
    + cfg("owner", 2, "msi", u8(4), write=True, kind="doorbell", value=doorbell(1, 4))
    + cfg("owner", 2, "msi", u8(2), 2, write=True, kind="enable")
    + cfg("owner", 0, "slot", le(0x7, 2) + u8(0x04), 4, write=True, kind="ones")
    + cfg("owner", 0, "slot", le(0x7, 2) + u8(0x00), 4) + cfg("owner", 0, "raw", le(0x102, 2), 2, unaligned=True)
    + cfg("owner", 0, "raw", le(0x800, 2), 4, write=True, kind="raw", value=le(0xcafe, 4))
    + vpci_restart(),
    "nine-functions": bus(*(function(d, msi=True, b64=d & 1 == 1, order=d, fill=d * 7) for d in range(10)))
    + b"".join(cfg("owner", d, "msi", u8(4), write=True, kind="doorbell", value=doorbell(d & 1, d * 8))
               for d in range(10))
    + b"".join(cfg("owner", d, "msi", u8(4)) for d in range(10)),
    "looping-list": bus(function(6, multi=True, msi=True, b64=True, msix=True, pcie=True, pm=True, vndr=True,
                                 loop=True, low=True, order=0x1234, fill=0xc7),
                        function(6, fn=2, msi=True, msix=True, loop=True, order=1, fill=0x55))
    + cfg("owner", 0, "cap", u8(0x00)) + cfg("owner", 0, "cap", u8(0x01)) + cfg("owner", 0, "cap", u8(0x02))
    + cfg("owner", 0, "cap", u8(0x03)) + cfg("owner", 0, "cap", u8(0x04)) + cfg("owner", 0, "cap", u8(0x05))
    + cfg("owner", 1, "msix", u8(0x80), 1) + cfg("owner", 1, "cap", u8(0x01), 1)
    + cfg("owner", 0, "msi", u8(4), write=True, kind="doorbell", value=doorbell(0, 0x800))
    + cfg("owner", 0, "msi", u8(0), write=True, kind="enable") + vpci_restart(),
}


# ---- virtio: a step's kind (low 3 bits of `how`), the acting vCPU of the frontend, then per kind ----

VIO_REGS = [0x000, 0x004, 0x008, 0x00c, 0x010, 0x014, 0x020, 0x024, 0x030, 0x034, 0x038, 0x044,
            0x050, 0x060, 0x064, 0x070, 0x080, 0x084, 0x090, 0x094, 0x0a0, 0x0a4, 0x0fc, 0x100, 0x104]
# fuzz_virtio.c's biased values: index into them (the queue chosen by the low bit).
VIO_VALUES = {"zero": 0, "one": 1, "ack_driver": 3, "features_ok": 4, "driver_ok": 5,
              "num8": 9, "version_1": 10, "desc": 12, "avail": 13, "used": 14, "high": 15}


def vio_reg(reg, value, q=0, write=True, vcpu=0):
    how = 0 | (2 << 3) | (0x20 if write else 0)  # 32-bit, biased value
    return u8(how) + u8(vcpu) + u8(VIO_REGS.index(reg)) + u8((VIO_VALUES[value] << 1) | q)


def vio_desc(q, i, off, length, flags, nxt):
    return u8(3 | (q << 3)) + u8(0) + u8(i) + u8(0) + le(off, 2) + le(length, 2) + u8(flags) + u8(nxt)


def vio_avail(q, head):
    return u8(4 | (q << 3)) + u8(0) + u8(head)


def vio_notify(q):
    return u8(7 | (q << 3)) + u8(0)


def vio_complete(q, head, written):
    return u8(5) + u8(0) + u8(q | 4) + u8(head) + u8(written)


def vio_bring_up(queues=(0, 1)):
    steps = (vio_reg(0x070, "zero") + vio_reg(0x070, "ack_driver") + vio_reg(0x024, "one")
             + vio_reg(0x020, "one") + vio_reg(0x070, "features_ok") + vio_reg(0x070, "zero", write=False))
    for q in queues:
        steps += (vio_reg(0x030, "zero" if q == 0 else "one") + vio_reg(0x038, "num8")
                  + vio_reg(0x080, "desc", q) + vio_reg(0x084, "high") + vio_reg(0x090, "avail", q)
                  + vio_reg(0x094, "high") + vio_reg(0x0a0, "used", q) + vio_reg(0x0a4, "high")
                  + vio_reg(0x044, "one"))
    return steps + vio_reg(0x070, "driver_ok")


VIRTIO = {
    "bring-up": vio_bring_up(),
    "round-trip": vio_bring_up() + vio_desc(1, 0, 0x3800, 16, 1, 1) + vio_desc(1, 1, 0x3900, 32, 2, 0)
    + vio_avail(1, 0) + vio_notify(1) + u8(6) + u8(0) + vio_complete(1, 0, 32)
    + vio_reg(0x060, "zero", write=False) + vio_reg(0x064, "one"),
    "loop": vio_bring_up() + vio_desc(0, 0, 0x3800, 16, 1, 0) + vio_avail(0, 0) + vio_notify(0)
    + vio_reg(0x060, "zero", write=False) + vio_reg(0x070, "zero"),
    "garbage-completion": vio_bring_up() + vio_complete(0, 5, 200) + vio_reg(0x060, "zero", write=False),
}

# fuzz_command.c's words, in its order: an input byte below 0xc0 types words[byte % len].
COMMAND_WORDS = ["list", "vcpu-list", "pool-list", "stats", "help", "stop", "restart", "pause",
                 "unpause", "vcpu-pin", "pool-migrate", "sched-rtds", "sched-credit",
                 "sched-arinc653", "trap", "direct", "nope", "@", "@7", "@4294967295",
                 "@4294967296", "0", "1", "2", "5", "99999999999", "--budget", "\"", "\\", " ",
                 " ", " ", "\r", "\r", "\n", "\x7f"]
KICKS = 0xc0


def command(*steps):
    return bytes(KICKS if step is KICKS else COMMAND_WORDS.index(step) for step in steps)


COMMAND = {
    "pause-unpause": command("@7", " ", "pause", " ", "trap", "\r", KICKS, "list", "\r", "unpause",
                             " ", "trap", "\r", KICKS, "vcpu-list", "\r"),
    "pause-stop": command("pause", " ", "direct", "\r", KICKS, "stop", " ", "direct", "\r", KICKS,
                          KICKS, "list", "\r", "restart", " ", "direct", "\r", KICKS),
    "refusals": command("vcpu-pin", " ", "trap", " ", "1", " ", "5", "\r", "sched-rtds", " ",
                        "trap", " ", "--budget", " ", "5", "\r", "@4294967296", " ", "list", "\r",
                        "nope", "\r"),
}


def main():
    for target, seeds in (("vgic", VGIC), ("vpl011", VPL011), ("traps", TRAPS), ("psci", PSCI),
                          ("vpci", VPCI), ("virtio", VIRTIO), ("command", COMMAND)):
        out = HERE / "corpus" / target
        out.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (out / name).write_bytes(data)
        print(f"{target}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
