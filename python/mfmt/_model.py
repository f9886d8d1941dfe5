"""mfmt.open and the Model: tensors of any format as NumPy arrays."""

import os
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _mfmt
from ._errors import Error, FileError, UsageError

__all__ = ["Model", "TensorInfo", "TensorSlice", "open", "load_file", "stored_dtype"]

# What get_tensor returns by default for dtypes NumPy lacks: their bits.
_BITS_AS = {"BF16": np.uint16, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8,
            "F8_E4M3FNUZ": np.uint8, "F8_E5M2FNUZ": np.uint8, "F8_E8M0": np.uint8}
_NUMPY_OF = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
             "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
             "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
             "BOOL": np.bool_, "C64": np.complex64, "C128": np.complex128}


# The dtypes NumPy lacks come as their bits in a NumPy dtype that carries the
# stored name in its metadata: it survives views, slices, copies and
# np.asarray (not arithmetic), so save_file writes BF16 back as BF16.
_TAG = "mfmt_dtype"


def _tagged(stored):
    """The little-endian bit-pattern dtype of `stored` ("BF16"), tagged."""
    return np.dtype(np.dtype(_BITS_AS[stored]).newbyteorder("<"), metadata={_TAG: stored})


def stored_dtype(arr):
    """The mfmt dtype a bit-pattern array stands for ("BF16", "F8_E4M3"), as
    get_tensor tagged it; None for arrays of NumPy's own types."""
    md = getattr(getattr(arr, "dtype", None), "metadata", None)
    return md.get(_TAG) if md else None


def _is_plain(stored):
    """True when the stored dtype is a NumPy type or a tagged bit pattern:
    elements, not blocks or packed codes."""
    return stored in _NUMPY_OF or stored in _BITS_AS


# ONNX's packed sub-byte types: bits per element; the first element sits in
# the least significant bits of a byte (onnx.helper / the ONNX IR spec).
_PACKED_BITS = {"I4": 4, "U4": 4, "F4": 4, "I2": 2, "U2": 2}
# FLOAT4E2M1 codes 0..15 (sign, 2 exponent bits, 1 mantissa bit; no inf/NaN)
_E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6],
                 dtype=np.float32)


def _unpack(packed, info):
    """float32 values of a packed I4/U4/F4/I2/U2 tensor (its packed bytes)."""
    bits = _PACKED_BITS[info.dtype]
    per = 8 // bits
    b = np.asarray(packed, dtype=np.uint8).reshape(-1)
    codes = np.stack([(b >> (bits * k)) & ((1 << bits) - 1) for k in range(per)], axis=1)
    codes = codes.reshape(-1)[:info.nelems]
    if info.dtype == "F4":
        vals = _E2M1[codes]
    elif info.dtype.startswith("I"):  # two's complement in `bits` bits
        c = codes.astype(np.int16)
        vals = np.where(c >= 1 << (bits - 1), c - (1 << bits), c).astype(np.float32)
    else:
        vals = codes.astype(np.float32)
    return vals.reshape(info.shape)


