"""A partition's device tree: its own view of the board, nothing else."""

import re
import shutil
import subprocess

import pytest
from tern.config import MiB
from tern.devicetree import RNG_SEED_BYTES, compile_dts, partition_dts


@pytest.fixture
def dts():
    return partition_dts("rt", 2, "cortex-a53", 0x4000_0000, 64 * MiB, 'lat.samples=100 q="x"')


def node(text, name):
    """The body of the node called `name` (no nesting inside it)."""
    m = re.search(r"\b" + re.escape(name) + r" \{\n(.*?)\n\t*\};", text, re.S)
    assert m, f"no node {name}"
    return m.group(1)


def test_root(dts):
    root = dts.split("\n\tchosen", 1)[0]
    assert 'compatible = "linux,dummy-virt";' in root
    assert "#address-cells = <2>;" in root and "#size-cells = <2>;" in root
    assert "interrupt-parent = <1>;" in root


def test_two_vcpus(dts):
    for i in range(2):
        cpu = node(dts, f"cpu@{i}")
        assert f"reg = <{i}>;" in cpu
        assert 'compatible = "arm,cortex-a53";' in cpu
        assert 'device_type = "cpu";' in cpu
        assert 'enable-method = "psci";' in cpu
    assert "cpu@2" not in dts


def test_memory_psci_gic_timer_uart_chosen(dts):
    assert "reg = <0x0 0x40000000 0x0 0x4000000>;" in node(dts, "memory@40000000")
    psci = node(dts, "psci")
    assert 'compatible = "arm,psci-1.0", "arm,psci-0.2";' in psci and 'method = "smc";' in psci
    gic = node(dts, "intc@8000000")
    assert 'compatible = "arm,gic-v3";' in gic and "interrupt-controller;" in gic
    assert "#interrupt-cells = <3>;" in gic and "phandle = <1>;" in gic
    # One 128 KiB redistributor frame per vCPU.
    assert re.search(r"reg = <0x0 0x8000000 0x0 0x10000>,\s*<0x0 0x80a0000 0x0 0x40000>;", gic)
    timer = node(dts, "timer")
    assert ("interrupts = <0x1 0xd 0x4>, <0x1 0xe 0x4>, <0x1 0xb 0x4>, <0x1 0xa 0x4>;" in timer)
    assert "always-on;" in timer and 'compatible = "arm,armv8-timer";' in timer
    uart = node(dts, "pl011@9000000")
    assert 'compatible = "arm,pl011", "arm,primecell";' in uart
    assert "reg = <0x0 0x9000000 0x0 0x1000>;" in uart
    assert "interrupts = <0x0 0x1 0x4>;" in uart
    assert "clocks = <2>, <2>;" in uart and 'clock-names = "uartclk", "apb_pclk";' in uart
    clock = node(dts, "apb-pclk")
    assert "clock-frequency = <24000000>;" in clock and "phandle = <2>;" in clock
    chosen = node(dts, "chosen")
    assert 'stdout-path = "/pl011@9000000";' in chosen
    assert r'bootargs = "lat.samples=100 q=\"x\"";' in chosen


def test_nothing_else(dts):
    # No flash, RTC, virtio, PCIe or fw_cfg: the partition cannot reach them.
    top_level = re.findall(r"^\t([a-z0-9@,_-]+) \{$", dts, re.M)
    assert top_level == ["chosen", "cpus", "memory@40000000", "psci", "intc@8000000", "timer",
                         "apb-pclk", "pl011@9000000"]


def test_cpu_models():
    assert 'compatible = "arm,cortex-a57";' in partition_dts("a", 1, "cortex-a57", 0x4000_0000,
                                                              4 * MiB)
    assert 'compatible = "arm,armv8";' in partition_dts("a", 1, "max", 0x4000_0000, 4 * MiB)


