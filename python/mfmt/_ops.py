"""Operations: every command of the mfmt CLI as a function that returns
Python objects. Keyword arguments are named as the CLI's options
(--max-shard-size -> max_shard_size). Long operations take progress=, a
callable(done, total) called from time to time (at most every 50 ms, and
always at the start and the end); returning False (or raising) cancels, and
so does Ctrl-C: the call then raises (CancelledError, the callable's
exception, KeyboardInterrupt) and leaves no partial output. The GIL is
released while libmfmt works, so other Python threads run meanwhile."""

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _mfmt
from ._errors import FormatError, UnsafeFileError, UsageError, _split_message

__all__ = [
    "detect", "validate", "hash", "hash_file", "scan", "convert", "quantize", "dequantize",
    "split", "merge", "diff", "estimate", "plan", "edit", "save_file",
    "EditChange", "EditResult",
    "Detection", "Validation", "Problem", "Hashes", "ScanReport", "Finding",
    "QuantizeResult", "QuantTensor", "DequantizeResult", "DiffRow", "Diff",
    "DIFF_SAME", "DIFF_SAME_VALUES", "DIFF_VALUES", "DIFF_SHAPE", "DIFF_ONLY_A",
    "DIFF_ONLY_B", "DIFF_INCOMPARABLE",
    "Estimate", "Plan",
]


def _write_text_atomic(path, text):
    """text into path whole or not at all (a temporary file beside it, fsync, rename)."""
    import tempfile
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _in(path):
    """A model argument as the CLI takes it: Hub names resolved in the cache."""
    from ._hub import input_path
    return os.fspath(input_path(path))


def _size(v, what):
    """A byte count from an int or a size string ("5GB", "500MiB")."""
    if v is None:
        return 0
    if isinstance(v, str):
        return _mfmt.parse_size(v)
    if isinstance(v, (int, np.integer)) and v >= 0:
        return int(v)
    raise UsageError(f"{what}={v!r}: a byte count or a size such as '5GB'")


# ----------------------------------------------------------------- detect

class Detection(NamedTuple):
    """mfmt.detect's answer: the format from the bytes, and what was seen."""
    path: str
    format: str
    detail: str


def detect(path) -> Detection:
    """The format of a file or directory, from its bytes (never its name):
    "safetensors", "gguf", "pytorch-zip", ... or "unknown"."""
    fmt, detail = _mfmt.detect(_in(path))
    return Detection(os.fspath(path), fmt, detail)


# --------------------------------------------------------------- validate

class Problem(NamedTuple):
    """One broken rule: the file, byte offset (None if not known) and rule."""
    path: Optional[str]
    offset: Optional[int]
    rule: str
    message: str


class Validation(NamedTuple):
    """mfmt.validate's answer: ``ok`` is True when every rule holds."""
    path: str
    ok: bool
    problems: List[Problem]

    def raise_if_invalid(self):
        """Raise FormatError (every problem in .messages) unless ok."""
        if not self.ok:
            msgs = [p.message for p in self.problems]
            raise FormatError(msgs[0], msgs)


def validate(path) -> Validation:
    """Check every rule of the format and collect every breach (as `mfmt
    validate`). Broken rules are returned, not raised; I/O errors raise."""
    code, msgs = _mfmt.validate(_in(path))
    problems = [Problem(*_split_message(m), m) for m in msgs]
    return Validation(os.fspath(path), code == 0, problems)


# ------------------------------------------------------------------- hash

class Hashes(NamedTuple):
    """mfmt.hash's answer (as `mfmt hash --json --tensors`)."""
    path: str
    algo: str
    file: Optional[str]
    tensor_content: str
    tensors: Optional[Dict[str, str]]


def hash(path, *, algo="sha256", tensors=False, file=True, progress=None) -> Hashes:  # noqa: A001
    """Hashes of a model in one pass: the whole file (file=True; None for a
    directory), all tensors' canonical bytes (tensor_content), and with
    tensors=True each tensor's canonical hash (its elements in C order,
    little-endian, stored dtype: the same weights hash the same in every
    format). algo: sha256, sha1, xxh64, xxh3."""
    r = _mfmt.hash(_in(path), algo=algo, file=file, tensors=tensors,
                   progress=progress)
    return Hashes(os.fspath(path), r["algo"], r["file"], r["tensor_content"], r["tensors"])


# ------------------------------------------------------------------- scan

class Finding(NamedTuple):
    """One thing the scan found: severity ("safe" for a note, "unknown",
    "dangerous"), where (archive member, byte offset in it and in the file;
    -1 when not known), the pickle opcode and global, and why."""
    severity: str
    member: str
    offset: int
    file_offset: int
    opcode: Optional[str]
    global_: Optional[str]
    message: str


class ScanReport(NamedTuple):
    """One file's scan: its verdict ("safe", "unknown", "dangerous"), the
    findings, every global a loader would import with its class, and how
    many pickles were interpreted. Nothing was executed."""
    path: str
    verdict: str
    findings: List[Finding]
    globals: List[Tuple[str, str]]
    n_pickles: int
    dropped_findings: int

    @property
    def safe(self) -> bool:
        """True when the verdict is "safe"."""
        return self.verdict == "safe"


