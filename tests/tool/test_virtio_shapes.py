"""layout.py's VirtIO device shapes agree with hypervisor/include/tern/virtio_channel.h."""

import re

from tern import layout


def header_defines(repo_root):
    header = repo_root / "hypervisor" / "include" / "tern" / "virtio_channel.h"
    assert header.is_file(), "hypervisor/include/tern/virtio_channel.h moved"
    return {name: int(value, 0) for name, value in
            re.findall(r"^#define\s+(VIO_\w+)\s+(0x[0-9a-fA-F]+|\d+)u?\b", header.read_text(),
                       re.M)}


def test_shapes_match_virtio_channel_h(repo_root):
    c = header_defines(repo_root)
    assert c["VIO_DATA"] == layout.VIO_DATA
    assert c["VIO_VSOCK_CID_FIRST"] == layout.VIO_VSOCK_CID_FIRST
    for device, shape in layout.VIRTIO_SHAPES.items():
        prefix = f"VIO_{device.upper()}_"
        assert (c[prefix + "QUEUES"], c[prefix + "QUEUE_SIZE"], c[prefix + "SLOT_SIZE"]) == \
            (shape.queues, shape.queue_size, shape.slot_size), device
    # Every device type the header shapes is one the tool knows.
    shaped = {m.group(1).lower() for name in c
              if (m := re.fullmatch(r"VIO_(\w+)_QUEUES", name))}
    assert shaped == set(layout.VIRTIO_SHAPES)


def test_channel_sizes_by_device():
    assert layout.VIRTIO_SHAPES["blk"].channel_size == 0x5000 + 32 * 0x8000 == 0x10_5000
    assert layout.VIRTIO_SHAPES["net"].channel_size == 0x5000 + 128 * 0x800 == 0x4_5000
    assert layout.VIRTIO_SHAPES["console"].channel_size == 0x5000 + 128 * 0x1000 == 0x8_5000
    assert layout.VIRTIO_SHAPES["vsock"].channel_size == 0x5000 + 96 * 0x2000 == 0xC_5000
