"""mfmt: every model-weights format into NumPy (and torch), zero-copy and safely.

    import mfmt
    with mfmt.open("model.gguf") as m:
        print(m.format, m.metadata["general.architecture"])
        w = m["token_embd.weight"]                      # read-only view of the file
        q = m.get_tensor("blk.0.attn_q.weight", dtype="float32")   # decoded

safetensors, GGUF, PyTorch .pt/.bin/.ckpt, NumPy .npy/.npz, ONNX, HDF5/Keras,
TFLite, TensorFlow, MLX and Hugging Face directories; built on libmfmt's
public C API (include/mfmt.h); nothing a file contains is ever executed.
See python/README.md.
"""

from . import _mfmt
from ._errors import (CancelledError, Error, FileError, FileNotFound, FilePermissionError,
                      FormatError, UnsafeFileError, UnsupportedError, UsageError)
from ._model import Model, TensorInfo, TensorSlice, load, load_file, open, open_bytes, stored_dtype
from ._ops import (DIFF_INCOMPARABLE, DIFF_ONLY_A, DIFF_ONLY_B, DIFF_SAME, DIFF_SAME_VALUES,
                   DIFF_SHAPE, DIFF_VALUES, Detection, EditChange, EditResult, edit, Diff, DiffRow, DequantizeResult, Estimate, Finding,
                   Hashes, Plan, Problem, QuantizeResult, QuantTensor, ScanReport,
                   Validation, convert, dequantize, detect, diff, estimate, hash, hash_file,
                   merge, plan, quantize, save_file, scan, split, validate)
from ._ops import MetaDiffRow, diff_metadata, ErrorReport, ErrorStats, SplitFile, SplitPlan, TensorError, error_against
from ._hub import (CacheProblem, CacheRepo, CacheReport, CacheRevision, CacheVerifyReport,
                   DownloadFile, DownloadReport, HubTarget, ManifestCheck, ManifestLine,
                   cache_scan, cache_verify, check_manifest, configure_remote, download,
                   hub_cache_dir, hub_resolve, manifest, remote_bytes_read, record,
                   check_record, RecordCheck, RecordFile)
from ._safe import safe_open
from ._gguf import (GGMLQuantizationType, GGML_QUANT_SIZES, GGUFValueType, GGUFWriter,
                    ReaderField)
from . import numpy, torch  # noqa: E402 (safetensors.numpy / safetensors.torch habits)

# One version everywhere: the package is the library's (setup.py reads mfmt.h).
__version__ = _mfmt.lib_version()

__all__ = [
    "open", "open_bytes", "load", "load_file", "safe_open", "save_file", "Model", "TensorInfo",
    "TensorSlice", "stored_dtype", "GGUFWriter", "GGUFValueType", "GGMLQuantizationType",
    "GGML_QUANT_SIZES", "ReaderField",
    "detect", "validate", "hash", "hash_file", "scan", "convert", "quantize", "dequantize",
    "split", "merge", "diff", "estimate", "plan", "edit", "EditChange", "EditResult",
    "Detection", "Validation", "Problem", "Hashes", "ScanReport", "Finding",
    "QuantizeResult", "QuantTensor", "DequantizeResult", "Diff", "DiffRow",
    "Estimate", "Plan", "DIFF_SAME", "DIFF_SAME_VALUES", "DIFF_VALUES", "DIFF_SHAPE",
    "DIFF_ONLY_A", "DIFF_ONLY_B", "DIFF_INCOMPARABLE",
    "MetaDiffRow", "diff_metadata", "SplitFile", "SplitPlan", "error_against", "ErrorReport", "ErrorStats", "TensorError", "configure_remote", "remote_bytes_read", "hub_resolve",
    "hub_cache_dir", "HubTarget", "cache_scan", "cache_verify", "download", "CacheReport",
    "CacheRepo", "CacheRevision", "CacheVerifyReport", "CacheProblem", "DownloadReport",
    "DownloadFile", "manifest", "check_manifest", "ManifestCheck", "ManifestLine",
    "record", "check_record", "RecordCheck", "RecordFile", "Error", "FormatError", "UnsafeFileError", "UnsupportedError", "UsageError",
    "FileError", "FileNotFound", "FilePermissionError", "CancelledError", "lib_version",
]


def lib_version() -> str:
    """The version of the libmfmt linked in."""
    return _mfmt.lib_version()
