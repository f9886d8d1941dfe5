"""mfmt: every model-weights format into NumPy (and torch), zero-copy and safely.

    import mfmt
    with mfmt.open("model.gguf") as m:
        print(m.format, m.metadata["general.architecture"])
        w = m["token_embd.weight"]                    # read-only view of the file
        f = m.get_tensor("blk.0.attn_q.weight", dtype="float32")  # decoded

Built on libmfmt's public C API (include/mfmt.h); nothing a file contains is
ever executed. See python/README.md.
"""

from ._errors import (CancelledError, Error, FileError, FormatError,
                      UnsafeFileError, UnsupportedError, UsageError)
from ._model import Model, TensorInfo, TensorSlice, load_file, open
from ._ops import Detection, Hashes, Problem, Validation, detect, hash, validate
from ._safe import safe_open
from . import _mfmt

__version__ = "0.1.0"
LIB_VERSION = _mfmt.LIB_VERSION

__all__ = [
    "open", "load_file", "safe_open", "Model", "TensorInfo", "TensorSlice",
    "detect", "validate", "hash", "Detection", "Validation", "Problem", "Hashes",
    "Error", "FormatError", "UnsafeFileError", "UnsupportedError", "UsageError",
    "FileError", "CancelledError",
]
