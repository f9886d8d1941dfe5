# Type stubs of the public API of the mfmt package (docstrings in the .py files).
import enum
import os
from typing import (Any, Callable, Dict, Iterator, List, Literal, Mapping, NamedTuple,
                    Optional, Sequence, Tuple, Union, overload)

import numpy as np

__version__: str

PathLike = Union[str, bytes, os.PathLike]
# progress(done, total) -> False to cancel (None or True: go on)
Progress = Optional[Callable[[int, int], Optional[bool]]]
DTypeArg = Union[str, np.dtype, type]
Size = Union[int, str]  # bytes, or "5GB", "500MiB", "2G"

def lib_version() -> str: ...

# ------------------------------------------------------------------ errors

class Error(Exception):
    code: int
    message: str
    messages: List[str]
    path: Optional[str]
    offset: Optional[int]
    rule: str
    def __init__(self, message: str, messages: Optional[Sequence[str]] = ...,
                 code: Optional[int] = ...) -> None: ...

class FormatError(Error, ValueError): ...
class UnsupportedError(Error, NotImplementedError): ...
class UsageError(Error, ValueError): ...
class FileError(Error, OSError): ...
class FileNotFound(FileError, FileNotFoundError): ...
class FilePermissionError(FileError, PermissionError): ...
class CancelledError(Error): ...

class UnsafeFileError(Error):
    findings: List[Finding]
    verdict: Optional[str]

# ----------------------------------------------------------------- reading

class TensorInfo(NamedTuple):
    name: str
    dtype: str
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]
    file: Optional[str]
    offset: int
    nbytes: int
    mapped: bool
    big_endian: bool
    @property
    def ndim(self) -> int: ...
    @property
    def nelems(self) -> int: ...
    @property
    def numpy_dtype(self) -> np.dtype: ...
    @property
    def ne(self) -> Tuple[int, ...]: ...
    @property
    def data_offset(self) -> int: ...
    @property
    def n_bytes(self) -> int: ...
    @property
    def n_elements(self) -> int: ...
    @property
    def tensor_type(self) -> "GGMLQuantizationType": ...

class GGUFValueType(enum.IntEnum):
    UINT8: int
    INT8: int
    UINT16: int
    INT16: int
    UINT32: int
    INT32: int
    FLOAT32: int
    BOOL: int
    STRING: int
    ARRAY: int
    UINT64: int
    INT64: int
    FLOAT64: int
    @staticmethod
    def get_type(val: Any) -> "GGUFValueType": ...

class GGMLQuantizationType(enum.IntEnum): ...

GGML_QUANT_SIZES: Dict[int, Tuple[int, int]]

class ReaderField(NamedTuple):
    offset: int
    name: str
    types: Tuple[GGUFValueType, ...]
    value: Any
    def contents(self) -> Any: ...

class GGUFWriter:
    def __init__(self, path: Optional[PathLike], arch: str, use_temp_file: bool = ...,
                 endianess: Any = ...) -> None: ...
    def add_key_value(self, key: str, val: Any, vtype: int) -> None: ...
    def add_uint8(self, key: str, val: int) -> None: ...
    def add_int8(self, key: str, val: int) -> None: ...
    def add_uint16(self, key: str, val: int) -> None: ...
    def add_int16(self, key: str, val: int) -> None: ...
    def add_uint32(self, key: str, val: int) -> None: ...
    def add_int32(self, key: str, val: int) -> None: ...
    def add_float32(self, key: str, val: float) -> None: ...
    def add_uint64(self, key: str, val: int) -> None: ...
    def add_int64(self, key: str, val: int) -> None: ...
    def add_float64(self, key: str, val: float) -> None: ...
    def add_bool(self, key: str, val: bool) -> None: ...
    def add_string(self, key: str, val: str) -> None: ...
    def add_array(self, key: str, val: Sequence[Any]) -> None: ...
    def add_architecture(self) -> None: ...
    def add_type(self, type_name: str) -> None: ...
    def add_name(self, name: str) -> None: ...
    def add_description(self, description: str) -> None: ...
    def add_file_type(self, ftype: int) -> None: ...
    def add_quantization_version(self, v: int) -> None: ...
    def add_tags(self, tags: Sequence[str]) -> None: ...
    def add_custom_alignment(self, alignment: int) -> None: ...
    def add_tensor_info(self, name: str, tensor_shape: Sequence[int], tensor_dtype: Any,
                        tensor_nbytes: int, raw_dtype: Optional[int] = ...) -> None: ...
    def add_tensor(self, name: str, tensor: np.ndarray, raw_shape: Optional[Sequence[int]] = ...,
                   raw_dtype: Optional[int] = ...) -> None: ...
    def write_header_to_file(self, path: Optional[PathLike] = ...) -> None: ...
    def write_kv_data_to_file(self) -> None: ...
    def write_ti_data_to_file(self) -> None: ...
    def write_tensors_to_file(self, *, progress: bool = ...) -> None: ...
    def write_tensor_data(self, tensor: np.ndarray) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "GGUFWriter": ...
    def __exit__(self, *exc: Any) -> bool: ...

