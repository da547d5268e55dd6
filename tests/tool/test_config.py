"""System description validation: every user error gives one exact line."""

import json
import os
import subprocess
import sys

import pytest
from tern import layout
from tern.config import GiB, MiB, TiB, format_size, load_system, parse_size
from tern.errors import ConfigError
from tern.units import format_duration
from tern.layout import place
from tern_test_files import partition, write_elf, write_image, write_toml

LAUNCHER = os.path.join(os.path.dirname(__file__), "..", "..", "tern")


def models(system):
    """The board's PCI device models, in slot order."""
    return tuple(d.model for d in system.board.pci)


def error_of(tmp_path, text):
    """The one-line message `load_system` + `place` give for `text`, minus the file."""
    path = write_toml(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        place(load_system(path))
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message
    return message[len(f"{path}: "):]


def test_minimal_system_gets_defaults(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, partition()))
    assert system.board.cpus == 4
    assert system.board.cpu == "cortex-a53"
    assert system.board.memory == 2 * GiB
    (p,) = system.partitions
    assert (p.name, p.cpus, p.memory, p.wfi_native, p.bootargs) == ("rt", (1,), 64 * MiB, False, "")
    assert p.image_path == tmp_path / "guests" / "build" / "arm64" / "lat.img"
    assert p.image.kind == "Image"


def test_full_system(tmp_path, stub_image):
    text = ('[board]\ncpus = 8\ncpu = "max"\nmemory = "3GiB"\n'
            + partition("rt", cpus=[1, 2], memory=67108864, wfi="native", bootargs="a=1 b")
            + partition("two_2", cpus=[0], memory="1 GiB"))
    system = load_system(write_toml(tmp_path, text))
    assert system.board == type(system.board)(cpus=8, cpu="max", memory=3 * GiB)
    rt, two = system.partitions
    assert rt.cpus == (1, 2) and rt.wfi_native and rt.bootargs == "a=1 b"
    assert two.memory == GiB and two.cpus == (0,) and not two.wfi_native


def test_devices_and_pci(tmp_path, stub_image):
    text = ('[board]\npci = ["edu", "edu"]\nmemory = 3221225472\n'
            + partition("rt", cpus=[1], devices=["pcie"], irq="direct")
            + partition("other", cpus=[2], devices=[]))
    system = load_system(write_toml(tmp_path, text))
    assert models(system) == ("edu", "edu") and system.board.memory == 3 * GiB
    rt, other = system.partitions
    assert rt.devices == ("pcie",) and rt.irq_direct
    assert other.devices == ()


def test_no_devices_by_default(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, partition()))
    assert system.board.pci == () and system.partitions[0].devices == ()


def test_image_path_resolves_against_the_toml_directory(tmp_path):
    write_image(tmp_path / "sub" / "g.img")
    path = write_toml(tmp_path / "sub", partition(image="g.img"))
    assert load_system(path).partitions[0].image_path == tmp_path / "sub" / "g.img"


@pytest.mark.parametrize("text, expected", [
    (partition("rt", cpus=[1]) + partition("b", cpus=[2, 1]),
     'partition[1].cpus: core 1 is already used by partition "rt"'),
    (partition(bogus=1), "partition[0].bogus: unknown key"),
    (partition(cpus=[7]), "partition[0].cpus: core 7 is out of range (board has 4 cores)"),
    (partition(cpus=[-1]), "partition[0].cpus: core -1 is out of range (board has 4 cores)"),
    (partition(cpus=[1, 1]), "partition[0].cpus: core 1 is listed twice"),
    (partition(cpus=[]), "partition[0].cpus: must be a non-empty list of core numbers, "
                         "like [1] (got [])"),
    (partition(cpus=1), "partition[0].cpus: must be a non-empty list of core numbers, "
                        "like [1] (got 1)"),
    ("[board]\ncpus = 8\n" + partition(cpus=[0, 1, 2, 3, 4, 5, 6, 7, 0]),
     "partition[0].cpus: at most 8 vCPUs per partition (got 9)"),
    (partition("Big!"), 'partition[0].name: "Big!" must be 1 to 15 characters '
                        "from a-z, 0-9, _ and -"),
    (partition(name="a" * 16), f'partition[0].name: "{"a" * 16}" must be 1 to 15 characters '
                               "from a-z, 0-9, _ and -"),
    (partition("rt", cpus=[1]) + partition("rt", cpus=[2]),
     'partition[1].name: "rt" is already the name of partition[0]'),
    (partition(memory="3MiB"), "partition[0].memory: must be a multiple of 2 MiB (got 3 MiB)"),
    (partition(memory="2MiB"), "partition[0].memory: must be at least 4 MiB (got 2 MiB)"),
    (partition(memory="4GiB"), "partition[0].memory: must be at most 2 GiB (got 4 GiB)"),
    (partition(memory="64MB"), 'partition[0].memory: "64MB" is not a size (use bytes, '
                               'or "N KiB", "N MiB", "N GiB", "N TiB")'),
    (partition(memory=True), 'partition[0].memory: must be a size in bytes or a string '
                             'like "64MiB" (got true)'),
    (partition(wfi="sometimes"),
     'partition[0].wfi: must be "native" or "trap" (got "sometimes")'),
    (partition(bootargs=5), "partition[0].bootargs: must be a string (got 5)"),
    (partition(bootargs="a\nb"),
     "partition[0].bootargs: must be printable ASCII on one line"),
    ('[[partition]]\ncpus = [1]\n', "partition[0].name: missing (every partition needs a name)"),
    ('[[partition]]\nname = "a"\n', "partition[0].cpus: missing (list the physical cores, "
                                    "like [1])"),
    ('[[partition]]\nname = "a"\ncpus = [1]\n',
     'partition[0].memory: missing (give the RAM size, like "64MiB")'),
    ('[[partition]]\nname = "a"\ncpus = [1]\nmemory = "4MiB"\n',
     "partition[0].image: missing (path of the guest's Image, ELF or raw binary)"),
    ("[board]\ncpus = 9\n" + partition(), "board.cpus: must be a whole number from 1 to 8 (got 9)"),
    ('[board]\ncpu = "cortex-a72"\n' + partition(),
     'board.cpu: unknown CPU "cortex-a72" (use cortex-a53, cortex-a57 or max)'),
    ('[board]\nmemory = "64MiB"\n' + partition(),
     "board.memory: must be at least 128 MiB (got 64 MiB)"),
    ("[board]\nram = 1\n" + partition(), "board.ram: unknown key"),
    ("title = 'x'\n" + partition(),
     "title: unknown key (expected [board], [[partition]], [[channel]], [[virtio]] and [[pool]])"),
    ("[board]\ncpus = 2\n", "partition: at least one [[partition]] is required"),
    ("partition = []\n", "partition: at least one [[partition]] is required"),
    ("[partition]\nname = 'a'\n", "partition: must be an array of tables ([[partition]])"),
    ("[board]\ncpus = 8\n" + "".join(partition(f"p{i}", [i % 8]) for i in range(9)),
     "partition: at most 8 partitions are supported (got 9)"),
    ("[board]\ncpus = 2\nmemory = \n",
     "line 3, column 10: TOML syntax error: invalid value"),
    ('[board]\nmemory = "4GiB"\n' + partition(),
     "board.memory: must be at most 3 GiB (got 4 GiB): board RAM starts at 1 GiB and must end "
     "by 4 GiB (QEMU virt with highmem=off)"),
    ('[board]\nmemory = "3073MiB"\n' + partition(),
     "board.memory: must be at most 3 GiB (got 3.1 GiB): board RAM starts at 1 GiB and must end "
     "by 4 GiB (QEMU virt with highmem=off)"),
    ('[board]\npci = "edu"\n' + partition(),
     'board.pci: must be a list of PCI devices, like ["edu"] (got "edu")'),
    ('[board]\npci = ["edu", 1]\n' + partition(),
     'board.pci[1]: must be a model name or a table like {model = "virtio-blk", '
     'disk = "disk.img"} (got 1)'),
    ('[board]\npci = ["e1000"]\n' + partition(),
     'board.pci[0]: unknown PCI device model "e1000" '
     '(allowed: edu, virtio-blk, virtio-net)'),
    ('[board]\npci = ["edu", "edu", "edu", "edu", "edu"]\n' + partition(),
     "board.pci: at most 4 PCI devices (got 5)"),
    (partition(devices=["usb"]), 'partition[0].devices: unknown device "usb" '
                                 "(known: pcie)"),
    (partition(devices=["pcie", "pcie"]), 'partition[0].devices: "pcie" is listed twice'),
    (partition("rt", cpus=[1], devices=["pcie"])
     + partition("b", cpus=[2], devices=["pcie"]),
     'partition[1].devices: "pcie" is already given to partition "rt"'),
    (partition(devices="pcie"),
     'partition[0].devices: must be a list of board device names, like ["pcie"] (got "pcie")'),
    (partition(devices=[1]),
     'partition[0].devices: must be a list of board device names, like ["pcie"] (got [1])'),
    (partition(devices={"pcie": True}),
     'partition[0].devices: must be a list of board device names, like ["pcie"] (got a table)'),
])
def test_config_errors(tmp_path, stub_image, text, expected):
    assert error_of(tmp_path, text) == expected


