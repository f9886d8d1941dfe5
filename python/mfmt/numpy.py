"""``mfmt.numpy``: safetensors.numpy's functions over every format mfmt
reads (``from mfmt.numpy import load_file, save_file``)."""

from ._model import load as _load
from ._model import load_file as _load_file
from ._ops import save_file as _save_file

__all__ = ["load", "load_file", "save_file"]


def load_file(filename, *, allow_unsafe=False):
    """{name: numpy array} of a model file or directory (zero-copy views
    where the bytes lie plainly in the file; executes nothing)."""
    return _load_file(filename, allow_unsafe=allow_unsafe)


def load(data, *, allow_unsafe=False):
    """load_file for a model file's bytes in memory, as
    safetensors.numpy.load(data) (any single-file format mfmt reads)."""
    return _load(data, allow_unsafe=allow_unsafe)


def save_file(tensor_dict, filename, metadata=None):
    """Write {name: array} to a safetensors file, atomically."""
    _save_file(tensor_dict, filename, metadata)
