#!/usr/bin/env python3
"""Issue 18's classes A (FRAME is not a no-op) and B (mfmt failed where
CPython goes on, then excused it), as a red-teamer writes them, with their
benign twins; manifest.json for tests/test_scan_fixtures.c.

Every hostile file is confirmed with the real loader: pickle.load (buffered
and io.BytesIO), np.load(allow_pickle=True) or torch.load runs it in a
throwaway subprocess inside a temporary directory, and its payload --
builtins.open('marker', 'w'), which only creates an empty file there -- is
seen to run. Every twin (the same bytes as pickle.dump or torch.save would
frame or spell them, payload replaced by builtins.set) loads cleanly with
the same loader. A file whose confirmation fails is not written.
Run: /usr/bin/python3 make_canon_tests.py (in this folder; torch 1.13,
numpy). Deterministic."""
import io, json, os, pickle, struct, subprocess, sys, tarfile, tempfile, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
out = []
PAYLOAD = b"cbuiltins\nopen\n(S'marker'\nS'w'\ntR0"
HARMLESS = b"cbuiltins\nset\n)R0"

LOADERS = {
    'pickle.load': "import pickle; pickle.load(open(P, 'rb'))",
    'pickle.load(BytesIO)': "import pickle, io; pickle.load(io.BytesIO(open(P, 'rb').read()))",
    'pickle.load(rb,0)': "import pickle; pickle.load(open(P, 'rb', 0))",
    'np.load': "import numpy as np; np.load(P, allow_pickle=True)",
    'torch.load': "import torch; torch.load(P)",
}


