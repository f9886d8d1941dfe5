"""Seeds for fuzz_train (fuzz/fuzz_train.c's input format) from the test
checkpoints: python3 fuzz/train_seeds.py OUTDIR (run from the repository)."""
import os
import struct
import sys

CASES = [(0, "tests/data/train/dcp113/dcp", "dcp113"), (0, "tests/data/train/dcp2x/dcp2", "dcp2x"),
         (1, "tests/data/train/deepspeed/zero1/global_step10", "zero1"),
         (1, "tests/data/train/deepspeed/zero2/global_step10", "zero2"),
         (1, "tests/data/train/deepspeed/zero3/global_step10", "zero3"),
         (2, "tests/data/train/megatron/megatron_dist/iter_0000100", "torch_dist")]

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for kind, d, name in CASES:
    b = bytes([kind])
    for f in sorted(os.listdir(d))[:64]:
        data = open(os.path.join(d, f), "rb").read()
        b += f.encode() + b"\n" + struct.pack("<I", len(data)) + data
    with open(os.path.join(out, name + ".bin"), "wb") as fh:
        fh.write(b)
    print(name, len(b))