def test_memory_that_does_not_fit(tmp_path, stub_image):
    # 2 GiB cannot start below QEMU's dtb at 0x48000000, so it starts just past
    # it (0x48200000); then 1 GiB more and four 2 MiB pristine copies.
    text = partition("big", cpus=[1], memory="2GiB") + partition("more", cpus=[2], memory="1GiB")
    need = 0x4820_0000 + 2 * GiB + GiB + 4 * 2 * MiB - 0x4000_0000
    assert format_size(need, round_up=True) == "3.2 GiB"
    assert error_of(tmp_path, text) == \
        "partition[0].memory: partitions need 3.2 GiB but the board has 2 GiB"


def test_memory_that_does_not_fit_only_with_the_pristine_copies(tmp_path, stub_image):
    # 128 MiB board: QEMU's dtb block is 0x44000000, so RAM runs 0x44200000-0x47e00000
    # and fits; the two 2 MiB pristine copies would end at 0x48200000.
    text = "[board]\nmemory = \"128MiB\"\n" + partition(memory="60MiB")
    assert error_of(tmp_path, text) == \
        "partition[0].image: partitions need 130 MiB but the board has 128 MiB"


def test_no_such_image(tmp_path):
    message = error_of(tmp_path, partition(image="nope/missing.img"))
    assert message == f"partition[0].image: no such file: {tmp_path}/nope/missing.img"


def test_a_file_without_a_header_is_a_raw_binary_at_the_boards_kernel_offset(tmp_path):
    # QEMU's -kernel loads any file it finds no header in, as it is, at RAM base + 0x80000.
    (tmp_path / "raw.bin").write_bytes(b"\x1f\x20\x03\xd5" * 40)       # NOPs
    system = load_system(write_toml(tmp_path, partition(image="raw.bin")))
    image = system.partitions[0].image
    assert (image.kind, image.arch, image.mem_size) == ("raw", "arm64", 160)
    pl = place(system).partitions[0]
    assert pl.image_ipa == pl.entry_ipa == 0x4008_0000
    assert pl.image_size == 160


