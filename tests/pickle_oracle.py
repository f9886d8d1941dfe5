#!/usr/bin/env python3
"""The differential oracle of `mfmt scan` (doc/scan.md, "The oracle"):
CPython's own C unpickler (_pickle.Unpickler) run on the same bytes in every
reading mode a loader uses, against mfmt's verdict.

Modes: io.BytesIO (torch's zip records), open(p, 'rb') (pickle.load,
np.load's pickle path after its magic read and seek back, torch's legacy
stream), open(p, 'rb', 0) (torch's legacy tar members), each as one load
and as a sequence of loads (torch reads pickles one after another from
one file; persistent ids resolved as torch does: recorded), np.load of a
.npy object array (pickle.load after numpy's own header reading), and every
*.pkl member of a zip archive (torch.load's record path).

Nothing from the file ever runs: find_class records (module, name) and
returns a harmless stand-in class, never importing anything; persistent_load
records the id and returns a stand-in. The stand-in takes any call, append,
extend, add, item assignment and __setstate__, so CPython goes at least as
far as with the real classes.

Invariant, for every input mfmt calls `safe`: in every mode CPython either
reached STOP having asked only for names mfmt reports as safe, or failed
before asking for any name or persistent id (or, without a persistent_load,
at its first persistent id: a torch pickle, which the modes with one read).

Inputs: files given with --files (the corpus, ../shared/real, tests/data/
scan, tests/data/scan_benign), structured generators (frames of every size
around the 8192 and 65536 thresholds with arguments across every frame end,
nested frames, STOP inside a frame; text numbers with NUL, spaces,
underscores, signs, leading zeros, huge values; list keys and indices built
by calls; memo games; EXT codes; persistent ids; other formats' signatures;
legacy torch streams) and a mutation loop over all of them. Deterministic
for a seed and count.

Prints "RESULT pickle_oracle PASSED FAILED" (tests/run.sh counts it) and
each disagreement as "FAIL ..."; --keep DIR writes the disagreeing inputs.
Usage: pickle_oracle.py MFMT [--count N] [--seed S] [--seconds T]
                            [--files PATH...] [--keep DIR]"""
import argparse, io, json, os, pickle, random, resource, struct, subprocess, sys, tempfile, time, zipfile

sys.unraisablehook = lambda *a: None
sys.setrecursionlimit(10000)


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
    """find_class records and returns Standin: nothing is imported."""
    def __init__(self, f, log):
        super().__init__(f)
        self.log = log

    def find_class(self, mod, name):
        self.log.append(('name', '%s.%s' % (mod, name)))
        return Standin


class TorchRecorder(Recorder):
    """torch.load's unpicklers resolve persistent ids: recorded too."""
    def persistent_load(self, pid):
        self.log.append(('pid', None))
        return Standin()


def run_loads(f, cls, seq):
    """One load, or loads until an error or the end (seq). Returns a list
    of (log, ok) per load."""
    out = []
    for _ in range(64 if seq else 1):
        log = []
        try:
            cls(f, log).load()
            out.append((log, True))
        except BaseException as e:
            # pickle.load without a persistent_load refuses the first
            # persistent id: the file is torch's, whose loaders resolve it
            # (the -seq modes) -- not a failure of this mode's reading
            if 'persistent_load' in str(e):
                log.append(('expected-failure', None))
            # the oracle's 1 GiB cap (a memo index of 2**31 wants 16 GiB):
            # a machine with the memory goes on, as mfmt does
            if isinstance(e, MemoryError):
                log.append(('expected-failure', None))
            out.append((log, False))
            break
        if seq:
            here = f.tell()
            if not f.read(1):
                break
            f.seek(here)
    return out