@pytest.mark.skipif(shutil.which("dtc") is None, reason="dtc not installed")
def test_compiles_and_decompiles(dts, tmp_path):
    blob = compile_dts(dts, tmp_path / "rt.dtb")
    assert blob[:4] == bytes.fromhex("d00dfeed")
    assert (tmp_path / "rt.dts").read_text() == dts
    back = subprocess.run(["dtc", "-I", "dtb", "-O", "dts", str(tmp_path / "rt.dtb")],
                          capture_output=True, text=True, check=True).stdout
    assert "reg = <0x00 0x8000000 0x00 0x10000 0x00 0x80a0000 0x00 0x40000>;" in back
    assert "interrupt-parent = <0x01>;" in back
    assert "cpu@1 {" in back


@pytest.fixture
def pcie_dts():
    return partition_dts("rt", 1, "cortex-a53", 0x4000_0000, 64 * MiB, devices=("pcie",))


def decompiled_node(blob_path, name):
    """{property: value} of node `name` in a DTB, as dtc prints it (value None: no value)."""
    text = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(blob_path)],
                          capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\t" + re.escape(name) + r" \{\n(.*?)^\t\};", text, re.S | re.M)
    assert m, f"no node {name} in {blob_path}"
    props = {}
    for line in m.group(1).strip().splitlines():
        prop, _, value = line.strip().rstrip(";").partition(" = ")
        props[prop] = value or None
    return props


def cells(value):
    """<0x1 0x2> -> [1, 2]"""
    return [int(c, 0) for c in value.strip("<>").split()]


def test_pcie_node_only_for_its_owner(dts, pcie_dts):
    assert "pcie" not in dts
    top_level = re.findall(r"^\t([a-z0-9@,_-]+) \{$", pcie_dts, re.M)
    assert top_level[-2:] == ["pl011@9000000", "pcie@10000000"]
    text = node(pcie_dts, "pcie@10000000")
    assert 'compatible = "pci-host-ecam-generic";' in text
    assert 'device_type = "pci";' in text
    assert "reg = <0x0 0x3f000000 0x0 0x1000000>;" in text
    assert "msi" not in text


@pytest.mark.skipif(shutil.which("dtc") is None, reason="dtc not installed")
def test_pcie_node_compiles(pcie_dts, tmp_path):
    compile_dts(pcie_dts, tmp_path / "rt.dtb")
    props = decompiled_node(tmp_path / "rt.dtb", "pcie@10000000")
    assert props["compatible"] == '"pci-host-ecam-generic"'
    assert props["device_type"] == '"pci"'
    assert cells(props["#address-cells"]) == [3]
    assert cells(props["#size-cells"]) == [2]
    assert cells(props["#interrupt-cells"]) == [1]
    assert cells(props["bus-range"]) == [0, 15]
    assert cells(props["linux,pci-domain"]) == [0]
    assert props["dma-coherent"] is None
    assert cells(props["reg"]) == [0, 0x3F00_0000, 0, 0x100_0000]
    assert cells(props["ranges"]) == [0x0100_0000, 0, 0, 0, 0x3EFF_0000, 0, 0x1_0000,
                                      0x0200_0000, 0, 0x1000_0000, 0, 0x1000_0000, 0, 0x2EFF_0000]
    assert cells(props["interrupt-map-mask"]) == [0x1800, 0, 0, 7]
    assert "msi-map" not in props and "msi-parent" not in props
    # 4 slots x 4 pins; each entry: child address (3) + pin (1) + GIC phandle (1) + SPI (3),
    # with no parent unit address: the GIC has #address-cells = <0>.
    flat = cells(props["interrupt-map"])
    entries = [flat[i:i + 8] for i in range(0, len(flat), 8)]
    assert len(flat) == 16 * 8
    assert entries[2 * 4 + 0] == [0x1000, 0, 0, 1, 1, 0, 5, 4]     # slot 2 INTA -> SPI 5
    for slot in range(4):
        for pin in range(1, 5):
            entry = entries[slot * 4 + pin - 1]
            assert entry[:4] == [slot << 11, 0, 0, pin]
            assert entry[4:] == [1, 0, 3 + (slot + pin - 1) % 4, 4]