def test_an_empty_or_compressed_image_is_refused(tmp_path):
    (tmp_path / "empty.img").write_bytes(b"")
    message = error_of(tmp_path, partition(image="empty.img"))
    assert message == f"partition[0].image: empty: {tmp_path}/empty.img"
    (tmp_path / "Image.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(60))
    message = error_of(tmp_path, partition(image="Image.gz"))
    assert message == (f"partition[0].image: gzip-compressed: {tmp_path}/Image.gz (tern loads "
                       "Images, ELFs and raw binaries as they are: decompress it first)")


def test_elf_for_another_machine(tmp_path):
    write_elf(tmp_path / "x86.elf", [(0x40080000, 0x40080000, b"\x90" * 16, 16)], 0x40080000,
              machine=62)
    message = error_of(tmp_path, partition(image="x86.elf"))
    assert message.startswith(f"partition[0].image: not an arm64 Image or ELF: {tmp_path}/x86.elf")


def test_riscv64_image_refused_in_a_partition(tmp_path):
    from tern_test_files import write_riscv_image
    write_riscv_image(tmp_path / "rv.img")
    message = error_of(tmp_path, partition(image="rv.img"))
    assert message == f"partition[0].image: {tmp_path}/rv.img is a riscv64 Image, not arm64"


def test_image_too_big_for_its_partition(tmp_path):
    write_image(tmp_path / "big.img", image_size=4 * MiB)
    message = error_of(tmp_path, partition(memory="4MiB", image="big.img"))
    assert message == ("partition[0].image: image does not fit in the partition's RAM: it covers "
                       "IPA 0x40080000-0x40480000, but RAM is 0x40000000-0x40400000 and the "
                       "device tree takes 0x40200000-0x40400000")


def test_image_over_the_device_tree(tmp_path):
    write_image(tmp_path / "big.img", image_size=2 * MiB)
    message = error_of(tmp_path, partition(memory="4MiB", image="big.img"))
    assert message.startswith("partition[0].image: image overlaps the device tree area: it covers "
                              "IPA 0x40080000-0x40280000")


def test_elf_outside_ram(tmp_path):
    write_elf(tmp_path / "low.elf", [(0x1000, 0x1000, b"\0" * 8, 8)], 0x1000)
    message = error_of(tmp_path, partition(image="low.elf"))
    assert message.startswith("partition[0].image: image does not fit in the partition's RAM: "
                              "it covers IPA 0x1000-0x1008")


def test_elf_entry_outside_the_image(tmp_path):
    write_elf(tmp_path / "e.elf", [(0x40080000, 0x40080000, b"\0" * 8, 8)], 0x40100000)
    assert error_of(tmp_path, partition(image="e.elf")) == \
        "partition[0].image: entry point 0x40100000 is outside the image (0x40080000-0x40080008)"


def test_parse_size():
    assert parse_size(4096, "f") == 4096
    assert parse_size("64MiB", "f") == 64 * MiB
    assert parse_size(" 2 GiB ", "f") == 2 * GiB
    assert parse_size("8KiB", "f") == 8192
    assert parse_size("1TiB", "f") == TiB == 1 << 40
    assert parse_size("3\tTiB", "f") == 3 * TiB
    for bad in ("64", "1.5GiB", "MiB", "-4MiB", "1TB", "1 tib"):
        with pytest.raises(ConfigError):
            parse_size(bad, "f")


@pytest.mark.parametrize("text, shown", [
    # `text` is TOML source: its escapes keep the file ASCII.
    (r"\uff16\uff14MiB", "６４MiB"),        # fullwidth digits, which \d takes for 64
    (r"\u0664MiB", "٤MiB"),                 # an Arabic-Indic four
    (r"64MiB\n", r"64MiB\n"),               # a trailing newline, shown escaped on the one line
    (r"64\nMiB", r"64\nMiB"),
    (r"\n64MiB", r"\n64MiB"),
    (r"64MiB\r", r"64MiB\r"),
    (r"64\u00a0MiB", r"64\u00A0MiB"),       # a no-break space is not a blank either
])
def test_sizes_take_ascii_digits_and_blanks_only(tmp_path, stub_image, text, shown):
    # The message shows the value as a TOML string would, on its one line.
    assert error_of(tmp_path, partition(memory=None, raw=f'memory = "{text}"')) == \
        (f'partition[0].memory: "{shown}" is not a size (use bytes, or "N KiB", "N MiB", '
         f'"N GiB", "N TiB")')


def test_a_tebibyte_is_a_size_that_does_not_fit(tmp_path, stub_image):
    assert error_of(tmp_path, partition(memory="1TiB")) == \
        "partition[0].memory: must be at most 2 GiB (got 1 TiB)"
    assert error_of(tmp_path, partition(memory="1 TiB")) == \
        "partition[0].memory: must be at most 2 GiB (got 1 TiB)"
    assert error_of(tmp_path, '[board]\nmemory = "1TiB"\n' + partition()) == \
        ("board.memory: must be at most 3 GiB (got 1 TiB): board RAM starts at 1 GiB and must "
         "end by 4 GiB (QEMU virt with highmem=off)")
    assert error_of(tmp_path, partition(memory=TiB)) == \
        "partition[0].memory: must be at most 2 GiB (got 1 TiB)"


def test_too_much_partition_memory_is_said_before_its_alignment(tmp_path, stub_image):
    # 2049 MiB is not a multiple of 2 MiB either; the size is what to fix, shown rounded up.
    assert error_of(tmp_path, partition(memory="2049MiB")) == \
        "partition[0].memory: must be at most 2 GiB (got 2.1 GiB)"


def test_integer_sizes_still_work(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, f"[board]\nmemory = {3 * GiB}\n"
                                              + partition(memory=64 * MiB)))
    assert system.board.memory == 3 * GiB and system.partitions[0].memory == 64 * MiB


def test_format_size():
    assert format_size(64 * MiB) == "64 MiB"
    assert format_size(2 * GiB) == "2 GiB"
    assert format_size(GiB + GiB // 10 * 1) == "1.1 GiB"
    assert format_size(2 * GiB + 2 * MiB) == "2 GiB"
    assert format_size(2 * GiB + 2 * MiB, round_up=True) == "2.1 GiB"
    assert format_size(100) == "100 bytes"
    assert format_size(TiB) == "1 TiB"
    assert format_size(TiB + 2 * MiB, round_up=True) == "1.1 TiB"


def test_format_duration():
    assert format_duration(10_000) == "10 ms"
    assert format_duration(60_000_000) == "60 s"
    assert format_duration(60_001_000) == "60001 ms"
    assert format_duration(1500) == "1500 us"
    assert format_duration(0) == "0 us"


def run_cli(*args, cwd, timeout=60):
    return subprocess.run([sys.executable, LAUNCHER, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def test_cli_reports_a_used_core_in_one_line(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1]) + partition("b", cpus=[1]))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == ('tern: error: sys.toml: partition[1].cpus: core 1 is already used by '
                           'partition "rt"\n')


def test_cli_reports_an_unknown_key_in_one_line(tmp_path, stub_image):
    write_toml(tmp_path, partition(bogus=1))
    proc = run_cli("run", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "tern: error: sys.toml: partition[0].bogus: unknown key\n"


@pytest.mark.parametrize("make, kind", [
    (lambda path: write_image(path), "Image"),
    (lambda path: write_elf(path, [(0x4008_0000, 0x4008_0000, b"\0" * 64, 64)], 0x4008_0000),
     "ELF"),
    (lambda path: path.write_bytes(b"\x1f\x20\x03\xd5" * 64), "raw"),
])
def test_cli_check_says_which_format_it_saw(tmp_path, make, kind):
    make(tmp_path / "g.img")
    write_toml(tmp_path, partition(image="g.img"))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert rows[0].split()[0] == kind, proc.stdout
    assert "0x40080000-" in rows[0], proc.stdout
    assert ("no header: at RAM base + 0x80000" in rows[0]) == (kind == "raw"), proc.stdout


def test_cli_reports_a_missing_file(tmp_path):
    proc = run_cli("check", "absent.toml", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, "tern: error: absent.toml: no such file\n")


def test_cli_check_shows_device_regions(tmp_path, stub_image):
    write_toml(tmp_path, '[board]\npci = ["edu"]\n'
               + partition("rt", cpus=[1], devices=["pcie"], irq="direct"))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    ram, image, dtb, mmio, pio, ecam = lines[4:10]
    assert ram.startswith("rt ") and ram.endswith("RAM; cores 1; wfi native; irq direct; "
                                                  "pcie INTIDs 35-38")
    assert image.startswith("  Image ") and dtb.startswith("  dtb ")
    # The partition's device regions follow its RAM, image and device tree rows.
    assert mmio.split() == ["pcie", "mmio", "0x10000000-0x3eff0000", "751.9", "MiB",
                            "0x10000000-0x3eff0000", "device,", "pass-through"]
    assert pio.split() == ["pcie", "io", "0x3eff0000-0x3f000000", "64", "KiB",
                           "0x3eff0000-0x3f000000", "device,", "pass-through"]
    assert ecam.split() == ["pcie", "ecam", "0x3f000000-0x40000000", "16", "MiB",
                            "0x3f000000-0x40000000", "device,", "pass-through"]


def test_cli_check_prints_the_layout(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1], wfi="native") + partition("b", cpus=[2]))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("sys.toml: ok: 2 partitions on 4 x cortex-a53, 2 GiB RAM\n")
    assert "0x44000000-0x48000000" in out and "RAM; cores 1; wfi native" in out
    assert "0x48200000-0x4c200000" in out and "RAM; cores 2; wfi trap" in out
    assert "QEMU's own device tree" in out


