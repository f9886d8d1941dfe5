#!/usr/bin/env python3
"""Differential test of .npy headers: mfmt against numpy.lib.format.

For the .npy files of ../shared (corpus, real) and a few hundred generated
header spellings (versions 1.0, 2.0, 3.0; every form ast.literal_eval takes
that numpy accepts or refuses: quotes, escapes, concatenation, comments,
continuations, repeated keys, integer spellings, structured, nested and
sub-array dtypes with and without objects), the header is read by numpy's
own _read_array_header and the file is given to `mfmt inspect` and
`mfmt scan`. The data of every generated file is a pickle calling
posix.system, so:
  - numpy reads an object dtype  -> mfmt scan must say dangerous;
  - numpy reads a plain dtype    -> mfmt inspect, if it reads the file,
                                    must give numpy's shape and byte size;
  - numpy refuses the header     -> mfmt inspect must fail too.
Prints "npy_diff: N passed, M failed"; exit 1 on a failure.
Usage: npy_diff.py MFMT SHARED_DIR"""
import glob, io, json, os, random, subprocess, sys, tempfile
import numpy as np
import numpy.lib.format as npf

mfmt, shared = sys.argv[1], sys.argv[2]
PAYLOAD = b"cposix\nsystem\n(S'echo npy_diff'\ntR."
passed = failed = 0


def numpy_view(path):
    """('object'|'plain'|'refused', shape, itemsize)"""
    with open(path, 'rb') as f:
        try:
            ver = npf.read_magic(f)
            shape, fortran, dt = npf._read_array_header(f, ver, max_header_size=2 ** 64)
        except Exception:
            return ('refused', None, None)
    if dt.hasobject:
        return ('object', shape, None)
    return ('plain', shape, dt.itemsize)


def mfmt_scan(path):
    r = subprocess.run([mfmt, 'scan', '--json', path], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)['verdict']
    except Exception:
        return 'error'