class TensorSlice:
    shape: Tuple[int, ...]
    ndim: int
    def get_shape(self) -> List[int]: ...
    def get_dtype(self) -> str: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: Any) -> np.ndarray: ...

class Model:
    format: str
    version: str
    path: str
    closed: bool
    file_bytes: int
    file_count: int
    header_bytes: int
    notes: List[str]
    verdict: Literal["safe", "unknown", "dangerous"]
    @property
    def fields(self) -> Dict[str, ReaderField]: ...
    @property
    def alignment(self) -> Optional[int]: ...
    @property
    def data_offset(self) -> Optional[int]: ...
    def __init__(self, path: PathLike, *, strict: bool = ..., logical: bool = ...) -> None: ...
    @property
    def metadata(self) -> Dict[str, Any]: ...
    @property
    def tensors(self) -> Dict[str, TensorInfo]: ...
    def graph(self) -> str: ...
    def keys(self) -> List[str]: ...
    def info(self, name: str) -> TensorInfo: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def __contains__(self, name: object) -> bool: ...
    def __getitem__(self, name: str) -> np.ndarray: ...
    def __enter__(self) -> Model: ...
    def __exit__(self, *exc: Any) -> bool: ...
    def close(self) -> None: ...
    def get_tensor(self, name: str, dtype: Optional[DTypeArg] = ...) -> np.ndarray: ...
    def get_slice(self, name: str, dtype: Optional[DTypeArg] = ...) -> TensorSlice: ...
    def hash_tensor(self, name: str, algo: str = ...) -> str: ...

def open(path: PathLike, *, allow_unsafe: bool = ..., strict: bool = ...,
         logical: bool = ...) -> Model: ...
def load_file(path: PathLike, device: Optional[str] = ..., *, framework: str = ..., allow_unsafe: bool = ...) -> Dict[str, Any]: ...
def open_bytes(data: Any, name: str = ..., *, allow_unsafe: bool = ..., strict: bool = ...) -> Model: ...
def load(data: Any, device: Optional[str] = ..., *, framework: str = ..., allow_unsafe: bool = ...) -> Dict[str, Any]: ...
def stored_dtype(arr: Any) -> Optional[str]: ...

class _SafeSlice:
    def get_shape(self) -> List[int]: ...
    def get_dtype(self) -> str: ...
    def __getitem__(self, index: Any) -> Any: ...

class safe_open:
    def __init__(self, path: PathLike, framework: str = ..., device: str = ..., *,
                 allow_unsafe: bool = ...) -> None: ...
    def __enter__(self) -> safe_open: ...
    def __exit__(self, *exc: Any) -> bool: ...
    def close(self) -> None: ...
    @property
    def model(self) -> Model: ...
    def keys(self) -> List[str]: ...
    def offset_keys(self) -> List[str]: ...
    def metadata(self) -> Optional[Dict[str, Any]]: ...
    def get_tensor(self, name: str) -> Any: ...  # np.ndarray, or torch.Tensor for "pt"
    def get_slice(self, name: str) -> _SafeSlice: ...

def save_file(tensors: Mapping[str, Any], path: PathLike,
              metadata: Optional[Mapping[str, str]] = ..., *,
              dtypes: Optional[Mapping[str, str]] = ...) -> None: ...

