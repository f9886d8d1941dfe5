"""A stand-in for mlx.core (the compiled extension, not built here) that runs
mlx_lm's and mlx.nn's Python code for real and records what each array is:
the source tensor it was loaded from, the astype casts and the quantize
calls. The recorded expressions are then computed by MLX's C++ core
(driver.cpp). Nothing here computes numbers."""
import json
import struct
import sys
import types


class Dtype:
    def __init__(self, name, size, kind):
        self.name, self.size, self.kind = name, size, kind

    def __repr__(self):
        return "mlx.core." + self.name


class _Cat:
    def __init__(self, name):
        self.name = name


floating = _Cat("floating")
integer = _Cat("integer")
number = _Cat("number")
generic = _Cat("generic")
float16 = Dtype("float16", 2, "f")
bfloat16 = Dtype("bfloat16", 2, "f")
float32 = Dtype("float32", 4, "f")
float64 = Dtype("float64", 8, "f")
uint8 = Dtype("uint8", 1, "u")
uint16 = Dtype("uint16", 2, "u")
uint32 = Dtype("uint32", 4, "u")
uint64 = Dtype("uint64", 8, "u")
int8 = Dtype("int8", 1, "i")
int16 = Dtype("int16", 2, "i")
int32 = Dtype("int32", 4, "i")
int64 = Dtype("int64", 8, "i")
bool_ = Dtype("bool", 1, "b")
complex64 = Dtype("complex64", 8, "c")

ST = {"F16": float16, "BF16": bfloat16, "F32": float32, "F64": float64, "U8": uint8,
      "U16": uint16, "U32": uint32, "U64": uint64, "I8": int8, "I16": int16, "I32": int32,
      "I64": int64, "BOOL": bool_}


def issubdtype(a, b):
    if isinstance(b, Dtype):
        return a is b
    if b is floating:
        return a.kind == "f"
    if b is integer:
        return a.kind in "iu"
    return True


class array:
    def __init__(self, shape, dtype=float32, expr=("init",)):
        if not isinstance(shape, (tuple, list)):
            shape = ()
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.expr = expr

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self):
        return self.size * self.dtype.size

    def astype(self, dt, stream=None):
        if dt is self.dtype:
            return self
        return array(self.shape, dt, ("astype", self.expr, dt.name))

    def __repr__(self):
        return "array(%s, %s)" % (self.shape, self.dtype)


def _shaped(shape, dtype=None, **kw):
    return array(shape if isinstance(shape, (tuple, list)) else (shape,), dtype or float32)


class _Random(types.ModuleType):
    def uniform(self, low=0, high=1, shape=(), dtype=float32, key=None, stream=None):
        return array(shape, dtype)

    def normal(self, shape=(), dtype=float32, loc=0.0, scale=1.0, key=None, stream=None):
        return array(shape, dtype)

    def __getattr__(self, n):
        return lambda *a, **k: None


random = _Random("mlx.core.random")
sys.modules["mlx.core.random"] = random


def zeros(shape, dtype=float32, stream=None):
    return _shaped(shape, dtype)


def ones(shape, dtype=float32, stream=None):
    return _shaped(shape, dtype)


def quantize(w, group_size=None, bits=None, mode="affine", global_scale=None, stream=None):
    assert mode == "affine"
    gs = group_size or 64
    bits = bits or 4
    assert w.shape[-1] % gs == 0
    qshape = w.shape[:-1] + (w.shape[-1] * bits // 32,)
    sshape = w.shape[:-1] + (w.shape[-1] // gs,)
    e = ("quantize", w.expr, gs, bits)
    return (array(qshape, uint32, e + (0,)), array(sshape, w.dtype, e + (1,)),
            array(sshape, w.dtype, e + (2,)))


def dequantize(w, scales, biases=None, group_size=None, bits=None, mode="affine", **kw):
    gs = group_size or 64
    bits = bits or 4
    shape = w.shape[:-1] + (w.shape[-1] * 32 // bits,)
    return array(shape, scales.dtype, ("dequantize", w.expr, scales.expr, biases.expr, gs, bits))


def load(path, format=None, return_metadata=False, stream=None):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        out[k] = array(v["shape"], ST[v["dtype"]], ("load", str(path), k))
    return out


SAVED = []  # (path, {name: array}, metadata) in call order


def save_safetensors(path, arrays, metadata=None):
    SAVED.append((str(path), dict(arrays), dict(metadata or {})))


def compile(fun=None, **kw):
    if fun is None:
        return lambda f: f
    return fun


def eval(*a, **k):
    pass


class _Anything:
    def __call__(self, *a, **k):
        return _Anything()

    def __getattr__(self, n):
        return _Anything()


def __getattr__(name):
    return _Anything()


def stack(arrays, axis=0, stream=None):
    """mx.stack along axis 0 (the experts' stacking in sanitize)."""
    assert axis == 0 and arrays
    a0 = arrays[0]
    assert all(a.shape == a0.shape and a.dtype is a0.dtype for a in arrays)
    return array((len(arrays),) + a0.shape, a0.dtype, ("stack",) + tuple(a.expr for a in arrays))
