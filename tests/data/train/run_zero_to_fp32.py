"""Runs DeepSpeed's own utils/zero_to_fp32.py (given by path; fetched from
microsoft/DeepSpeed, never committed here) on a checkpoint folder and saves
the consolidated state dict with torch.save: the reference mfmt's merge is
compared with. Shims: ds_stubs (DeepSpeed's pickled classes, its logger and
checkpoint constants, tqdm), and torch.load without the mmap= argument that
torch 1.13 lacks.

usage: python3 run_zero_to_fp32.py ZERO_TO_FP32_PY CKPT_DIR OUT.pt [--exclude-frozen-parameters]
"""
import importlib.util
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ds_stubs  # noqa: E402,F401

_load = torch.load


def load_without_mmap(*a, mmap=None, **k):
    return _load(*a, **k)


torch.load = load_without_mmap
spec = importlib.util.spec_from_file_location("zero_to_fp32", sys.argv[1])
z = importlib.util.module_from_spec(spec)
spec.loader.exec_module(z)
sd = z.get_fp32_state_dict_from_zero_checkpoint(
    sys.argv[2], exclude_frozen_parameters="--exclude-frozen-parameters" in sys.argv)
torch.save(sd, sys.argv[3])
for k, v in sd.items():
    print(k, tuple(v.shape), v.dtype)