def modes(path, data):
    """{mode: [(log, reached_stop), ...]} for every way a loader reads."""
    res = {}
    # torch.load reads a zip archive (PK\3\4 first) only as one: no
    # sequence of pickles from byte 0 then
    seq = data[:4] != b'PK\x03\x04'
    res['bytesio'] = run_loads(io.BytesIO(data), Recorder, False)
    with open(path, 'rb') as f:
        res['buffered'] = run_loads(f, Recorder, False)
    with open(path, 'rb', 0) as f:
        res['unbuffered'] = run_loads(f, Recorder, False)
    if seq:
        res['bytesio-seq'] = run_loads(io.BytesIO(data), TorchRecorder, True)
        with open(path, 'rb') as f:
            res['buffered-seq'] = run_loads(f, TorchRecorder, True)
        with open(path, 'rb', 0) as f:
            res['unbuffered-seq'] = run_loads(f, TorchRecorder, True)
    with open(path, 'rb') as f:  # np.load: reads the magic, seeks back
        magic = f.read(6)
        f.seek(-len(magic), 1)
        if magic == b'\x93NUMPY':
            npy = npy_pickle(f)
            if npy is not None:
                res['np.load'] = npy
        elif not magic.startswith(b'PK\x03\x04'):
            res['np.load'] = run_loads(f, Recorder, False)
    if data[:4] == b'PK\x03\x04':
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for n in z.namelist():
                    if n.endswith('.pkl'):
                        res['zip:' + n] = run_loads(io.BytesIO(z.read(n)), TorchRecorder, False)
        except Exception:
            pass
    return res


def npy_pickle(f):
    try:
        import numpy.lib.format as npf
        version = npf.read_magic(f)
        shape, fortran, dtype = npf._read_array_header(f, version, max_header_size=1 << 40)
    except Exception:
        return None
    if not dtype.hasobject:
        return None
    return run_loads(f, Recorder, False)


def check(report, res):
    """Disagreements of a file mfmt calls safe, as text (empty: none)."""
    if report.get('verdict') != 'safe':
        return []
    safe_names = {g['name'] for g in report.get('globals', []) if g.get('class') == 'safe'}
    # joblib files: joblib.load reads an array's bytes after a BUILD, which
    # pickle.load takes for an opcode and stops at (mfmt checks that byte is
    # none); a stop there after names mfmt judged safe runs nothing else.
    joblib_stop = any('joblib array data' in (f.get('message') or f.get('text') or '')
                      for f in report.get('findings', []))
    bad = []
    for mode, loads in res.items():
        for i, (log, ok) in enumerate(loads):
            asked = [x for _, x in log if x is not None]
            pids = sum(1 for k, _ in log if k == 'pid')
            extra = [n for n in asked if n not in safe_names]
            if extra:
                bad.append('%s load %d asks for %s' % (mode, i, extra[:3]))
            if not ok and (asked or pids) and ('expected-failure', None) not in log \
                    and not (joblib_stop and not extra and not pids):
                bad.append('%s load %d fails after asking for %d names, %d persistent ids'
                           % (mode, i, len(asked), pids))
    return bad


# ------------------------------------------------------------ generators

def sbu(s):
    b = s.encode()
    return b'\x8c' + bytes([len(b)]) + b


def frame(body):
    return b'\x95' + struct.pack('<Q', len(body)) + body


EVIL = b'cposix\nsystem\n(S\'true\'\ntR0'
BENIGN_NAMES = [b'ccollections\nOrderedDict\n)R', b'cbuiltins\nset\n)R',
                b'\x8c\x08builtins\x94\x8c\tfrozenset\x94\x93)R']


def benign_ops(rng, n):
    """Opcodes that build plain values: a list of chunks, stack +1 each."""
    out = []
    for _ in range(n):
        k = rng.randrange(8)
        if k == 0:
            out.append(b'K' + bytes([rng.randrange(256)]))
        elif k == 1:
            out.append(sbu('x' * rng.randrange(0, 40)))
        elif k == 2:
            ln = rng.choice([rng.randrange(0, 300), rng.randrange(8000, 8300)])
            out.append(b'X' + struct.pack('<I', ln) + b'a' * ln)
        elif k == 3:
            out.append(b'N')
        elif k == 4:
            out.append(b'J' + struct.pack('<i', rng.randrange(-5, 5)))
        elif k == 5:
            out.append(b'C' + bytes([3]) + b'abc')
        elif k == 6:
            out.append(rng.choice(BENIGN_NAMES))
        else:
            out.append(b'G' + struct.pack('>d', rng.random()))
    return out


