#!/usr/bin/env python3
"""Writes the files of tests/test_scan.c's fixture run (issue 10: no
dangerous file may be judged safe) and manifest.json: for each file the
verdict `mfmt scan` must give and a text one finding must mention.

Built with the real tools: Python's pickle (protocols 0-5), numpy's np.save
(structured, unicode and object arrays) and, for headers numpy writes no
other way, hand-made .npy headers that numpy.lib.format reads (each is
checked here with numpy.lib.format / np.load on a benign twin). Dangerous
payloads are never loaded: only their benign twins, which differ in the
called name alone, prove which bytes a loader reads.
Run: /usr/bin/python3 make_scan_tests.py (in this folder). Deterministic."""
import argparse, collections, io, json, os, pathlib, pickle, struct, sys, zipfile
import numpy as np
import numpy.lib.format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
out = []


def put(name, data, verdict, needle=None, note=''):
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
    c = {'path': name, 'verdict': verdict, 'note': note}
    if needle:
        c['needle'] = needle
    out.append(c)


def sbu(s):  # SHORT_BINUNICODE
    b = s.encode()
    return b'\x8c' + bytes([len(b)]) + b


def call4(mod, name, arg='id'):
    """protocol 4: mod/name by STACK_GLOBAL, called with one str."""
    return b'\x80\x04' + sbu(mod) + sbu(name) + b'\x93' + sbu(arg) + b'\x85R.'


def call0(mod, name, arg='id'):
    return b'c' + mod.encode() + b'\n' + name.encode() + b'\n(S' + repr(arg).encode() + b'\ntR.'


def loads_ok(b):
    """The benign twin loads with the real unpickler."""
    return pickle.loads(b)


# ---- class 5: a first pickle that is torch's legacy magic number starts a
# legacy stream; when the rest breaks torch's rules, the pickles after it
# are still scanned (found by fuzz_scan: they were skipped, `unknown`)
legacy_magic = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
bad_protocol = pickle.dumps('not 1001', protocol=2)
put('legacy_broken_then_call.pkl', legacy_magic + bad_protocol + call0('posix', 'system'),
    'dangerous', 'posix.system', 'legacy torch magic, a protocol that is not 1001, posix.system')

# ---- class 9: what CPython's unpickler accepts must not stop the scan
# SETITEM on a list, then the call: CPython runs both
setitem_list = b'(lI0\naI0\nI1\ns0'
assert loads_ok(setitem_list + call0('builtins', 'repr', 'x')) == "'x'"
put('setitem_list.pkl', setitem_list + call0('os', 'system'), 'dangerous', 'os.system',
    'SETITEM on a list, then os.system')
setitems_list = b'\x80\x02]q\x00(K\x00K\x01K\x02e(K\x00K\x07K\x02K\x09u0'
assert loads_ok(setitems_list + call0('builtins', 'repr', 'x')) == "'x'"
put('setitems_list.pkl', setitems_list + call0('subprocess', 'getoutput'), 'dangerous',
    'subprocess.getoutput', 'SETITEMS on a list')
# APPENDS onto a bytearray (it has extend), BUILD with None state on an int
odd = b'\x80\x02c__builtin__\nbytearray\n)R(K\x01K\x02e0I1\nNb0'
loads_ok(odd + call0('builtins', 'repr', 'x'))
put('append_bytearray.pkl', odd + call0('posix', 'system'), 'dangerous', 'posix.system',
    'APPENDS on a bytearray, BUILD(None) on an int')
# polyglots: a pickle from byte 0 that also carries another format's signature
gguf = b'GGUF\x03\x00\x00\x00\x00' + b'0' + setitem_list
assert loads_ok(gguf + call0('builtins', 'repr', 'x')) == "'x'"
put('polyglot_gguf.pkl', gguf + call0('os', 'system'), 'dangerous', 'os.system',
    'GGUF magic, BINFLOAT+POP, SETITEM on a list, os.system')