class TensorInfo(NamedTuple):
    """What the file says of one tensor (no data is read to know it).

    ``shape`` is in C order (outermost first) for every format; ``strides``
    are element strides for a PyTorch view (None: contiguous); ``file`` is
    the file holding the bytes (a shard, an ONNX external-data file);
    ``offset`` and ``nbytes`` locate them there; ``mapped`` is True when
    the bytes lie plainly in the mapping (get_tensor is then zero-copy).
    """
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
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def ne(self) -> Tuple[int, ...]:
        """The shape in GGUF's order, innermost first (gguf-py's
        ReaderTensor.shape, ggml's ne)."""
        return tuple(reversed(self.shape))

    @property
    def data_offset(self) -> int:
        """Byte offset of the tensor's data in its file (gguf-py's
        ReaderTensor.data_offset; the same as ``offset``)."""
        return self.offset

    @property
    def n_bytes(self) -> int:
        """gguf-py's spelling of ``nbytes``."""
        return self.nbytes

    @property
    def n_elements(self) -> int:
        """gguf-py's spelling of ``nelems``."""
        return self.nelems

    @property
    def tensor_type(self):
        """The ggml type (mfmt.GGMLQuantizationType) of a GGUF dtype name
        ("Q4_K" -> Q4_K, 12); ValueError for a dtype ggml has not."""
        from ._gguf import GGMLQuantizationType
        try:
            return GGMLQuantizationType[self.dtype]
        except KeyError:
            raise ValueError(f"{self.name}: dtype {self.dtype} has no ggml type") from None

    @property
    def nelems(self) -> int:
        """Number of elements (1 for a 0-d tensor)."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def numpy_dtype(self) -> np.dtype:
        """The dtype get_tensor(name) returns: the element type, or for BF16
        and FP8 their bit patterns (uint16 / uint8), for ggml block and packed
        sub-byte types their raw bytes (uint8)."""
        if self.dtype in _BITS_AS:
            return _tagged(self.dtype)
        return np.dtype(_NUMPY_OF.get(self.dtype) or np.uint8)


def _float_dtype(dtype):
    """np.dtype for a dtype= argument; "bfloat16" is not NumPy's."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise UsageError(f"dtype={dtype!r}: not a NumPy dtype") from None
    if dt.kind != "f":
        raise UsageError(f"dtype={dtype!r}: only float dtypes convert "
                         "(float32, float16, float64)")
    return dt