def as_list(chunks):
    return b']\x94(' + b''.join(chunks) + b'e'


def gen_frame_games(rng):
    """Frames around the thresholds, ends inside arguments, nested frames,
    STOP inside a frame; an argument that runs past a frame end hides a
    GLOBAL that a file-reading unpickler meets after the frame."""
    k = rng.randrange(6)
    size = rng.choice([8192, 65536, 131072, 4096, 16384]) + rng.randrange(-24, 25)
    if k == 0:
        # SHORT_BINUNICODE whose argument crosses the frame end by m bytes
        # (the BINBYTES opcodes read with _Unpickler_ReadInto, which takes
        # what is left of the frame first; text ones re-read):
        # read in order, its N bytes are m in the frame and N-m after it;
        # a reader that loads the frame reads N fresh bytes after the frame
        # and goes on N bytes later, where EVIL waits. The last m bytes of
        # those N are, in order, opcodes that swallow EVIL as data.
        m = rng.randrange(2, 12)
        n = m + rng.randrange(0, 40)
        pre = b']\x94'
        pad = max(0, size - (len(pre) + 5 + 2 + m))
        body = pre + b'X' + struct.pack('<I', pad) + b'p' * pad + b'\x8c' + bytes([n]) + b'y' * m
        after = b'z' * (n - m) + b'N' * (m - 2) + b'C' + bytes([len(EVIL)])
        return b'\x80\x04' + frame(body) + after + EVIL + b'0' * (m - 2) + b'00.'
    if k == 1:  # frame lengths off by j around a correct framing
        chunks = benign_ops(rng, rng.randrange(1, 40))
        body = as_list(chunks) + b'.'
        j = rng.randrange(-6, 7)
        fl = max(0, len(body) + j)
        return b'\x80\x04' + b'\x95' + struct.pack('<Q', fl) + body + EVIL + b'N.'
    if k == 2:  # nested frames
        chunks = benign_ops(rng, rng.randrange(1, 20))
        inner = frame(as_list(chunks))
        return b'\x80\x04' + frame(inner + b'.') + EVIL + b'N.'
    if k == 3:  # STOP inside a frame, then a pickle after the frame
        chunks = benign_ops(rng, rng.randrange(1, 20))
        body = as_list(chunks) + b'.' + b'\x80\x04' + EVIL + b'N.'
        return b'\x80\x04' + frame(body) + b'\x80\x04' + EVIL + b'N.'
    if k == 4:  # a well-formed framing of a benign pickle (must stay safe)
        chunks = benign_ops(rng, rng.randrange(1, 60))
        payload = as_list(chunks) + b'.'
        out, i = b'\x80\x04', 0
        cuts = sorted(rng.sample(range(1, len(chunks)), min(3, len(chunks) - 1))) if len(chunks) > 1 else []
        pieces, last = [], 0
        for c in cuts + [len(chunks)]:
            pieces.append(chunks[last:c])
            last = c
        parts = [b']\x94(' + b''.join(pieces[0])] + [b''.join(p) for p in pieces[1:]]
        parts[-1] += b'e.'
        return out + b''.join(frame(p) for p in parts)
    # a FRAME in a protocol 2 pickle, text lines across a frame end
    chunks = benign_ops(rng, 3)
    body = as_list(chunks) + b'S\'abc'
    return b'\x80\x02' + frame(body) + b"def'\n0" + EVIL + b'N.'


def text_number(rng):
    v = rng.choice([b'0', b'1', b'7', b'12', b'255', b'-1', b'99999999999999999999999'])
    k = rng.randrange(9)
    if k == 0:
        return v + b'\x00' + rng.choice([b'junk', b'9', b'x\x00', b''])
    if k == 1:
        return b' ' + v
    if k == 2:
        return v + b' '
    if k == 3:
        return b'+' + v
    if k == 4:
        return v[:1] + b'_' + v[1:] if len(v) > 1 else v + b'_'
    if k == 5:
        return b'0' + v
    if k == 6:
        return b'0x' + v
    if k == 7:
        return v * rng.randrange(1, 30)
    return v