# -------------------------------------------------------------- operations

class Detection(NamedTuple):
    path: str
    format: str
    detail: str

def detect(path: PathLike) -> Detection: ...

class Problem(NamedTuple):
    path: Optional[str]
    offset: Optional[int]
    rule: str
    message: str

class Validation(NamedTuple):
    path: str
    ok: bool
    problems: List[Problem]
    def raise_if_invalid(self) -> None: ...

def validate(path: PathLike) -> Validation: ...

class Hashes(NamedTuple):
    path: str
    algo: str
    file: Optional[str]
    tensor_content: str
    tensors: Optional[Dict[str, str]]

def hash(path: PathLike, *, algo: str = ..., tensors: bool = ..., file: bool = ...,
         progress: Progress = ...) -> Hashes: ...

def hash_file(path: PathLike, *, algo: str = ...) -> str: ...

class Finding(NamedTuple):
    severity: str
    member: str
    offset: int
    file_offset: int
    opcode: Optional[str]
    global_: Optional[str]
    message: str

class ScanReport(NamedTuple):
    path: str
    verdict: str
    findings: List[Finding]
    globals: List[Tuple[str, str]]
    n_pickles: int
    dropped_findings: int
    @property
    def safe(self) -> bool: ...

def scan(path: PathLike) -> ScanReport: ...

def convert(src: PathLike, out: Optional[PathLike] = ..., *, to: Optional[str] = ...,
            key: Optional[str] = ..., max_shard_size: Optional[Size] = ...,
            include_optimizer: bool = ..., allow_unsafe: bool = ..., type: Optional[str] = ...,
            threads: Optional[int] = ..., dtype: Optional[str] = ..., keep_tied: bool = ...,
            progress: Progress = ..., arch_file: Optional[PathLike] = ...,
            layout: Optional[Literal["c392e50", "2026-02"]] = ..., model_name: Optional[str] = ...,
            metadata: Optional[PathLike] = ..., vocab_only: bool = ...,
            split_max_size: Optional[Size] = ..., split_max_tensors: Optional[int] = ...,
            config: Optional[PathLike] = ..., tokenizer: Optional[PathLike] = ...,
            from_module_states: bool = ..., exclude_frozen_parameters: bool = ...,
            mlx: bool = ..., quantize: bool = ..., q_bits: Optional[int] = ...,
            q_group_size: Optional[int] = ..., quant_predicate: Optional[str] = ...,
            mlx_kernel: Optional[Literal["cpu", "metal"]] = ..., dequantize: bool = ...,
            lossless: bool = ..., outfile: Optional[PathLike] = ...,
            mix_rules: Optional[Literal["c392e50", "ecbcb7ea", "b10256"]] = ...,
            with_mmproj: Optional[PathLike] = ..., mmproj: bool = ...,
            mistral_format: Optional[bool] = ...) -> Optional[str]: ...

class QuantTensor(NamedTuple):
    name: str
    src: str
    dst: str
    ne: Tuple[int, int, int, int]
    nelems: int
    src_bytes: int
    dst_bytes: int
    converted: bool
    fallback: bool
    imatrix: bool
    rmse: float
    max_abs: float
    cosine: float
    nonfinite: bool
    n_dims: int

class QuantizeResult(NamedTuple):
    type: str
    n_tensors: int
    n_converted: int
    n_fallback: int
    n_k_quantized: int
    n_params: int
    in_tensor_bytes: int
    out_tensor_bytes: int
    out_file_bytes: int
    bpw: float
    imatrix_entries: int
    imatrix_used: int
    tensors: List[QuantTensor]

def quantize(src: PathLike, out: Optional[PathLike], type: str, *, threads: int = ...,
             imatrix: Optional[PathLike] = ..., allow_requantize: bool = ...,
             pure: bool = ..., leave_output_tensor: bool = ...,
             output_tensor_type: Optional[str] = ..., token_embedding_type: Optional[str] = ...,
             dry_run: bool = ..., progress: Progress = ...,
             keep_split: bool = ..., include_weights: Union[str, Sequence[str]] = ...,
             exclude_weights: Union[str, Sequence[str]] = ...,
             override_kv: Optional[Mapping[str, Union[bool, int, float, str]]] = ...,
             mix_rules: Optional[Literal["c392e50", "ecbcb7ea", "b10256"]] = ...
             ) -> QuantizeResult: ...