_RANK = {"safe": 0, "unknown": 1, "dangerous": 2}


def _report(d):
    fs = [Finding(f["severity"], f["member"], f["offset"], f["file_offset"], f["opcode"],
                  f["global"], f["message"]) for f in d["findings"]]
    return ScanReport(d["path"], d["verdict"], fs, [tuple(g) for g in d["globals"]],
                      d["n_pickles"], d["dropped_findings"])


def scan(path) -> ScanReport:
    """Is the file safe to load? Interprets every pickle a loader could run
    (zip members, nested archives, legacy torch streams, .npy object arrays,
    Keras Lambda layers...) without running anything. A directory is
    scanned file by file: the verdict is the worst, findings are all of
    theirs (each names its file in .member's report path)."""
    reports = [_report(d) for d in _mfmt.scan(_in(path))]
    if len(reports) == 1:
        return reports[0]
    return _merge_reports(os.fspath(path), reports)


def _merge_reports(path, reports):
    verdict = max((r.verdict for r in reports), key=_RANK.get, default="safe")
    findings = [f._replace(member=os.path.relpath(r.path, path) +
                           (":" + f.member if f.member else ""))
                for r in reports for f in r.findings]
    globals_ = [g for r in reports for g in r.globals]
    return ScanReport(path, verdict, findings, globals_, sum(r.n_pickles for r in reports),
                      sum(r.dropped_findings for r in reports))


def _unsafe_error(path, rep):
    bad = [f for f in rep.findings if f.severity != "safe"] or rep.findings
    why = "; ".join(f.message for f in bad[:3]) or "could not be checked"
    return UnsafeFileError(f"{path}: {rep.verdict}: {why} (allow_unsafe=True reads "
                           "the tensors anyway; nothing is executed)",
                           findings=rep.findings, verdict=rep.verdict)


def _raise_if_unsafe_path(path, cause):
    """After a failed open: UnsafeFileError (from cause) if the scan of the
    path is not safe; returns otherwise (the caller raises cause)."""
    try:
        rep = scan(path)
    except Exception:  # noqa: BLE001 (the original error is the one to raise)
        return
    if rep.verdict != "safe":
        raise _unsafe_error(path, rep) from cause


def hash_file(path, *, algo="sha256") -> str:
    """Hash of every byte of a file (any file, read with read(2): pipes too)."""
    return _mfmt.hash_file(os.fspath(path), algo)


def _check_safe(model):
    """Raises UnsafeFileError when loading the model's file(s) would run
    code or could not be checked (mfmt.open's rule: only `safe` opens)."""
    if model.verdict == "safe":
        return
    reports = [_report(d) for d in _mfmt.model_scan(model)]
    rep = reports[0] if len(reports) == 1 else _merge_reports(model.path, reports)
    raise _unsafe_error(model.path, rep)


# ---------------------------------------------------------------- convert

_CHECKPOINTS = ("deepspeed", "dcp", "megatron")
_MLX_ONLY = ("quantize", "q_bits", "q_group_size", "quant_predicate", "mlx_kernel",
             "dequantize", "lossless")
_GGUF_FLAGS = ("model_name", "metadata", "vocab_only", "split_max_size", "split_max_tensors")
_LAYOUTS = {"c392e50": 0, "2026-02": 1}


def _float_dtype(v, what, extra=()):
    """f32/f16/bf16 (any case; float32... too for MLX) -> "F32"...; None stays None."""
    if v is None:
        return None
    names = {"f32": "F32", "f16": "F16", "bf16": "BF16"}
    names.update({k: names[w] for k, w in extra})
    got = names.get(str(v).lower())
    if got is None:
        raise UsageError(f"{what}={v!r}: f32, f16 or bf16")
    return got


def _split_size(v):
    """convert_hf_to_gguf.py's --split-max-size: N, NK, NM, NG in decimal
    units (1M = 1000*1000 bytes), other spellings ("2GiB") as sizes."""
    if v is None:
        return 0
    if isinstance(v, str) and v[:-1].isdigit() and v[-1:] in ("K", "M", "G"):
        return int(v[:-1]) * {"K": 10**3, "M": 10**6, "G": 10**9}[v[-1]]
    return _size(v, "split_max_size")


def _detected(src):
    try:
        return _mfmt.detect(src)[0]
    except Exception:  # noqa: BLE001 (the conversion itself reports the error)
        return "unknown"


def _is_prequant_dir(src, fmt):
    """An HF directory whose config.json has a quantization_config (GPTQ, AWQ, FP8...)."""
    if fmt != "hf-dir":
        return False
    import json
    try:
        with open(os.path.join(src, "config.json"), "rb") as f:
            return isinstance(json.load(f).get("quantization_config"), dict)
    except (OSError, ValueError, AttributeError):
        return False


def _train_flags(from_module_states, exclude_frozen_parameters):
    return ((_mfmt.OPEN_TRAIN_MODULE_STATES if from_module_states else 0) |
            (_mfmt.OPEN_TRAIN_EXCLUDE_FROZEN if exclude_frozen_parameters else 0))


