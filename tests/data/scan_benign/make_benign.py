#!/usr/bin/env python3
"""Writes the benign files real writers produce (issue 18: `safe` only for
canonical pickles, and every file below is canonical) and manifest.json
(each file's expected verdict: safe). tests/test_scan_fixtures.c scans
them; tests/check_pickle_oracle.sh feeds them to CPython's unpickler too.

Writers: pickle.dump (protocols 0-5: state dicts, Lightning-style hparams
with argparse.Namespace, pathlib, Counter, defaultdict, OrderedDict, sets,
bytes, big ints, floats, frames of every size around 8192 and 65536),
torch.save (zip and legacy; tensors, parameters, optimizer and scheduler
states, sparse and quantized tensors), np.save / np.savez and joblib.dump
(without numpy arrays, whose raw bytes between pickles are issue 18 item 5).
Each file is loaded back with its own loader before it is kept.
Run: /usr/bin/python3 make_benign.py (in this folder; torch 1.13, numpy,
python3-joblib). Deterministic but for torch's zip timestamps."""
import argparse, collections, io, json, os, pathlib, pickle, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
out = []


def keep(name, data, note, load=pickle.loads):
    load(data)
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
    out.append({'path': name, 'verdict': 'safe', 'note': note})


def values():
    ns = argparse.Namespace(lr=3e-4, layers=[64, 64], name='run-1', flag=True, path=None)
    return {
        'hparams_namespace': ns,
        'hparams_dict': {'hparams': vars(ns), 'epoch': 3, 'global_step': 10},
        'paths': {'root': pathlib.PurePosixPath('/data/x'), 'rel': pathlib.PurePosixPath('a/b'),
                  'win': pathlib.PureWindowsPath('C:/models/m.bin')},
        'counter': collections.Counter('mississippi'),
        'defaultdict': collections.defaultdict(list, {'a': [1, 2], 'b': []}),
        'ordered': collections.OrderedDict([('w', 1.5), ('b', -2.25)]),
        'sets': {'s': {1, 2, 3}, 'f': frozenset({'x', 'y'})},
        'scalars': [0, 1, -1, 255, 256, 65535, 65536, 2 ** 31 - 1, -2 ** 31, 2 ** 63, -2 ** 70,
                    10 ** 40, 0.5, -0.0, float('inf'), 1e-300, True, False, None, 1 + 2j],
        'text': ['', 'a', 'é', '\u4e2d', '\U0001f600', 'a\nb\\c\r\x00\x1a', 'x' * 300],
        'bytes': [b'', b'\x00\xff', bytearray(b'abc'), b'y' * 70000],
        'nested': {'l': [[1, [2, [3]]], (4, (5,))], 't': ((), (1,), (1, 2), (1, 2, 3, 4))},
        'shared': [[1, 2]] * 3,
    }


