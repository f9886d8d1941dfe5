#!/usr/bin/env python3
"""Differential test of the pickle machine: names CPython's unpickler
reaches against the names `mfmt scan` reports.

Random opcode streams (containers, every mutating opcode on every kind of
target, memo, marks, text and binary arguments; protocols 0-5) with a
GLOBAL posix.system at a random place, alone and behind GGUF, TFLite and
HDF5 signatures, are unpickled by CPython's C unpickler whose find_class
records each name and returns a stand-in class that takes any call,
append, extend, add, item assignment and __setstate__ (so CPython goes at
least as far as with the real classes). Every name CPython reaches must be
among mfmt's globals: else mfmt stopped where a loader goes on.
Prints "pickle_diff: N passed, M failed"; exit 1 on a failure.
Usage: pickle_diff.py MFMT [COUNT]"""
import io, json, os, pickle, random, re, struct, subprocess, sys, tempfile

mfmt = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
sys.unraisablehook = lambda *a: None  # stand-ins over bytearrays: noise only
rng = random.Random(9)


class Standin:
    def __new__(cls, *a, **k): return object.__new__(cls)
    def __init__(self, *a, **k): pass
    def __setstate__(self, s): pass
    def append(self, x): pass
    def extend(self, x): pass
    def add(self, x): pass
    def __setitem__(self, k, v): pass
    def __call__(self, *a, **k): return Standin()


class Recorder(pickle.Unpickler):
    def __init__(self, f, seen):
        super().__init__(f)
        self.seen = seen

    def find_class(self, mod, name):
        self.seen.append(mod + '.' + name)
        return Standin

    def persistent_load(self, pid):
        return None


def cpython_names(b):
    seen, f = [], io.BytesIO(b)
    while f.tell() < len(b):
        try:
            Recorder(f, seen).load()
        except BaseException:
            break
    return [n for n in seen if re.fullmatch(r'[A-Za-z0-9_.]+', n)]


def sbu(s):
    b = s.encode()
    return b'\x8c' + bytes([len(b)]) + b


OPS = [
    lambda: b'(', lambda: b')', lambda: b']', lambda: b'}', lambda: b'\x8f', lambda: b'N',
    lambda: b'\x88', lambda: b'\x89', lambda: b'K' + bytes([rng.randrange(4)]),
    lambda: b'I%d\n' % rng.randrange(-2, 4), lambda: b'J' + struct.pack('<i', rng.randrange(-2, 3)),
    lambda: sbu(rng.choice(['a', 'b', 'k'])), lambda: b'C\x01x',
    lambda: b'a', lambda: b'e', lambda: b's',
    lambda: b'u', lambda: b'\x90', lambda: b'b', lambda: b'R', lambda: b'\x81', lambda: b't',
    lambda: b'l', lambda: b'd', lambda: b'\x85', lambda: b'\x86', lambda: b'\x87', lambda: b'\x91',
    lambda: b'0', lambda: b'1', lambda: b'2', lambda: b'\x94',
    lambda: b'h' + bytes([rng.randrange(3)]), lambda: b'q' + bytes([rng.randrange(3)]),
    lambda: b'c' + rng.choice([b'collections\nOrderedDict\n', b'builtins\nbytearray\n',
                               b'__main__\nFoo\n', b'argparse\nNamespace\n', b'builtins\nset\n']),
    lambda: sbu('builtins') + sbu(rng.choice(['list', 'dict', 'set', 'frozenset', 'object'])) + b'\x93',
    lambda: b"S'x'\n", lambda: b'V\\u00e9\n', lambda: b'F1.5\n', lambda: b'L5L\n',
]
PREFIXES = [b'', b'GGUF\x03\x00\x00\x00\x00' + b'0', b'N0NUTFL3' + b'x' * 80 + b'0']


def stream():
    body = b''.join(rng.choice(OPS)() for _ in range(rng.randrange(2, 30)))
    k = rng.randrange(len(body) + 1)
    core = body[:k] + b'cposix\nsystem\n0' + body[k:] + b'N.'
    pre = rng.choice(PREFIXES)
    data = (b'\x80' + bytes([rng.randrange(6)]) if not pre else pre) + core
    if rng.random() < 0.2:
        data += b' ' * max(0, 600 - len(data)) + b'\x89HDF\r\n\x1a\n' + b'\0' * 32
    return data


passed = failed = 0
with tempfile.TemporaryDirectory(prefix='pickle_diff_') as tmp:
    for i in range(count):
        data = stream()
        reached = cpython_names(data)
        if not reached:
            continue
        p = os.path.join(tmp, 's%05d.bin' % i)
        with open(p, 'wb') as f:
            f.write(data)
        r = subprocess.run([mfmt, 'scan', '--json', p], capture_output=True, text=True)
        try:
            fl = json.loads(r.stdout)['files'][0]
            names = {g['name'] for g in fl.get('globals', [])}
        except Exception:
            names = set()
        missing = [n for n in reached if n not in names]
        if missing:
            failed += 1
            print('FAIL %r: CPython reaches %s, mfmt scan does not' % (data[:80], missing))
        else:
            passed += 1
print('pickle_diff: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
