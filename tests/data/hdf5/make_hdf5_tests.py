#!/usr/bin/env python3
"""Writes the HDF5/Keras files of tests/test_hdf5.c with h5py (Debian's
python3-h5py 3.7 over HDF5 1.10) and manifest.json: what each must yield,
computed by h5py/numpy. Covers what ../shared does not: dense links and
attributes, every chunk index of libver='latest' (single, implicit, fixed
array paged, extensible array with super blocks, v2 B-tree), fill values of
unwritten chunks, big-endian chunked data, Keras Lambda layers, a Keras 3
archive with a deflated model.weights.h5.
Run: python3 make_hdf5_tests.py (in this folder). Deterministic inputs."""
import hashlib, json, os, zipfile, io
import numpy as np
from fixture_common import canon, NAMES
import h5py

out = []


def tensors_of(path):
    ts = []
    with h5py.File(path, 'r') as f:
        def v(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind in 'fiub' and obj.shape is not None:
                a = obj[()]
                a = np.asarray(a)
                ts.append({'name': '/' + name, 'dtype': NAMES[a.dtype.str[1:]],
                           'shape': list(obj.shape), 'sha256': canon(a)})
        f.visititems(v)
    return ts

def case(path, note, fmt='hdf5', tensors=None, **extra):
    c = {'path': path, 'format': fmt, 'expect': 'ok', 'note': note,
         'tensors': tensors if tensors is not None else tensors_of(path)}
    c.update(extra)
    out.append(c)

rng = np.random.default_rng(7)

# dense links (more than 8 links in a group, libver latest) + dense attributes
with h5py.File('dense_links.h5', 'w', libver='latest') as f:
    g = f.create_group('many')
    for i in range(40):
        g.create_dataset('w%02d' % i, data=np.arange(i + 1, dtype='<i2') * (i + 1))
    for i in range(30):
        f.attrs['attr%02d' % i] = 'value %d' % i
    f.attrs['big'] = np.arange(3000, dtype='<f8')
case('dense_links.h5', 'libver latest: 40 links in dense storage (fractal heap + v2 B-tree), 31 dense attributes')

# many links: a v2 B-tree of depth >= 1
with h5py.File('deep_names.h5', 'w', libver='latest') as f:
    g = f.create_group('g')
    for i in range(200):
        g.create_dataset('a_rather_long_dataset_name_to_fill_heap_blocks_%04d' % i, data=np.array([i], dtype='<u2'))
case('deep_names.h5', '200 dense links: name index B-tree with internal nodes, indirect heap blocks')

# chunk indexes of libver latest
with h5py.File('chunk_indexes.h5', 'w', libver='latest') as f:
    f.create_dataset('single', data=rng.standard_normal((5, 6)).astype('<f4'), chunks=(5, 6))
    f.create_dataset('single_gzip', data=rng.standard_normal((5, 6)).astype('<f4'), chunks=(5, 6), compression='gzip')
    f.create_dataset('farray', data=rng.standard_normal((40, 33)).astype('<f4'), chunks=(3, 4))
    fa = f.create_dataset('farray_paged', shape=(1500, 3), dtype='<i4', chunks=(1, 3), fillvalue=-7)
    fa[:700] = np.arange(2100, dtype='<i4').reshape(700, 3)   # later pages never written
    fa[1400:1410] = 5
    ea = f.create_dataset('earray', shape=(3000, 2), maxshape=(None, 2), dtype='<f8', chunks=(1, 2))
    ea[:] = rng.standard_normal((3000, 2))
    ea2 = f.create_dataset('earray_unlim_last', shape=(3, 200), maxshape=(3, None), dtype='<i8', chunks=(2, 3),
                           compression='gzip', shuffle=True)
    ea2[:] = np.arange(600).reshape(3, 200)
    bt = f.create_dataset('btree2', shape=(50, 45), maxshape=(None, None), dtype='<u2', chunks=(4, 4))
    bt[:] = np.arange(2250, dtype='<u2').reshape(50, 45)
    bt2 = f.create_dataset('btree2_gzip', shape=(30, 20), maxshape=(None, None), dtype='>f4', chunks=(7, 3),
                           compression='gzip', fletcher32=True)
    bt2[:] = rng.standard_normal((30, 20))
    sp = f.create_dataset('sparse', shape=(20, 20), dtype='<f4', chunks=(5, 5), fillvalue=2.5)
    sp[5:10, 10:15] = 1.0
    # implicit index: fixed size, no filter, early allocation
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((4, 4))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    sid = h5py.h5s.create_simple((10, 9))
    did = h5py.h5d.create(f.id, b'implicit', h5py.h5t.STD_I16LE, sid, dcpl=dcpl)
    ds = h5py.Dataset(did)
    ds[:] = np.arange(90, dtype='<i2').reshape(10, 9)
case('chunk_indexes.h5', 'single chunk (plain, gzip), fixed array (plain, paged with unwritten pages), '
     'extensible array (super blocks; unlimited last dimension), v2 B-tree (plain; big-endian gzip+fletcher32), '
     'implicit, unwritten chunks (fill value)')

# big-endian chunked, shuffle on 8-byte ints, old-format v1 B-tree with many chunks
with h5py.File('chunked_old.h5', 'w') as f:
    f.create_dataset('be_i8', data=np.arange(1000, dtype='>i8').reshape(10, 100), chunks=(3, 7),
                     compression='gzip', shuffle=True)
    f.create_dataset('many_chunks', data=np.arange(4000, dtype='<f4').reshape(200, 20), chunks=(2, 3))
    f.create_dataset('bool_chunked', data=(np.arange(50) % 3 == 0), chunks=(8,))
    f.create_dataset('unwritten', shape=(6, 7), dtype='<i4', fillvalue=42)
    f.create_dataset('unwritten_chunked', shape=(6, 7), dtype='<i4', chunks=(2, 2))
case('chunked_old.h5', 'v1 B-tree chunk index with internal nodes, big-endian shuffle+gzip, bool chunks, never-written datasets')

# a hard-link cycle (a group that contains itself) and a soft link
with h5py.File('cycle.h5', 'w') as f:
    g = f.create_group('a')
    g.create_dataset('w', data=np.arange(3, dtype='<f4'))
    g['self'] = g                       # hard link back to the group
    f['b'] = h5py.SoftLink('/a/w')
case('cycle.h5', 'group /a holds a hard link to itself; /b is a soft link (not followed)')

# superblock v2 (libver v108) with a user block
with h5py.File('userblock_v2.h5', 'w', libver=('v108', 'v108'), userblock_size=1024) as f:
    f.create_dataset('x', data=np.arange(12, dtype='<f8').reshape(3, 4))
    f['x'].attrs['unit'] = 'm'
case('userblock_v2.h5', 'user block of 1024 bytes, superblock v2')

# Keras 2 .h5 with a Lambda layer in model_config
cfg = {"class_name": "Sequential", "config": {"name": "seq", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 4], "name": "in"}},
    {"class_name": "Lambda", "config": {"name": "lambda_1", "function": ["4wEAAAAAAAAAAAAAAAEAAAACAAAAQwAAAHMIAAAAfABkARQAUwApAk7pAgAAAKkAKQHaAXhyAgAAAHICAAAA+gg8c3RkaW4+2gg8bGFtYmRhPgEAAADzAAAAAA==", None, None],
                                        "function_type": "lambda", "module": "__main__"}},
    {"class_name": "TimeDistributed", "config": {"name": "td", "layer": {"class_name": "Lambda", "config": {"name": "inner_lambda", "function": "my_fn", "function_type": "function"}}}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}}
