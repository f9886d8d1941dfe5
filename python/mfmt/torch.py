"""``mfmt.torch``: safetensors.torch's functions over every format mfmt
reads (``from mfmt.torch import load_file, save_file``), without
``torch.load``: nothing in the file is executed."""

from ._ops import save_file as _save_file
from ._safe import safe_open

__all__ = ["load", "load_file", "save_file"]


def load_file(filename, device="cpu", *, allow_unsafe=False):
    """{name: torch.Tensor} on `device` (copies: torch has no read-only
    tensors); BF16 and FP8 keep their torch dtypes."""
    with safe_open(filename, framework="pt", device=device, allow_unsafe=allow_unsafe) as f:
        return {name: f.get_tensor(name) for name in f.model.keys()}


def load(data, device="cpu", *, allow_unsafe=False):
    """load_file for a model file's bytes in memory, as
    safetensors.torch.load(data) (any single-file format mfmt reads)."""
    with safe_open(None, framework="pt", device=device, allow_unsafe=allow_unsafe,
                   _data=data) as f:
        return {name: f.get_tensor(name) for name in f.model.keys()}


def save_file(tensors, filename, metadata=None):
    """Write {name: torch.Tensor} to a safetensors file, atomically
    (bfloat16 and float8 tensors keep their dtypes)."""
    _save_file(tensors, filename, metadata)
