"""Hugging Face Hub names, the local Hub cache, remote reads and
llama-gguf-hash manifests: the CLI's --token / --max-bytes / --timeout,
`mfmt cache scan|verify`, `mfmt download` and `mfmt hash --manifest|--check`
as functions. Hub names are resolved offline, as huggingface_hub does
(doc/hub.md): ORG/NAME[@REV] or hf://ORG/NAME[@REV][/FILE]."""

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import _mfmt
from ._errors import UsageError

__all__ = ["configure_remote", "remote_bytes_read", "hub_resolve", "hub_cache_dir", "HubTarget",
           "cache_scan", "cache_verify", "download", "CacheReport", "CacheRepo",
           "CacheRevision", "CacheVerifyReport", "CacheProblem", "DownloadReport",
           "DownloadFile", "manifest", "check_manifest", "ManifestCheck", "ManifestLine",
           "record", "check_record", "RecordCheck", "RecordFile"]

# The CLI's default byte budget for remote reads (--max-bytes: 128MiB).
CLI_MAX_BYTES = 128 << 20
# Hub names not in the cache resolve to their URLs (read by HTTP ranges)
# once configure_remote() was called: until then nothing goes to the network.
_remote = {"on": False}


def configure_remote(*, token=None, max_bytes=None, timeout=None, retries=None) -> None:
    """Settings of remote reads (http(s) URLs and Hub files not in the cache),
    for the whole process, as the CLI's --token, --max-bytes, --timeout:
    token (default $HF_TOKEN, else the cache's token file; never printed),
    max_bytes (stop before receiving more in all; 0 or None: no limit; the
    CLI's default is 128MiB), timeout (connect timeout and longest stall in
    seconds, default 30), retries of a failed range (default 3, at most 10).
    From then on a Hub file that is not in the cache (hf://ORG/NAME/FILE)
    is read from the Hub by HTTP ranges, as the CLI reads it; before the
    first call nothing goes to the network. Not to be called while another
    thread reads remotely."""
    dflt_bytes, dflt_timeout, dflt_retries = _mfmt.remote_defaults()
    if isinstance(max_bytes, str):
        max_bytes = _mfmt.parse_size(max_bytes)
    for name, v in (("max_bytes", max_bytes), ("timeout", timeout), ("retries", retries)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise UsageError(f"{name}={v!r}: a non-negative number")
    if timeout is not None and not 1 <= timeout <= 3600:
        raise UsageError(f"timeout={timeout!r}: seconds, 1 to 3600")
    _mfmt.remote_configure(token, dflt_bytes if max_bytes is None else max_bytes,
                           dflt_timeout if timeout is None else timeout,
                           dflt_retries if retries is None else retries)
    _remote["on"] = True


def remote_bytes_read() -> int:
    """Body bytes received over HTTP by this process so far."""
    return _mfmt.remote_bytes_read()


class HubTarget(NamedTuple):
    """What a model argument names: kind "local" (a path, used as is),
    "cached" (path: the file or snapshot folder in the cache) or "remote"
    (path: the https URL of the file, read by ranges)."""
    kind: str
    path: str
    repo_type: Optional[str]
    repo_id: Optional[str]
    revision: Optional[str]
    commit: Optional[str]
    file: Optional[str]
    cache_dir: Optional[str]


def hub_resolve(name, *, cache_dir=None, allow_remote=False) -> HubTarget:
    """Resolve ORG/NAME[@REV] or hf://ORG/NAME[@REV][/FILE] in the local Hub
    cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub, as
    huggingface_hub), offline. A path that exists locally is itself. A file
    not in the cache fails unless allow_remote (then its URL)."""
    d = _mfmt.hub_resolve(os.fspath(name), None if cache_dir is None else os.fspath(cache_dir),
                          bool(allow_remote))
    return HubTarget(**d)


def hub_cache_dir() -> str:
    """The cache directory huggingface_hub would use."""
    return _mfmt.hub_cache_dir()


def _looks_like_hub_name(p: str) -> bool:
    if p.startswith("hf://"):
        return True
    parts = p.split("@", 1)[0].split("/")
    return len(parts) == 2 and all(parts) and not p.startswith((".", "/", "~"))


def input_path(path, *, allow_remote=None):
    """What the CLI opens for a model argument: a Hub name (hf://... always;
    a bare ORG/NAME only when no such local path exists and the cache has
    it) resolved to its cached file or folder; anything else as given."""
    if not isinstance(path, (str, os.PathLike)):
        return path
    p = os.fspath(path)
    if not isinstance(p, str) or os.path.exists(p) or not _looks_like_hub_name(p):
        return path
    remote = _remote["on"] if allow_remote is None else allow_remote
    try:
        return hub_resolve(p, allow_remote=remote).path
    except Exception:
        if p.startswith("hf://"):
            raise
        return path  # a mistyped local path: opening it says so


# ------------------------------------------------------------------ cache

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
    """`mfmt cache scan`: every repo of the cache, its revisions and sizes
    (blobs counted once, measured through the links, as `hf cache scan`)."""
    cache_dir: str
    repos: List[CacheRepo]
    size_on_disk: int
    warnings: List[str]


def cache_scan(cache_dir=None) -> CacheReport:
    """List the Hub cache's repos, revisions (commit and refs) and sizes."""
    d = _mfmt.cache_scan(None if cache_dir is None else os.fspath(cache_dir))
    repos = [CacheRepo(**dict(r, revisions=[CacheRevision(**v) for v in r["revisions"]]))
             for r in d["repos"]]
    return CacheReport(d["cache_dir"], repos, d["size_on_disk"], d["warnings"])


class CacheProblem(NamedTuple):
    """kind: "corrupt", "missing", "dangling", "incomplete", "bad-ref",
    "unchecked" (a plain copy whose hash is recorded nowhere)."""
    kind: str
    repo_id: str
    path: str
    detail: str


class CacheVerifyReport(NamedTuple):
    """`mfmt cache verify`: ok when no problem but "unchecked" was found."""
    cache_dir: str
    n_repos: int
    n_blobs_checked: int
    bytes_checked: int
    problems: List[CacheProblem]

    @property
    def ok(self) -> bool:
        return all(p.kind == "unchecked" for p in self.problems)


def cache_verify(repo=None, *, cache_dir=None, progress=None) -> CacheVerifyReport:
    """Hash every blob of the cache (or of one repo, ORG/NAME) against its
    name (SHA-256 for LFS files, git's blob SHA-1 for the others) and check
    every snapshot link and ref. A cache or repo that is not there raises."""
    d = _mfmt.cache_verify(None if cache_dir is None else os.fspath(cache_dir), repo, progress)
    return CacheVerifyReport(d["cache_dir"], d["n_repos"], d["n_blobs_checked"],
                             d["bytes_checked"], [CacheProblem(*p) for p in d["problems"]])


class DownloadFile(NamedTuple):
    """state: "present" (already cached), "downloaded", "resumed"."""
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


def download(repo, *, include=(), exclude=(), cache_dir=None, progress=None) -> DownloadReport:
    """Fill the Hub cache with a repo (ORG/NAME[@REV]) or one file
    (hf://ORG/NAME[@REV]/FILE) as snapshot_download does: each blob hashed
    as it lands and renamed into place only when it hashes to its name;
    resumable. include/exclude: glob patterns ("dir/" = its files). The
    remote settings (configure_remote) apply; $HF_ENDPOINT names a mirror."""
    inc = [include] if isinstance(include, str) else list(include or ())
    exc = [exclude] if isinstance(exclude, str) else list(exclude or ())
    d = _mfmt.hub_download(str(repo), None if cache_dir is None else os.fspath(cache_dir),
                           inc, exc, progress)
    return DownloadReport(d["repo_id"], d["revision"], d["commit"], d["snapshot"],
                          d["bytes_fetched"], [DownloadFile(**f) for f in d["files"]])


# -------------------------------------------------------------- manifests

def _kinds(algo):
    if algo is None:
        return None
    if isinstance(algo, str):
        return algo
    return ",".join(algo)


def manifest(path, *, algo="sha256", out=None, no_layer=False, label=None) -> str:
    """llama-gguf-hash's manifest of a model (`mfmt hash --manifest`): one
    line per tensor and kind, then the model's lines. algo: "sha256",
    "xxh64", "xxh3", "sha1", "uuid", "all" or a list of them; no_layer: the
    model's lines only; label: the name in the lines (default: path).
    out: also write it there (atomically). Returns the text."""
    p = os.fspath(path)
    text = _mfmt.manifest(p, _kinds(algo), p if label is None else label, not no_layer)
    if out is not None:
        from ._ops import _write_text_atomic
        _write_text_atomic(os.fspath(out), text)
    return text


class ManifestLine(NamedTuple):
    """One computed line: kind, hex digest, name (LABEL or LABEL:TENSOR),
    result "Ok", "Mismatch" or "Not Found"."""
    kind: str
    hash: str
    name: str
    result: str


class ManifestCheck(NamedTuple):
    """`mfmt hash --check`: outcome as llama-gguf-hash decides it (its exit
    code: 0 ok, 1 mismatch, 3 missing entry, 4 unknown hash, 5 manifest
    unreadable) and its name, the label matched and every line."""
    code: int
    outcome: str
    label: Optional[str]
    lines: List[ManifestLine]

    @property
    def ok(self) -> bool:
        return self.code == 0


def check_manifest(path, manifest_path, *, algo=None) -> ManifestCheck:
    """Check a model against a llama-gguf-hash manifest (the strongest kind
    it holds, or algo)."""
    code, outcome, label, lines = _mfmt.manifest_check(os.fspath(path), os.fspath(manifest_path),
                                                       _kinds(algo))
    return ManifestCheck(code, outcome, label, [ManifestLine(*l) for l in lines])


# -------------------------------------------------------- delivery records

def record(model, out=None, *, tensors=False) -> dict:
    """A delivery record of every file of a model (`mfmt hash --record`): a
    Hub cache snapshot (ORG/NAME, hf://...), a directory or one file; each
    file's path, size, SHA-256 and tensor-content SHA-256 (tensors=True:
    each tensor's too), with the repo and commit it came from. out: also
    written there (atomically). Returns the record (a dict)."""
    import json
    text, _ = _mfmt.record_make(os.fspath(model), bool(tensors))
    if out is not None:
        from ._ops import _write_text_atomic
        _write_text_atomic(os.fspath(out), text)
    return json.loads(text)


class RecordFile(NamedTuple):
    """One recorded file against the copy: result "ok", "missing",
    "differs" or "file-differs-tensors-same"; tensors_same for a differing
    file (None: not known); meaning: a sentence for the user."""
    path: str
    result: str
    tensors_same: Optional[bool]
    meaning: str


class RecordCheck(NamedTuple):
    """`mfmt hash --check-record`: code 0 every file matches, 1 a file
    differs, 3 a recorded file is missing, 5 the record is unreadable
    (error says why)."""
    code: int
    error: Optional[str]
    repo: Optional[str]
    commit: Optional[str]
    files: List[RecordFile]

    @property
    def ok(self) -> bool:
        return self.code == 0


def check_record(model, record_path) -> RecordCheck:
    """Check a copy of a model against a delivery record: which file
    differs, and whether its tensors (the weights) do."""
    d = _mfmt.record_check(os.fspath(model), os.fspath(record_path))
    return RecordCheck(d["code"], d["error"], d["repo"], d["commit"],
                       [RecordFile(*f) for f in d["files"]])