def _target(to, o, mlx):
    if to not in (None, "safetensors", "gguf", "hf", "mlx"):
        raise UsageError(f'to={to!r}: "safetensors", "gguf", "hf" or "mlx"')
    if mlx and to in (None, "mlx"):
        return "mlx"
    if to:
        return to
    if o is None:
        return "gguf"
    return ("gguf" if o.endswith(".gguf") else "safetensors" if o.endswith(".safetensors")
            else "hf" if o.endswith("/") else None)


def convert(src, out=None, *, to=None, key=None, max_shard_size=None, include_optimizer=False,
            allow_unsafe=False, type=None, threads=None, dtype=None,  # noqa: A002
            keep_tied=False, progress=None, arch_file=None, layout=None, model_name=None,
            metadata=None, vocab_only=False, split_max_size=None, split_max_tensors=None,
            config=None, tokenizer=None, from_module_states=False,
            exclude_frozen_parameters=False, mlx=False, quantize=False, q_bits=None,
            q_group_size=None, quant_predicate=None, mlx_kernel=None, dequantize=False,
            lossless=False, outfile=None, mix_rules=None, with_mmproj=None, mmproj=False,
            mistral_format=None) -> Optional[str]:
    """Write a model in another format, atomically (as `mfmt convert`; the
    keyword arguments are its options). Returns the path written (GGUF: the
    file, under the converter's default name when out is a directory or
    None; split: the first file of the set).

    out ending in .safetensors: any model mfmt reads (a checkpoint's
    state_dict unwrapped, optimizer state left out unless
    include_optimizer; names tied to an earlier tensor's storage written
    once unless keep_tied), streamed tensor by tensor, bit-identical;
    max_shard_size ("5GB" or bytes) shards as Hugging Face does; dtype=
    "f32" | "f16" | "bf16" casts the float tensors. A `dangerous` input is
    refused unless allow_unsafe (nothing is executed either way).
    out ending in .gguf (or None / a directory: the converter's default
    name; or outfile=, as convert_hf_to_gguf.py's --outfile: a directory
    gets that name, {ftype} in a name is the type): a Hugging Face
    directory as llama.cpp's converter writes it;
    type= f32, f16 (default), bf16, q8_0, auto or a llama-quantize mix such
    as Q4_K_M (mix_rules= as quantize's); layout= "c392e50" (default) or "2026-02";
    mmproj=True: the vision tower / audio encoder as llama.cpp's mmproj file
    (--mmproj); mistral_format= True / False (None: by itself when the
    directory has params.json and no HF weights; --mistral-format); model_name=,
    metadata= (an override JSON file), vocab_only=, split_max_size= ("2G":
    decimal units) and split_max_tensors= as convert_hf_to_gguf.py's flags;
    arch_file= an architecture from a JSON file (doc/arch-file.md). A
    training checkpoint or an MLX directory goes through a directory the
    library writes beside out and removes.
    out ending in "/" (or to="hf"): a GGUF (or a pre-quantized HF
    directory) back into a Hugging Face directory (with_mmproj= the text
    GGUF's mmproj file: one multimodal directory; an mmproj GGUF alone
    gives its vision half); dtype= for every tensor;
    any other model (a training checkpoint) as its merge, sharded (5GB
    default), with config.json and the tokenizer files.
    Training checkpoints (DeepSpeed, torch.distributed.checkpoint,
    Megatron-LM): config= (the config.json it lacks), tokenizer= (a folder
    of tokenizer files), from_module_states=, exclude_frozen_parameters=,
    threads= (copying partitions; GGUF: quantizing threads).
    to="mlx" or mlx=True: an MLX directory as mlx_lm.convert writes it
    (from an HF directory, a GGUF or an MLX directory): quantize=True
    (-q), q_bits= (2, 3, 4, 5, 6, 8), q_group_size= (32, 64, 128),
    quant_predicate= ("mixed_3_6", ...), dtype=, mlx_kernel= "cpu" |
    "metal", dequantize=True (-d), lossless=True (a GGUF's Q4_0/Q4_1/Q8_0
    as MLX's own GGUF loader makes them), max_shard_size=.
    """
    s = _in(src)
    if outfile is not None:
        if out is not None:
            raise UsageError("give out or outfile, not both")
        to = to or "gguf"
        out = outfile
    o = None if out is None else os.fspath(out)
    if type is not None and dtype is not None:
        raise UsageError("give type= or dtype=, not both (the CLI's --type and --dtype are one option)")
    tval = type if type is not None else dtype
    target = _target(to, o, mlx)
    given = {k for k, v in dict(quantize=quantize, q_bits=q_bits, q_group_size=q_group_size,
                                 quant_predicate=quant_predicate, mlx_kernel=mlx_kernel,
                                 dequantize=dequantize, lossless=lossless).items() if v}
    if given and target != "mlx":
        raise UsageError(", ".join(sorted(given)) + ": options of MLX output (mlx=True)")
    rules = _mix_rules(mix_rules)
    gflags = {k for k, v in dict(model_name=model_name, metadata=metadata, vocab_only=vocab_only,
                                  mix_rules=mix_rules, mmproj=mmproj,
                                  mistral_format=mistral_format is not None,
                                  split_max_size=split_max_size,
                                  split_max_tensors=split_max_tensors).items() if v}
    if gflags and target != "gguf":
        raise UsageError(", ".join(sorted(gflags)) + ": options of GGUF output")
    if arch_file is not None and target not in ("gguf", "hf"):
        raise UsageError("arch_file= is for GGUF output and GGUF -> Hugging Face")
    af = os.fspath(arch_file) if arch_file is not None else None
    if with_mmproj is not None and target != "hf":
        raise UsageError("with_mmproj= is for a GGUF to a Hugging Face directory")
    if layout is not None and layout not in _LAYOUTS:
        raise UsageError(f'layout={layout!r}: "c392e50" or "2026-02"')
    ckpt = dict(train_flags=_train_flags(from_module_states, exclude_frozen_parameters),
                config=None if config is None else os.fspath(config),
                tokenizer=None if tokenizer is None else os.fspath(tokenizer))
    if target is None:
        raise UsageError(f"{o}: the output's name must end in .safetensors, .gguf or / "
                         "(or say to=)")
    if o is None and target != "gguf":
        raise UsageError("out is needed unless the output is GGUF")
    fmt = _detected(s)
    if target == "mlx":
        return _convert_mlx(s, o, key, include_optimizer, threads, tval, max_shard_size,
                            quantize, q_bits, q_group_size, quant_predicate, mlx_kernel,
                            dequantize, lossless, progress)
    if target == "hf":
        if key or include_optimizer:
            raise UsageError("key and include_optimizer are not options of Hugging Face "
                             "directory output")
        if fmt == "gguf" or _is_prequant_dir(s, fmt):
            if threads is not None or tokenizer is not None or config is not None:
                raise UsageError("threads, config and tokenizer are not options of GGUF -> "
                                 "Hugging Face")
            _mfmt.convert_hf(s, o, dtype=_float_dtype(tval, "dtype"),
                             max_shard_size=_size(max_shard_size, "max_shard_size") or 0,
                             progress=progress, arch_file=af,
                             mmproj=os.fspath(with_mmproj) if with_mmproj is not None else None)
            return o
        if af is not None or with_mmproj is not None:
            raise UsageError("arch_file= and with_mmproj= are for a GGUF (and a Hugging Face "
                             "directory's GGUF)")
        _float_dtype(tval, "dtype")
        r = _mfmt.convert_model_hf(s, o, dtype=None if tval is None else str(tval).lower(),
                                   max_shard_size=_size(max_shard_size, "max_shard_size"),
                                   threads=int(threads or 1), progress=progress,
                                   allow_unsafe=allow_unsafe, **ckpt)
        return o
    if target == "gguf":
        if key or max_shard_size or include_optimizer:
            raise UsageError("key, max_shard_size and include_optimizer are for "
                             "safetensors output")
        nthreads = int(threads) if threads is not None else min(64, os.cpu_count() or 1)
        lay = _LAYOUTS[layout or "c392e50"]
        if fmt in _CHECKPOINTS or fmt == "mlx":
            if gflags or af is not None or o is None:
                raise UsageError("model_name, metadata, vocab_only, split_max_*, arch_file and "
                                 "the default output name are for a Hugging Face directory's "
                                 "GGUF; give out='NAME.gguf'")
            r = _mfmt.convert_model_gguf(s, o, type=tval, threads=nthreads, layout=lay,
                                         progress=progress, allow_unsafe=allow_unsafe, **ckpt)
            return r["out"]
        if vocab_only and (split_max_size or split_max_tensors):
            raise UsageError("vocab_only writes no tensors: nothing to split")
        written = _mfmt.convert_gguf(s, o, type=tval, threads=nthreads, progress=progress,
                                     arch_file=af, layout=lay, model_name=model_name,
                                     metadata=None if metadata is None else os.fspath(metadata),
                                     vocab_only=vocab_only, mix_rules=rules, mmproj=bool(mmproj),
                                     mistral_format=0 if mistral_format is None else
                                     1 if mistral_format else 2)
        if split_max_size or split_max_tensors:
            try:
                n = _mfmt.split_written(written, _split_size(split_max_size),
                                        int(split_max_tensors or 0))
            except BaseException:
                os.unlink(written)  # nothing half-done: neither the set nor the file
                raise
            if n > 1:
                stem = written[:-5] if written.endswith(".gguf") else written
                return f"{stem}-00001-of-{n:05d}.gguf"
        return written
    # safetensors
    if type is not None or af is not None:
        raise UsageError("type= and arch_file= are for GGUF output (dtype= casts safetensors)")
    _mfmt.convert_safetensors(s, o, key=key,
                              max_shard_size=_size(max_shard_size, "max_shard_size"),
                              include_optimizer=include_optimizer, keep_tied=keep_tied,
                              allow_unsafe=allow_unsafe, progress=progress,
                              dtype=None if dtype is None else str(_float_dtype(dtype, "dtype")).lower(),
                              threads=int(threads or 1), train_flags=ckpt["train_flags"],
                              config=ckpt["config"])
    return o