def test_cli_check_json_has_the_layout(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1], wfi="native", bootargs='a="b"')
               + partition("b", cpus=[2]))
    proc = run_cli("check", "sys.toml", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["file"], doc["ok"], doc["findings"]) == ("sys.toml", True, [])
    lay = doc["layout"]
    assert (lay["board"]["cpus"], lay["board"]["cpu"], lay["board"]["memory"]) == \
        (4, "cortex-a53", 2 * GiB)
    rt, b = lay["partitions"]
    assert (rt["name"], rt["cores"], rt["wfi"], rt["bootargs"]) == ("rt", [1], "native", 'a="b"')
    assert rt["ram"] == {"hpa": 0x44000000, "size": 64 * MiB, "ipa": 0x40000000}
    assert (b["name"], b["cores"], b["wfi"], b["ram"]["hpa"]) == ("b", [2], "trap", 0x48200000)
    assert rt["pristine"]["image"]["size"] == rt["image"]["size"]
    assert {"region": "rt", "hpa": "0x44000000-0x48000000", "size": "64 MiB",
            "ipa": "0x40000000-0x44000000",
            "notes": "RAM; cores 1; wfi native"} in lay["rows"]
    assert lay["ram_used"]["start"] == lay["board"]["ram_base"] == 0x40000000