@pytest.mark.skipif(shutil.which("dtc") is None or shutil.which("qemu-system-aarch64") is None,
                    reason="needs dtc and qemu-system-aarch64")
def test_pcie_node_matches_qemus_own(pcie_dts, tmp_path):
    from tern import qemu
    qemu_dtb = tmp_path / "virt.dtb"
    subprocess.run(qemu.board_args("cortex-a53", 4, 2048 * MiB, pci=("edu",),
                                   machine_extra=f",dumpdtb={qemu_dtb}"),
                   check=True, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    theirs = decompiled_node(qemu_dtb, "pcie@10000000")
    compile_dts(pcie_dts, tmp_path / "rt.dtb")
    ours = decompiled_node(tmp_path / "rt.dtb", "pcie@10000000")
    # Deliberate differences: no ITS (no msi-map); the interrupt-map's parent is our GIC.
    assert set(theirs) - set(ours) == {"msi-map"}
    assert set(ours) <= set(theirs)
    for prop in set(ours) - {"interrupt-map"}:
        assert ours[prop] == theirs[prop], prop
    # Entries: child address (3), pin, parent phandle, [parent address], SPI specifier (3).
    # QEMU's carry 2 parent address cells (its GIC has #address-cells = <2> for the ITS).
    flat = cells(theirs["interrupt-map"])
    qemu_entries = [flat[i:i + 10] for i in range(0, len(flat), 10)]
    ours_flat = cells(ours["interrupt-map"])
    our_entries = [ours_flat[i:i + 8] for i in range(0, len(ours_flat), 8)]
    assert len(qemu_entries) == len(our_entries) == 16
    assert all(e[5:7] == [0, 0] for e in qemu_entries)
    assert all(e[4] == 1 for e in our_entries)
    assert [e[:4] + e[7:] for e in qemu_entries] == [e[:4] + e[5:] for e in our_entries]


def test_initrd_in_chosen():
    text = partition_dts("linux", 2, "cortex-a57", 0x4000_0000, 512 * MiB, "console=ttyAMA0",
                         initrd=(0x5d80_0000, 0x12_3456))
    chosen = node(text, "chosen")
    assert "linux,initrd-start = <0x0 0x5d800000>;" in chosen
    assert "linux,initrd-end = <0x0 0x5d923456>;" in chosen
    assert "initrd" not in node(partition_dts("rt", 1, "cortex-a53", 0x4000_0000, 64 * MiB),
                                "chosen")


def test_each_run_gives_each_partition_a_fresh_rng_seed(tmp_path, stub_image):
    from tern import build, runner
    from tern.config import dump_toml
    from tern_test_files import write_image

    hypervisor = write_image(tmp_path / "tern.img")
    toml = tmp_path / "system.toml"
    toml.write_text(dump_toml({"board": {"cpus": 3}, "partition": [
        {"name": n, "cpus": [c], "memory": "16MiB", "image": str(stub_image)}
        for n, c in (("a", 1), ("b", 2))]}))
    system = runner.load_system(toml)
    placed = runner.place(system)
    seeds = []
    for run in range(2):
        workdir = tmp_path / f"run{run}"
        build.prepare_system(system, placed, workdir, hypervisor)
        for name in ("a", "b"):
            dts = subprocess.run(["dtc", "-q", "-I", "dtb", "-O", "dts", str(workdir / f"{name}.dtb")],
                                 capture_output=True, text=True, check=True).stdout
            cells = re.search(r"rng-seed = <([0-9a-fx ]+)>;", dts)   # dtc shows 32-bit cells
            assert cells, f"no rng-seed in {name}.dtb:\n{dts}"
            seed = cells.group(1).split()
            assert len(seed) * 4 == RNG_SEED_BYTES
            seeds.append(tuple(seed))
    assert len(set(seeds)) == 4, "a seed was reused between partitions or runs"


# riscv64: QEMU riscv virt's tree cut down to the partition (its harts, RAM, the ns16550 and,
# with irq = "direct", its IMSIC files), compiled with dtc and read back.
def riscv_dtb(tmp_path, num_vcpus=2, irq_direct=True, **more):
    from tern.devicetree import riscv64_partition_dts
    dts = riscv64_partition_dts("rt", num_vcpus, 0x8000_0000, 32 * MiB, 'x="1"',
                                irq_direct=irq_direct, **more)
    path = tmp_path / f"rt-{num_vcpus}-{irq_direct}.dtb"
    compile_dts(dts, path)
    return path


def decompiled(blob_path):
    """dtc's DTS for a DTB, parsed: (root node, what dtc said on stderr).  A node is
    {"props": {name: value as dtc prints it, or None}, "nodes": {name: node}}."""
    proc = subprocess.run(["dtc", "-I", "dtb", "-O", "dts", str(blob_path)],
                          capture_output=True, text=True, check=True)
    root = stack = None
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line.endswith("{"):
            node = {"props": {}, "nodes": {}}
            name = line[:-1].strip()
            if stack is None:
                root, stack = node, [node]
            else:
                stack[-1]["nodes"][name] = node
                stack.append(node)
        elif line == "};":
            stack.pop()
        elif stack and line.endswith(";"):
            prop, _, value = line[:-1].partition(" = ")
            stack[-1]["props"][prop] = value or None
    return root, proc.stderr


def at(root, path):
    """The node at `path` ("/soc/serial@10000000")."""
    node = root
    for name in filter(None, path.split("/")):
        node = node["nodes"][name]
    return node


def test_riscv64_tree_for_a_direct_partition(tmp_path):
    root, warnings = decompiled(riscv_dtb(tmp_path, rng_seed=bytes(range(32))))
    assert warnings == ""
    assert root["props"] == {"#address-cells": "<0x02>", "#size-cells": "<0x02>",
                             "compatible": '"riscv-virtio"', "model": '"riscv-virtio,qemu"'}
    assert list(root["nodes"]) == ["chosen", "cpus", "memory@80000000", "soc"]
    chosen = at(root, "/chosen")["props"]
    assert chosen["stdout-path"] == '"/soc/serial@10000000"'
    assert chosen["bootargs"] == r'"x=\"1\""'
    assert cells(chosen["rng-seed"]) == [0x00010203, 0x04050607, 0x08090A0B, 0x0C0D0E0F,
                                         0x10111213, 0x14151617, 0x18191A1B, 0x1C1D1E1F]
    assert cells(at(root, "/memory@80000000")["props"]["reg"]) == [0, 0x8000_0000, 0, 32 * MiB]
    cpus = at(root, "/cpus")
    assert {k: cells(v) for k, v in cpus["props"].items()} == {
        "#address-cells": [1], "#size-cells": [0], "timebase-frequency": [10_000_000]}
    assert list(cpus["nodes"]) == ["cpu@0", "cpu@1"]
    intc_phandles = []
    for i in range(2):
        cpu = at(root, f"/cpus/cpu@{i}")
        assert cpu["props"] == {
            "device_type": '"cpu"', "reg": f"<0x0{i}>", "status": '"okay"',
            "compatible": '"riscv"',
            "riscv,isa": '"rv64imafdc_zicsr_zifencei_zihintpause_zba_zbb_zbc_zbs_ssaia_sstc"',
            "mmu-type": '"riscv,sv39"'}
        intc = cpu["nodes"]["interrupt-controller"]["props"]
        assert intc["compatible"] == '"riscv,cpu-intc"' and "interrupt-controller" in intc
        assert cells(intc["#interrupt-cells"]) == [1]
        intc_phandles.append(cells(intc["phandle"])[0])
    soc = at(root, "/soc")
    assert soc["props"] == {"#address-cells": "<0x02>", "#size-cells": "<0x02>",
                            "compatible": '"simple-bus"', "ranges": None}
    assert list(soc["nodes"]) == ["serial@10000000", "imsics@28000000"]
    # No interrupts: a partition has no console input yet.
    assert at(root, "/soc/serial@10000000")["props"] == {
        "compatible": '"ns16550a"', "reg": "<0x00 0x10000000 0x00 0x100>",
        "clock-frequency": r'"\08@"'}                     # 3686400, as QEMU's own
    imsic = at(root, "/soc/imsics@28000000")["props"]
    assert imsic["compatible"] == r'"qemu,imsics\0riscv,imsics"'
    assert cells(imsic["reg"]) == [0, 0x2800_0000, 0, 2 * 0x8000]
    # vCPU i's S-level file is the i-th pair's: its hart's local interrupt 9 (S external).
    assert cells(imsic["interrupts-extended"]) == [intc_phandles[0], 9, intc_phandles[1], 9]
    assert cells(imsic["riscv,num-ids"]) == [255]
    assert cells(imsic["riscv,guest-index-bits"]) == [3]
    assert cells(imsic["#interrupt-cells"]) == [0]
    for flag in ("interrupt-controller", "msi-controller", "phandle"):
        assert flag in imsic, flag
    assert len(set(intc_phandles + cells(imsic["phandle"]))) == 3


def test_riscv64_tree_for_a_trap_partition(tmp_path):
    # No Sstc and no S-level AIA: the guest uses the SBI's timer and IPIs.
    root, warnings = decompiled(riscv_dtb(tmp_path, num_vcpus=1, irq_direct=False))
    assert warnings == ""
    assert list(at(root, "/cpus")["nodes"]) == ["cpu@0"]
    assert at(root, "/cpus/cpu@0")["props"]["riscv,isa"] == \
        '"rv64imafdc_zicsr_zifencei_zihintpause_zba_zbb_zbc_zbs"'
    assert list(at(root, "/soc")["nodes"]) == ["serial@10000000"]
    assert "rng-seed" not in at(root, "/chosen")["props"]


def test_riscv64_initrd_in_chosen(tmp_path):
    root, _ = decompiled(riscv_dtb(tmp_path, initrd=(0x8100_0000, 0x1234)))
    chosen = at(root, "/chosen")["props"]
    assert cells(chosen["linux,initrd-start"]) == [0, 0x8100_0000]
    assert cells(chosen["linux,initrd-end"]) == [0, 0x8100_1234]


def test_riscv64_imsic_as_the_guests_read_it(tmp_path):
    """guests/lib/riscv64/imsic.c: vCPU (hart) h's file is base + i * 2^(guest-index-bits + 12)
    for the i-th interrupts-extended pair whose cpu-intc's parent has reg = h, if it lies in
    reg; each must be where hart h's S-level file is on the bare board."""
    for vcpus in (1, 2, 8):
        root, _ = decompiled(riscv_dtb(tmp_path, num_vcpus=vcpus))
        imsic = at(root, "/soc/imsics@28000000")["props"]
        _, base, _, size = cells(imsic["reg"])
        stride = 1 << (cells(imsic["riscv,guest-index-bits"])[0] + 12)
        by_phandle = {cells(cpu["nodes"]["interrupt-controller"]["props"]["phandle"])[0]:
                      cells(cpu["props"]["reg"])[0]
                      for cpu in at(root, "/cpus")["nodes"].values()}
        pairs = cells(imsic["interrupts-extended"])
        files = {}
        for i in range(0, len(pairs), 2):
            assert pairs[i + 1] == 9
            assert (i // 2 + 1) * stride <= size
            files[by_phandle[pairs[i]]] = base + (i // 2) * stride
        assert files == {h: 0x2800_0000 + h * 0x8000 for h in range(vcpus)}


@pytest.mark.skipif(shutil.which("qemu-system-riscv64") is None,
                    reason="needs qemu-system-riscv64")
def test_riscv64_tree_follows_qemus_own(tmp_path):
    from tern import qemu
    qemu_dtb = tmp_path / "virt.dtb"
    command = qemu.riscv64_board_args(2, 1024 * MiB)
    command[command.index("-M") + 1] += f",dumpdtb={qemu_dtb}"
    subprocess.run(command, check=True, capture_output=True, timeout=60,
                   stdin=subprocess.DEVNULL)
    theirs, _ = decompiled(qemu_dtb)
    ours, _ = decompiled(riscv_dtb(tmp_path))
    for path in ("/", "/cpus"):
        for prop, value in at(ours, path)["props"].items():
            assert at(theirs, path)["props"][prop] == value, (path, prop)
    their_cpu = at(theirs, "/cpus/cpu@1")["props"]
    our_cpu = at(ours, "/cpus/cpu@1")["props"]
    for prop in ("device_type", "reg", "status", "compatible"):
        assert our_cpu[prop] == their_cpu[prop], prop
    # The harts' ISA seen from VS-mode: the board's without H and without the M-level AIA.
    base, *extensions = their_cpu["riscv,isa"].strip('"').split("_")
    assert base == "rv64imafdch"
    visible = [e for e in extensions if e != "smaia"]
    assert our_cpu["riscv,isa"] == '"' + "_".join(["rv64imafdc"] + visible) + '"'
    their_intc = at(theirs, "/cpus/cpu@1")["nodes"]["interrupt-controller"]["props"]
    our_intc = at(ours, "/cpus/cpu@1")["nodes"]["interrupt-controller"]["props"]
    for prop in ("#interrupt-cells", "interrupt-controller", "compatible"):
        assert our_intc[prop] == their_intc[prop], prop
    their_uart = at(theirs, "/soc/serial@10000000")["props"]
    for prop, value in at(ours, "/soc/serial@10000000")["props"].items():
        assert their_uart[prop] == value, prop
    their_imsic = at(theirs, "/soc/imsics@28000000")["props"]
    our_imsic = at(ours, "/soc/imsics@28000000")["props"]
    for prop in ("reg", "riscv,num-ids", "riscv,guest-index-bits", "#interrupt-cells",
                 "interrupt-controller", "msi-controller"):
        assert our_imsic[prop] == their_imsic[prop], prop
    # QEMU 7.2 writes only "riscv,imsics"; the binding wants a vendor string first.
    assert their_imsic["compatible"] == '"riscv,imsics"'


# riscv64 "pcie": QEMU riscv virt's /soc/pci@30000000, MSIs to the partition's IMSIC, INTx to
# its APLIC.
RISCV_PCIE_RANGES = [0x0100_0000, 0, 0, 0, 0x0300_0000, 0, 0x1_0000,            # I/O from 0
                     0x0200_0000, 0, 0x4000_0000, 0, 0x4000_0000, 0, 0x4000_0000]  # 32-bit 1:1


def riscv_pcie_dtb(tmp_path, irq_direct=True, num_vcpus=2):
    return riscv_dtb(tmp_path, num_vcpus=num_vcpus, irq_direct=irq_direct, devices=("pcie",),
                     ram_hpa=0x8400_0000)


def test_riscv64_pcie_node_for_its_owner(tmp_path):
    root, warnings = decompiled(riscv_pcie_dtb(tmp_path))
    assert warnings == ""
    assert list(at(root, "/soc")["nodes"]) == ["serial@10000000", "imsics@28000000",
                                               "aplic@d000000", "pci@30000000"]
    pci = at(root, "/soc/pci@30000000")
    assert pci["nodes"] == {}
    props = pci["props"]
    imsic_phandle = cells(at(root, "/soc/imsics@28000000")["props"]["phandle"])
    aplic = at(root, "/soc/aplic@d000000")["props"]
    assert props == {
        "compatible": '"pci-host-ecam-generic"', "device_type": '"pci"',
        "#address-cells": "<0x03>", "#size-cells": "<0x02>", "#interrupt-cells": "<0x01>",
        "bus-range": "<0x00 0xff>", "linux,pci-domain": "<0x00>", "dma-coherent": None,
        "msi-parent": props["msi-parent"], "reg": props["reg"], "ranges": props["ranges"],
        "dma-ranges": props["dma-ranges"], "interrupt-map-mask": "<0x1800 0x00 0x00 0x07>",
        "interrupt-map": props["interrupt-map"]}
    assert cells(props["msi-parent"]) == imsic_phandle
    # Trap-less: the APLIC delivers by MSI into the same IMSIC, as on the board.
    assert cells(aplic["msi-parent"]) == imsic_phandle and "interrupts-extended" not in aplic
    assert cells(aplic["reg"]) == [0, 0x0d00_0000, 0, 0x8000]
    assert cells(aplic["riscv,num-sources"]) == [96]
    # Slot s, pin p (1..4) -> source 32 + (s + p - 1) % 4 of this APLIC, level-high.
    flat = cells(props["interrupt-map"])
    entries = [flat[i:i + 7] for i in range(0, len(flat), 7)]
    assert len(entries) == 16
    for slot in range(4):
        for pin in range(1, 5):
            assert entries[slot * 4 + pin - 1] == [slot << 11, 0, 0, pin, cells(aplic["phandle"])[0],
                                                   32 + (slot + pin - 1) % 4, 4]
    assert cells(props["reg"]) == [0, 0x3000_0000, 0, 0x1000_0000]
    assert cells(props["ranges"]) == RISCV_PCIE_RANGES
    # Nothing translates DMA on this board: the partition's RAM (0x8000_0000, 32 MiB) is at
    # its board address, 0x8400_0000, on the bus.
    assert cells(props["dma-ranges"]) == [0x0200_0000, 0, 0x8400_0000, 0, 0x8000_0000,
                                          0, 32 * MiB]


def test_riscv64_pcie_node_only_for_its_owner(tmp_path):
    root, _ = decompiled(riscv_dtb(tmp_path))
    assert "pci@30000000" not in at(root, "/soc")["nodes"]
    from tern.devicetree import riscv64_partition_dts
    assert "pci" not in riscv64_partition_dts("rt", 1, 0x8000_0000, 32 * MiB)


def test_riscv64_pcie_node_of_a_trap_partition_has_no_msi_parent(tmp_path):
    # irq = "trap": no IMSIC in the partition, so nowhere for an MSI to go; INTx reaches an
    # APLIC in direct delivery mode, one interrupt delivery control per vCPU.
    root, warnings = decompiled(riscv_pcie_dtb(tmp_path, irq_direct=False, num_vcpus=2))
    assert warnings == ""
    assert list(at(root, "/soc")["nodes"]) == ["serial@10000000", "aplic@d000000",
                                               "pci@30000000"]
    props = at(root, "/soc/pci@30000000")["props"]
    assert "msi-parent" not in props and "interrupt-map" in props
    assert cells(props["ranges"]) == RISCV_PCIE_RANGES
    aplic = at(root, "/soc/aplic@d000000")["props"]
    assert "msi-parent" not in aplic
    intc = [cells(at(root, f"/cpus/cpu@{i}/interrupt-controller")["props"]["phandle"])[0]
            for i in range(2)]
    assert cells(aplic["interrupts-extended"]) == [intc[0], 9, intc[1], 9]


def test_riscv64_pcie_dma_ranges_default_to_ram_where_the_cpu_sees_it():
    from tern.devicetree import riscv64_partition_dts
    text = riscv64_partition_dts("rt", 1, 0x8000_0000, 32 * MiB, devices=("pcie",))
    assert "dma-ranges = <0x2000000 0x0 0x80000000 0x0 0x80000000 0x0 0x2000000>;" in text


def test_riscv64_pcie_as_the_guests_read_it(tmp_path):
    """guests/lib/pci.c pci_host_init: the node by compatible, reg and ranges' CPU side in
    its parent's cells, bus-range, and the first 32-bit memory window of ranges."""
    root, _ = decompiled(riscv_pcie_dtb(tmp_path))
    soc = at(root, "/soc")
    hosts = [name for name, n in soc["nodes"].items()
             if n["props"].get("compatible") == '"pci-host-ecam-generic"']
    assert hosts == ["pci@30000000"]
    pa, ps = cells(soc["props"]["#address-cells"])[0], cells(soc["props"]["#size-cells"])[0]
    props = soc["nodes"]["pci@30000000"]["props"]
    ca, cs = cells(props["#address-cells"])[0], cells(props["#size-cells"])[0]
    assert (pa, ps, ca, cs) == (2, 2, 3, 2)

    def number(words):
        value = 0
        for w in words:
            value = value << 32 | w
        return value

    reg = cells(props["reg"])
    ecam, ecam_size = number(reg[:pa]), number(reg[pa:pa + ps])
    assert (ecam, ecam_size) == (0x3000_0000, 0x1000_0000)
    first, last = cells(props["bus-range"])
    assert (first, last) == (0, 255) and last - first + 1 == ecam_size >> 20
    ranges = cells(props["ranges"])
    entry = ca + pa + cs
    mem32 = [ranges[i:i + entry] for i in range(0, len(ranges), entry)
             if (ranges[i] >> 24) & 3 == 2]
    assert len(mem32) == 1
    window = mem32[0]
    assert (number(window[1:3]), number(window[3:3 + pa]), number(window[3 + pa:])) == \
        (0x4000_0000, 0x4000_0000, 0x4000_0000)                     # PCI, CPU, size


@pytest.mark.skipif(shutil.which("qemu-system-riscv64") is None,
                    reason="needs qemu-system-riscv64")
def test_riscv64_pcie_node_follows_qemus_own(tmp_path):
    from tern import qemu
    qemu_dtb = tmp_path / "virt.dtb"
    command = qemu.riscv64_board_args(2, 1024 * MiB, pci=("edu",))
    command[command.index("-M") + 1] += f",dumpdtb={qemu_dtb}"
    subprocess.run(command, check=True, capture_output=True, timeout=60,
                   stdin=subprocess.DEVNULL)
    theirs_root, _ = decompiled(qemu_dtb)
    ours_root, _ = decompiled(riscv_pcie_dtb(tmp_path))
    theirs = at(theirs_root, "/soc/pci@30000000")["props"]
    ours = at(ours_root, "/soc/pci@30000000")["props"]
    # The deliberate difference: dma-ranges for RAM that is not on the bus where the
    # partition sees it.
    assert set(theirs) == set(ours) - {"dma-ranges"}
    for prop in set(ours) - {"ranges", "msi-parent", "dma-ranges", "interrupt-map"}:
        assert ours[prop] == theirs[prop], prop
    # The same map, each tree's APLIC its parent.
    theirs_map, ours_map = cells(theirs["interrupt-map"]), cells(ours["interrupt-map"])
    theirs_aplic = cells(at(theirs_root, "/soc/aplic@d000000")["props"]["phandle"])[0]
    ours_aplic = cells(at(ours_root, "/soc/aplic@d000000")["props"]["phandle"])[0]
    assert [theirs_aplic if i % 7 == 4 else c for i, c in enumerate(ours_map)] == theirs_map
    assert theirs_map[4] == theirs_aplic
    # QEMU's ranges add the 64-bit window above RAM, which a partition does not get.
    assert cells(theirs["ranges"])[:len(RISCV_PCIE_RANGES)] == cells(ours["ranges"])
    assert cells(theirs["ranges"])[len(RISCV_PCIE_RANGES):][0] == 0x0300_0000
    # Both msi-parents name their tree's S-level IMSIC.
    for root, props in ((theirs_root, theirs), (ours_root, ours)):
        assert cells(props["msi-parent"]) == \
            cells(at(root, "/soc/imsics@28000000")["props"]["phandle"])