st = b'B\x04\x00\x00\x00\x00\x00\x00{' + b'0' + setitem_list
pad = lambda b: b + b' ' * max(0, 1098 - len(b))
assert struct.unpack('<Q', st[:8])[0] == 1090 and st[8:9] == b'{'
assert loads_ok(pad(st + call0('builtins', 'repr', 'x'))) == "'x'"
put('polyglot_safetensors.pkl', pad(st + call0('os', 'system')), 'dangerous', 'os.system',
    'a safetensors header length and "{" that are BINBYTES to pickle.load')
tfl = b'N0NUTFL3' + b'x' * 80 + b'0' + setitem_list
assert loads_ok(tfl + call0('builtins', 'repr', 'x')) == "'x'"
put('polyglot_tflite.pkl', tfl + call0('subprocess', 'Popen'), 'dangerous', 'subprocess.Popen',
    'TFL3 at byte 4 inside a SHORT_BINSTRING')
h5 = setitem_list + b'c__main__\nEvil\n)R0' + call0('os', 'system')
h5 = h5 + b' ' * (512 - len(h5)) + b'\x89HDF\r\n\x1a\n' + b'\0' * 64
put('polyglot_hdf5.pkl', h5, 'dangerous', 'os.system', 'an HDF5 signature at 512')
# a polyglot whose pickle reaches an unknown name, then fails as CPython does
h5u = b'(lI0\naI0\nI1\nsc__main__\nEvil\n)R\xff'
h5u = h5u + b' ' * (512 - len(h5u)) + b'\x89HDF\r\n\x1a\n' + b'\0' * 64
put('polyglot_hdf5_unknown.pkl', h5u, 'unknown', '__main__.Evil',
    'the unknown name reached before the error is kept')
# helpers that run commands; dotted names through protocol 4
for mod, name, fname in [('_osx_support', '_read_output', 'osx_read_output'),
                         ('uuid', '_get_command_stdout', 'uuid_command'),
                         ('torch.utils.collect_env', 'run', 'collect_env_run'),
                         ('torch', 'hub.load', 'dotted_hub_load'),
                         ('torch', 'serialization.load', 'dotted_serialization_load'),
                         ('torch', 'storage._load_from_bytes', 'dotted_load_from_bytes'),
                         ('torch', 'utils.cpp_extension.load_inline', 'dotted_load_inline'),
                         ('tarfile', 'TarFile.extractall', 'dotted_extractall')]:
    put(fname + '.pkl', call4(mod, name), 'dangerous', mod + '.' + name, 'runs or loads code')
assert loads_ok(call4('collections', 'OrderedDict.fromkeys', 'ab')) == {'a': None, 'b': None}

# ---- class 5: more pickles after STOP than the scanner used to look at
many = b''.join(pickle.dumps(i, protocol=p) for i in range(300) for p in (0, 2, 4))
put('after_stop_900.pkl', many + pickle.dumps(1) + call0('os', 'system'), 'dangerous',
    'os.system', '900 benign pickles, then os.system')
put('after_stop_tiny.pkl', b'N.' * 5000 + call4('builtins', 'eval', '1'), 'dangerous',
    'builtins.eval', '5000 two-byte pickles, then eval')
put('after_stop_benign.pkl', many, 'safe', None, '900 benign pickles')

# ---- false positives: data classes built as data, judged safe
benign = [
    ('namespace', argparse.Namespace(lr=0.1, name='run', dirs=[pathlib.PurePosixPath('/a')])),
    ('posixpath', pathlib.PurePosixPath('/data/ckpt')),
    ('windowspath', pathlib.PureWindowsPath('c:/data/ckpt')),
    ('defaultdict', collections.defaultdict(list, {'a': [1, 2]})),
    ('counter', collections.Counter('abracadabra')),
    ('range', range(3, 10, 2)),
    ('ellipsis', [Ellipsis, NotImplemented]),
    ('ndarray', np.arange(12, dtype=np.float32).reshape(3, 4)),
    ('ndarray_i8', {'w': np.array([[1, 2], [3, 4]], dtype=np.int64)}),
]
if sys.platform != 'win32':
    benign.append(('realpath', pathlib.PosixPath('/data/x')))
