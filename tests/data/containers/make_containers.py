#!/usr/bin/env python3
"""Builds the container fixtures of tests/test_containers.c with the real
tools: Python's tarfile and zipfile (and pickle). Each hostile variant has
a benign twin that differs only in the payload. `--verify` (needs torch,
python3-torch from Debian) loads every file with torch.load / np.load in a
subprocess and checks which ones run their payload: the marker file the
payload writes proves which bytes the loader read.

Payload: os.system("echo x > $MARK") -- harmless, and a global no
scanner may call safe.

Run: python3 tests/data/containers/make_containers.py [--torch] [--verify]
(--torch also writes the torch.package and TorchScript fixtures.)
"""
import io
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_PY = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")
MARK = "/tmp/mfmt-container-payload-ran"


def evil_pickle(protocol=2):
    """A pickle that calls os.system(echo ...): GLOBAL os system."""
    cmd = ("echo x > " + MARK).encode()
    if protocol == 0:
        return b"cos\nsystem\n(V" + cmd + b"\ntR."
    return (b"\x80" + bytes([protocol]) + b"cos\nsystem\nq\x00X" +
            struct.pack("<I", len(cmd)) + cmd + b"\x85R.")


def benign_pickle(protocol=2):
    return pickle.dumps({"ok": 1}, protocol=protocol)


# ------------------------------------------------------------ legacy tar

class Global:
    """Pickles as GLOBAL module.name without importing it."""
    def __init__(self, module, name):
        self.module, self.name = module, name


class GlobalPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Global):
            return NotImplemented
        return NotImplemented

    def persistent_id(self, obj):
        if isinstance(obj, PersistentRef):
            return obj.key
        return None


class PersistentRef:
    def __init__(self, key):
        self.key = key