def _convert_mlx(s, o, key, include_optimizer, threads, tval, max_shard_size, quantize, q_bits,
                 q_group_size, quant_predicate, mlx_kernel, dequantize, lossless, progress):
    if threads is not None or key or include_optimizer:
        raise UsageError("threads, key and include_optimizer are not options of MLX output")
    if mlx_kernel not in (None, "cpu", "metal"):
        raise UsageError(f'mlx_kernel={mlx_kernel!r}: "cpu" or "metal"')
    for name, v in (("q_bits", q_bits), ("q_group_size", q_group_size)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              or not 1 <= v <= 1024):
            raise UsageError(f"{name}={v!r}: a number")
    dt = _float_dtype(tval, "dtype", extra=(("float32", "f32"), ("float16", "f16"),
                                              ("bfloat16", "bf16")))
    # q_bits, q_group_size and a recipe mean quantization, as on the CLI
    q = bool(quantize or q_bits or q_group_size or quant_predicate)
    _mfmt.convert_mlx(s, o, quantize=q, bits=int(q_bits or 0), group_size=int(q_group_size or 0),
                      quant_predicate=quant_predicate, dtype=dt,
                      kernel=1 if mlx_kernel == "metal" else 0, dequantize=bool(dequantize),
                      max_shard_size=_size(max_shard_size, "max_shard_size"),
                      lossless=bool(lossless), progress=progress)
    return o