for name, obj in benign:
    for p in range(6):
        put('benign_%s_p%d.pkl' % (name, p), pickle.dumps(obj, protocol=p), 'safe', None,
            '%s, protocol %d' % (type(obj).__name__, p))
# torch.serialization._get_layout, as a sparse tensor's pickle names it
layout = b'\x80\x02ctorch.serialization\n_get_layout\nX\x10\x00\x00\x00torch.sparse_coo\x85R.'
put('benign_get_layout.pkl', layout, 'safe', None, 'a layout, not torch.serialization.load')
# ...while what the data classes hold is judged on its own
put('defaultdict_os_system.pkl', pickle.dumps(collections.defaultdict(os.system), protocol=2),
    'dangerous', 'system', 'default_factory is os.system: called on a missing key')
ns = b'\x80\x02cargparse\nNamespace\n)\x81}X\x02\x00\x00\x00fnc' + b'cposix\nsystem\nsb.'
put('namespace_state_system.pkl', ns, 'dangerous', 'posix.system', 'BUILD state holds os.system')
pp = b'\x80\x02cpathlib\nPosixPath\nX\x01\x00\x00\x00a\x85R(}(X\x01\x00\x00\x00x' \
     b'csubprocess\nPopen\nutb.'
put('posixpath_slots_popen.pkl', pp, 'dangerous', 'subprocess.Popen',
    'BUILD (dict, slotstate) on a path')
put('nn_module_like.pkl', b'\x80\x02ctorch.nn.modules.linear\nLinear\n)\x81}b.', 'unknown',
    'torch.nn.modules.linear.Linear', 'a pickled module class stays unknown')

# ---- classes 4 and 7: .npy headers numpy reads as object arrays
def npy_with(header_from, data):
    """The header np.save wrote for an array, then other data."""
    buf = io.BytesIO()
    np.save(buf, header_from, allow_pickle=True)
    b = buf.getvalue()
    buf.seek(0)
    ver = npf.read_magic(buf)
    npf._read_array_header(buf, ver)
    return b[:buf.tell()] + data


def npy_raw(major, header, data):
    h = header.encode('latin1' if major < 3 else 'utf8')
    start = 10 if major == 1 else 12
    h += b' ' * ((64 - (start + len(h) + 1) % 64) % 64) + b'\n'
    return b'\x93NUMPY' + bytes([major, 0]) + len(h).to_bytes(2 if major == 1 else 4, 'little') + h + data


def np_loads(b):
    return np.load(io.BytesIO(b), allow_pickle=True)


evil = call0('os', 'system')
twin = call0('builtins', 'repr', 'x')
for name, dt in [('structured_object', [('a', '<f4'), ('b', 'O')]),
                 ('nested_object', [('a', [('b', '<i2'), ('c', 'O')])]),
                 ('subarray_object', [('a', 'O', (2,))])]:
    arr = np.zeros(2, dtype=dt)
    assert np_loads(npy_with(arr, twin)) == "'x'"  # np.load unpickles the data
    put(name + '.npy', npy_with(arr, evil), 'dangerous', 'os.system', 'dtype %s' % dt)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    put(name + '_benign.npy', buf.getvalue(), 'unknown', 'pickle', 'np.save of %s' % dt)