class Model(_mfmt.Model):
    """An open model file: format, metadata and tensors.

    Use ``mfmt.open(path)``. ``model[name]`` and ``get_tensor(name)`` return
    read-only NumPy arrays that view the file mapping without a copy where
    the bytes lie plainly in the file; the mapping stays alive while any such
    array does, so closing the model (or dropping it) never leaves an array
    dangling. Iterating yields tensor names, in file order.

    ``Model(path)`` itself opens without mfmt.open's safety rule (it never
    raises UnsafeFileError; ``.verdict`` still tells); nothing is executed
    either way.
    """

    def __init__(self, path, *, strict=False, logical=False, data=None, fd=-1):
        # data: the bytes of one model file (bytes, bytearray, memoryview),
        # read in place (mf_open_buffer); fd: an open file descriptor, read
        # from its position (mf_open_fd); path is then only its name
        super().__init__(os.fspath(path), strict, logical, True, data, fd)
        infos = [TensorInfo(*t) for t in self._tensor_infos()]
        self._infos = {t.name: t for t in infos}
        self._index = {t.name: i for i, t in enumerate(infos)}
        self._meta_cache = None
        self._logical = logical
        self._sibling = None

    # -- the view --------------------------------------------------------
    @property
    def metadata(self) -> dict:
        """Metadata as a dict, in file order: ints, floats, bools, str, None;
        numeric arrays (GGUF) as 1-D NumPy arrays, other arrays as lists.
        Strings that are not UTF-8 keep their bytes as surrogate escapes."""
        if self._meta_cache is None:
            self._meta_cache = self._metadata()
        return self._meta_cache

    @property
    def tensors(self) -> dict:
        """name -> TensorInfo, in file order."""
        return dict(self._infos)

    @property
    def fields(self) -> dict:
        """GGUF: key -> mfmt.ReaderField(offset, name, types, value), in file
        order, as gguf-py's GGUFReader.fields: ``types`` are the GGUF value
        types (mfmt.GGUFValueType; an array: ARRAY then its element type),
        ``offset`` where the pair starts in the file."""
        from ._gguf import reader_fields
        return reader_fields(self)

    @property
    def alignment(self):
        """GGUF: general.alignment, or 32 (GGUFReader.alignment); None for
        other formats."""
        from ._gguf import alignment
        return alignment(self)

    @property
    def data_offset(self):
        """GGUF: where the tensor data starts (GGUFReader.data_offset); None
        for other formats."""
        from ._gguf import data_offset
        return data_offset(self)

    def graph(self) -> str:
        """The model's graph as text where the format has one (ONNX: inputs,
        outputs, one node a line), as `mfmt inspect --graph` prints it;
        UsageError for formats without a graph."""
        return _mfmt.model_graph(self)

    def keys(self):
        """Tensor names, in file order."""
        return list(self._infos)

    def __len__(self):
        return len(self._infos)

    def __iter__(self):
        return iter(list(self._infos))

    def __contains__(self, name):
        return name in self._infos

    def __getitem__(self, name):
        return self.get_tensor(name)

    def info(self, name) -> TensorInfo:
        """The TensorInfo of one tensor (KeyError if there is none)."""
        return self._infos[name]

    def __repr__(self):
        if self.closed:
            return f"<mfmt.Model {self.path!r} closed>"
        return (f"<mfmt.Model {self.path!r} {self.format} {self.version!r}, "
                f"{len(self)} tensors>")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- data ------------------------------------------------------------
    def _position(self, name):
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {self.path}") from None

    def get_tensor(self, name, dtype=None) -> np.ndarray:
        """The tensor as a NumPy array.

        dtype=None: the stored values. A read-only view of the mapping when
        the bytes lie plainly in the file (strided for PyTorch views);
        otherwise (compressed, chunked, big-endian, typed fields) a new,
        writable array of the canonical bytes. BF16/FP8 come as their bit
        patterns (uint16/uint8) in a dtype tagged with the stored name
        (mfmt.stored_dtype(arr) == "BF16"; save_file writes them back as
        such), ggml block types as raw blocks (uint8, 1-D: their bytes).

        dtype="float32" (or float16, float64): decoded floats for any dtype,
        every ggml block type and MLX packed tensors included.
        """
        i = self._position(name)
        if dtype is not None:
            return self._decoded(i, self._infos[name], _float_dtype(dtype), None, None)
        arr = self._view(i)
        if arr is None:
            arr = self._read(i)
        stored = self._infos[name].dtype
        if stored in _BITS_AS:
            arr = arr.view(_tagged(stored))
        return arr

    def get_slice(self, name, dtype=None) -> "TensorSlice":
        """A lazy slice: ``get_slice(name)[a:b]`` reads only rows a..b."""
        self._position(name)
        return TensorSlice(self, name, None if dtype is None else _float_dtype(dtype))

    def _decoded(self, i, info, dt, row0, row1):
        """Rows row0..row1 (None: all) of tensor i as floats of dtype dt."""
        sib = self._packed_sibling(info)
        if sib is not None:  # an MLX packed weight: decode its logical view
            return sib._decoded(sib._position(info.name), sib.info(info.name), dt, row0, row1)
        if info.dtype in _NUMPY_OF and info.dtype not in ("C64", "C128"):
            arr = self._view(i)
            if arr is None:
                arr = self._read(i)
            if row0 is not None:
                arr = arr[row0:row1]
            return arr.astype(dt)
        if info.dtype in _PACKED_BITS:  # libmfmt's F32 reader lacks these
            out = _unpack(self.get_tensor(info.name), info)
            if row0 is not None:
                out = out[row0:row1]
            return out if dt == np.float32 else out.astype(dt)
        out = self._read_f32(i, -1 if row0 is None else row0, -1 if row1 is None else row1)
        return out if dt == np.float32 else out.astype(dt)

    def _packed_sibling(self, info):
        """For an MLX model opened as stored: the logical view (opened once,
        O(header)) when `info` is a packed weight there, else None."""
        if self.format != "mlx" or self._logical:
            return None
        if self._sibling is None:
            self._sibling = Model(self.path, logical=True)
        other = self._sibling._infos.get(info.name)
        return self._sibling if other is not None and other.dtype != info.dtype else None

    def close(self):
        """Release the model. Arrays already returned stay valid: the file is
        unmapped when the last of them is freed."""
        if self._sibling is not None:
            self._sibling.close()
        super().close()

    def hash_tensor(self, name, algo="sha256") -> str:
        """Canonical hash of one tensor: its elements in C order,
        little-endian, stored dtype (raw blocks for ggml types)."""
        return self._hash_tensor(self._position(name), algo)