def pickles():
    v = values()
    for proto in range(6):
        for k, x in v.items():
            if proto < 2 and k == 'bytes':
                x = [bytes(b) for b in x]
            keep('pickle_%s_p%d.pkl' % (k, proto), pickle.dumps(x, protocol=proto),
                 'pickle.dumps protocol %d: %s' % (proto, k))
    # frames: one string of every size around the framing thresholds
    for size in list(range(8170, 8215, 3)) + [65530, 65536, 65542, 131070, 131080]:
        x = ['a' * (size // 2), b'b' * (size - size // 2), list(range(40))]
        keep('pickle_frames_%d.pkl' % size, pickle.dumps(x, protocol=4), 'frames, %d' % size)
        if size < 100000:
            keep('pickle_frames_%d_p5.pkl' % size, pickle.dumps(x, protocol=5), 'frames, %d' % size)
    # the pure-Python pickler frames its own way
    for proto in (4, 5):
        f = io.BytesIO()
        pickle._Pickler(f, protocol=proto).dump(values())
        keep('pickle_pyimpl_p%d.pkl' % proto, f.getvalue(), 'pickle._Pickler protocol %d' % proto)


def torch_files():
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.randn(2, 4)).sum().backward()
    opt.step()
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
    sched.step()
    q = torch.quantize_per_tensor(torch.randn(4), 0.1, 3, torch.qint8)
    qc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]),
                                    torch.tensor([0, 1]), 0, torch.quint8)
    sp = torch.randn(3, 3).to_sparse()
    ns = argparse.Namespace(lr=1e-3, batch_size=8)
    objs = {
        'state_dict': net.state_dict(),
        'optimizer': {'state_dict': net.state_dict(), 'optimizer': opt.state_dict(),
                      'scheduler': sched.state_dict(), 'epoch': 3},
        'lightning': {'epoch': 3, 'global_step': 10, 'pytorch-lightning_version': '1.9.0',
                      'state_dict': net.state_dict(), 'optimizer_states': [opt.state_dict()],
                      'lr_schedulers': [sched.state_dict()], 'hparams_name': 'hparams',
                      'hyper_parameters': {'args': ns, 'root': pathlib.PurePosixPath('/d'),
                                           'counts': collections.Counter('abca')}},
        'tensors': {'f16': torch.ones(3, dtype=torch.float16), 'bf16': torch.zeros(2, dtype=torch.bfloat16),
                    'i64': torch.arange(5), 'bool': torch.tensor([True, False]),
                    'view': torch.arange(10.)[2:5], 'param': torch.nn.Parameter(torch.ones(2)),
                    'big': torch.zeros(17000)},
        'quantized': {'q': q, 'qc': qc},
        'sparse': {'coo': sp},
        'size_device': {'size': torch.Size([2, 3]), 'device': torch.device('cpu'),
                        'dtype': torch.float32},
    }
    for name, o in objs.items():
        for zipped in (True, False):
            for proto in ((2,) if not zipped else (2, 4)):
                b = io.BytesIO()
                torch.save(o, b, _use_new_zipfile_serialization=zipped, pickle_protocol=proto)
                data = b.getvalue()
                fn = 'torch_%s_%s_p%d.pt' % (name, 'zip' if zipped else 'legacy', proto)
                keep(fn, data, 'torch.save %s protocol %d: %s' % ('zip' if zipped else 'legacy',
                                                                   proto, name),
                     load=lambda d: torch.load(io.BytesIO(d), weights_only=False)
                     if 'weights_only' in torch.load.__code__.co_varnames
                     else torch.load(io.BytesIO(d)))


def numpy_files():
    arrs = {'f32': np.arange(12, dtype=np.float32).reshape(3, 4),
            'i8': np.array([-1, 2], dtype=np.int8), 'u': np.array(['ab', 'c']),
            'rec': np.zeros(2, dtype=[('a', '<f4'), ('b', '<i8')])}
    for k, a in arrs.items():
        b = io.BytesIO()
        np.save(b, a)
        keep('np_%s.npy' % k, b.getvalue(), 'np.save %s' % k, load=lambda d: np.load(io.BytesIO(d)))
    for comp in (False, True):
        b = io.BytesIO()
        (np.savez_compressed if comp else np.savez)(b, **arrs)
        keep('np_savez%s.npz' % ('_compressed' if comp else ''), b.getvalue(), 'np.savez',
             load=lambda d: dict(np.load(io.BytesIO(d))))
    # pickles of numpy values (arrays, scalars, dtypes) through pickle.dump
    for proto in range(6):
        keep('np_pickled_p%d.pkl' % proto,
             pickle.dumps({'a': arrs['f32'], 's': np.float64(1.5), 'i': np.int64(7),
                           'd': np.dtype('<f2')}, protocol=proto), 'numpy values, protocol %d' % proto)


def joblib_files():
    import joblib
    obj = {'hparams': argparse.Namespace(alpha=0.1), 'classes': ['a', 'b'],
           'counts': collections.Counter('aab'), 'd': collections.OrderedDict(x=1)}
    for compress in (0,):
        for proto in (2, 3, 4, 5):
            b = io.BytesIO()
            joblib.dump(obj, b, compress=compress, protocol=proto)
            keep('joblib_p%d.joblib' % proto, b.getvalue(), 'joblib.dump protocol %d' % proto,
                 load=lambda d: joblib.load(io.BytesIO(d)))


pickles()
torch_files()
numpy_files()
joblib_files()
with open(os.path.join(HERE, 'manifest.json'), 'w') as f:
    json.dump(out, f, indent=1)
print('%d files' % len(out))