# --------------------------------------------------------------- quantize

class QuantTensor(NamedTuple):
    """One tensor of a quantization: source and output dtype, ggml ne,
    sizes, whether it was converted or copied; for a dry run the error of
    dequantize(quantize(x)) against x (rmse, max_abs, cosine)."""
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
    """mfmt.quantize's answer: counts, sizes, bits per weight, per tensor."""
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


_MIX_RULES = {"c392e50": 0, "ecbcb7ea": 0, "b10256": 1}


def _mix_rules(v):
    """mix_rules= (the CLI's --mix-rules): None or a name of _MIX_RULES."""
    if v is None:
        return 0
    r = _MIX_RULES.get(str(v).lower())
    if r is None:
        raise UsageError(f'mix_rules={v!r}: "c392e50" (= "ecbcb7ea", the default) or "b10256"')
    return r


def quantize(src, out, type, *, threads=1, imatrix=None, allow_requantize=False,  # noqa: A002
             pure=False, leave_output_tensor=False, output_tensor_type=None,
             token_embedding_type=None, dry_run=False, progress=None,
             keep_split=False, include_weights=(), exclude_weights=(),
             override_kv=None, mix_rules=None) -> QuantizeResult:
    """Quantize a GGUF file as llama-quantize does (its mixes, bit for bit):
    type "Q4_K_M", "Q8_0", "IQ4_XS", ..., or "COPY" (every tensor copied,
    general.file_type the input's). dry_run=True writes nothing (out may be
    None) and measures every quantized tensor's error instead. A split input
    (NAME-00001-of-0000N.gguf) gives one out file, or with keep_split=True one
    file per input file: out less ".gguf" + "-00001-of-0000N.gguf", ...
    include_weights / exclude_weights: use the imatrix only for tensors
    whose name contains one of them / not for those (lists; not both);
    override_kv: {key: value} set in the output as llama-quantize's
    --override-kv (bool, int, float, str; or "int:5"-style strings);
    mix_rules: whose choice of tensor types, "c392e50" (default; also
    llama.cpp ecbcb7ea's) or "b10256" (attn_qkv and attn_kv_b as attn_v)."""
    rules = _mix_rules(mix_rules)
    if out is None and not dry_run:
        raise UsageError("out is needed unless dry_run=True")
    incl = [include_weights] if isinstance(include_weights, str) else list(include_weights or ())
    excl = [exclude_weights] if isinstance(exclude_weights, str) else list(exclude_weights or ())
    if incl and excl:
        raise UsageError("include_weights and exclude_weights: one or the other")
    kvo = [f"{k}={_override_text(k, v)}" for k, v in (override_kv or {}).items()]
    r = _mfmt.quantize(_in(src), None if out is None else os.fspath(out), type,
                       threads=threads,
                       imatrix=None if imatrix is None else os.fspath(imatrix),
                       allow_requantize=allow_requantize, pure=pure,
                       leave_output=leave_output_tensor, output_type=output_tensor_type,
                       token_embd_type=token_embedding_type, dry_run=dry_run,
                       progress=progress, keep_split=keep_split, include_weights=incl,
                       exclude_weights=excl, override_kv=kvo, mix_rules=rules)
    tensors = [QuantTensor(**t) for t in r.pop("tensors")]
    return QuantizeResult(tensors=tensors, **r)


def _override_text(key, v):
    """--override-kv's TYPE:VALUE for a Python value (llama-quantize's
    types: edit's spelling of bool/int/float; a str without a type is str:)."""
    if isinstance(v, str):
        return v if v.split(":", 1)[0] in ("int", "float", "bool", "str") else "str:" + v
    return _edit_text(key, v)


class DequantizeResult(NamedTuple):
    """mfmt.dequantize's answer."""
    n_tensors: int
    n_converted: int
    n_copied: int
    meta_kept: int
    meta_skipped: int
    out_bytes: int


def dequantize(src, out, *, dtype="f32", progress=None) -> DequantizeResult:
    """Write every tensor of a model as plain floats to a safetensors file
    (dtype f32, f16 or bf16; integer tensors copied)."""
    return DequantizeResult(**_mfmt.dequantize(os.fspath(src), os.fspath(out),
                                               dtype=str(dtype).upper(), progress=progress))


