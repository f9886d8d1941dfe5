#!/usr/bin/python3
"""Python rows of `make bench`: the mfmt package against the ways people
read these files today, measured in the same run on the same bytes.

    python_bench.py SCRATCH_DIR TORCH_BIN_TOOL [REAL_GGUF_DIR]

1. a 256 MiB safetensors file (64 F32 tensors of 1024 x 1024): open + read
   every tensor through mfmt.safe_open, against numpy.memmap over the same
   bytes with the header parsed by hand (struct + json); goal within 1.2x.
   Imports are not timed (either side's); peak RSS includes them.
2. a 256 MiB pytorch_model.bin (torch.save's zip layout, written by
   bench/torch_bin.c): into NumPy through mfmt, against torch.load
   (weights_only=True) when torch is installed (then torch.save writes
   the file); goal 3x faster, a fraction of its memory.
3. the largest vocabulary GGUF of ../shared/real-gguf: open and read its
   token list into a Python list.

Every measurement runs in a child process of its own (so its peak RSS is
its own: os.wait4's ru_maxrss), best time of 3; the files are written
first, so they sit in the page cache. "read every tensor" copies each
array out (np.array(a)), as safetensors' get_tensor returns a copy; "views"
only touches one byte per 4 KiB page of each zero-copy array. rss is the
child's peak resident set (file pages of a mapping count once touched);
anon its anonymous (private, not file-backed) memory at the end.
"""

import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable
MiB = 1 << 20

# ------------------------------------------------------------- children

CHILD = r'''
import sys, time, json, struct
sys.path.insert(0, ROOT + "/python")
import numpy as np
kind, path = sys.argv[1], sys.argv[2]
# imports are not timed (a one-time cost of the process, for either side)
if "mfmt" in kind:
    import mfmt
if "torch" in kind:
    import torch
t0 = time.perf_counter()
n = 0
if kind == "st-mfmt":
    with mfmt.safe_open(path, framework="np") as f:
        for k in f.keys():
            n += np.array(f.get_tensor(k)).nbytes
elif kind == "st-memmap":
    with open(path, "rb") as fh:
        (hl,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(hl))
    header.pop("__metadata__", None)
    mm = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + hl)
    for k, t in header.items():
        a, b = t["data_offsets"]
        arr = mm[a:b].view(np.float32).reshape(t["shape"])
        n += np.array(arr).nbytes
elif kind == "bin-mfmt-views":
    sd = mfmt.load_file(path)
    for a in sd.values():
        n += int(a.reshape(-1).view(np.uint8)[::4096].sum() >= 0) * a.nbytes
elif kind == "bin-mfmt-copy":
    with mfmt.open(path) as m:
        sd = {k: np.array(m[k]) for k in m}
    n = sum(a.nbytes for a in sd.values())
elif kind == "bin-torch":
    sd = torch.load(path, map_location="cpu", weights_only=True)
    n = sum(t.numel() * t.element_size() for t in sd.values())
elif kind == "vocab-mfmt":
    with mfmt.open(path) as m:
        toks = m.metadata["tokenizer.ggml.tokens"]
    n = len(toks)
s = time.perf_counter() - t0
anon = 0
for line in open("/proc/self/status"):
    if line.startswith("RssAnon:"):
        anon = int(line.split()[1]) * 1024
print(json.dumps({"s": s, "n": n, "anon": anon}))
'''.replace("ROOT", repr(ROOT))


