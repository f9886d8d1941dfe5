"""Exceptions raised by mfmt (imported by the C layer, so it imports nothing of it)."""

import re

__all__ = ["Error", "FormatError", "UnsafeFileError", "UnsupportedError",
           "UsageError", "FileError", "FileNotFound", "FilePermissionError", "CancelledError"]

# libmfmt's message shape (doc/architecture.md, "Errors"):
#   FILE: byte N: rule        or  FILE: byte N (file byte M): rule
#   FILE: rule                or  rule
_AT_BYTE = re.compile(r"^(?P<path>.*?): byte (?P<off>\d+)(?: \(file byte (?P<foff>\d+)\))?: (?P<rule>.*)$", re.S)
_AT_FILE = re.compile(r"^(?P<path>[^:]*[/.][^:]*): (?P<rule>.*)$", re.S)


def _split_message(msg):
    """(path, offset, rule) of a libmfmt message; None where it names none."""
    m = _AT_BYTE.match(msg)
    if m:
        off = int(m.group("foff") or m.group("off"))
        return m.group("path"), off, m.group("rule")
    m = _AT_FILE.match(msg)
    if m:
        return m.group("path"), None, m.group("rule")
    return None, None, msg


class Error(Exception):
    """Base class of every error mfmt raises.

    Attributes: ``message`` (the first problem, as libmfmt words it:
    ``FILE: byte N: rule``), ``messages`` (every problem found), ``path``
    (the file it names, or None), ``offset`` (the byte offset in that file,
    or None), ``rule`` (the rule that was broken), ``code`` (libmfmt's
    ``mf_code`` number).
    """

    code = 0

    def __init__(self, message, messages=None, code=None):
        super().__init__(message)
        self.message = message
        self.messages = list(messages) if messages else [message]
        if code is not None:
            self.code = code
        self.path, self.offset, self.rule = _split_message(message)

    def __str__(self):
        return self.message


class FormatError(Error, ValueError):
    """The input breaks a rule of its format (``.path``, ``.offset``, ``.rule``)."""
    code = 1


class UnsafeFileError(Error):
    """Loading the file would run code (a pickle global off the allowlist).

    ``findings`` lists what the scan found; ``verdict`` is ``"unknown"`` or
    ``"dangerous"``. Pass ``allow_unsafe=True`` to read the tensors anyway:
    mfmt still executes nothing.
    """
    code = 2

    def __init__(self, message, messages=None, code=None, findings=(), verdict=None):
        super().__init__(message, messages, code)
        self.findings = list(findings)
        self.verdict = verdict


class UnsupportedError(Error, NotImplementedError):
    """Valid input, but mfmt cannot do this (yet)."""
    code = 3


class FileError(Error, OSError):
    """Opening, reading, writing or renaming a file failed (an ``OSError``)."""
    code = 4

    def __init__(self, message, messages=None, code=None):
        Error.__init__(self, message, messages, code)
        self.filename = self.path
        self.strerror = message


class FileNotFound(FileError, FileNotFoundError):
    """The path does not exist: a ``FileNotFoundError`` (as ``open()`` and
    safetensors raise) that is also an ``mfmt.Error``."""


class FilePermissionError(FileError, PermissionError):
    """The path may not be read or written: a ``PermissionError`` that is
    also an ``mfmt.Error``."""


# libmfmt words an I/O failure with strerror's text: the errno it names
_ERRNO_CLASSES = (("No such file or directory", FileNotFound, 2),
                  ("Permission denied", FilePermissionError, 13))


class UsageError(Error, ValueError):
    """Bad arguments from the caller."""
    code = 5


class CancelledError(Error):
    """The progress callback returned False or raised; nothing was written."""
    code = -1


_BY_CODE = {1: FormatError, 2: UnsafeFileError, 3: UnsupportedError,
            4: FileError, 5: UsageError}


def _from_status(code, message, messages):
    """The exception for an mf_status (called by the C layer)."""
    if code == 6:
        return MemoryError(message)
    cls = _BY_CODE.get(code, Error)
    if cls is FileError:
        for text, sub_cls, errno in _ERRNO_CLASSES:
            if message.endswith(text):
                err = sub_cls(message, messages, code)
                err.errno = errno
                return err
    return cls(message, messages, code)

for _cls in (Error, FormatError, UnsafeFileError, UnsupportedError, FileError,
             FileNotFound, FilePermissionError, UsageError, CancelledError):
    _cls.__module__ = "mfmt"