# ------------------------------------------------------------ split/merge

class SplitFile(NamedTuple):
    """One file of a split plan: its path, first tensor (index in the
    input), tensor count and tensor bytes (each padded to 32)."""
    path: str
    first_tensor: int
    n_tensors: int
    bytes: int


class SplitPlan(list):
    """mfmt.split's answer: the files (paths) written, in order; .files has
    each file's SplitFile. A list of str, so `parts[0]` is the first file."""
    files: List[SplitFile]


def split(src, prefix, *, max_tensors=None, max_size=None, no_tensor_first_split=False,
          dry_run=False, progress=None) -> SplitPlan:
    """Split a GGUF file into PREFIX-0000i-of-0000n.gguf as llama-gguf-split
    does (max_tensors per file, or about max_size bytes: "2G" or bytes;
    no_tensor_first_split: the first file holds the metadata only).
    Returns the paths written (dry_run=True: the plan, nothing written),
    with .files: each file's first tensor, tensor count and bytes."""
    p = os.fspath(prefix)
    plan = _mfmt.split(os.fspath(src), p, max_tensors=int(max_tensors or 0),
                       max_size=_size(max_size, "max_size"),
                       no_tensor_first_split=bool(no_tensor_first_split), dry_run=bool(dry_run),
                       progress=progress)
    n = len(plan)
    out = SplitPlan(f"{p}-{i:05d}-of-{n:05d}.gguf" for i in range(1, n + 1))
    out.files = [SplitFile(path, *f) for path, f in zip(out, plan)]
    return out


def merge(src, out, *, dry_run=False, progress=None) -> Tuple[int, int]:
    """Merge a GGUF split set or sharded safetensors (give the first file,
    the index or the directory) into one file (.gguf or .safetensors).
    Returns (tensors, input files); dry_run=True writes nothing."""
    m = _mfmt.Model(os.fspath(src), scan=False)
    try:
        counts = (len(m._tensor_infos()), m.file_count)
    finally:
        m.close()
    if not dry_run:
        _mfmt.merge(os.fspath(src), os.fspath(out), progress=progress)
    return counts


# ------------------------------------------------------------------- diff

# libmfmt's names of the diff kinds (mf_diff_kind_name), in its enum order:
# same bytes, same values (other dtype/layout), values differ, shapes differ,
# only in A, only in B, incomparable.
(DIFF_SAME, DIFF_SAME_VALUES, DIFF_VALUES, DIFF_SHAPE, DIFF_ONLY_A, DIFF_ONLY_B,
 DIFF_INCOMPARABLE) = _mfmt.diff_kinds()


class DiffRow(NamedTuple):
    """One tensor name compared: kind is one of mfmt.DIFF_SAME (same dtype,
    shape and bytes), DIFF_SAME_VALUES, DIFF_VALUES, DIFF_SHAPE, DIFF_ONLY_A,
    DIFF_ONLY_B, DIFF_INCOMPARABLE (as `mfmt diff` prints them); a and b are
    (dtype, shape) or None; value statistics for the value kinds."""
    name: str
    kind: str
    a: Optional[Tuple[str, Tuple[int, ...]]]
    b: Optional[Tuple[str, Tuple[int, ...]]]
    max_abs: float
    rmse: float
    cosine: float
    n_diff: int


class Diff(list):
    """mfmt.diff's answer: a list of DiffRow, plus counts by kind; mapped is
    True when an HF directory was compared with a GGUF read through the
    converter's tables (names and layouts as the directory has them)."""

    mapped = False

    def counts(self) -> Dict[str, int]:
        """{kind: how many rows}."""
        out: Dict[str, int] = {}
        for r in self:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out

    @property
    def same(self) -> bool:
        """True when every tensor has the same bytes on both sides."""
        return all(r.kind == DIFF_SAME for r in self)


def diff(a, b, *, allow_unsafe=False, map=True, arch_file=None) -> Diff:  # noqa: A002
    """Compare two models tensor by tensor, across formats (values as
    float32). An HF directory and a GGUF (either order) are compared as
    `mfmt diff` does: the GGUF read through the converter's tables as it
    streams (Diff.mapped; a UserWarning and names as they are when the
    converter cannot read it), or through arch_file= (doc/arch-file.md;
    then a failure raises); map=False compares the names as they are (the
    CLI's --no-map)."""
    if arch_file is not None and not map:
        raise UsageError("arch_file= maps names; it does not go with map=False")
    rows, mapped = _mfmt.diff(_in(a), _in(b), allow_unsafe=allow_unsafe, map=map,
                              arch_file=None if arch_file is None else os.fspath(arch_file))
    d = Diff(DiffRow(**r) for r in rows)
    d.mapped = mapped
    return d


class MetaDiffRow(NamedTuple):
    """One metadata key compared: kind "same", "changed", "type" (another
    value type: a u32 1 is not an i32 1), "only-a", "only-b"; the values
    (None for the side that lacks the key)."""
    key: str
    kind: str
    a: object
    b: object


