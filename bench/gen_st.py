"""A safetensors writer for the bench generators (gen_gptq.py, gen_fp8.py):
write(path, tensors) with tensors a list of (name, dtype, shape, make),
make() giving the tensor's numpy array (called in order, after the header
is written, so only one tensor is in memory at a time)."""
import json
import struct

import numpy as np

SIZES = {"F32": 4, "I32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "U8": 1, "I8": 1}


def write(path, tensors):
    header, off = {}, 0
    for name, dt, shape, _ in tensors:
        nb = int(np.prod(shape)) * SIZES[dt]
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + nb]}
        off += nb
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, _, make in tensors:
            f.write(make().tobytes())
    return off