with h5py.File('keras2_lambda.h5', 'w') as f:
    f.attrs['keras_version'] = b'2.11.0'
    f.attrs['backend'] = b'tensorflow'
    f.attrs['model_config'] = json.dumps(cfg).encode()
    mw = f.create_group('model_weights')
    mw.attrs['layer_names'] = [b'dense']
    d = mw.create_group('dense')
    d.attrs['weight_names'] = [b'dense/kernel:0']
    d.create_group('dense').create_dataset('kernel:0', data=np.ones((4, 2), '<f4'))
case('keras2_lambda.h5', 'Keras 2 layout whose model_config has a Lambda layer (marshalled bytecode) and a wrapped Lambda (named function)',
     lambdas=[['lambda_1', 'bytecode'], ['inner_lambda', 'function']])

# Keras 3 archive, model.weights.h5 deflated, config with a __lambda__
w = io.BytesIO()
with h5py.File(w, 'w') as f:
    f.create_group('layers/dense/vars').create_dataset('0', data=np.arange(6, dtype='<f4').reshape(3, 2))
    f['layers/dense/vars'].create_dataset('1', data=np.zeros(2, '<f4'))
kcfg = {"module": "keras", "class_name": "Functional", "config": {"name": "m", "layers": [
    {"module": "keras.layers", "class_name": "Lambda", "config": {"name": "lam", "function": {
        "module": "builtins", "class_name": "__lambda__", "config": {"code": "4wEAAAAAAAAAAAAAAAEAAAAC", "defaults": None, "closure": None}}}}]}}
with zipfile.ZipFile('keras3_deflated.keras', 'w') as z:
    z.writestr(zipfile.ZipInfo('metadata.json', (2024, 1, 1, 0, 0, 0)), json.dumps({"keras_version": "3.3.3", "date_saved": "2024-01-01@00:00:00"}))
    z.writestr(zipfile.ZipInfo('config.json', (2024, 1, 1, 0, 0, 0)), json.dumps(kcfg))
    zi = zipfile.ZipInfo('model.weights.h5', (2024, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(zi, w.getvalue())
with h5py.File(io.BytesIO(w.getvalue()), 'r') as f:
    kt = [{'name': '/layers/dense/vars/0', 'dtype': 'F32', 'shape': [3, 2], 'sha256': canon(f['layers/dense/vars/0'][()])},
          {'name': '/layers/dense/vars/1', 'dtype': 'F32', 'shape': [2], 'sha256': canon(f['layers/dense/vars/1'][()])}]
case('keras3_deflated.keras', 'Keras 3 archive with a DEFLATED model.weights.h5 and a __lambda__ in config.json',
     fmt='keras', tensors=kt, lambdas=[['lam', 'bytecode']])

json.dump(out, open('manifest.json', 'w'), indent=1)