def diff_metadata(a, b) -> List[MetaDiffRow]:
    """Compare two models' metadata key by key (as `mfmt diff
    --metadata-only`): A's keys in order, then B's extra ones. The CLI
    compares metadata only between models of one format; this compares
    whatever keys both have."""
    return [MetaDiffRow(*r) for r in _mfmt.diff_metadata(_in(a), _in(b))]


# ------------------------------------------------------- estimate / plan

class Estimate(NamedTuple):
    """Memory to run a model: weights + KV cache (as `mfmt estimate`)."""
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
    weight_note: Optional[str] = None  # how weight_bytes was counted, when not plainly


def estimate(path, *, ctx=None, batch=None, kv_type=None, type=None,  # noqa: A002
             mix_rules=None) -> Estimate:
    """Weights + KV-cache memory of a Hugging Face directory or GGUF file
    at a context length (ctx; default the training context), batch,
    KV-cache type (f16 default) and weight type (as stored, or a ggml
    type / mix such as Q4_K_M; mix_rules as quantize's)."""
    return Estimate(**_mfmt.estimate(_in(path), ctx=int(ctx or 0),
                                     batch=int(batch or 0), kv_type=kv_type, type=type,
                                     mix_rules=_mix_rules(mix_rules)))


class Plan(NamedTuple):
    """An Accelerate-style device map: devices as (name, capacity, used),
    device_map {module: device name}, total bytes, reserved bytes."""
    devices: List[Tuple[str, int, int]]
    device_map: Dict[str, str]
    total: int
    reserved: int


def _devices(device):
    if isinstance(device, dict):
        items = list(device.items())
    elif isinstance(device, str):
        items = [device]
    else:
        items = list(device)
    out = []
    for d in items:
        if isinstance(d, str):  # "cuda:0:24GB" as the CLI's --device NAME:SIZE
            name, sep, size = d.rpartition(":")
            if not sep or not name:
                raise UsageError(f"device {d!r}: NAME:SIZE, e.g. 'cuda:0:24GB'")
            d = (name, size)
        name, size = d
        cap = 2**64 - 1 if size in (None, "inf", "unlimited") else _size(size, "device")
        out.append((str(name), cap))
    if not out:
        raise UsageError("plan needs at least one device")
    return out


def plan(path, device, *, dtype=None) -> Plan:
    """Place a model's layers on devices as Accelerate's infer_auto_device_map
    does. device: "cuda:0:24GB", a list of them, a list of (name, bytes or
    size string), or {name: size}. dtype: f16, bf16, f32 (default: as stored)."""
    r = _mfmt.plan(_in(path), _devices(device), dtype=dtype)
    return Plan([tuple(d) for d in r["devices"]], r["device_map"], r["total"], r["reserved"])


# ---------------------------------------------------- error against original

class ErrorStats(NamedTuple):
    """Error sums of some tensors (each weighted by its element count):
    weighted RMSE, relative error (rmse / rms of the original), SNR in dB
    (inf: no error), mean cosine; layer is the layer's name (a layer's row)."""
    tensors_compared: int
    parameters: int
    rmse: float
    rel_error: float
    snr_db: float
    cosine: float
    layer: Optional[str] = None


class TensorError(NamedTuple):
    """One tensor against the original: both dtypes, elements, RMSE,
    max |err|, relative error, SNR in dB (inf: equal), cosine."""
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
    """mfmt.error_against's answer (`mfmt report --against`'s numbers): the
    model's totals, per layer, per tensor, the worst tensors by RMSE
    (name, rmse, cosine), and what was not compared."""
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


def _stats(d, layer=None):
    return ErrorStats(d["tensors_compared"], int(d["parameters"]), d["rmse"], d["rel_error"],
                      d["snr_db"], d["cosine"], layer)


def error_against(model, original, *, arch_file=None) -> ErrorReport:
    """How far a model (a quantized GGUF, ...) is from its original (the
    F16/F32 GGUF or the Hugging Face directory it came from), as `mfmt
    report MODEL --against ORIGINAL` computes it: every tensor pair of the
    same shape compared as float32, summed per tensor, per layer and for
    the model. A Hugging Face directory against a GGUF goes through the
    converter's tables (mapped=True), or through arch_file= (as `mfmt report
    --against ORIGINAL --arch-file FILE`). Raises FormatError when no tensor
    has a counterpart of its shape."""
    d = _mfmt.error_against(_in(model), _in(original),
                            None if arch_file is None else os.fspath(arch_file))
    return ErrorReport(d["original"], d["mapped"], _stats(d),
                       [_stats(l, l["layer"]) for l in d["layers"]],
                       [TensorError(**dict(t, n=int(t["n"]))) for t in d["tensors"]],
                       [tuple(w) for w in d["worst"]], d["only_original"], d["only_model"],
                       d["shape_mismatch"], d["incomparable"])


# ------------------------------------------------------------------- edit

class EditChange(NamedTuple):
    """One change of mfmt.edit: kind ("set", "delete", "rename_tensor",
    "chat_template_from"), the key (or old tensor name), short texts of the
    value before (None: a new key) and after (None: deleted)."""
    kind: str
    key: Optional[str]
    before: Optional[str]
    after: Optional[str]


