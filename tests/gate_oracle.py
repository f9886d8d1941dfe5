#!/usr/bin/env python3
"""The differential oracle of mfmt's gated names (lib/core/pickle_gate.c,
doc/scan.md "Gated names"): random pickles built from getattr, the gated
Enums and records and a few other names -- the writers' shapes with random
extra uses of their values (gen2), and free random programs (gen) -- run
by CPython's C unpickler with stand-ins that record every use of a gated
name (a call and its arguments, NEWOBJ or REDUCE, a BUILD and its state, a
gated name handed to any other call or state). Nothing is imported.

Invariant: when `mfmt scan` says `safe`, every use CPython made had one of
the allowed shapes. (pickle_oracle.py checks the names asked; this checks
how the gated ones were used, so mfmt's tracking of values through the
memo, the stack and calls is checked against CPython's own.)

Prints each disagreement as "FAIL path [uses]" and "RESULT gate_oracle
PASSED FAILED" (tests/run.sh counts it; PASSED = inputs checked).
usage: gate_oracle.py MFMT COUNT SEED [KEEPDIR]"""
import io, json, os, pickle, random, struct, subprocess, sys, tempfile

ENUMS = {'deepspeed.runtime.zero.config.ZeroStageEnum':
         ({'disabled': 0, 'optimizer_states': 1, 'gradients': 2, 'weights': 3, 'max_stage': 3}),
         'torch.distributed._shard.sharded_tensor.metadata.MEM_FORMAT_ENCODING':
         ({'TORCH_CONTIGUOUS_FORMAT': 0, 'TORCH_CHANNELS_LAST': 1, 'TORCH_PRESERVE_FORMAT': 2})}
RECORDS = {'deepspeed.utils.tensor_fragment.fragment_address': ('numel', 'start'),
           'torch.distributed._shard.checkpoint.metadata.ChunkStorageMetadata': ('offsets', 'sizes'),
           'torch.distributed._shard.checkpoint.metadata.BytesStorageMetadata': (),
           'torch.distributed.checkpoint.metadata.TensorProperties': None}  # 5-tuple
OTHERS = ['collections.OrderedDict', 'builtins.set', 'copyreg._reconstructor', 'builtins.object',
          'collections.defaultdict', 'torch._utils._rebuild_tensor_v2', 'argparse.Namespace']
GETATTR = ['builtins.getattr', '__builtin__.getattr']

violations = []


class Gated:  # marker base of the stand-ins of gated names
    pass


def gated_value(v):
    return v is g_getattr or (isinstance(v, type) and issubclass(v, Gated))


def note(what):
    violations.append(what)


def check_args(where, args, kwargs=None):
    for a in list(args) + list((kwargs or {}).values()):
        if gated_value(a):
            note('%s: a gated name as an argument' % where)


class Member:  # what getattr(E, name) / E(value) gives
    def __call__(self, *a, **k): note('a member called')
    def __setstate__(self, s): note('BUILD on a member')


class Result:  # what a call of anything else gives: takes every use
    def __call__(self, *a, **k):
        check_args('call of a result', a, k)
        return Result()
    def __setstate__(self, s): check_state('BUILD on a result', s)
    def append(self, x): pass
    def extend(self, x): pass
    def add(self, x): pass
    def __setitem__(self, k, v): pass


def check_state(where, s):
    if gated_value(s):
        note(where + ': a gated name as the state')
    if isinstance(s, (tuple, list)):
        check_args(where + ' (state items)', s)
    if isinstance(s, dict):
        check_args(where + ' (state keys/values)', list(s.keys()) + list(s.values()))


def g_getattr(*a, **k):
    if k or len(a) != 2 or not (isinstance(a[0], type) and getattr(a[0], 'kind', '') == 'enum') \
            or not isinstance(a[1], str) or a[1] not in a[0].members:
        note('getattr%r' % (tuple(type(x).__name__ for x in a),))
        return Result()
    return Member()


def make_enum(full, members):
    class E(Gated):
        kind = 'enum'
        def __new__(cls, *a, **k):
            if k or len(a) != 1 or type(a[0]) is not int or a[0] not in members.values():
                note('%s(%r)' % (full, a))
            return object.__new__(Member)
    E.members = members
    E.full = full
    return E


def make_record(full, fields):
    class R(Gated):
        kind = 'record'
        def __new__(cls, *a, **k):
            if a or k:
                note('%s.__new__ with arguments' % full)
            check_args(full, a, k)
            return object.__new__(cls)
        def __init__(self, *a, **k):
            note('%s called (REDUCE/INST/OBJ): __init__ runs' % full)
        def __setstate__(self, s):
            if fields is None:
                ok = isinstance(s, tuple) and len(s) == 5
            else:
                ok = isinstance(s, dict) and all(type(x) is str and x in fields for x in s)
            if not ok:
                note('%s BUILD with %r' % (full, type(s).__name__))
            check_state(full + ' BUILD', s)
        def __call__(self, *a, **k):
            note('a record instance called')
    R.full = full
    return R


