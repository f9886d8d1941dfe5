#!/usr/bin/env python3
"""The reference side of tests/test_containers.c's differential test: how
Python's zipfile and tarfile (and, when torch is importable, torch's miniz
through torch._C.PyTorchFileReader) read each file given, one line per fact:

  Z   path name header_offset data_offset csize usize ok|refused
  ZN  path name header_offset          (getinfo(name): the entry np.load opens)
  ZE  path                             (zipfile cannot open it)
  T   path name type offset offset_data size
  TE  path                             (tarfile cannot open it)
  M   path record                      (miniz's record names; torch only)
  MR  path data.pkl length crc32       (get_record("data.pkl"); torch only)

`--variants DIR` first writes generated archives into DIR (zip comments,
ZIP64, deflate, many members; ustar/GNU/pax tars with long names, folders,
links) and reads them too.
"""
import io
import os
import struct
import sys
import tarfile
import zipfile
import zlib

try:
    import torch  # noqa: F401
    HAVE_TORCH = hasattr(torch._C, "PyTorchFileReader")
except Exception:
    HAVE_TORCH = False


def zip_lines(path):
    out = []
    try:
        zf = zipfile.ZipFile(path)
    except Exception:
        return ["ZE\t%s" % path]
    raw = open(path, "rb").read()
    with zf:
        for i in zf.infolist():
            data = -1
            h = i.header_offset
            if 0 <= h and h + 30 <= len(raw) and raw[h:h + 4] == b"PK\x03\x04":
                n, m = struct.unpack_from("<HH", raw, h + 26)
                data = h + 30 + n + m
            try:
                zf.open(i).close()
                ok = "ok"
            except Exception:
                ok = "refused"
            out.append("Z\t%s\t%s\t%d\t%d\t%d\t%d\t%s" % (path, i.filename, h, data,
                                                       i.compress_size, i.file_size, ok))
        for name in sorted(set(zf.namelist())):
            out.append("ZN\t%s\t%s\t%d" % (path, name, zf.getinfo(name).header_offset))
    return out


def tar_lines(path):
    out = []
    try:
        with tarfile.open(path, "r:") as t:
            for m in t.getmembers():
                ty = m.type.decode("latin-1") if m.type else "\\0"
                if ty == "\0":
                    ty = "\\0"
                out.append("T\t%s\t%s\t%s\t%d\t%d\t%d" % (path, m.name, ty, m.offset,
                                                         m.offset_data, m.size))
    except Exception:
        return ["TE\t%s" % path]
    return out


def miniz_lines(path):
    if not HAVE_TORCH:
        return []
    with open(path, "rb") as f:
        if f.read(4) != b"PK\x03\x04":
            return []
    try:
        r = torch._C.PyTorchFileReader(path)
    except Exception:
        return []
    out = ["M\t%s\t%s" % (path, n) for n in sorted(r.get_all_records())]
    try:
        b = r.get_record("data.pkl")
        out.append("MR\t%s\tdata.pkl\t%d\t%08x" % (path, len(b), zlib.crc32(b)))
    except Exception:
        pass
    return out


def variants(d):
    os.makedirs(d, exist_ok=True)
    files = []

    def zipit(name, members, comment=b"", **kw):
        p = os.path.join(d, name)
        with zipfile.ZipFile(p, "w", **kw) as z:
            for n, data in members:
                z.writestr(n, data)
            z.comment = comment
        files.append(p)

    blob = bytes(range(256)) * 40
    zipit("v-stored.zip", [("a/data.pkl", b"\x80\x02K\x01."), ("a/data/0", blob)])
    zipit("v-deflated.zip", [("a/data.pkl", b"\x80\x02K\x01."), ("a/data/0", blob)],
          compression=zipfile.ZIP_DEFLATED)
    zipit("v-comment.zip", [("x.npy", blob)], comment=b"PK\x05\x06 not an end record" * 3)
    zipit("v-many.zip", [("m/%04d" % i, blob[:i]) for i in range(300)])
    p = os.path.join(d, "v-zip64.zip")
    with zipfile.ZipFile(p, "w") as z:
        with z.open("big/data.pkl", "w", force_zip64=True) as f:
            f.write(b"\x80\x02K\x01.")
        z.writestr("big/x", blob)
    files.append(p)
    p = os.path.join(d, "v-prepended.zip")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("p/data.pkl", b"\x80\x02K\x01.")
    open(p, "wb").write(b"#!/bin/sh\nexit 0\n" + inner.getvalue())
    files.append(p)
    for fmt, tag in ((tarfile.USTAR_FORMAT, "ustar"), (tarfile.GNU_FORMAT, "gnu"),
                     (tarfile.PAX_FORMAT, "pax")):
        p = os.path.join(d, "v-%s.tar" % tag)
        with tarfile.open(p, "w", format=fmt) as t:
            for name, data in (("storages", blob[:700]), ("tensors", b"x"),
                               ("dir/" + "long" * 20 + "/name", blob[:1]), ("pickle", b"")):
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            ti = tarfile.TarInfo("folder")
            ti.type = tarfile.DIRTYPE
            t.addfile(ti)
            ti = tarfile.TarInfo("link")
            ti.type = tarfile.SYMTYPE
            ti.linkname = "storages"
            t.addfile(ti)
        files.append(p)
    return files


def main(argv):
    files = []
    i = 1
    while i < len(argv):
        if argv[i] == "--variants":
            files += variants(argv[i + 1])
            i += 2
            continue
        if os.path.isdir(argv[i]):
            for root, dirs, names in os.walk(argv[i]):
                dirs.sort()
                for n in sorted(names):
                    f = os.path.join(root, n)
                    if os.path.isfile(f) and os.path.getsize(f) < (256 << 20):
                        files.append(f)
        else:
            files.append(argv[i])
        i += 1
    for p in files:
        for line in zip_lines(p) + tar_lines(p) + miniz_lines(p):
            print(line)


if __name__ == "__main__":
    main(sys.argv)