def test_cli_check_json_names_the_field_of_an_error(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1], memory="3MiB"))
    proc = run_cli("check", "sys.toml", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert (doc["ok"], doc["layout"]) == (False, None)
    assert doc["findings"] == [{"severity": "error", "field": "partition[0].memory",
                                "message": "must be a multiple of 2 MiB (got 3 MiB)"}]
    assert proc.stderr == ("tern: error: sys.toml: partition[0].memory: must be a multiple of "
                           "2 MiB (got 3 MiB)\n")


def test_cli_check_json_of_several_files(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1]))
    write_toml(tmp_path, "[board]\ncpus = 99\n" + partition("rt", cpus=[1]), name="bad.toml")
    proc = run_cli("check", "sys.toml", "bad.toml", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False
    good, bad = doc["files"]
    assert good["ok"] and good["layout"]["partitions"][0]["name"] == "rt"
    assert (bad["file"], bad["findings"][0]["field"]) == ("bad.toml", "board.cpus")


def example_with_stand_ins(repo_root, example, tmp_path):
    """examples/EXAMPLE copied under tmp_path, with stand-ins at the paths of the images and
    initrds it names (the guests and `make linux`'s kernels may not be built yet)."""
    from tern_test_files import write_riscv_image
    text = (repo_root / "examples" / example).read_text()
    (tmp_path / "examples").mkdir()
    path = write_toml(tmp_path / "examples", text, example)
    for name in ("lat.img", "probe.img", "vback.img", "noise.img"):
        write_image(tmp_path / "guests" / "build" / "arm64" / name)
    for name in ("lat.img", "vback.img", "noise.img"):
        write_riscv_image(tmp_path / "guests" / "build" / "riscv64" / name)
    (tmp_path / "build").mkdir(exist_ok=True)
    (tmp_path / "build" / "virtio-disk.img").write_bytes(bytes(1 << 20))
    linux = tmp_path / "build" / "linux-riscv64"
    write_riscv_image(linux / "Image", image_size=0x23a0000)
    (linux / "initramfs.cpio.gz").write_bytes(b"\x1f\x8b" + bytes(62))
    linux = tmp_path / "build" / "linux"
    write_image(linux / "Image", image_size=0x2020000)
    (linux / "initramfs.cpio.gz").write_bytes(b"\x1f\x8b" + bytes(62))
    return path


@pytest.mark.parametrize("example", ["rt.toml", "two.toml", "edu-direct.toml",
                                     "riscv64-rt.toml", "linux-riscv64.toml",
                                     "linux-channel.toml", "linux-channel-riscv64.toml",
                                     "virtio-blk.toml", "virtio-blk-riscv64.toml",
                                     "virtio-net.toml", "pools.toml", "pools-rtds.toml",
                                     "pools-riscv64.toml"])
def test_examples_are_valid_apart_from_missing_images(repo_root, example, tmp_path):
    path = example_with_stand_ins(repo_root, example, tmp_path)
    system = load_system(path)
    place(system)
    if example == "virtio-net.toml":
        (net,) = system.virtio
        assert (net.name, net.device, net.frontend, net.backend) == \
            ("net0", "net", "client", "server")
        assert "tern.run=vio-net-backend" in system.partitions[0].bootargs
        return
    assert system.partitions[0].cpus == (1,) and system.partitions[0].wfi_native
    if example.startswith("virtio-blk"):
        (disk,) = system.virtio
        assert (disk.name, disk.device, disk.frontend, disk.backend) == \
            ("disk0", "blk", "linux", "store")
        assert "tern.run=blk" in system.partitions[1].bootargs
    if example == "two.toml":
        assert system.partitions[1].cpus == (2,)
    if example == "pools.toml":
        frame, credit = system.pools
        assert (frame.scheduler, frame.cpus, credit.scheduler, credit.cpus) == \
            ("arinc653", (2,), "credit", (3,))
        assert [p.pool for p in system.partitions] == [None, "frame", "frame", "shared", "shared"]
    if example == "pools-rtds.toml":
        (rt,) = system.pools
        assert (rt.scheduler, rt.cpus) == ("rtds", (2,))
        assert [(p.pool, p.budget_us, p.period_us) for p in system.partitions] == \
            [(None, 0, 0), ("rt", 2000, 10000), ("rt", 6000, 10000)]
    if example == "pools-riscv64.toml":
        assert system.board.arch == "riscv64"
        assert [(q.name, q.scheduler) for q in system.pools] == \
            [("rt", "null"), ("frame", "arinc653"), ("shared", "credit")]
        assert [p.irq_direct for p in system.partitions] == [True, False, False, False, False]
        assert [(p.weight, p.cap) for p in system.partitions[3:]] == [(1024, 50), (256, 0)]
    if example == "edu-direct.toml":
        assert system.board.cpus == 2 and models(system) == ("edu",)
        (rt,) = system.partitions
        assert (rt.name, rt.devices, rt.irq_direct) == ("rt", ("pcie",), True)
        assert rt.bootargs == "lat.tests=edu-wfi,edu-busy lat.samples=200"
        assert rt.image_path.name == "lat.img"
    if example.startswith("linux-channel"):
        (channel,) = system.channels
        assert (channel.name, channel.members) == ("msg", ("rt", "linux"))
        assert "tern.run=chan tern.chan.count=100" in system.partitions[1].bootargs
        assert "lat.tests=chan lat.chan=msg" in system.partitions[0].bootargs
    if example == "riscv64-rt.toml":
        assert system.board.arch == "riscv64"
        (rt,) = system.partitions
        assert rt.irq_direct and rt.image.arch == "riscv64"
    if example == "linux-riscv64.toml":
        assert system.board.arch == "riscv64"
        rt, linux = system.partitions
        assert rt.irq_direct and linux.irq_direct and linux.wfi_native
        assert linux.cpus == (2, 3) and linux.image.arch == "riscv64"
        assert linux.initrd_path.name == "initramfs.cpio.gz"
        assert "tern.run=cyclictest" in linux.bootargs


def test_cli_checks_the_riscv64_linux_example(repo_root, tmp_path):
    path = example_with_stand_ins(repo_root, "linux-riscv64.toml", tmp_path)
    proc = run_cli("check", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok: 2 partitions on 4 x rv64, 1 GiB RAM\n")
    assert "RAM; cores 2,3; wfi native; irq direct" in proc.stdout
    assert "named in /chosen" in proc.stdout                         # the initrd


def test_direct_interrupts_default_to_native_wfi(tmp_path, stub_image):
    (p,) = load_system(write_toml(tmp_path, partition(irq="direct"))).partitions
    assert p.irq_direct and p.wfi_native


@pytest.mark.parametrize("extra, expected", [
    ('irq = "direct"\nwfi = "trap"', 'partition[0].wfi: irq = "direct" needs wfi = "native"'),
    ('irq = "fast"', 'partition[0].irq: must be "trap" or "direct" (got "fast")'),
])
def test_irq_mode_errors(tmp_path, stub_image, extra, expected):
    assert error_of(tmp_path, partition(raw=extra)) == expected


def test_pci_virtio_blk_with_a_disk(tmp_path, stub_image):
    (tmp_path / "disk.img").write_bytes(bytes(512))
    system = load_system(write_toml(tmp_path, '[board]\npci = ["edu", {model = "virtio-blk", '
                                              'disk = "disk.img"}, "virtio-net"]\n' + partition()))
    edu, blk, net = system.board.pci
    assert (edu.model, edu.disk, blk.model, net.model, net.disk) == \
        ("edu", None, "virtio-blk", "virtio-net", None)
    assert blk.disk == tmp_path / "disk.img"


@pytest.mark.parametrize("entry, message", [
    ('"virtio-blk"', 'board.pci[0].disk: virtio-blk needs a disk image (disk = "FILE")'),
    ('{model = "virtio-blk", disk = "nope.img"}', "board.pci[0].disk: no such file: "),
    ('{model = "edu", disk = "disk.img"}', "board.pci[0].disk: edu has no disk"),
    ('{model = "virtio-blk", disk = "disk.img", ro = true}',
     "board.pci[0].ro: unknown key (expected model and disk)"),
])
def test_pci_entry_errors(tmp_path, stub_image, entry, message):
    (tmp_path / "disk.img").write_bytes(bytes(512))
    with pytest.raises(ConfigError) as e:
        load_system(write_toml(tmp_path, f"[board]\npci = [{entry}]\n" + partition()))
    assert message in str(e.value)


def make_directory(path):
    path.mkdir(parents=True)


def make_fifo(path):
    os.mkfifo(path)


@pytest.mark.parametrize("make, problem", [(make_directory, "is a directory, not a file"),
                                           (make_fifo, "is a FIFO, not a file")],
                         ids=["directory", "fifo"])
@pytest.mark.parametrize("field, text", [
    ("partition[0].image", partition(image="thing")),
    ("partition[0].initrd", partition(initrd="thing")),
    ("board.pci[0].disk", '[board]\npci = [{model = "virtio-blk", disk = "thing"}]\n'
                          + partition()),
], ids=["image", "initrd", "disk"])
def test_a_path_that_is_not_a_regular_file(tmp_path, stub_image, make, problem, field, text):
    # `tern check` in a child with a deadline: opening the FIFO would wait for a writer forever.
    make(tmp_path / "thing")
    write_toml(tmp_path, text)
    proc = run_cli("check", "sys.toml", cwd=tmp_path, timeout=20)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"tern: error: sys.toml: {field}: {problem}: thing\n"


def test_a_link_to_a_directory_is_a_directory(tmp_path, stub_image):
    (tmp_path / "guests" / "link.img").symlink_to(tmp_path / "guests" / "build")
    assert error_of(tmp_path, partition(image="guests/link.img")) == \
        f"partition[0].image: is a directory, not a file: {tmp_path}/guests/link.img"


def test_a_device_is_not_a_regular_file(tmp_path, stub_image):
    assert error_of(tmp_path, partition(initrd="/dev/null")) == \
        "partition[0].initrd: is a character device, not a file: /dev/null"


def test_a_path_through_a_file_is_no_such_file(tmp_path, stub_image):
    assert error_of(tmp_path, partition(image="guests/build/arm64/lat.img/x")) == \
        f"partition[0].image: no such file: {tmp_path}/guests/build/arm64/lat.img/x"


def test_restart_policy_defaults(tmp_path, stub_image):
    (p,) = load_system(write_toml(tmp_path, partition())).partitions
    # The bare board's behaviour: an access outside the partition is the guest's bus error.
    assert (p.on_fault, p.max_restarts, p.restart_backoff_us) == ("inject", 0, 0)


@pytest.mark.parametrize("extra, expected", [
    ('on_fault = "stop"', ("stop", 0, 0)),
    ('on_fault = "inject"', ("inject", 0, 0)),
    ('on_fault = "restart"', ("restart", 0, 0)),
    ("max_restarts = 0", ("inject", 0, 0)),
    ("max_restarts = 1", ("inject", 1, 0)),
    ("max_restarts = 1000000", ("inject", 1_000_000, 0)),
    ("restart_backoff = 0", ("inject", 0, 0)),
    ('restart_backoff = "0 ms"', ("inject", 0, 0)),
    ('restart_backoff = "250us"', ("inject", 0, 250)),
    ('restart_backoff = "250 us"', ("inject", 0, 250)),
    ('restart_backoff = "10ms"', ("inject", 0, 10_000)),
    ('restart_backoff = "10 ms"', ("inject", 0, 10_000)),
    ('restart_backoff = "10\\t ms"', ("inject", 0, 10_000)),
    ('restart_backoff = "007ms"', ("inject", 0, 7_000)),
    ('restart_backoff = "2s"', ("inject", 0, 2_000_000)),
    ('restart_backoff = "60 s"', ("inject", 0, 60_000_000)),
    ('restart_backoff = "60000 ms"', ("inject", 0, 60_000_000)),
    ('restart_backoff = "60000000 us"', ("inject", 0, 60_000_000)),
    ('on_fault = "restart"\nmax_restarts = 5\nrestart_backoff = "10ms"',
     ("restart", 5, 10_000)),
])
def test_restart_policy_accepted(tmp_path, stub_image, extra, expected):
    (p,) = load_system(write_toml(tmp_path, partition(raw=extra))).partitions
    assert (p.on_fault, p.max_restarts, p.restart_backoff_us) == expected


NOT_A_DURATION = '(use "N us", "N ms" or "N s")'
MAX_RESTARTS_RANGE = "must be a whole number from 0 (no limit) to 1000000"


@pytest.mark.parametrize("extra, expected", [
    ('on_fault = "reboot"', 'partition[0].on_fault: must be "inject", "stop" or "restart" (got "reboot")'),
    ('on_fault = "Restart"',
     'partition[0].on_fault: must be "inject", "stop" or "restart" (got "Restart")'),
    ('on_fault = ""', 'partition[0].on_fault: must be "inject", "stop" or "restart" (got "")'),
    ("on_fault = 1", 'partition[0].on_fault: must be "inject", "stop" or "restart" (got 1)'),
    ("on_fault = true", 'partition[0].on_fault: must be "inject", "stop" or "restart" (got true)'),
    ('on_fault = ["restart"]',
     'partition[0].on_fault: must be "inject", "stop" or "restart" (got ["restart"])'),
    ("max_restarts = -1", f"partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got -1)"),
    ("max_restarts = 1000001", f"partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got 1000001)"),
    ("max_restarts = true", f"partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got true)"),
    ("max_restarts = false", f"partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got false)"),
    ("max_restarts = 2.0", f"partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got 2.0)"),
    ('max_restarts = "5"', f'partition[0].max_restarts: {MAX_RESTARTS_RANGE} (got "5")'),
    ('restart_backoff = "5 min"',
     f'partition[0].restart_backoff: "5 min" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "10"',
     f'partition[0].restart_backoff: "10" is not a duration {NOT_A_DURATION}'),
    ("restart_backoff = 10", f"partition[0].restart_backoff: 10 is not a duration {NOT_A_DURATION}"),
    ("restart_backoff = -1", f"partition[0].restart_backoff: -1 is not a duration {NOT_A_DURATION}"),
    ("restart_backoff = 0.0",
     f"partition[0].restart_backoff: 0.0 is not a duration {NOT_A_DURATION}"),
    ("restart_backoff = false",
     f"partition[0].restart_backoff: false is not a duration {NOT_A_DURATION}"),
    ('restart_backoff = "1.5 s"',
     f'partition[0].restart_backoff: "1.5 s" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "-5 ms"',
     f'partition[0].restart_backoff: "-5 ms" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "10 MS"',
     f'partition[0].restart_backoff: "10 MS" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "10 \\u00b5s"',
     f'partition[0].restart_backoff: "10 µs" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "\\uff11\\uff10ms"',
     f'partition[0].restart_backoff: "１０ms" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "10ms\\n"',
     f'partition[0].restart_backoff: "10ms\\n" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "ms"',
     f'partition[0].restart_backoff: "ms" is not a duration {NOT_A_DURATION}'),
    ('restart_backoff = "61 s"', "partition[0].restart_backoff: must be at most 60 s (got 61 s)"),
    ('restart_backoff = "60001 ms"',
     "partition[0].restart_backoff: must be at most 60 s (got 60001 ms)"),
    ('restart_backoff = "60000001us"',
     "partition[0].restart_backoff: must be at most 60 s (got 60000001 us)"),
])
def test_restart_policy_errors(tmp_path, stub_image, extra, expected):
    assert error_of(tmp_path, partition(raw=extra)) == expected


def test_restart_policy_error_names_its_partition(tmp_path, stub_image):
    text = partition("rt", cpus=[1]) + partition("b", cpus=[2], on_fault="reboot")
    assert error_of(tmp_path, text) == \
        'partition[1].on_fault: must be "inject", "stop" or "restart" (got "reboot")'


def test_cli_check_shows_a_restart_policy_only_when_set(tmp_path, stub_image):
    write_toml(tmp_path, partition("rt", cpus=[1], wfi="native")
               + partition("b", cpus=[2], on_fault="restart", max_restarts=5,
                           restart_backoff="10ms")
               + partition("c", cpus=[3], restart_backoff="1500 us"))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if "RAM; cores" in line}
    assert rows["rt"].endswith("RAM; cores 1; wfi native")
    assert rows["b"].endswith("RAM; cores 2; wfi trap; on_fault restart; max_restarts 5; "
                              "restart_backoff 10 ms")
    assert rows["c"].endswith("RAM; cores 3; wfi trap; restart_backoff 1500 us")


# riscv64: [board] arch = "riscv64" selects QEMU's riscv virt board and riscv64 partitions.
RISCV64_BOARD = '[board]\narch = "riscv64"\n'


@pytest.fixture
def riscv_image(tmp_path):
    """A minimal RISC-V Image at guests/build/riscv64/lat.img under tmp_path."""
    from tern_test_files import write_riscv_image
    return write_riscv_image(tmp_path / "guests" / "build" / "riscv64" / "lat.img")


def riscv_partition(name="rt", cpus=(1,), memory="64MiB", **keys):
    return partition(name, cpus, memory, "guests/build/riscv64/lat.img", **keys)


def test_arm64_is_the_default_board(tmp_path, stub_image):
    system = load_system(write_toml(tmp_path, partition()))
    assert system.board.arch == "arm64" and system.board.virt.ram_base == 0x4000_0000


def test_riscv64_system_gets_its_board_defaults(tmp_path, riscv_image):
    system = load_system(write_toml(tmp_path, RISCV64_BOARD + riscv_partition()))
    board = system.board
    assert (board.arch, board.cpus, board.cpu, board.memory) == ("riscv64", 4, "rv64", 2 * GiB)
    (p,) = system.partitions
    # Trap-less by default: the vCPU's own interrupt file and Sstc, its WFI on the core.
    assert p.irq_direct and p.wfi_native
    assert (p.image.arch, p.image.kind) == ("riscv64", "Image")


@pytest.mark.parametrize("irq, wfi", [("direct", "native"), ("direct", "trap"),
                                      ("trap", "native"), ("trap", "trap")])
def test_riscv64_takes_any_irq_and_wfi(tmp_path, riscv_image, irq, wfi):
    (p,) = load_system(write_toml(tmp_path, RISCV64_BOARD
                                  + riscv_partition(irq=irq, wfi=wfi))).partitions
    assert (p.irq_direct, p.wfi_native) == (irq == "direct", wfi == "native")


def test_riscv64_trap_partition_waits_in_the_hypervisor_by_default(tmp_path, riscv_image):
    (p,) = load_system(write_toml(tmp_path, RISCV64_BOARD + riscv_partition(irq="trap"))).partitions
    assert not p.irq_direct and not p.wfi_native


def test_riscv64_takes_pci_devices_on_its_board(tmp_path, riscv_image):
    # As `tern native` does; here no partition owns the bridge they sit behind.
    system = load_system(write_toml(tmp_path, '[board]\narch = "riscv64"\npci = ["edu"]\n'
                                    + riscv_partition(devices=[])))
    assert models(system) == ("edu",) and system.partitions[0].devices == ()
    assert not system.partitions[0].unconfined_dma


def test_riscv64_partition_owns_pcie_when_it_accepts_unconfined_dma(tmp_path, riscv_image):
    system = load_system(write_toml(tmp_path, '[board]\narch = "riscv64"\npci = ["edu"]\n'
                                    + riscv_partition(devices=["pcie"], unconfined_dma=True)
                                    + riscv_partition("b", cpus=[2])))
    rt, b = system.partitions
    assert (rt.devices, rt.unconfined_dma) == (("pcie",), True)
    assert (b.devices, b.unconfined_dma) == ((), False)


@pytest.mark.parametrize("extra", ["unconfined_dma = true", "unconfined_dma = false",
                                   'devices = []\nunconfined_dma = true'])
def test_riscv64_unconfined_dma_without_a_device(tmp_path, riscv_image, extra):
    # Accepting a risk nothing brings is harmless: the flag goes to the blob, and that is all.
    (p,) = load_system(write_toml(tmp_path, RISCV64_BOARD + riscv_partition(raw=extra))).partitions
    assert p.devices == () and p.unconfined_dma == extra.endswith("true")


def test_arm64_takes_unconfined_dma_but_the_smmu_still_confines(tmp_path, stub_image):
    # arm64's board has the SMMUv3: pcie needs no unconfined_dma there, and the key is
    # accepted (the blob carries it) though it changes nothing on that board.
    system = load_system(write_toml(tmp_path, partition(devices=["pcie"])
                                    + partition("b", cpus=[2], devices=[], unconfined_dma=True)))
    rt, b = system.partitions
    assert (rt.devices, rt.unconfined_dma) == (("pcie",), False)
    assert (b.devices, b.unconfined_dma) == ((), True)
    assert system.board.virt.iommu and not layout.QEMU_VIRT_RISCV64.iommu


@pytest.mark.parametrize("text, expected", [
    ('[board]\narch = "x86_64"\n' + partition(),
     'board.arch: must be "arm64" or "riscv64" (got "x86_64")'),
    ("[board]\narch = 64\n" + partition(), 'board.arch: must be "arm64" or "riscv64" (got 64)'),
    ('[board]\narch = ["riscv64"]\n' + partition(),
     'board.arch: must be "arm64" or "riscv64" (got ["riscv64"])'),
    (RISCV64_BOARD + 'cpu = "cortex-a53"\n' + riscv_partition(),
     "board.cpu: not for a riscv64 board, whose harts are always QEMU's rv64 (remove the key)"),
    (RISCV64_BOARD + 'cpu = "rv64"\n' + riscv_partition(),
     "board.cpu: not for a riscv64 board, whose harts are always QEMU's rv64 (remove the key)"),
    (RISCV64_BOARD + 'memory = "3GiB"\n' + riscv_partition(),
     "board.memory: must be at most 2 GiB (got 3 GiB): board RAM starts at 2 GiB and must end "
     "by 4 GiB (the riscv64 hypervisor's limit)"),
    (RISCV64_BOARD + 'memory = "64MiB"\n' + riscv_partition(),
     "board.memory: must be at least 128 MiB (got 64 MiB)"),
    # No IOMMU on the riscv board: owning the PCIe bridge needs unconfined_dma = true.
    (RISCV64_BOARD + riscv_partition(devices=["pcie"]),
     'partition[0].devices: "pcie" can do DMA, and the riscv64 board has no IOMMU: a device '
     "the partition owns can read and write all of the board's memory (other partitions', "
     "the hypervisor's); unconfined_dma = true accepts that"),
    (RISCV64_BOARD + riscv_partition(devices=["pcie"], unconfined_dma=False),
     'partition[0].devices: "pcie" can do DMA, and the riscv64 board has no IOMMU: a device '
     "the partition owns can read and write all of the board's memory (other partitions', "
     "the hypervisor's); unconfined_dma = true accepts that"),
    (RISCV64_BOARD + riscv_partition(unconfined_dma=True, devices=["pcie", "pcie"]),
     'partition[0].devices: "pcie" is listed twice'),
    (RISCV64_BOARD + riscv_partition(devices=["pcie"], unconfined_dma=True)
     + riscv_partition("b", cpus=[2], devices=["pcie"], unconfined_dma=True),
     'partition[1].devices: "pcie" is already given to partition "rt"'),
    (RISCV64_BOARD + riscv_partition(devices=["usb"], unconfined_dma=True),
     'partition[0].devices: unknown device "usb" (known: pcie)'),
    (RISCV64_BOARD + riscv_partition(devices="pcie"),
     'partition[0].devices: must be a list of board device names, like ["pcie"] (got "pcie")'),
    (RISCV64_BOARD + riscv_partition(devices=["pcie"], unconfined_dma="yes"),
     'partition[0].unconfined_dma: must be true or false (got "yes")'),
    (RISCV64_BOARD + riscv_partition(unconfined_dma=1),
     "partition[0].unconfined_dma: must be true or false (got 1)"),
    (RISCV64_BOARD + riscv_partition(unconfined_dma=["pcie"]),
     'partition[0].unconfined_dma: must be true or false (got ["pcie"])'),
    (RISCV64_BOARD + riscv_partition(cpus=[4]),
     "partition[0].cpus: core 4 is out of range (board has 4 cores)"),
    (RISCV64_BOARD + riscv_partition(irq="msi"),
     'partition[0].irq: must be "trap" or "direct" (got "msi")'),
    # RAM 0x8400_0000-0x87c0_0000 fits below QEMU's device tree at 0x87e0_0000; the
    # pristine copies do not.
    (RISCV64_BOARD + 'memory = "128MiB"\n' + riscv_partition(memory="60MiB"),
     "partition[0].image: partitions need 130 MiB but the board has 128 MiB"),
])
def test_riscv64_config_errors(tmp_path, riscv_image, text, expected):
    assert error_of(tmp_path, text) == expected


def test_arm64_image_refused_on_a_riscv64_board(tmp_path, stub_image):
    message = error_of(tmp_path, RISCV64_BOARD + partition())
    assert message == (f"partition[0].image: {tmp_path}/guests/build/arm64/lat.img is an arm64 Image, "
                       "not riscv64")
    write_elf(tmp_path / "a.elf", [(0x8020_0000, 0x8020_0000, b"\0" * 8, 8)], 0x8020_0000)
    assert error_of(tmp_path, RISCV64_BOARD + partition(image="a.elf")) == \
        f"partition[0].image: {tmp_path}/a.elf is an arm64 ELF, not riscv64"


def test_a_flat_binary_on_a_riscv64_board_goes_where_the_firmware_enters_a_kernel(tmp_path):
    # QEMU's riscv virt loads a headerless -kernel at the kernel start address after the
    # firmware, 0x8020_0000, as a partition's Image goes.
    (tmp_path / "flat.img").write_bytes(b"\x13" * 256)      # a flat binary: no header
    system = load_system(write_toml(tmp_path, RISCV64_BOARD + partition(image="flat.img")))
    assert (system.partitions[0].image.kind, system.partitions[0].image.arch) == \
        ("raw", "riscv64")
    pl = place(system).partitions[0]
    assert pl.image_ipa == pl.entry_ipa == 0x8020_0000


def test_riscv64_elf_with_a_segment_outside_ram(tmp_path):
    # ld.lld's default layout loads the ELF headers at 0x10000, below RAM at 0x8000_0000.
    from tern_test_files import EM_RISCV
    write_elf(tmp_path / "g.elf", [(0x1_0000, 0x1_0000, b"\0" * 0x190, 0x190),
                                   (0x8020_0000, 0x8020_0000, b"\x13" * 16, 16)],
              0x8020_0000, machine=EM_RISCV)
    assert error_of(tmp_path, RISCV64_BOARD + partition(memory="2GiB", image="g.elf")) == \
        (f"partition[0].image: {tmp_path}/g.elf needs 2.1 GiB, more than the partition's "
         "2 GiB of RAM")
    write_elf(tmp_path / "g.elf", [(0x7FF0_0000, 0x7FF0_0000, b"\0" * 0x190, 0x190),
                                   (0x8020_0000, 0x8020_0000, b"\x13" * 16, 16)],
              0x8020_0000, machine=EM_RISCV)
    assert error_of(tmp_path, RISCV64_BOARD + partition(image="g.elf")) == (
        "partition[0].image: image does not fit in the partition's RAM: it covers IPA "
        "0x7ff00000-0x80200010, but RAM is 0x80000000-0x84000000 and the device tree takes "
        "0x83e00000-0x84000000")


def test_cli_check_prints_the_riscv64_layout(tmp_path, riscv_image):
    write_toml(tmp_path, '[board]\narch = "riscv64"\ncpus = 3\nmemory = "1GiB"\n'
               + riscv_partition("rt", cpus=[1, 2], memory="32MiB")
               + riscv_partition("b", cpus=[0], memory="16MiB", irq="trap"))
    proc = run_cli("check", "sys.toml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "sys.toml: ok: 2 partitions on 3 x rv64, 1 GiB RAM"
    rows = [line.split() for line in lines[3:-1]]
    assert rows[0] == ["hypervisor", "0x80000000-0x84000000", "64", "MiB", "-", "OpenSBI", "at",
                       "0x80000000,", "image", "at", "0x80200000,", "config", "blob", "at",
                       "0x83f00000"]
    assert rows[1] == ["rt", "0x84000000-0x86000000", "32", "MiB", "0x80000000-0x82000000",
                       "RAM;", "cores", "1,2;", "wfi", "native;", "irq", "direct"]
    assert rows[2][:3] == ["Image", "0x84200000-0x84210000", "64"]
    assert rows[2][4:] == ["0x80200000-0x80210000", "entry", "0x80200000"]
    assert rows[3] == ["dtb", "0x85e00000-0x86000000", "2", "MiB", "0x81e00000-0x82000000",
                       "a1", "at", "entry"]
    assert rows[4][:2] == ["b", "0x86000000-0x87000000"]
    assert rows[4][-4:] == ["cores", "0;", "wfi", "trap"]
    assert rows[-1][:2] == ["QEMU's", "dtb"] and rows[-1][2] == "0xbfe00000-0xc0000000"
    assert lines[-1].startswith("RAM used: ") and lines[-1].endswith("(0x80000000-0x87800000)")


def test_manager_key(tmp_path, stub_image):
    """manager = true marks the partition that may call tern ctl's operations; false by default."""
    system = load_system(write_toml(tmp_path, "[board]\ncpus = 4\n"
                                    + partition("m", cpus=[1], manager=True)
                                    + partition("b", cpus=[2])))
    m, b = system.partitions
    assert m.manager and not b.manager


def test_manager_must_be_a_boolean(tmp_path, stub_image):
    assert error_of(tmp_path, partition(manager="yes")).startswith(
        "partition[0].manager: must be true or false")