CLASSES = {}
for n, m in ENUMS.items():
    CLASSES[n] = make_enum(n, m)
for n, f in RECORDS.items():
    CLASSES[n] = make_record(n, f)


class Other:
    def __new__(cls, *a, **k):
        check_args('an ordinary call', a, k)
        return object.__new__(Result)
    def __setstate__(self, s): check_state('BUILD', s)


class Oracle(pickle.Unpickler):
    def find_class(self, mod, name):
        full = mod + '.' + name
        if full in ('builtins.getattr', '__builtin__.getattr'):
            return g_getattr
        if full in CLASSES:
            return CLASSES[full]
        return type('O', (Other,), {})

    def persistent_load(self, pid):
        return Result()


# ---------------------------------------------------------------- generator

def s_unicode(s):
    b = s.encode()
    return b'X' + struct.pack('<I', len(b)) + b


def s_int(i):
    if 0 <= i < 256:
        return b'K' + bytes([i])
    return b'J' + struct.pack('<i', i)


def glob(rng, full):
    mod, _, name = full.rpartition('.')
    if rng.random() < 0.5:
        return b'c' + mod.encode() + b'\n' + name.encode() + b'\n'
    return s_unicode(mod) + s_unicode(name) + b'\x93'


def gen(rng):
    """A random program over a small stack of expressions; each step pushes
    one value built from earlier ones (kept in the memo), then a final tuple
    of a few of them."""
    out = [b'\x80' + bytes([rng.choice([2, 4])])]
    n = 0  # memo slots holding values
    kinds = []

    def push_memo():
        nonlocal n
        out.append(b'q' + bytes([n]) if n < 256 else b'r' + struct.pack('<I', n))
        n += 1

    def get(i):
        return b'h' + bytes([i]) if i < 256 else b'j' + struct.pack('<I', i)

    def pick(kind=None):
        c = [i for i, k in enumerate(kinds) if kind is None or k == kind]
        return rng.choice(c) if c else None

    steps = rng.randint(1, 8)
    for _ in range(steps):
        r = rng.random()
        if r < 0.25 or not kinds:  # a global
            full = rng.choice(list(ENUMS) + list(RECORDS) + GETATTR * 2 + OTHERS)
            out.append(glob(rng, full))
            push_memo()
            kinds.append('g:' + full)
            out.append(b'0')  # POP (kept in memo)
        elif r < 0.35:  # a string
            s = rng.choice([w for m in ENUMS.values() for w in m] + ['x', '__class__', 'weights', 'fields'])
            out.append(s_unicode(s))
            push_memo()
            kinds.append('s')
            out.append(b'0')
        elif r < 0.42:
            out.append(s_int(rng.choice([0, 1, 2, 3, 4, -1, 7])))
            push_memo()
            kinds.append('i')
            out.append(b'0')
        elif r < 0.75:  # a call: REDUCE or NEWOBJ of a callable with 0-3 args
            f = rng.randrange(len(kinds))
            nargs = rng.choice([0, 1, 2, 2, 3])
            out.append(get(f))
            args = [rng.randrange(len(kinds)) for _ in range(nargs)]
            out.append(b'(' + b''.join(get(a) for a in args) + b't')
            if rng.random() < 0.3:
                out.append(b'\x81')  # NEWOBJ
            else:
                out.append(b'R')
            push_memo()
            kinds.append('c')
            out.append(b'0')
        elif r < 0.9:  # BUILD on a value with a dict or tuple state
            t = rng.randrange(len(kinds))
            out.append(get(t))
            if rng.random() < 0.6:
                keys = rng.sample(['offsets', 'sizes', 'numel', 'start', '__class__', 'x'], rng.randint(0, 2))
                out.append(b'}')
                if keys:
                    out.append(b'(')
                    for k in keys:
                        out.append(s_unicode(k) + get(rng.randrange(len(kinds))))
                    out.append(b'u')
            else:
                k = rng.choice([2, 5])
                out.append(b'(' + b''.join(get(rng.randrange(len(kinds))) for _ in range(k)) + b't')
            out.append(b'b')
            out.append(b'0')
        else:  # a container holding values
            out.append(b'(' + b''.join(get(rng.randrange(len(kinds))) for _ in range(rng.randint(1, 3))) + b'l')
            push_memo()
            kinds.append('l')
            out.append(b'0')
    out.append(b'(' + b''.join(get(rng.randrange(len(kinds))) for _ in range(min(3, len(kinds)))) + b't.')
    return b''.join(out)