def dump_global(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def pickle_args(key, location, storage_class):
    # protocol 2: PROTO 2, MARK, int key, unicode location, GLOBAL, TUPLE, STOP
    body = (b"\x80\x02(" + pickle.dumps(key, 2)[2:-1] + pickle.dumps(location, 2)[2:-1] +
            dump_global("torch", storage_class) + b"t.")
    return body


def storages_member(values):
    """torch 0.1.x _save's 'storages': count, then per storage the pickled
    (key, location, storage_type) and the raw storage (int64 count +
    elements), then the pickled storage views."""
    out = io.BytesIO()
    out.write(pickle.dumps(1, 2))
    out.write(pickle_args(1, "cpu", "FloatStorage"))
    out.write(struct.pack("<q", len(values)))
    out.write(struct.pack("<%df" % len(values), *values))
    out.write(pickle.dumps([], 2))
    return out.getvalue()


def tensors_member(shape):
    """'tensors': count, then per tensor (key, storage_id, type), int32
    ndim, 4 bytes, sizes, strides, storage offset."""
    out = io.BytesIO()
    out.write(pickle.dumps(1, 2))
    out.write(b"\x80\x02(" + pickle.dumps(2, 2)[2:-1] + pickle.dumps(1, 2)[2:-1] +
              dump_global("torch", "FloatTensor") + b"t.")
    out.write(struct.pack("<i", len(shape)))
    out.write(b"\0\0\0\0")
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    out.write(struct.pack("<%dq" % len(shape), *shape))
    out.write(struct.pack("<%dq" % len(shape), *strides))
    out.write(struct.pack("<q", 0))
    return out.getvalue()


def object_pickle():
    """'pickle': {'weight': <tensor 2>} with the tensor as persistent id '2'."""
    return b"\x80\x02}q\x00X\x06\x00\x00\x00weightq\x01X\x01\x00\x00\x002Qs."


def add(tar, name, data, **kw):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = 0
    for k, v in kw.items():
        setattr(ti, k, v)
    tar.addfile(ti, io.BytesIO(data))


def legacy_members(evil_in=None):
    vals = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    m = {"storages": storages_member(vals), "tensors": tensors_member([2, 3]),
         "pickle": object_pickle()}
    if evil_in == "pickle":
        m["pickle"] = evil_pickle(2)
    elif evil_in == "storages":
        m["storages"] = evil_pickle(0)
    return m


def write_tar(path, members, fmt=tarfile.GNU_FORMAT, names=None, **kw):
    with tarfile.open(path, "w", format=fmt) as tar:
        for name in ("storages", "tensors", "pickle"):
            add(tar, (names or {}).get(name, name), members[name], **kw)


def rechecksum(h):
    h = bytearray(h)
    h[148:156] = b" " * 8
    s = sum(h)
    h[148:156] = b"%06o\0 " % s
    return bytes(h)


def patch_headers(path, fn):
    """Applies fn(header_bytes) -> header_bytes to every member header
    (walking the archive as tarfile lays it out) and fixes the checksums."""
    data = bytearray(open(path, "rb").read())
    with tarfile.open(path) as tar:
        offsets = [m.offset for m in tar.getmembers()]
    for off in offsets:
        h = fn(bytes(data[off:off + 512]))
        data[off:off + 512] = rechecksum(h)
    open(path, "wb").write(bytes(data))


def v7(h):  # no ustar magic, no version, no user/group names
    h = bytearray(h)
    h[257:265] = b"\0" * 8
    h[265:345] = b"\0" * 80
    return bytes(h)


def type7(h):
    h = bytearray(h)
    h[156:157] = b"7"
    return bytes(h)


def spaces(h):  # numbers padded with spaces instead of zeros/NUL
    h = bytearray(h)
    for at, n in ((100, 8), (108, 8), (116, 8), (124, 12), (136, 12)):
        v = int(bytes(h[at:at + n]).split(b"\0")[0].strip() or b"0", 8)
        h[at:at + n] = (b"%o" % v).rjust(n - 1, b" ") + b" "
    return bytes(h)


def base256(h):  # GNU base-256 size
    h = bytearray(h)
    v = int(bytes(h[124:136]).split(b"\0")[0].strip() or b"0", 8)
    h[124:136] = b"\x80" + v.to_bytes(11, "big")
    return bytes(h)


def make_tars(out):
    for evil in (None, "pickle", "storages"):
        tag = "evil" if evil == "pickle" else "evil-storages" if evil else "ok"
        mem = legacy_members(evil)
        write_tar(f"{out}/legacy-ustar-{tag}.tar", mem)
        write_tar(f"{out}/legacy-v7-{tag}.tar", mem)
        patch_headers(f"{out}/legacy-v7-{tag}.tar", v7)
    for evil in (None, "pickle"):
        tag = "evil" if evil else "ok"
        mem = legacy_members(evil)
        write_tar(f"{out}/legacy-type7-{tag}.tar", mem)
        patch_headers(f"{out}/legacy-type7-{tag}.tar", type7)
        write_tar(f"{out}/legacy-spaces-{tag}.tar", mem)
        patch_headers(f"{out}/legacy-spaces-{tag}.tar", lambda h: v7(spaces(h)))
        write_tar(f"{out}/legacy-base256-{tag}.tar", mem)
        patch_headers(f"{out}/legacy-base256-{tag}.tar", base256)
        write_tar(f"{out}/legacy-pax-{tag}.tar", mem, fmt=tarfile.PAX_FORMAT,
                  pax_headers={"comment": "x"})
    # pax 'path' renames a decoy member into 'pickle'; GNU longname too
    mem = legacy_members("pickle")
    with tarfile.open(f"{out}/legacy-paxpath-evil.tar", "w", format=tarfile.PAX_FORMAT) as t:
        add(t, "storages", mem["storages"])
        add(t, "tensors", mem["tensors"])
        add(t, "pickle", legacy_members()["pickle"])      # the decoy
        add(t, "decoy-name", mem["pickle"], pax_headers={"path": "pickle"})
    with tarfile.open(f"{out}/legacy-longname-evil.tar", "w", format=tarfile.GNU_FORMAT) as t:
        add(t, "storages", mem["storages"])
        add(t, "tensors", mem["tensors"])
        add(t, "x" * 120, legacy_members()["pickle"])
        add(t, "pickle", mem["pickle"])
    # a hard link named 'pickle' to a member of another name
    with tarfile.open(f"{out}/legacy-hardlink-evil.tar", "w", format=tarfile.GNU_FORMAT) as t:
        add(t, "storages", mem["storages"])
        add(t, "tensors", mem["tensors"])
        add(t, "payload.bin", mem["pickle"])
        ti = tarfile.TarInfo("pickle")
        ti.type = tarfile.LNKTYPE
        ti.linkname = "payload.bin"
        t.addfile(ti)


# ------------------------------------------------------------------ zips

def zip_bytes(members, **kw):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", **kw) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return b.getvalue()


def torch_members(pkl):
    return [("archive/data.pkl", pkl), ("archive/version", b"3\n")]


def make_zips(out):
    ok, bad = benign_pickle(2), evil_pickle(2)
    good = zip_bytes(torch_members(ok))
    evil = zip_bytes(torch_members(bad))
    # (1) two end records: the benign archive's EOCD carries a comment
    # that holds the malicious archive's directory and EOCD. The old mfmt
    # took the EOCD whose comment reaches the end; both loaders take the last.
    ev_cd = evil[evil.rfind(b"PK\x01\x02", 0, evil.rfind(b"PK\x05\x06")) - 0:]
    # rebuild: benign local+cd, then EOCD whose comment = evil's full archive
    g_eocd = good.rfind(b"PK\x05\x06")
    body = evil
    comment = body
    eocd = bytearray(good[g_eocd:g_eocd + 22])
    struct.pack_into("<H", eocd, 20, len(comment))
    # evil offsets are relative to its own start; shift them to its place
    base = g_eocd + 22
    shifted = shift_zip(body, base)
    open(f"{out}/zip-two-eocd-evil.pt", "wb").write(good[:g_eocd] + bytes(eocd) + shifted)
    shifted_ok = shift_zip(zip_bytes(torch_members(ok)), base)
    open(f"{out}/zip-two-eocd-ok.pt", "wb").write(good[:g_eocd] + bytes(eocd) + shifted_ok)
    del ev_cd
    # (1b) a second complete archive appended after a benign one
    open(f"{out}/zip-appended-archive-evil.pt", "wb").write(good + shift_zip(evil, len(good)))
    # (11) an archive prepended to another whose offsets are its own:
    # zipfile (np.load) shifts every member by the "concat"; miniz does not
    decoy = zip_bytes([("x.npy", npy_f4())])
    open(f"{out}/zip-prepended-evil.npz", "wb").write(decoy + zip_bytes(
        [("x.npy", npy_object(evil_pickle(2)))]))
    open(f"{out}/zip-prepended-ok.npz", "wb").write(decoy + zip_bytes(
        [("x.npy", npy_f4())]))
    # (1c) two members of one name; (3) case
    open(f"{out}/zip-dup-evil.pt", "wb").write(zip_bytes(
        [("archive/data.pkl", ok), ("archive/data.pkl", bad), ("archive/version", b"3\n")]))
    open(f"{out}/zip-case-evil.pt", "wb").write(zip_bytes(
        [("archive/DATA.PKL", bad), ("archive/version", b"3\n")]))
    open(f"{out}/zip-case-dup-evil.pt", "wb").write(zip_bytes(
        [("archive/data.pkl", ok), ("archive/Data.pkl", bad), ("archive/version", b"3\n")]))
    # (3) protocol 0 pickle in data.pkl and in an unnamed member
    open(f"{out}/zip-proto0-evil.pt", "wb").write(zip_bytes(torch_members(evil_pickle(0))))
    open(f"{out}/zip-proto0-member-evil.pt", "wb").write(zip_bytes(
        torch_members(ok) + [("archive/extra/blob", evil_pickle(0))]))
    # (1d) local header names another file than the central directory
    z = bytearray(zip_bytes(torch_members(bad) + [("archive/zzzzzzzz", ok)]))
    i = z.find(b"archive/data.pkl")          # the first local header's name
    z[i:i + 16] = b"archive/data.pkX"
    open(f"{out}/zip-localname-evil.pt", "wb").write(bytes(z))
    # (1e) overlapping entries: a second central record points at data.pkl's bytes
    open(f"{out}/zip-overlap-evil.pt", "wb").write(overlap_zip(bad, ok))


def npy_f4():
    hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
    hdr += b" " * (64 - 10 - len(hdr) - 1) + b"\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr +
            struct.pack("<4f", 0, 1, 2, 3))


