#!/usr/bin/python3
"""../shared/tools/convref-new/run_convert.py for F8_E4M3 safetensors (torch 1.13 has
no float8 dtype):

    CONVREF_LLAMA_CPP=TREE convref_f8.py SHARED/tools/convref-new/run_convert.py [run_convert args...]

The converter (llama.cpp ecbcb7ea, unmodified) reads an F8_E4M3 tensor as
torch.from_numpy(bytes).view(torch.float8_e4m3fn) and its fp8 dequant_model
computes weight.float() * scale.  Every e4m3fn value is exactly a float32, so
this wrapper gives the converter the float32 tensor weight.float() would
return: torch.float8_e4m3fn is torch.float32 here (the converter's
_dtype_str_map then reads "F8_E4M3" as float32; its byteswap table is only used
on big-endian hosts), and gguf.utility.LocalTensor.mmap_bytes of an F8_E4M3
tensor returns the float32 bytes of its values (the e4m3fn table: bias 7, no
infinities, S.1111.111 NaN).  .float() of a float32 tensor is the tensor itself,
so dequant_simple multiplies the same numbers in the same dtype.  Nothing else
is touched; run_convert.py then runs as usual."""
import os, runpy, sys
import numpy as np
import torch

sys.dont_write_bytecode = True  # nothing written into the repository
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gap_variants import e4m3fn_table  # noqa: E402  (the 256 codes' values)

torch.float8_e4m3fn = torch.float32
tree = os.environ.get("CONVREF_LLAMA_CPP", "/tmp/convref-new/tree")
sys.path.insert(1, os.path.join(tree, "gguf-py"))
import gguf.utility  # noqa: E402  (the converter's own gguf-py: the same module it imports)

_F8 = e4m3fn_table().astype(np.float32)
_mmap_bytes = gguf.utility.LocalTensor.mmap_bytes

def mmap_bytes(self):
    raw = _mmap_bytes(self)
    if self.dtype == "F8_E4M3":
        return _F8[np.asarray(raw)].view(np.uint8)
    return raw

gguf.utility.LocalTensor.mmap_bytes = mmap_bytes
run = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(run, run_name="__main__")
