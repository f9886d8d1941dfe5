"""mfmt.safe_open: the safetensors reading API over every format mfmt reads."""

from ._errors import UsageError
from ._model import _is_plain
from ._model import open as _open

__all__ = ["safe_open"]


def _torch():
    try:
        import torch
    except ImportError:
        raise UsageError('framework="pt" needs torch, which is not installed') from None
    return torch


class safe_open:  # noqa: N801 (the name safetensors users know)
    """``safe_open(path, framework="np")``: safetensors' API (keys(),
    get_tensor, get_slice with get_shape/get_dtype, metadata()) for a
    safetensors file and equally for a .bin, .gguf, .onnx, .h5, .npz or a
    Hugging Face directory.

    framework="np" gives NumPy arrays (read-only views of the mapping where
    the bytes lie plainly in the file). framework="pt" gives torch tensors:
    copies, because torch has no read-only tensors and a write into the
    read-only mapping would crash; BF16 comes as torch.bfloat16.
    A pickle-based file that is not safe raises UnsafeFileError unless
    allow_unsafe=True (which still executes nothing).
    """

    def __init__(self, path, framework="np", device="cpu", *, allow_unsafe=False, _data=None):
        if framework in ("np", "numpy"):
            self._pt = False
        elif framework in ("pt", "torch", "pytorch"):
            self._pt = True
            _torch()
        else:
            raise UsageError(f'framework={framework!r}: "np" or "pt"')
        if device != "cpu" and not self._pt:
            raise UsageError(f'device={device!r}: NumPy arrays live on the "cpu"')
        self._device = device
        if _data is not None:  # mfmt.torch.load(bytes): the file's bytes in memory
            from ._model import open_bytes
            self._model = open_bytes(_data, allow_unsafe=allow_unsafe)
        else:
            self._model = _open(path, allow_unsafe=allow_unsafe)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Close the file (arrays already returned stay valid)."""
        self._model.close()

    @property
    def model(self):
        """The underlying mfmt.Model."""
        return self._model

    def keys(self):
        """Tensor names, sorted (as safetensors' safe_open returns them;
        offset_keys() gives them in the order of their bytes)."""
        return sorted(self._model.keys())

    def offset_keys(self):
        """Tensor names in the order of their bytes in the file."""
        infos = self._model.tensors.values()
        return [t.name for t in sorted(infos, key=lambda t: (t.file or "", t.offset))]

    def metadata(self):
        """safetensors: the __metadata__ map (str -> str), None when absent.
        Other formats: the model's metadata dict (mfmt.Model.metadata)."""
        md = self._model.metadata
        return dict(md) if md else None

    def get_tensor(self, name):
        """The tensor (NumPy array or torch tensor) in the shape get_slice's
        get_shape() reports: ggml block types and packed codes come decoded,
        as float32 (never their bytes under a float shape)."""
        info = self._model.info(name)
        if not _is_plain(info.dtype):
            return self._convert(self._model.get_tensor(name, dtype="float32"), name)
        return self._convert(self._model.get_tensor(name), name)

    def get_slice(self, name):
        """A slice object: get_shape(), get_dtype(), [index] reads only the
        rows asked for."""
        return _Slice(self, self._model.get_slice(name), name)

    def _convert(self, arr, name):
        if not self._pt:
            return arr
        stored = self._model.info(name).dtype
        # decoded blocks are floats: torch gets them as they are
        return _to_torch(arr, stored if _is_plain(stored) else "F32", self._device)


_TORCH_BITS = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


def _to_torch(arr, stored, device):
    torch = _torch()
    import numpy as np
    arr = np.array(arr, copy=True, order="C")
    name = _TORCH_BITS.get(stored)
    if name:
        dt = getattr(torch, name, None)
        if dt is None:
            raise UsageError(f"this torch has no {name} (stored {stored})")
        # torch 1.13 has no uint16: reinterpret the bits through int16.
        if arr.dtype == np.uint16:
            arr = arr.view(np.int16)
        t = torch.from_numpy(arr).view(dt)
    else:
        try:
            t = torch.from_numpy(arr)
        except TypeError:  # torch < 2.3 has no uint16/32/64
            raise UsageError(f"torch {torch.__version__} has no tensor type for {stored}; "
                             'read it with framework="np"') from None
    return t if device == "cpu" else t.to(device)


class _Slice:
    def __init__(self, owner, sl, name):
        self._owner, self._sl, self._name = owner, sl, name

    def get_shape(self):
        return self._sl.get_shape()

    def get_dtype(self):
        return self._sl.get_dtype()

    def __getitem__(self, index):
        return self._owner._convert(self._sl[index], self._name)
