"""Operations: detect, validate, hash, scan, ... as Python objects."""

import os
from typing import Dict, List, NamedTuple, Optional

from . import _mfmt
from ._errors import FormatError, UnsafeFileError, _split_message

__all__ = ["detect", "validate", "hash", "Detection", "Validation", "Problem", "Hashes"]


class Detection(NamedTuple):
    """mfmt.detect's answer: the format from the bytes, and what was seen."""
    path: str
    format: str
    detail: str


def detect(path) -> Detection:
    """The format of a file or directory, from its bytes (never its name)."""
    fmt, detail = _mfmt.detect(os.fspath(path))
    return Detection(os.fspath(path), fmt, detail)


class Problem(NamedTuple):
    """One broken rule: the file, byte offset (None if not known) and rule."""
    path: Optional[str]
    offset: Optional[int]
    rule: str
    message: str


class Validation(NamedTuple):
    """mfmt.validate's answer: ``ok`` is True when no rule is broken."""
    path: str
    format: Optional[str]
    ok: bool
    problems: List[Problem]

    def raise_if_invalid(self):
        """Raise FormatError (every problem in .messages) unless ok."""
        if not self.ok:
            msgs = [p.message for p in self.problems]
            raise FormatError(msgs[0], msgs)


def validate(path) -> Validation:
    """Check every rule of the format, collecting all breaches (as
    `mfmt validate`). I/O errors raise; broken rules are returned."""
    fmt, code, opened, msgs = _mfmt.validate(os.fspath(path))
    problems = [Problem(*_split_message(m), m) for m in msgs]
    return Validation(os.fspath(path), fmt, bool(opened and code == 0 and not problems),
                      problems)


class Hashes(NamedTuple):
    """mfmt.hash's answer (as `mfmt hash --json --tensors`)."""
    path: str
    algo: str
    file: str
    tensor_content: Optional[str]
    tensors: Optional[Dict[str, str]]


def hash(path, *, algo="sha256", tensors=False, file=True) -> Hashes:  # noqa: A001
    """Hashes of a model: the whole file (file=True; not for directories),
    all tensors' canonical bytes (tensor_content), and with tensors=True
    each tensor's canonical hash (SHA-256 of its elements in C order,
    little-endian, stored dtype: the same weights give the same hash in
    every format)."""
    from ._model import Model
    p = os.fspath(path)
    whole = _mfmt.hash_file(p, algo) if file and not os.path.isdir(p) else None
    with Model(p) as m:
        content = m.hash_content(algo)
        per = {n: m.hash_tensor(n, algo) for n in m} if tensors else None
    return Hashes(p, algo, whole, content, per)


def _check_safe(model):
    """Raises UnsafeFileError when loading the model's file would run code."""
    scan = globals().get("scan")
    if scan is None:
        return
    verdict = scan(model.path)
    if verdict.verdict != "safe":
        raise UnsafeFileError(f"{model.path}: {verdict.verdict}: " +
                              "; ".join(f.message for f in verdict.findings[:3]),
                              findings=verdict.findings, verdict=verdict.verdict)