def gen_text_numbers(rng):
    op = rng.choice([b'I', b'L', b'F', b'p', b'g'])
    t = text_number(rng)
    if op == b'L':
        t += rng.choice([b'L', b'', b'\x00L'])
    pre = b'(lI0\naI1\na'
    if op in (b'p', b'g'):
        core = pre + b'p0\n' + b'0' + op + t + b'\n' + (b'0' if op == b'g' else b'')
    else:
        core = pre + op + t + b'\n' + b'0'
    tail = rng.choice([EVIL + b'N.', b'N.', b'I3\ns' + EVIL + b'N.'])
    return rng.choice([b'', b'\x80\x02']) + core + tail


def gen_call_keys(rng):
    key = rng.choice([b'cbuiltins\nint\n(S\'1\'\ntR', b'cbuiltins\nslice\n(I0\nI1\ntR',
                      b'c__builtin__\nint\n(I0\ntR', b'cbuiltins\nbool\n(I1\ntR'])
    val = rng.choice([b'I5\n', b'(I1\nl', b'N'])
    return b'(lI0\naI1\na' + key + val + b's0' + rng.choice([EVIL, b'']) + b'N.'


def gen_memo(rng):
    k = rng.randrange(5)
    if k == 0:  # STACK_GLOBAL from memoized strings
        return (b'\x80\x04' + sbu('posix') + b'\x94' + sbu('system') + b'\x94' + b'00' +
                b'h\x00h\x01\x93' + sbu('true') + b'\x85R.')
    if k == 1:  # MEMOIZE after sparse PUTs
        return b'\x80\x04]q\x05\x94]q\x00\x94h\x01h\x05.'
    if k == 2:
        return b'\x80\x02]r\xff\xff\xff\xff0j\xff\xff\xff\xff.'
    if k == 3:
        return b'(lp' + text_number(rng) + b'\n0g0\n.'
    return b'\x80\x02' + b'\x82' + bytes([rng.randrange(1, 256)]) + b')R.'


def gen_persistent(rng):
    k = rng.randrange(3)
    if k == 0:
        return b'\x80\x02' + sbu('storage') + b'\x85Q.'
    if k == 1:
        return b'Pabc\n.'
    return b'Pab\x00c\n0' + EVIL + b'N.'


def gen_signature(rng):
    sig = rng.choice([b'GGUF\x03\x00\x00\x00\x00', b'N0NUTFL3', b'\x89HDF\r\n\x1a\n',
                      b'J\x00\x00\x00\x00{"a":1}'])
    mid = rng.choice([b'0', b'', b'I0\x00\n0', b'(lI0\naI1\na' + gen_call_keys(rng)[:-2]])
    return sig + mid + rng.choice([EVIL, b'']) + b'N.'


def gen_legacy(rng):
    magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
    proto = pickle.dumps(1001, protocol=2)
    sysinfo = pickle.dumps({'protocol_version': 1001, 'little_endian': True,
                            'type_sizes': {'short': 2, 'int': 4, 'long': 4}}, protocol=2)
    obj = pickle.dumps({'a': 1}, protocol=2)
    keys = pickle.dumps([], protocol=2)
    parts = [magic, proto, sysinfo, obj, keys]
    k = rng.randrange(3)
    if k == 0:  # STOP inside a frame: the next load starts after the frame
        i = rng.randrange(5)
        parts[i] = b'\x80\x04' + frame(parts[i][2:] + EVIL + b'N.')
    elif k == 1:
        i = rng.randrange(5)
        parts[i] = parts[i][:-1] + b'0' + EVIL + b'N.'
    return b''.join(parts) + rng.choice([b'', EVIL + b'N.'])


GENERATORS = [gen_frame_games, gen_text_numbers, gen_call_keys, gen_memo, gen_persistent,
              gen_signature, gen_legacy]


