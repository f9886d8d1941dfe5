"""GGUF for gguf-py users: the value and tensor type ids, typed fields of a
read model (as GGUFReader.fields gives them) and GGUFWriter, which writes the
bytes gguf-py's GGUFWriter writes for the same calls.

The layout (GGUF v3, little-endian; ggml's docs/gguf.md): magic, version,
tensor count, KV count; each KV as key string, value type, value (strings as
u64 length + UTF-8 bytes; arrays as element type, u64 count, elements);
each tensor info as name, n_dims, ne (innermost first), ggml type, offset
from the data start (each tensor's bytes padded to the alignment); zeros to
the alignment; the tensors, each followed by zeros to the alignment (the
last one too, as gguf-py writes it). Checked byte for byte against gguf-py
in python/tests/test_gguf_py.py."""
import enum
import os
import struct
import tempfile
from typing import Any, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _mfmt

GGUF_MAGIC = 0x46554747  # "GGUF"
GGUF_VERSION = 3
GGUF_DEFAULT_ALIGNMENT = 32


class GGUFValueType(enum.IntEnum):
    """GGUF's metadata value types (gguf-py's names and ids)."""
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    @staticmethod
    def get_type(val: Any) -> "GGUFValueType":
        """The type gguf-py gives a Python value: str/bytes STRING, list
        ARRAY, float FLOAT32, bool BOOL, int INT32."""
        if isinstance(val, (str, bytes, bytearray)):
            return GGUFValueType.STRING
        if isinstance(val, list):
            return GGUFValueType.ARRAY
        if isinstance(val, float):
            return GGUFValueType.FLOAT32
        if isinstance(val, bool):
            return GGUFValueType.BOOL
        if isinstance(val, int):
            return GGUFValueType.INT32
        raise ValueError(f"Unknown type: {type(val)}")


class GGMLQuantizationType(enum.IntEnum):
    """ggml's tensor types (ggml.h's enum ggml_type ids)."""
    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    IQ2_XXS = 16
    IQ2_XS = 17
    IQ3_XXS = 18
    IQ1_S = 19
    IQ4_NL = 20
    IQ3_S = 21
    IQ2_S = 22
    IQ4_XS = 23
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    IQ1_M = 29
    BF16 = 30
    TQ1_0 = 34
    TQ2_0 = 35


# (elements per block, bytes per block) of each type: the library's dtype
# table (lib/core/dtype.c, checked against ggml-common.h by test_core), not a
# copy of it.
GGML_QUANT_SIZES = {t.value: tuple(_mfmt.dtype_info(t.name)[2:4]) for t in GGMLQuantizationType}

_NUMPY_TYPES = {np.dtype(np.float16): 1, np.dtype(np.float32): 0, np.dtype(np.float64): 28,
                np.dtype(np.int8): 24, np.dtype(np.int16): 25, np.dtype(np.int32): 26,
                np.dtype(np.int64): 27}