def runs(data, loader):
    """(payload ran, load raised) under the real loader, in a temp dir."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, 'f.bin')
        with open(p, 'wb') as f:
            f.write(data)
        r = subprocess.run([sys.executable, '-c', 'P = %r\n' % p + LOADERS[loader]], cwd=d,
                           capture_output=True, timeout=120)
        return os.path.exists(os.path.join(d, 'marker')), r.returncode != 0


def put(name, evil, twin, loader, verdict, needle, note):
    ran, _ = runs(evil, loader)
    assert ran, '%s: %s does not run the payload' % (name, loader)
    ran, failed = runs(twin, loader)
    assert not ran and not failed, '%s: the twin does not load with %s' % (name, loader)
    for fn, data, v, nd in ((name, evil, verdict, needle), ('twin_' + name, twin, 'safe', None)):
        with open(os.path.join(HERE, fn), 'wb') as f:
            f.write(data)
        c = {'path': fn, 'verdict': v, 'note': '%s (%s runs it)' % (note, loader)
             if v != 'safe' else 'benign twin of ' + name}
        if nd:
            c['needle'] = nd
        out.append(c)


def frame(body):
    return b'\x95' + struct.pack('<Q', len(body)) + body


def frames(parts):
    return b''.join(frame(p) for p in parts)


def crossing(size, m, payload):
    """Class A: a frame of `size` bytes ends m bytes into SHORT_BINUNICODE's
    argument (read with _Unpickler_Read: the BINBYTES opcodes read with
    _Unpickler_ReadInto, which takes what is left of the frame first). In order, the argument is m bytes in the frame and the rest
    after it, and the bytes after are data; a reader that loads the frame
    reads the whole argument after the frame and meets the payload."""
    n = m + 5
    pre = b']\x94'
    pad = size - (len(pre) + 5 + 2 + m)
    body = pre + b'X' + struct.pack('<I', pad) + b'p' * pad + b'\x8c' + bytes([n]) + b'y' * m
    after = b'z' * (n - m) + b'N' * (m - 2) + b'C' + bytes([len(payload) + 1])
    return b'\x80\x04' + frame(body) + after + payload + b'N' + b'0' * (m - 2) + b'00.'


def crossing_twin(size):
    body = b']\x94' + b'X' + struct.pack('<I', size) + b'p' * size + b'a'
    return b'\x80\x04' + frame(body) + frame(HARMLESS + b'.')


# ---- class A: frames
for size in (8192, 8300, 65536, 70000):
    for loader in ('pickle.load', 'pickle.load(BytesIO)'):
        name = 'frame_cross_%d_%s.pkl' % (size, 'buffered' if loader == 'pickle.load' else 'bytesio')
        try:
            put(name, crossing(size, 3, PAYLOAD), crossing_twin(size), loader, 'unknown',
                'ends at byte', 'a FRAME of %d bytes ends inside an argument' % size)
        except AssertionError as e:
            print('not kept:', e)

# nested frames: the inner FRAME's bytes are read as the outer frame's
inner = b']\x94' + PAYLOAD + b'.'
put('frame_nested.pkl', b'\x80\x04' + frame(frame(inner)), b'\x80\x04' + frame(b']\x94' + HARMLESS + b'.'),
    'pickle.load', 'dangerous', 'builtins.open', 'a FRAME inside a FRAME')

# torch zip data.pkl (stored and deflated) with an argument across the frame end
def torch_zip(pkl, deflate):
    b = io.BytesIO()
    with zipfile.ZipFile(b, 'w', zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        z.writestr('archive/data.pkl', pkl)
        z.writestr('archive/version', '3\n')
    return b.getvalue()


for deflate in (False, True):
    try:
        put('frame_torch_zip_%s.pt' % ('deflated' if deflate else 'stored'),
            torch_zip(crossing(9000, 4, PAYLOAD), deflate), torch_zip(crossing_twin(9000), deflate),
            'torch.load', 'unknown', 'ends at byte', 'torch zip data.pkl with a frame game')
    except AssertionError as e:
        print('not kept:', e)

# torch's legacy magic-number stream: the first pickle's STOP inside a big
# frame; torch reads the next pickle after the frame, mfmt in order
magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
rest = [pickle.dumps(1001, protocol=2),
        pickle.dumps({'protocol_version': 1001, 'little_endian': True,
                      'type_sizes': {'short': 2, 'int': 4, 'long': 4}}, protocol=2),
        pickle.dumps({'a': 1}, protocol=2), pickle.dumps([], protocol=2)]
decoy = b''.join(rest)
evil_first = b'\x80\x04' + frame(magic[2:] + decoy + b'N' * (9000 - len(decoy)))
put('frame_legacy_stream.pt', evil_first + PAYLOAD + b'N.' + decoy,
    magic + decoy, 'torch.load', 'dangerous', 'builtins.open',
    'torch legacy stream: STOP inside a frame, the payload after the frame')


# legacy tar: storages' count pickle stops inside a frame; torch reads the
# storage views pickle (unbuffered) after the frame
def legacy_tar(storages):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode='w', format=tarfile.PAX_FORMAT) as t:
        for name, data in (('storages', storages), ('tensors', pickle.dumps(0, protocol=2)),
                           ('pickle', pickle.dumps({'a': 1}, protocol=2))):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


count = pickle.dumps(0, protocol=2)
views = pickle.dumps([], protocol=2)
put('frame_legacy_tar.pt',
    legacy_tar(b'\x80\x04' + frame(count[2:] + views + b'N' * 9000) + PAYLOAD + b']\x94.'),
    legacy_tar(count + views), 'torch.load', 'dangerous', 'builtins.open',
    'legacy tar storages: the count pickle stops inside a frame')

# ---- class B: mfmt failed where CPython goes on
for op, arg, needle in ((b'I', b'1\x00x', 'NUL byte'), (b'I', b'\x00', 'NUL byte'),
                        (b'L', b'1\x00xL', 'NUL byte'), (b'I', b' 1', 'syntax Python writes'),
                        (b'I', b'1_0', 'syntax Python writes'), (b'I', b'+1', 'syntax Python writes')):
    tag = {b'1\x00x': 'nul', b'\x00': 'nul_first', b'1\x00xL': 'nul', b' 1': 'space',
           b'1_0': 'underscore', b'+1': 'sign'}[arg]
    put('text_%s_%s.pkl' % ('int' if op == b'I' else 'long', tag),
        op + arg + b'\n0' + PAYLOAD + b'N.', op + (b'1L' if op == b'L' else b'1') + b'\n0' + HARMLESS + b'N.',
        'pickle.load', 'dangerous', 'builtins.open', 'a text number mfmt once refused')
put('text_put_get_nul.pkl', b'(lp0\x00x\n0g0\x00y\n0' + PAYLOAD + b'N.',
    b'(lp0\n0g0\n0' + HARMLESS + b'N.', 'pickle.load', 'dangerous', 'builtins.open',
    'PUT and GET with a NUL in their index')
# list SETITEM whose key is built by a call
put('setitem_call_key.pkl', b']K\x00acbuiltins\nint\n)RNs0' + PAYLOAD + b'N.',
    b']K\x00aK\x00Ns0' + HARMLESS + b'N.', 'pickle.load', 'dangerous', 'builtins.open',
    'list SETITEM whose key is int() built by a call')
put('setitem_slice_key.pkl', b']K\x00acbuiltins\nslice\n(K\x00K\x01tR]s0' + PAYLOAD + b'N.',
    b']K\x00aK\x00Ns0' + HARMLESS + b'N.', 'pickle.load', 'dangerous', 'builtins.open',
    'list SETITEM whose key is a slice built by a call')
# other formats' signatures followed by a pickle CPython runs
gguf = b'GGUF\x03\x00\x00\x00\x00'  # BINFLOAT of "GUF\3\0\0\0\0"
put('signature_gguf_nul.gguf', gguf + b'0I\x00\n0' + PAYLOAD + b'N.',
    gguf + b'0I1\n0' + HARMLESS + b'N.', 'pickle.load', 'dangerous', 'builtins.open',
    'a GGUF signature, an INT with a NUL, the payload')
tfl = b'NNC\x04TFL3' + b'0'  # NONE NONE SHORT_BINBYTES(4) "TFL3": TFL3 at byte 4
put('signature_tflite_call_key.tflite', tfl + b'0]K\x00acbuiltins\nint\n)RNs0' + PAYLOAD + b'N.',
    tfl + b'0]K\x00aK\x00Ns0' + HARMLESS + b'N.', 'pickle.load', 'dangerous', 'builtins.open',
    'a TFLite signature, a list SETITEM with a call-built key, the payload')
head = b'I\x007\n0' + PAYLOAD + b'N.'
hdf = head + b' ' * (512 - len(head)) + b'\x89HDF\r\n\x1a\n' + b'\x00' * 64
twin_head = b'I7\n0' + HARMLESS + b'N.'
put('signature_hdf5_userblock.h5', hdf,
    twin_head + b' ' * (512 - len(twin_head)) + b'\x89HDF\r\n\x1a\n' + b'\x00' * 64,
    'pickle.load', 'dangerous', 'builtins.open', 'an HDF5 signature at 512 after a pickle')
# np.load of a plain file goes to pickle.load (after reading the magic)
put('npload_int_nul.bin', b'I\x00\n0' + PAYLOAD + b'N.', b'I0\n0' + HARMLESS + b'N.',
    'np.load', 'dangerous', 'builtins.open', 'np.load(allow_pickle=True) of a pickle with a NUL')

# the oracle's regression cases (README.md) are kept in the manifest
mpath = os.path.join(HERE, 'manifest.json')
if os.path.exists(mpath):
    with open(mpath) as f:
        out += [c for c in json.load(f) if c['path'].startswith('oracle_')]
with open(mpath, 'w') as f:
    json.dump(out, f, indent=1)
print('%d files' % len(out))