def mutate(rng, b):
    b = bytearray(b)
    for _ in range(rng.randrange(1, 4)):
        k = rng.randrange(7)
        i = rng.randrange(len(b) + 1)
        if k == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif k == 1:
            b[i:i] = EVIL
        elif k == 2 and b:
            del b[i:i + rng.randrange(1, 9)]
        elif k == 3 and b:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randrange(1, 32)]
        elif k == 4:
            b[i:i] = rng.choice([b'\x00', b' ', b'_', b'+', b'\n', b'.', b'(', b'0'])
        elif k == 5:
            p = bytes(b).find(b'\x95')
            if p >= 0 and p + 9 <= len(b):
                n = struct.unpack('<Q', bytes(b[p + 1:p + 9]))[0] + rng.randrange(-9, 10)
                b[p + 1:p + 9] = struct.pack('<Q', max(0, n))
        elif k == 6:
            b[i:i] = frame(bytes(b[i:i + rng.randrange(0, 64)]))
    return bytes(b)


# ------------------------------------------------------------------ run

def unlimit():
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def mfmt_reports(mfmt, paths):
    out = {}
    for i in range(0, len(paths), 200):
        r = subprocess.run([mfmt, 'scan', '--json'] + paths[i:i + 200], capture_output=True,
                           text=True, preexec_fn=unlimit)
        try:
            for f in json.loads(r.stdout)['files']:
                out[f['path']] = f
        except Exception:
            pass
    return out


def main():
    # a memo index of 2**32 makes CPython's memo array 32 GiB: under a 1 GiB cap
    # it fails with MemoryError (as it would on a loader's machine) at once
    # (the soft limit only: mfmt, run under ASan in make test, gets it back)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
    ap = argparse.ArgumentParser()
    ap.add_argument('mfmt')
    ap.add_argument('--count', type=int, default=3000)
    ap.add_argument('--seed', type=int, default=18)
    ap.add_argument('--seconds', type=float, default=0)
    ap.add_argument('--files', nargs='*', default=[])
    ap.add_argument('--keep')
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = []
    for p in a.files:
        if os.path.isdir(p):
            for d, _, ns in os.walk(p):
                files += [os.path.join(d, n) for n in sorted(ns)]
        elif os.path.isfile(p):
            files.append(p)
    files = sorted(f for f in files if os.path.getsize(f) <= (8 << 20))
    seeds = []
    for f in files:
        if os.path.getsize(f) <= (256 << 10):
            with open(f, 'rb') as h:
                seeds.append(h.read())
    start = time.time()
    passed = failed = tried = 0
    with tempfile.TemporaryDirectory(prefix='pickle_oracle_') as tmp:
        # the given files as they are
        todo = [(f, None) for f in files]
        n_gen = 0
        while True:
            batch = todo[:200]
            todo = todo[200:]
            if not batch:
                if n_gen >= a.count or (a.seconds and time.time() - start > a.seconds):
                    break
                for _ in range(min(200, a.count - n_gen)):
                    if seeds and rng.random() < 0.35:
                        data = mutate(rng, rng.choice(seeds))
                    else:
                        data = rng.choice(GENERATORS)(rng)
                        if rng.random() < 0.3:
                            data = mutate(rng, data)
                    if len(data) <= (64 << 10):
                        seeds.append(data)
                    p = os.path.join(tmp, 'g%06d.bin' % n_gen)
                    with open(p, 'wb') as h:
                        h.write(data)
                    batch.append((p, data))
                    n_gen += 1
            reps = mfmt_reports(a.mfmt, [p for p, _ in batch])
            for p, data in batch:
                if data is None:
                    with open(p, 'rb') as h:
                        data = h.read()
                tried += 1
                rep = reps.get(p)
                if rep is None:
                    failed += 1
                    print('FAIL %s: mfmt scan gave no report' % p)
                    continue
                bad = check(rep, modes(p, data))
                if bad:
                    failed += 1
                    print('FAIL %s (%d bytes, %r...): mfmt says safe, but %s'
                          % (p, len(data), data[:48], '; '.join(bad[:3])))
                    if a.keep:
                        os.makedirs(a.keep, exist_ok=True)
                        with open(os.path.join(a.keep, 'disagree_%d_%s' % (a.seed, os.path.basename(p))), 'wb') as h:
                            h.write(data)
                else:
                    passed += 1
    print('pickle_oracle: %d inputs (%d files, %d generated or mutated), %d disagreements, '
          '%.0f s' % (tried, len(files), tried - len(files), failed, time.time() - start))
    print('RESULT pickle_oracle %d %d' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