class DequantizeResult(NamedTuple):
    n_tensors: int
    n_converted: int
    n_copied: int
    meta_kept: int
    meta_skipped: int
    out_bytes: int

def dequantize(src: PathLike, out: PathLike, *, dtype: str = ...,
               progress: Progress = ...) -> DequantizeResult: ...
class SplitFile(NamedTuple):
    path: str
    first_tensor: int
    n_tensors: int
    bytes: int

class SplitPlan(List[str]):
    files: List[SplitFile]

def split(src: PathLike, prefix: PathLike, *, max_tensors: Optional[int] = ...,
          max_size: Optional[Size] = ..., no_tensor_first_split: bool = ...,
          dry_run: bool = ..., progress: Progress = ...) -> SplitPlan: ...
def merge(src: PathLike, out: PathLike, *, dry_run: bool = ...,
          progress: Progress = ...) -> Tuple[int, int]: ...

DIFF_SAME: str
DIFF_SAME_VALUES: str
DIFF_VALUES: str
DIFF_SHAPE: str
DIFF_ONLY_A: str
DIFF_ONLY_B: str
DIFF_INCOMPARABLE: str

class DiffRow(NamedTuple):
    name: str
    kind: str
    a: Optional[Tuple[str, Tuple[int, ...]]]
    b: Optional[Tuple[str, Tuple[int, ...]]]
    max_abs: float
    rmse: float
    cosine: float
    n_diff: int

class Diff(List[DiffRow]):
    mapped: bool
    def counts(self) -> Dict[str, int]: ...
    @property
    def same(self) -> bool: ...

def diff(a: PathLike, b: PathLike, *, allow_unsafe: bool = ..., map: bool = ...,
         arch_file: Optional[PathLike] = ...) -> Diff: ...

class Estimate(NamedTuple):
    source: str
    arch: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    hidden: int
    head_dim_k: int
    head_dim_v: int
    ctx: int
    ctx_train: int
    batch: int
    n_params: int
    params_from_config: bool
    weight_bytes: int
    weight_bpw: float
    weight_type: str
    kv_type: str
    kv_bytes_per_elem: float
    kv_bytes: int
    total_bytes: int
    weight_note: Optional[str]

def estimate(path: PathLike, *, ctx: Optional[int] = ..., batch: Optional[int] = ...,
             kv_type: Optional[str] = ..., type: Optional[str] = ...,
             mix_rules: Optional[Literal["c392e50", "ecbcb7ea", "b10256"]] = ...) -> Estimate: ...

class Plan(NamedTuple):
    devices: List[Tuple[str, int, int]]
    device_map: Dict[str, str]
    total: int
    reserved: int

DeviceArg = Union[str, Sequence[Union[str, Tuple[str, Optional[Size]]]], Mapping[str, Optional[Size]]]

def plan(path: PathLike, device: DeviceArg, *, dtype: Optional[str] = ...) -> Plan: ...

class EditChange(NamedTuple):
    kind: str
    key: Optional[str]
    before: Optional[str]
    after: Optional[str]

class EditResult(NamedTuple):
    old_header_bytes: int
    new_header_bytes: int
    data_bytes: int
    changes: List[EditChange]

def edit(src: PathLike, out: Optional[PathLike] = ..., *,
         set: Optional[Mapping[str, Union[bool, int, float, str]]] = ...,
         delete: Union[str, Sequence[str]] = ..., rename_tensor: Optional[Mapping[str, str]] = ...,
         chat_template: Optional[PathLike] = ..., chat_template_from: Optional[PathLike] = ...,
         dry_run: bool = ..., force: bool = ...) -> EditResult: ...

# ---------------------------------------------------- error against original

class ErrorStats(NamedTuple):
    tensors_compared: int
    parameters: int
    rmse: float
    rel_error: float
    snr_db: float
    cosine: float
    layer: Optional[str]

class TensorError(NamedTuple):
    name: str
    dtype_original: str
    dtype_model: str
    n: int
    rmse: float
    max_abs: float
    rel_error: float
    snr_db: float
    cosine: float