class TensorSlice:
    """``model.get_slice(name)``: shape and dtype without reading, and
    ``[index]`` reading only what the first axis selects (safetensors'
    PySafeSlice API: get_shape(), get_dtype()). The index follows the shape
    get_shape() reports: for ggml block types and packed codes (whose stored
    bytes have no such shape) it yields decoded float32 values unless
    dtype= chooses another float type."""

    def __init__(self, model, name, dtype=None):
        self._model = model
        self._name = name
        self._info = model.info(name)
        if dtype is None and not _is_plain(self._info.dtype):
            dtype = np.dtype(np.float32)
        self._dtype = dtype

    def get_shape(self):
        """The shape, as a list (C order)."""
        return list(self._info.shape)

    def get_dtype(self):
        """The stored dtype's name ("F32", "BF16", "Q4_K", ...)."""
        return self._info.dtype

    @property
    def shape(self):
        """The shape, as a tuple (C order)."""
        return self._info.shape

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self._info.shape)

    def __len__(self):
        if not self._info.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._info.shape[0]

    def __getitem__(self, index):
        m, info = self._model, self._info
        if self._dtype is None:
            return m.get_tensor(self._name)[index]
        if not info.shape:
            return m.get_tensor(self._name, self._dtype)[index]
        idx = index if isinstance(index, tuple) else (index,)
        first, rest = (idx[0], idx[1:]) if idx else (slice(None), ())
        if first is Ellipsis:
            return m.get_tensor(self._name, self._dtype)[index]
        n = info.shape[0]
        if isinstance(first, slice):
            lo, hi, step = first.indices(n)
            if step < 0 or lo >= hi:
                return m.get_tensor(self._name, self._dtype)[index]
            rows = m._decoded(m._position(self._name), info, self._dtype, lo, hi)
            return rows[(slice(0, hi - lo, step),) + rest]
        try:
            k = int(first)
        except TypeError:
            return m.get_tensor(self._name, self._dtype)[index]
        if k < -n or k >= n:
            raise IndexError(f"index {k} is out of bounds for axis 0 with size {n}")
        k %= n
        rows = m._decoded(m._position(self._name), info, self._dtype, k, k + 1)
        return rows[(0,) + rest]


def _checked(model, allow_unsafe) -> Model:
    """model, or (not allow_unsafe and its verdict not safe) closed and
    UnsafeFileError raised."""
    from ._ops import _check_safe
    try:
        if not allow_unsafe:
            _check_safe(model)
    except BaseException:
        model.close()
        raise
    return model


def _open_file_object(f, allow_unsafe, strict, logical) -> Model:
    """open() of a binary file object: from its current position to its end,
    as np.load(f) and torch.load(f) read one. With a fileno, the descriptor
    (mf_open_fd: a regular file is mapped, a pipe read to its end); the
    descriptor's own position is set to f.tell() for the call and put back,
    so f's buffering stays right (f's position is not moved). A pipe is read
    from the descriptor: bytes f has buffered already are not seen. Without
    a fileno (io.BytesIO), f.read()'s bytes (open_bytes)."""
    name = getattr(f, "name", None)
    name = os.path.basename(name) if isinstance(name, str) and name else "fd"
    try:
        fd = f.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:
        return open_bytes(f.read(), name, allow_unsafe=allow_unsafe, strict=strict)
    seekable = f.seekable()
    if seekable:
        saved = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, f.tell(), os.SEEK_SET)
    try:
        model = Model(name, strict=strict, logical=logical, fd=fd)
    finally:
        if seekable:
            os.lseek(fd, saved, os.SEEK_SET)
    return _checked(model, allow_unsafe)