TQ = "'" * 3
spellings = [
    ('object_name', 1, "{'descr': 'object', 'fortran_order': False, 'shape': (2,), }"),
    ('escaped_o', 1, "{'descr': u'\\x4f', 'fortran_order': False, 'shape': (2,), }"),
    ('repeated_key', 1, "{'descr': '<f4', 'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
    ('concatenated', 2, "{'descr': '|' \"O\", # numpy reads comments too\n 'fortran_order': False, 'shape': (2,), }"),
    ('triple_quoted', 3, "{" + TQ + "descr" + TQ + ": \"\"\"|O\"\"\", 'fortran_order': False, 'shape': (True, 0x2), }"),
    ('continued_long', 1, "{'descr': \\\n'O8', 'fortran_order': False, 'shape': (2L,), }"),
    ('negative_shape', 1, "{'descr': '|O', 'fortran_order': False, 'shape': (-1,), }"),
]
for name, major, header in spellings:
    assert np_loads(npy_raw(major, header, twin)) == "'x'", name
    put('spelling_%s.npy' % name, npy_raw(major, header, evil), 'dangerous', 'os.system', header)
for name, arr in [('structured', np.zeros(3, dtype=[('a', '<f4'), ('b', '<i2', (2,))])),
                  ('unicode', np.array(['ab', 'cde'])), ('bytes', np.array([b'ab', b'c'])),
                  ('datetime', np.array(['2020-01-01', '2021-02-03'], dtype='<M8[D]'))]:
    buf = io.BytesIO()
    np.save(buf, arr)
    put('plain_%s.npy' % name, buf.getvalue(), 'safe', None, 'np.save of %s' % arr.dtype)

# ---- classes 6 and 8: Keras configs that name modules, or that jansson refused
import h5py

WEIGHTS = zipfile.ZipFile(os.path.join(HERE, '..', 'hdf5', 'keras3_deflated.keras')).read('model.weights.h5')
META = b'{"keras_version": "3.3.3", "date_saved": "2024-01-01@00:00:00"}'


def dense(name, **extra):
    cfg = {"name": name, "units": 2, "activation": {"module": "keras.activations", "class_name": "function",
                                                      "config": "relu", "registered_name": "relu"}}
    cfg.update(extra)
    return {"module": "keras.layers", "class_name": "Dense", "config": cfg, "registered_name": None}


def keras3(name, layers, verdict, needle, note, text=None):
    cfg = {"module": "keras", "class_name": "Functional", "config": {"name": "m", "layers": layers},
           "registered_name": "Functional"}
    body = text if text is not None else json.dumps(cfg).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w') as z:
        for member, data in [('metadata.json', META), ('config.json', body),
                             ('model.weights.h5', WEIGHTS)]:
            z.writestr(zipfile.ZipInfo(member, (2024, 1, 1, 0, 0, 0)), data)  # reproducible
    put(name + '.keras', buf.getvalue(), verdict, needle, note)


fn = lambda mod, n: {"module": mod, "class_name": "function", "config": n, "registered_name": n}
keras3('keras_activation_os', [dense('d', activation=fn('os', 'system'))], 'dangerous', 'os.system',
       'an activation from module os')
keras3('keras_layer_subprocess', [{"module": "subprocess", "class_name": "Popen", "config": {},
                                   "registered_name": "Popen"}], 'dangerous', 'subprocess', 'a layer class from subprocess')
keras3('keras_initializer_builtins', [dense('d', kernel_initializer=fn('builtins', 'exec'))], 'dangerous',
       'builtins', 'a nested initializer from builtins')
keras3('keras_registered_posix', [dense('d', bias_regularizer={"module": "posix", "class_name": "X",
                                                               "registered_name": "pkg>system"})],
       'dangerous', 'posix', 'registered_name resolves to posix.system')
keras3('keras_third_party', [{"module": "qkeras.qlayers", "class_name": "QDense", "config": {"name": "q"},
                              "registered_name": "QDense"}, dense('d')], 'safe', None,
       'a third-party layer package (not on any deny rule)')
lam = {"module": "keras.layers", "class_name": "Lambda", "config": {"name": "lam", "function": {
    "module": "builtins", "class_name": "__lambda__", "config": {"code": "4wEAAAAAAAAAAAAAAAEAAAAC",
                                                                 "defaults": None, "closure": None}}}}
for tok, label in [('NaN', 'nan'), ('Infinity', 'inf'), ('-Infinity', 'ninf'),
                   ('123456789012345678901234567890', 'bigint')]:
    text = json.dumps({"module": "keras", "class_name": "Functional",
                       "config": {"name": "m", "x": "@@", "layers": [lam]}}).replace('"@@"', tok)
    assert json.loads(text)['config']['layers'][0]['class_name'] == 'Lambda'
    keras3('keras_json_' + label, None, 'dangerous', 'Lambda', 'config.json with %s' % tok,
           text=text.encode())
sur = json.dumps({"module": "keras", "class_name": "Functional",
                  "config": {"name": "m\ud800", "layers": [lam]}})
assert '\\ud800' in sur and json.loads(sur)['config']['layers'][0]['class_name'] == 'Lambda'
keras3('keras_json_surrogate', None, 'dangerous', 'Lambda', 'a lone surrogate escape',
       text=sur.encode())
keras3('keras_json_bom', None, 'dangerous', 'Lambda', 'a UTF-8 BOM (json.loads of bytes skips it)',
       text=b'\xef\xbb\xbf' + json.dumps({"config": {"layers": [lam]}}).encode())
keras3('keras_json_nan_benign', None, 'safe', None, 'NaN in a benign config',
       text=json.dumps({"module": "keras", "class_name": "Functional",
                        "config": {"name": "m", "x": "@@", "layers": [dense('d')]}}).replace('"@@"', 'NaN').encode())
keras3('keras_json_utf16', None, 'unknown', 'Python', 'UTF-16 config.json, which json.loads(bytes) reads',
       text=json.dumps({"config": {"layers": [lam]}}).encode('utf-16-le'))


def keras2(name, model_config, verdict, needle, note):
    p = os.path.join(HERE, name + '.h5')
    with h5py.File(p, 'w') as f:
        f.attrs['model_config'] = model_config
        f.attrs['keras_version'] = '2.13.1'
        f.create_dataset('model_weights/d/kernel', data=np.ones((2, 2), dtype='f4'))
    with open(p, 'rb') as f:
        data = f.read()
    put(name + '.h5', data, verdict, needle, note)


keras2('keras2_module_os', json.dumps({"class_name": "Sequential", "config": {"layers": [
    dense('d', activation=fn('os', 'system'))]}}), 'dangerous', 'os.system', 'Keras 2.13 config with module os')
keras2('keras2_json_nan_lambda', json.dumps({"class_name": "Sequential", "config": {"x": "@@", "layers": [
    {"class_name": "Lambda", "config": {"name": "l", "function": ["4wEAAAAA", None, None],
                                        "function_type": "lambda"}}]}}).replace('"@@"', 'NaN'),
       'dangerous', 'Lambda', 'a Keras 2 model_config with NaN')

# an HDF5 Keras file mfmt cannot open (truncated): never safe
with open(os.path.join(HERE, 'keras2_json_nan_lambda.h5'), 'rb') as f:
    put('keras2_truncated.h5', f.read()[:3000], 'unknown', 'cannot be opened',
        'a Keras 2 file cut short: its model_config cannot be read')

# a DCP folder whose .metadata has torch.load read an archive inside the
# bytes of a tensor of another file (written by tests/data/train/gen_hostile.py,
# which also runs torch's load_state_dict on it: the call runs)
out.append({'path': 'dcp_nested/.metadata', 'verdict': 'dangerous', 'needle': 'io.open',
            'note': 'a DCP item slice: a torch.save archive inside nested.distcp\'s tensor bytes'})
# an index whose weight_map names a shard outside its directory: from_pretrained
# joins it to the directory and loads it; the scan of the directory does not
os.makedirs(os.path.join(HERE, 'index_escape'), exist_ok=True)
put('index_escape/pytorch_model.bin.index.json',
    json.dumps({'metadata': {}, 'weight_map': {'w': '../evil/pytorch_model.bin'}}).encode(),
    'unknown', 'outside this directory', 'a .bin index naming ../evil/pytorch_model.bin')
out.append({'path': 'dcp_overlap/.metadata', 'verdict': 'unknown', 'needle': 'overlap beyond',
            'note': '100 slices of one small .distcp: the scan stops past its size'})

with open(os.path.join(HERE, 'manifest.json'), 'w') as f:
    json.dump(out, f, indent=1)
    f.write('\n')
print(len(out), 'files')