def gen2(rng):
    """The writers' shapes (getattr(E, m), E(v), R.__new__ + BUILD fields),
    memoized, then a few random extra uses of the memoized values."""
    out = [b'\x80' + bytes([rng.choice([2, 4])])]
    memo = []  # (index, what)
    def put(what):
        i = len(memo)
        out.append(b'q' + bytes([i]) if i < 256 else b'r' + struct.pack('<I', i))
        memo.append(what)
        return i
    def get(i):
        return b'h' + bytes([i]) if i < 256 else b'j' + struct.pack('<I', i)
    for _ in range(rng.randint(1, 4)):
        k = rng.random()
        if k < 0.35:
            e = rng.choice(list(ENUMS))
            out.append(glob(rng, rng.choice(GETATTR)))
            put('getattr')
            out.append(glob(rng, e))
            put('E')
            out.append(s_unicode(rng.choice(list(ENUMS[e]))) + b'\x86R')
            put('member')
            out.append(b'0')
        elif k < 0.6:
            e = rng.choice(list(ENUMS))
            out.append(glob(rng, e))
            put('E')
            out.append(s_int(rng.choice(list(ENUMS[e].values()))) + b'\x85R')
            put('member')
            out.append(b'0')
        else:
            r = rng.choice(list(RECORDS))
            f = RECORDS[r]
            out.append(glob(rng, r))
            put('R')
            out.append(b')\x81')
            put('inst')
            if f is None:
                out.append(b'(' + b'N' * 5 + b't')
            else:
                out.append(b'}')
                ks = [x for x in f if rng.random() < 0.7]
                if ks:
                    out.append(b'(' + b''.join(s_unicode(x) + s_int(1) for x in ks) + b'u')
            out.append(b'b0')
    # extra uses
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        k = rng.random()
        a = rng.randrange(len(memo))
        b = rng.randrange(len(memo))
        if k < 0.3:  # call a memoized value with another as argument
            out.append(get(a) + get(b) + b'\x85R0')
        elif k < 0.5:  # BUILD on a value with a state naming another
            out.append(get(a) + b'}' + s_unicode(rng.choice(['offsets', 'x', 'numel'])) + get(b) + b's' + b'b0')
        elif k < 0.7:  # hand it to an ordinary callable
            out.append(glob(rng, rng.choice(OTHERS)) + get(a) + b'\x85R0')
        elif k < 0.8:  # NEWOBJ of it
            out.append(get(a) + b')\x810')
        elif k < 0.9:  # a getattr on it
            out.append(glob(rng, 'builtins.getattr') + get(a) + s_unicode(rng.choice(['weights', 'x', '__class__'])) + b'\x86R0')
        else:  # inside a list handed to an ordinary call
            out.append(glob(rng, rng.choice(OTHERS)) + b'(' + get(a) + b'l\x85R0')
    out.append(b'(' + b''.join(get(i) for i in range(min(3, len(memo)))) + b't.')
    return b''.join(out)


def oracle(data):
    del violations[:]
    asked = []
    try:
        Oracle(io.BytesIO(data)).load()
    except Exception as e:
        violations.append('(failed: %s)' % type(e).__name__) if violations else None
        return list(violations), False
    return list(violations), True


def main():
    mfmt, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    keep = sys.argv[4] if len(sys.argv) > 4 else None
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix='gate-oracle-')
    bad = safe = total = 0
    gated_safe = [0]
    batch = []
    def flush():
        nonlocal bad, safe, total
        if not batch:
            return
        r = subprocess.run([mfmt, 'scan', '--json'] + [p for p, _ in batch], capture_output=True, text=True)
        try:
            rep = {f["path"]: f for f in json.loads(r.stdout)["files"]}
        except ValueError:
            print("mfmt failed", r.returncode, r.stderr[-2000:]); raise
        for p, data in batch:
            total += 1
            v = rep.get(p, {}).get('verdict')
            if v != 'safe':
                continue
            safe += 1
            if b'getattr' in data or b'Enum' in data or b'ENCODING' in data or b'metadata' in data or b'fragment' in data or b'TensorProp' in data:
                gated_safe[0] += 1
            viol, _ = oracle(data)
            if viol:
                bad += 1
                print('FAIL', p, viol[:3])
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    open(os.path.join(keep, os.path.basename(p)), 'wb').write(data)
        for p, _ in batch:
            os.unlink(p)
        batch.clear()
    for i in range(count):
        data = gen2(rng) if rng.random() < 0.7 else gen(rng)
        p = os.path.join(tmp, 'g%06d.pkl' % i)
        open(p, 'wb').write(data)
        batch.append((p, data))
        if len(batch) == 200:
            flush()
    flush()
    os.rmdir(tmp)
    print('gate oracle: %d inputs, %d safe (%d naming a gated name), %d disagreements' % (total, safe, gated_safe[0], bad))
    print('RESULT gate_oracle %d %d' % (total - bad, bad))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