def open(path, *, allow_unsafe=False, strict=False, logical=False) -> Model:  # noqa: A001
    """Open a model file or directory, any format mfmt reads.

    path may also name a Hugging Face Hub repo or file in the local cache
    (hf://ORG/NAME[@REV][/FILE], or ORG/NAME when no such path exists), and
    a binary file object (open(p, "rb"), sys.stdin.buffer,
    io.BytesIO) holding one model file: read from its current position, as
    np.load and torch.load read a file object (see _open_file_object).

    Opening reads the header only (O(header)); no tensor data is copied.
    A file whose scan verdict is not `safe` (a pickle global off the
    weights-only allowlist, something that could not be checked) raises
    UnsafeFileError with the findings unless allow_unsafe=True, which reads
    the tensors anyway: mfmt never executes anything a file contains.
    strict=True checks every rule of the format (as `mfmt validate`).
    logical=True lists MLX packed (weight, scales, biases) triples as one
    float tensor each, dequantized when read.
    """
    from ._ops import _raise_if_unsafe_path
    from ._hub import input_path
    if hasattr(path, "read") and not isinstance(path, (str, bytes, os.PathLike)):
        return _open_file_object(path, allow_unsafe, strict, logical)
    path = input_path(path)  # ORG/NAME, hf://ORG/NAME/FILE: the Hub cache's copy
    try:
        model = Model(path, strict=strict, logical=logical)
    except Error as e:
        # A file that cannot be read may still be one a loader would run
        # (a NumPy object array is a pickle): say that first.
        if not allow_unsafe and not isinstance(e, FileError):
            _raise_if_unsafe_path(os.fspath(path), e)
        raise
    return _checked(model, allow_unsafe)


def open_bytes(data, name="buffer", *, allow_unsafe=False, strict=False) -> Model:
    """open() for a model file held in memory (bytes, bytearray, memoryview
    of one file: a format spanning several files must be opened by path).
    Read in place: arrays view `data` where its bytes are the tensor's, and
    keep it alive; do not change a bytearray while the model is open. Same
    safety rule as open()."""
    model = Model(name, strict=strict, data=data)
    return _checked(model, allow_unsafe)


def load(data, device=None, *, framework="np", allow_unsafe=False) -> dict:
    """Every tensor of a model file held in memory as {name: array}, as
    safetensors.numpy.load(data) / safetensors.torch.load(data) do for
    safetensors bytes, for any single-file format mfmt reads (framework
    "np" or "pt", device as in load_file)."""
    if device is not None and device != "cpu" and framework == "np":
        framework = "pt"
    if framework in ("pt", "torch"):
        from .torch import load as _torch_load
        return _torch_load(data, device=device or "cpu", allow_unsafe=allow_unsafe)
    if framework not in ("np", "numpy"):
        raise UsageError(f'framework={framework!r}: "np" or "pt"')
    with open_bytes(data, allow_unsafe=allow_unsafe) as m:
        return {name: m.get_tensor(name) for name in m}


def load_file(path, device=None, *, framework="np", allow_unsafe=False) -> dict:
    """Every tensor of a file as {name: array} (get_tensor's arrays: views of
    the mapping where possible; the mapping lives as long as they do).

    As safetensors' load_file: device="cpu" (or "cuda:0", ...) or
    framework="pt" gives torch tensors on that device (safetensors.torch),
    framework="np" NumPy arrays (safetensors.numpy; device must then be
    None or "cpu")."""
    if device is not None and device != "cpu" and framework == "np":
        framework = "pt"  # a device other than the CPU means torch
    if framework in ("pt", "torch"):
        from .torch import load_file as _torch_load
        return _torch_load(path, device=device or "cpu", allow_unsafe=allow_unsafe)
    if framework not in ("np", "numpy"):
        raise UsageError(f'framework={framework!r}: "np" or "pt"')
    with open(path, allow_unsafe=allow_unsafe) as m:
        return {name: m.get_tensor(name) for name in m}