class ErrorReport(NamedTuple):
    original: str
    mapped: bool
    total: ErrorStats
    layers: List[ErrorStats]
    tensors: List[TensorError]
    worst: List[Tuple[str, float, float]]
    only_original: int
    only_model: int
    shape_mismatch: int
    incomparable: int

def error_against(model: PathLike, original: PathLike, *,
                  arch_file: Optional[PathLike] = ...) -> ErrorReport: ...

# ------------------------------------------- Hub, cache, remote, manifests

def configure_remote(*, token: Optional[str] = ..., max_bytes: Optional[Size] = ...,
                     timeout: Optional[int] = ..., retries: Optional[int] = ...) -> None: ...
def remote_bytes_read() -> int: ...

class HubTarget(NamedTuple):
    kind: str
    path: str
    repo_type: Optional[str]
    repo_id: Optional[str]
    revision: Optional[str]
    commit: Optional[str]
    file: Optional[str]
    cache_dir: Optional[str]

def hub_resolve(name: PathLike, *, cache_dir: Optional[PathLike] = ...,
                allow_remote: bool = ...) -> HubTarget: ...
def hub_cache_dir() -> str: ...

class CacheRevision(NamedTuple):
    commit: str
    refs: List[str]
    n_files: int
    size_on_disk: int

class CacheRepo(NamedTuple):
    repo_type: str
    repo_id: str
    path: str
    size_on_disk: int
    n_blobs: int
    last_modified: int
    revisions: List[CacheRevision]

class CacheReport(NamedTuple):
    cache_dir: str
    repos: List[CacheRepo]
    size_on_disk: int
    warnings: List[str]

def cache_scan(cache_dir: Optional[PathLike] = ...) -> CacheReport: ...

class CacheProblem(NamedTuple):
    kind: str
    repo_id: str
    path: str
    detail: str

class CacheVerifyReport(NamedTuple):
    cache_dir: str
    n_repos: int
    n_blobs_checked: int
    bytes_checked: int
    problems: List[CacheProblem]
    @property
    def ok(self) -> bool: ...

def cache_verify(repo: Optional[str] = ..., *, cache_dir: Optional[PathLike] = ...,
                 progress: Progress = ...) -> CacheVerifyReport: ...

class DownloadFile(NamedTuple):
    path: str
    blob: str
    size: int
    fetched: int
    state: str

class DownloadReport(NamedTuple):
    repo_id: str
    revision: str
    commit: str
    snapshot: str
    bytes_fetched: int
    files: List[DownloadFile]

def download(repo: str, *, include: Union[str, Sequence[str]] = ...,
             exclude: Union[str, Sequence[str]] = ..., cache_dir: Optional[PathLike] = ...,
             progress: Progress = ...) -> DownloadReport: ...

def manifest(path: PathLike, *, algo: Union[str, Sequence[str]] = ...,
             out: Optional[PathLike] = ..., no_layer: bool = ...,
             label: Optional[str] = ...) -> str: ...

class ManifestLine(NamedTuple):
    kind: str
    hash: str
    name: str
    result: str

class ManifestCheck(NamedTuple):
    code: int
    outcome: str
    label: Optional[str]
    lines: List[ManifestLine]
    @property
    def ok(self) -> bool: ...

def check_manifest(path: PathLike, manifest_path: PathLike, *,
                   algo: Union[None, str, Sequence[str]] = ...) -> ManifestCheck: ...

def record(model: PathLike, out: Optional[PathLike] = ..., *, tensors: bool = ...) -> dict: ...

class RecordFile(NamedTuple):
    path: str
    result: str
    tensors_same: Optional[bool]
    meaning: str

class RecordCheck(NamedTuple):
    code: int
    error: Optional[str]
    repo: Optional[str]
    commit: Optional[str]
    files: List[RecordFile]
    @property
    def ok(self) -> bool: ...

def check_record(model: PathLike, record_path: PathLike) -> RecordCheck: ...

class MetaDiffRow(NamedTuple):
    key: str
    kind: str
    a: Any
    b: Any

def diff_metadata(a: PathLike, b: PathLike) -> List[MetaDiffRow]: ...