_PACK = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def _pad(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def _encode_string(val) -> bytes:
    b = val.encode("utf-8", "surrogateescape") if isinstance(val, str) else bytes(val)
    return struct.pack("<Q", len(b)) + b


def encode_value(val: Any, vtype: int, add_vtype: bool = True) -> bytes:
    """One GGUF value's bytes (with its type id first when add_vtype)."""
    out = bytearray(struct.pack("<I", vtype) if add_vtype else b"")
    if vtype in _PACK:
        out += struct.pack("<" + _PACK[vtype], val)
    elif vtype == GGUFValueType.STRING:
        out += _encode_string(val)
    elif vtype == GGUFValueType.ARRAY:
        if isinstance(val, np.ndarray):
            val = val.tolist()
        if not isinstance(val, (list, tuple, bytes, bytearray)) or len(val) == 0:
            raise ValueError("a GGUF array needs a non-empty sequence")
        if isinstance(val, (bytes, bytearray)):
            ltype = GGUFValueType.UINT8
        else:
            ltype = GGUFValueType.get_type(val[0])
            if any(GGUFValueType.get_type(x) is not ltype for x in val[1:]):
                raise ValueError("All items in a GGUF array should be of the same type")
        out += struct.pack("<IQ", ltype, len(val))
        for x in val:
            out += encode_value(x, ltype, add_vtype=False)
    else:
        raise ValueError(f"Invalid GGUF metadata value type {vtype!r}")
    return bytes(out)


def _encode_typed(val: Any, types: Sequence[int]) -> bytes:
    """A value with the types a file gave it (reader side: arrays keep their
    element type instead of the one gguf-py would guess)."""
    t = types[0]
    if t != GGUFValueType.ARRAY:
        return encode_value(val, t, add_vtype=False)
    items = val.tolist() if isinstance(val, np.ndarray) else list(val)
    out = bytearray(struct.pack("<IQ", types[1], len(items)))
    for x in items:
        out += _encode_typed(x, list(types[1:]))
    return bytes(out)


class ReaderField(NamedTuple):
    """One metadata key as GGUFReader.fields[key] describes it: its byte
    offset in the file, its GGUF types (``types[0]``; arrays then their
    element type) and its value (``contents()``)."""
    offset: int
    name: str
    types: Tuple[GGUFValueType, ...]
    value: Any

    def contents(self) -> Any:
        """The value (gguf-py's ReaderField.contents())."""
        return self.value


def reader_fields(model) -> dict:
    """name -> ReaderField, in file order (GGUF)."""
    types = model._metadata_types()
    offsets = model._metadata(True)
    values = model.metadata
    return {k: ReaderField(offsets[k], k, tuple(GGUFValueType(t) for t in types[k]), values[k])
            for k in types}


def data_offset(model) -> Optional[int]:
    """Where a GGUF's tensor data starts (GGUFReader.data_offset): the end of
    the header, KV pairs and tensor infos, padded to the alignment."""
    if model.format != "gguf":
        return None
    fields = reader_fields(model)
    end = 24
    if fields:
        last = list(fields.values())[-1]
        end = last.offset + len(_encode_string(last.name)) + 4 + _encode_typed(last.value, last.types).__len__()
    for t in model.tensors.values():
        end += len(_encode_string(t.name)) + 4 + 8 * max(len(t.shape), 1) + 4 + 8
    return _pad(end, alignment(model))


def alignment(model) -> Optional[int]:
    """general.alignment, or 32 (GGUF); None for other formats."""
    if model.format != "gguf":
        return None
    return int(model.metadata.get("general.alignment", GGUF_DEFAULT_ALIGNMENT))


class _TensorEntry:
    __slots__ = ("name", "shape", "dtype", "nbytes", "data")

    def __init__(self, name, shape, dtype, nbytes, data):
        self.name, self.shape, self.dtype, self.nbytes, self.data = name, shape, dtype, nbytes, data


class GGUFWriter:
    """gguf-py's GGUFWriter, for scripts that write GGUF: the same calls give
    the same bytes (little-endian; no splitting: ``mfmt split`` does that).

        w = mfmt.GGUFWriter("out.gguf", "llama")
        w.add_uint32("llama.block_count", 2)
        w.add_tensor("token_embd.weight", np.zeros((320, 64), np.float16))
        w.write_header_to_file(); w.write_kv_data_to_file()
        w.write_tensors_to_file(); w.close()

    The file is written beside ``path`` under a temporary name and renamed
    into place by ``close()`` once every part is written; a writer closed
    early (or garbage-collected) leaves nothing behind."""

    def __init__(self, path, arch: str, use_temp_file: bool = False, endianess=None):
        if endianess not in (None, 0) and getattr(endianess, "name", "") != "LITTLE":
            raise NotImplementedError("mfmt.GGUFWriter writes little-endian GGUF only")
        self.path = os.fspath(path) if path is not None else None
        self.arch = arch
        self.data_alignment = GGUF_DEFAULT_ALIGNMENT
        self.kv_data = {}
        self.tensors = {}
        self._f = None
        self._tmp = None
        self._state = "no-file"
        self._written = 0
        self.add_architecture()

    # -- metadata ---------------------------------------------------------
    def add_key_value(self, key: str, val: Any, vtype: int) -> None:
        if key in self.kv_data:
            raise ValueError(f"Duplicated key name {key!r}")
        self.kv_data[key] = (val, GGUFValueType(vtype))

    def add_uint8(self, key, val): self.add_key_value(key, val, GGUFValueType.UINT8)
    def add_int8(self, key, val): self.add_key_value(key, val, GGUFValueType.INT8)
    def add_uint16(self, key, val): self.add_key_value(key, val, GGUFValueType.UINT16)
    def add_int16(self, key, val): self.add_key_value(key, val, GGUFValueType.INT16)
    def add_uint32(self, key, val): self.add_key_value(key, val, GGUFValueType.UINT32)
    def add_int32(self, key, val): self.add_key_value(key, val, GGUFValueType.INT32)
    def add_float32(self, key, val): self.add_key_value(key, val, GGUFValueType.FLOAT32)
    def add_uint64(self, key, val): self.add_key_value(key, val, GGUFValueType.UINT64)
    def add_int64(self, key, val): self.add_key_value(key, val, GGUFValueType.INT64)
    def add_float64(self, key, val): self.add_key_value(key, val, GGUFValueType.FLOAT64)
    def add_bool(self, key, val): self.add_key_value(key, val, GGUFValueType.BOOL)

    def add_string(self, key: str, val: str) -> None:
        if val:  # gguf-py skips empty strings
            self.add_key_value(key, val, GGUFValueType.STRING)

    def add_array(self, key: str, val: Sequence[Any]) -> None:
        if len(val) > 0:  # and empty arrays
            self.add_key_value(key, val, GGUFValueType.ARRAY)

    def add_architecture(self): self.add_string("general.architecture", self.arch)
    def add_type(self, type_name): self.add_string("general.type", type_name)
    def add_name(self, name): self.add_string("general.name", name)
    def add_description(self, description): self.add_string("general.description", description)
    def add_file_type(self, ftype): self.add_uint32("general.file_type", ftype)
    def add_quantization_version(self, v): self.add_uint32("general.quantization_version", v)
    def add_tags(self, tags): self.add_array("general.tags", tags)

    def add_custom_alignment(self, alignment: int) -> None:
        self.data_alignment = alignment
        self.add_uint32("general.alignment", alignment)

    # -- tensors ----------------------------------------------------------
    def add_tensor_info(self, name: str, tensor_shape: Sequence[int], tensor_dtype,
                        tensor_nbytes: int, raw_dtype: Optional[int] = None) -> None:
        if self._state != "no-file":
            raise ValueError(f"Expected output file to be not yet opened, got {self._state}")
        if name in self.tensors:
            raise ValueError(f"Duplicated tensor name {name!r}")
        if raw_dtype is None:
            dtype = _NUMPY_TYPES.get(np.dtype(tensor_dtype))
            if dtype is None:
                raise ValueError("Only F16, F32, F64, I8, I16, I32, I64 tensors are supported for now")
        else:
            dtype = int(raw_dtype)
            if np.dtype(tensor_dtype) == np.uint8:  # bytes of blocks: the last dim in elements
                block, size = GGML_QUANT_SIZES[dtype]
                if tensor_shape[-1] % size:
                    raise ValueError(f"{name}: {tensor_shape[-1]} bytes a row is not whole blocks")
                tensor_shape = (*tensor_shape[:-1], tensor_shape[-1] // size * block)
        self.tensors[name] = _TensorEntry(name, tuple(int(d) for d in tensor_shape), dtype,
                                          int(tensor_nbytes), None)

    def add_tensor(self, name: str, tensor: np.ndarray, raw_shape: Optional[Sequence[int]] = None,
                   raw_dtype: Optional[int] = None) -> None:
        shape = raw_shape if raw_shape is not None else tensor.shape
        self.add_tensor_info(name, shape, tensor.dtype, tensor.nbytes, raw_dtype=raw_dtype)
        self.tensors[name].data = tensor

    # -- writing ----------------------------------------------------------
    def _open(self, path):
        if path is not None:
            self.path = os.fspath(path)
        if self.path is None:
            raise ValueError("no output path")
        d = os.path.dirname(os.path.abspath(self.path))
        fd, self._tmp = tempfile.mkstemp(prefix=".mfmt-gguf-", dir=d)
        self._f = os.fdopen(fd, "wb")

    def _write(self, b: bytes) -> None:
        self._f.write(b)
        self._written += len(b)

    def _padding(self) -> None:
        self._write(b"\0" * (_pad(self._written, self.data_alignment) - self._written))

    def write_header_to_file(self, path=None) -> None:
        if self._state != "no-file":
            raise ValueError(f"Expected output file to be empty, got {self._state}")
        self._open(path)
        self._write(struct.pack("<IIQQ", GGUF_MAGIC, GGUF_VERSION, len(self.tensors), len(self.kv_data)))
        self._state = "header"

    def write_kv_data_to_file(self) -> None:
        if self._state != "header":
            raise ValueError(f"Expected output file to contain the header, got {self._state}")
        for key, (val, vtype) in self.kv_data.items():
            self._write(_encode_string(key) + encode_value(val, vtype))
        self._state = "kv"

    def write_ti_data_to_file(self) -> None:
        if self._state != "kv":
            raise ValueError(f"Expected output file to contain KV data, got {self._state}")
        offset = 0
        for t in self.tensors.values():
            ne = t.shape[::-1]
            self._write(_encode_string(t.name) + struct.pack("<I", len(ne)) +
                        b"".join(struct.pack("<Q", d) for d in ne) + struct.pack("<IQ", t.dtype, offset))
            offset += _pad(t.nbytes, self.data_alignment)
        self._state = "ti"

    def write_tensors_to_file(self, *, progress: bool = False) -> None:
        self.write_ti_data_to_file()
        self._padding()
        for t in self.tensors.values():
            if t.data is None:
                raise ValueError(f"{t.name}: no data (add_tensor_info without write_tensor_data)")
            self._write_tensor(t, t.data)
        self._state = "weights"

    def write_tensor_data(self, tensor: np.ndarray) -> None:
        """The next tensor whose info was added, after write_ti_data_to_file."""
        if self._state not in ("ti", "weights"):
            raise ValueError(f"Expected output file to contain tensor info or weights, got {self._state}")
        pending = [t for t in self.tensors.values() if t.data is None]
        if not pending:
            raise ValueError("every tensor is written")
        if self._state == "ti":
            self._padding()
        self._write_tensor(pending[0], tensor)
        pending[0].data = True
        self._state = "weights"

    def _write_tensor(self, t, data) -> None:
        b = np.ascontiguousarray(data).tobytes()
        if len(b) != t.nbytes:
            raise ValueError(f"{t.name}: {len(b)} bytes, the info said {t.nbytes}")
        self._write(b)
        self._padding()  # after every tensor, the last one too

    def flush(self) -> None:
        if self._f:
            self._f.flush()

    def close(self) -> None:
        """Finishes the file: renamed into place when header, metadata,
        tensor infos and every tensor were written; removed otherwise."""
        if self._f is None:
            return
        # a file without tensors may end after its metadata (gguf-py's
        # write_vocab: header and KV pairs, then close)
        complete = (self._state in ("kv", "ti") and not self.tensors) or \
            (self._state == "weights" and all(t.data is not None for t in self.tensors.values()))
        f, self._f = self._f, None
        try:
            if complete:
                f.flush()
                os.fsync(f.fileno())
        finally:
            f.close()
        if complete:
            os.replace(self._tmp, self.path)
        else:
            os.unlink(self._tmp)
        self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_f", None) is not None:
            self._f.close()
            self._f = None
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