def npy_object(pkl):
    hdr = b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"
    hdr += b" " * (64 - 10 - len(hdr) - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + pkl


def parse_cd(z):
    e = z.rfind(b"PK\x05\x06")
    n, size, off = struct.unpack_from("<HII", z, e + 10)
    return e, n, size, off


def shift_zip(z, base):
    """The same archive placed `base` bytes into a file: every offset moved."""
    e, n, size, off = parse_cd(z)
    z = bytearray(z)
    p = off
    for _ in range(n):
        lo, = struct.unpack_from("<I", z, p + 42)
        struct.pack_into("<I", z, p + 42, lo + base)
        nl, xl, cl = struct.unpack_from("<HHH", z, p + 28)
        p += 46 + nl + xl + cl
    struct.pack_into("<I", z, e + 16, off + base)
    return bytes(z)


def overlap_zip(bad, ok):
    z = bytearray(zip_bytes([("archive/data.pkl", ok), ("archive/version", b"3\n"),
                             ("archive/data/0", bad)]))
    e, n, size, off = parse_cd(z)
    # point archive/data.pkl's central record at archive/data/0's local header
    p, recs = off, []
    for _ in range(n):
        nl, xl, cl = struct.unpack_from("<HHH", z, p + 28)
        recs.append(p)
        p += 46 + nl + xl + cl
    lo_bad, = struct.unpack_from("<I", z, recs[2] + 42)
    crc, cs, us = struct.unpack_from("<III", z, recs[2] + 16)
    struct.pack_into("<I", z, recs[0] + 42, lo_bad)
    struct.pack_into("<III", z, recs[0] + 16, crc, cs, us)
    # and the local header there must carry data.pkl's name for zipfile
    return bytes(z)


# ----------------------------------------------------- torch-made files

def make_torch(out):
    """torch.package and TorchScript archives (needs torch; the committed
    files were made with Debian's python3-torch 1.13)."""
    import collections
    import torch
    from torch.package import PackageExporter
    pk = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01."
    with PackageExporter(out + "/package-shadow-evil.pt") as pe:
        # the archive's own "collections": the allowlisted OrderedDict runs it
        pe.save_source_string("collections", "import os\nos.system('echo x > %s')\n"
                              "class OrderedDict(dict):\n    pass\n" % MARK, is_package=True)
        pe.save_binary("res", "data.pkl", pk)
    with PackageExporter(out + "/package-ok.pt") as pe:
        pe.extern("collections")
        pe.save_pickle("res", "data.pkl", collections.OrderedDict(a=1))

    class M(torch.nn.Module):
        def forward(self, x):
            return x * 2
    torch.jit.save(torch.jit.script(M()), out + "/torchscript.pt")


# ---------------------------------------------------------------- verify

def verify(out):
    code = ("import sys, torch, numpy\n"
            "p = sys.argv[1]\n"
            "try:\n"
            "    if 'package-' in p:\n"
            "        from torch.package import PackageImporter\n"
            "        PackageImporter(p).load_pickle('res', 'data.pkl')\n"
            "    elif 'torchscript' in p:\n"
            "        torch.jit.load(p)\n"
            "    elif p.endswith('.npz'):\n"
            "        d = numpy.load(p, allow_pickle=True); [d[k] for k in d.files]\n"
            "    else:\n"
            "        torch.load(p, weights_only=False) if 'weights_only' in "
            "torch.load.__code__.co_varnames else torch.load(p)\n"
            "    print('loaded')\n"
            "except Exception as e:\n"
            "    print('error', type(e).__name__, str(e)[:80])\n")
    for f in sorted(os.listdir(out)):
        if not f.endswith((".pt", ".tar", ".npz")):
            continue
        if os.path.exists(MARK):
            os.unlink(MARK)
        r = subprocess.run([TORCH_PY, "-c", code, os.path.join(out, f)],
                           capture_output=True, text=True)
        ran = os.path.exists(MARK)
        print("%-34s %-8s %s" % (f, "RAN" if ran else "-", r.stdout.strip()[:90]))


if __name__ == "__main__":
    make_tars(HERE)
    make_zips(HERE)
    if "--torch" in sys.argv:
        make_torch(HERE)
    if "--verify" in sys.argv:
        verify(HERE)