def mfmt_inspect(path):
    r = subprocess.run([mfmt, 'inspect', '--json', '--tensors', path], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        j = json.loads(r.stdout)
    except Exception:
        return None
    ts = j.get('tensors') or []
    return ts[0] if ts else {}


def check(path, label):
    global passed, failed
    kind, shape, itemsize = numpy_view(path)
    ok, why = True, ''
    if kind == 'object':
        v = mfmt_scan(path)
        real = label == 'shared' or label.startswith('np.save')  # their own, benign pickles
        ok = v != 'safe' if real else v == 'dangerous'
        why = 'numpy unpickles it, mfmt scan says %s' % v
    elif kind == 'refused':
        t = mfmt_inspect(path)
        ok = t is None
        why = 'numpy refuses the header, mfmt inspect reads it'
    else:
        t = mfmt_inspect(path)
        if t is not None and t != {}:
            mshape = t.get('shape')
            nbytes = t.get('nbytes', t.get('bytes'))
            n = int(np.prod(shape, dtype=object)) if shape else 1
            ok = mshape is not None and tuple(mshape[:len(shape)]) == tuple(shape) and \
                (nbytes is None or int(nbytes) == n * itemsize)
            why = 'numpy: shape %s x %d bytes; mfmt: %s' % (shape, itemsize, t)
    if ok:
        passed += 1
    else:
        failed += 1
        print('FAIL %s (%s): %s' % (path, label, why))


def npy_bytes(major, header, data):
    h = header.encode('latin1' if major < 3 else 'utf8')
    start = 10 if major == 1 else 12
    total = start + len(h) + 1
    h += b' ' * ((64 - total % 64) % 64) + b'\n'
    ln = len(h).to_bytes(2 if major == 1 else 4, 'little')
    return b'\x93NUMPY' + bytes([major, 0]) + ln + h + data


DESCRS = ["'|O'", '"O"', "'object'", "'O8'", "u'O'", "'\\x4f'", "'O' ''", "r'|O'", "'''|O'''",
          "'\\117'", "'|' 'O'", "'object_'", "'<O'",
          "[('a', 'O')]", "[('a', '<f4'), ('b', '|O', (2,))]", "[('a', [('b', 'O')])]",
          "('O', (2,))", "[(('title', 'a'), 'O')]", "[['a', 'O']]", "[('a', ('O', 3))]",
          "'<f4'", "'f4'", "'float32'", "'<i8'", "'|b1'", "'?'", "'<U3'", "'|S4'", "'|V8'",
          "'<M8[s]'", "[('a', '<f4'), ('b', '<i2')]", "[('x', '<f8', (2, 2))]", "('<i4', (3,))",
          "'<f3'", "'Q'", "'d'", "'e'", "'<q9'", "'xyz'", "'Oo'", "b'O'", "f'O'", "'O' b''",
          "{'names': ['a'], 'formats': ['O']}", "[('a', 'O', 'x')]", "[]", "'S'", "'>c16'"]
SHAPES = ["(3,)", "(True,)", "(0x3,)", "(+3,)", "(-1,)", "( 3 , )", "(3L,)", "(3,4)", "()",
          "(3)", "[3]", "(0b11,)", "(3_0,)", "(3.0,)", "(99999999999999999999,)", "(2 ,3,)"]
FORDERS = ["False", "True", "0", "None", "(False)"]


def headers(rng):
    for d in DESCRS:
        for s in ("(3,)", "(2,)"):
            yield "{'descr': %s, 'fortran_order': False, 'shape': %s, }" % (d, s)
    for s in SHAPES:
        yield "{'descr': '|O', 'fortran_order': False, 'shape': %s}" % s
        yield "{'descr': '<f4', 'fortran_order': False, 'shape': %s}" % s
    for fo in FORDERS:
        yield "{'descr': '|O', 'fortran_order': %s, 'shape': (3,)}" % fo
    tricks = [
        "{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
        "{\"descr\": \"|O\", \"fortran_order\": False, \"shape\": (3,)}",
        "{'descr': '|O', # comment\n 'fortran_order': False, 'shape': (3,)}",
        "{'descr': \\\n'|O', 'fortran_order': False, 'shape': (3,)}",
        "\n{'descr': '|O', 'fortran_order': False, 'shape': (3,)}",
        "\t{'descr': '|O', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)} # trailing",
        "{'de' 'scr': '|O', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
        "{'descr': '|O', 'fortran_order': False}",
        "{'descr': '\\N{LATIN CAPITAL LETTER O}', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)},",
        "({'descr': '|O', 'fortran_order': False, 'shape': (3,)})",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}\n\n",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}\x00",
        "{'descr': '|O',\r\n 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O'\n, 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,)} \\\n",
        "{'descr': R'|O', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': U'|O', 'fortran_order': False, 'shape': (3,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (-0,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (1+2j,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,), **{}}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3,), 'x': set()}",
    ]
    yield from tricks
    for depth in (150, 199, 200, 201, 400):  # Python refuses 201 nested brackets
        yield "{'descr': '|O', 'fortran_order': False, 'shape': %s3,%s}" % ('(' * depth, ')' * depth)
    # random recombinations of keys, quoting and spacing
    keys = [("descr", DESCRS), ("fortran_order", ["False", "True"]), ("shape", SHAPES[:6])]
    quotes = ["'%s'", '"%s"', "'''%s'''", "u'%s'", "r'%s'"]
    for _ in range(150):
        parts = []
        for k, vals in rng.sample(keys, 3):
            parts.append("%s%s:%s%s" % (rng.choice(quotes) % k, rng.choice(['', ' ', '\t']),
                                         rng.choice(['', ' ', '\n ']), rng.choice(vals)))
        sep = rng.choice([', ', ',', ' ,\n', ', # c\n'])
        yield '{' + sep.join(parts) + rng.choice(['', ',', ', ']) + '}'


def main():
    rng = random.Random(10)
    for p in sorted(glob.glob(os.path.join(shared, 'corpus', '**', '*.npy'), recursive=True) +
                    glob.glob(os.path.join(shared, 'real', '**', '*.npy'), recursive=True)):
        check(p, 'shared')
    with tempfile.TemporaryDirectory(prefix='npy_diff_') as tmp:
        i = 0
        for h in headers(rng):
            for major in (1, 2, 3):
                p = os.path.join(tmp, 'h%04d_v%d.npy' % (i, major))
                i += 1
                with open(p, 'wb') as f:
                    f.write(npy_bytes(major, h, PAYLOAD))
                check(p, repr(h))
        # np.save itself, of structured and object arrays
        arrs = [np.zeros(3, dtype=[('a', '<f4'), ('b', 'O')]),
                np.zeros(2, dtype=[('a', [('b', 'O')])]),
                np.zeros(2, dtype=[('a', 'O', (2,))]),
                np.array(['ab', 'cde']), np.zeros(3, dtype=[('a', '<f4'), ('b', '<i2')]),
                np.zeros((2, 2), dtype='S3'), np.arange('2020-01-01', '2020-01-05', dtype='<M8[D]')]
        for j, a in enumerate(arrs):
            p = os.path.join(tmp, 'save%d.npy' % j)
            np.save(p, a, allow_pickle=True)
            check(p, 'np.save %s' % a.dtype)
    print('npy_diff: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