def run_child(kind, path):
    """(seconds, peak RSS bytes, n, anonymous RSS at the end) of one child run."""
    p = subprocess.Popen([PY, "-c", CHILD, kind, path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{kind}: {err.decode(errors='replace')[-500:]}")
    r = json.loads(out)
    return r["s"], ru.ru_maxrss * 1024, r["n"], r["anon"]


def best_of(kind, path, n=3):
    runs = [run_child(kind, path) for _ in range(n)]
    return min(runs, key=lambda r: r[0])


# ---------------------------------------------------------------- files

def write_safetensors(path, n_tensors=64, rows=1024, cols=1024):
    """A 256 MiB safetensors file written by hand (per the spec)."""
    nbytes = rows * cols * 4
    header = {f"layers.{i}.weight": {"dtype": "F32", "shape": [rows, cols],
                                      "data_offsets": [i * nbytes, (i + 1) * nbytes]}
              for i in range(n_tensors)}
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    block = os.urandom(nbytes)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _ in range(n_tensors):
            f.write(block)


TORCH_SAVE = r'''
import sys, torch
torch.manual_seed(0)
sd = {f"layers.{i}.weight": torch.randn(1024, 1024) for i in range(64)}
torch.save(sd, sys.argv[1])
'''


def write_bin(path, torch_bin):
    """A 256 MiB pytorch_model.bin: by torch.save when torch is there, else
    by bench/torch_bin.c (the same zip layout; its data.pkl uses protocol-4
    opcodes that torch 1.13's weights-only unpickler lacks)."""
    if torch_importable():
        subprocess.run([PY, "-c", TORCH_SAVE, path], check=True)
        return "torch.save"
    subprocess.run([torch_bin, path, "64", "1024", "1024"], check=True)
    return "bench/torch_bin.c"


def torch_importable():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


# ---------------------------------------------------------------- table

def row(label, r, nbytes=None, ref=None):
    s, rss, _, anon = r
    rate = f"{nbytes / s / 1e9:6.2f} GB/s" if nbytes else " " * 11
    rel = f"  {s / ref[0]:5.2f} x" if ref else ""
    print(f"  {label:<46} {s:7.3f} s {rate}  rss {rss / MiB:4.0f} MB"
          f"  anon {anon / MiB:4.0f} MB{rel}")


def main():
    scratch, torch_bin = sys.argv[1], sys.argv[2]
    real_gguf = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "..", "shared", "real-gguf")
    os.makedirs(scratch, exist_ok=True)
    st = os.path.join(scratch, "py-256m.safetensors")
    binf = os.path.join(scratch, "py-256m.bin")
    try:
        write_safetensors(st)
        made_by = write_bin(binf, torch_bin)
        size = os.path.getsize(st)

        print("python: mfmt package (python/), each row a child process, best of 3")
        base = best_of("none", os.devnull, 1)
        row("python3 + import numpy (the floor)", base)
        print(f"  256 MiB safetensors, 64 F32 tensors, page cache warm")
        mm = best_of("st-memmap", st)
        mf = best_of("st-mfmt", st)
        row("numpy.memmap + header by hand, copy out", mm, size)
        row("mfmt.safe_open + get_tensor, copy out", mf, size, mm)
        ratio = mf[0] / mm[0]
        print(f"  mfmt.safe_open / numpy.memmap: {ratio:.2f} "
              f"(goal <= 1.20: {'met' if ratio <= 1.2 else 'not met'})")

        print(f"  256 MiB pytorch_model.bin (64 F32 tensors, written by {made_by}), into arrays")
        views = best_of("bin-mfmt-views", binf)
        copy = best_of("bin-mfmt-copy", binf)
        if torch_importable():
            tl = best_of("bin-torch", binf)
            row("torch.load(weights_only=True)", tl, size)
            row("mfmt.load_file: zero-copy views, pages touched", views, size, tl)
            row("mfmt.open + np.array(copy) of every tensor", copy, size, tl)
            print(f"  mfmt.load_file vs torch.load: {tl[0] / views[0]:.1f} x faster; peak rss "
                  f"{views[1] / tl[1]:.2f} of torch's, anonymous memory {views[3] / tl[3]:.2f} "
                  f"(goal: 3x faster, a fraction of its memory)")
        else:
            row("mfmt.load_file: zero-copy views, pages touched", views, size)
            row("mfmt.open + np.array(copy) of every tensor", copy, size)
            print("  torch.load: not measured (torch is not installed: apt-get install python3-torch)")

        ggufs = sorted((os.path.join(real_gguf, f) for f in os.listdir(real_gguf)
                        if f.endswith(".gguf")), key=os.path.getsize) if os.path.isdir(real_gguf) else []
        if ggufs:
            # the largest vocabulary: count tokens with mfmt once, pick the most
            sizes = {}
            for g in ggufs:
                sizes[g] = run_child("vocab-mfmt", g)[2]
            g = max(sizes, key=sizes.get)
            v = best_of("vocab-mfmt", g)
            print(f"  largest vocabulary of real-gguf: {os.path.basename(g)} "
                  f"({v[2]} tokens, {os.path.getsize(g) / MiB:.1f} MiB)")
            row("mfmt.open + metadata tokens into a list", v)
    finally:
        for p in (st, binf):
            if os.path.exists(p) and not os.environ.get("MFMT_BENCH_KEEP"):
                os.unlink(p)


if __name__ == "__main__":
    main()