class EditResult(NamedTuple):
    """mfmt.edit's answer: header sizes before and after, the tensor bytes
    copied unchanged, and every change in the order applied."""
    old_header_bytes: int
    new_header_bytes: int
    data_bytes: int
    changes: List[EditChange]


def _edit_text(key, v):
    """--set's KEY=[TYPE:]VALUE text for a Python value: bool, int and float
    typed (int/float keep an existing key's width); str as given, so it may
    carry a TYPE: prefix ("u32:5", "file:template.jinja") as on the CLI."""
    if isinstance(v, bool):
        return "bool:" + ("true" if v else "false")
    if isinstance(v, (int, np.integer)):
        return f"int:{int(v)}"
    if isinstance(v, (float, np.floating)):
        return f"float:{float(v)!r}"
    if isinstance(v, str):
        return v
    raise UsageError(f"set {key!r}: a bool, int, float or str (arrays: 'json:FILE')")


def edit(src, out=None, *, set=None, delete=(), rename_tensor=None,  # noqa: A002
         chat_template=None, chat_template_from=None, dry_run=False,
         force=False) -> EditResult:
    """Change a GGUF's metadata (or a safetensors __metadata__) without
    touching tensor data, as `mfmt edit` does: set={key: value}, delete=[keys],
    rename_tensor={old: new}, chat_template=FILE (its text becomes
    tokenizer.chat_template), chat_template_from=tokenizer_config.json.
    out=None replaces src atomically. Every edit is checked before anything
    is written; edits llama.cpp would refuse need force=True; dry_run=True
    writes nothing and reports what would change."""
    ops = [("set", k, _edit_text(k, v)) for k, v in (set or {}).items()]
    ops += [("delete", k, None) for k in ([delete] if isinstance(delete, str) else delete)]
    ops += [("rename_tensor", a, b) for a, b in (rename_tensor or {}).items()]
    if chat_template is not None:
        ops.append(("set", "tokenizer.chat_template", "file:" + os.fspath(chat_template)))
    if chat_template_from is not None:
        ops.append(("chat_template_from", "", os.fspath(chat_template_from)))
    if not ops:
        raise UsageError("edit: nothing to do (set, delete, rename_tensor, chat_template...)")
    r = _mfmt.edit(os.fspath(src), None if out is None else os.fspath(out), ops,
                   force, dry_run)
    return EditResult(r["old_header_bytes"], r["new_header_bytes"], r["data_bytes"],
                      [EditChange(*c) for c in r["changes"]])


# -------------------------------------------------------------- save_file

_NP_TO_MF = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64",
             "int32": "I32", "int16": "I16", "int8": "I8", "uint64": "U64",
             "uint32": "U32", "uint16": "U16", "uint8": "U8", "bool": "BOOL",
             "complex64": "C64", "complex128": "C128"}
_TORCH_TO_MF = {"bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}


def _as_array(name, x, dtypes):
    """(mfmt dtype, contiguous little-endian ndarray) of a NumPy array or a
    torch tensor; dtypes[name] marks bit patterns ("BF16" for uint16)."""
    want = (dtypes or {}).get(name)
    tname = type(x).__module__.split(".")[0]
    if tname == "torch":
        import torch
        t = x.detach().cpu().contiguous()
        tdt = str(t.dtype).replace("torch.", "")
        if tdt in _TORCH_TO_MF:
            want = want or _TORCH_TO_MF[tdt]
            t = t.view(torch.int16 if t.element_size() == 2 else torch.uint8)
        x = t.numpy()
    arr = np.asarray(x)  # (np.ascontiguousarray would make a 0-d array 1-d)
    md = arr.dtype.metadata
    tagged = md.get("mfmt_dtype") if md else None  # get_tensor's BF16/FP8 bits
    want = want or tagged
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    mf = _NP_TO_MF.get(arr.dtype.name)
    if want:
        info = _mfmt.dtype_info(want)
        if info is None or info[2] != 1 or info[3] != arr.dtype.itemsize:
            raise UsageError(f"tensor {name!r}: dtype {want} does not fit {arr.dtype}")
        mf = want
    if mf is None:
        raise UsageError(f"tensor {name!r}: NumPy dtype {arr.dtype} has no safetensors dtype")
    return mf, arr


def save_file(tensors, path, metadata=None, *, dtypes=None) -> None:
    """Write {name: array} to a safetensors file, atomically (a temporary
    file beside it, fsync, rename: the file appears whole or not at all).
    Arrays: NumPy or torch (bfloat16 included). dtypes={name: "BF16"} marks
    uint16 arrays as BF16 bits (what get_tensor returns for BF16);
    metadata: {str: str} for __metadata__ (another type of key or value
    raises TypeError, as safetensors does: nothing is converted silently).
    A uint16/uint8 array that get_tensor returned for BF16/FP8 carries that
    dtype (mfmt.stored_dtype) and is written as BF16/FP8 again."""
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must map str to str: {k!r}: {type(v).__name__} "
                            f"(safetensors' __metadata__ holds strings only)")
    items = []
    for name, x in tensors.items():
        mf, arr = _as_array(name, x, dtypes)
        items.append((str(name), mf, arr.shape, arr.reshape(-1).view(np.uint8)))
    _mfmt.save_safetensors(os.fspath(path), items, dict(metadata or {}))
