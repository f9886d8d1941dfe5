#!/usr/bin/env python3
"""Writes the files of doc/scan.md's "Gated names" cases and manifest.json
(run by tests/test_scan_fixtures.c): the shapes real training checkpoints
use, written by Python's own pickler, are `safe`; the same names in any
other shape keep their verdict (getattr and torch.distributed: dangerous;
DeepSpeed's classes: unknown).

Real shapes: Python 3.11.0-3.11.4 pickles an Enum member as
getattr(Class, 'name') (Lib/enum.py Enum.__reduce_ex__; Debian's 3.11.2
does), later versions as Class(value); a plain class or dataclass instance
as NEWOBJ(cls, ()) + BUILD(__dict__); torch's TensorProperties as NEWOBJ +
BUILD(its __getstate__ tuple). The classes stand in under the module names
the real writers use (deepspeed/runtime/zero/config.py,
deepspeed/runtime/fp16/loss_scaler.py, deepspeed/utils/tensor_fragment.py
of microsoft/DeepSpeed 38327e07f6cd; torch 1.13's
torch/distributed/_shard/{checkpoint,sharded_tensor}/metadata.py).
Hostile shapes are written opcode by opcode. Nothing is loaded but the
benign files. Run: python3 make_gate_tests.py (in this folder)."""
import collections, enum, json, os, pickle, sys, types
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
out = []


def put(name, data, verdict, needle=None, note=''):
    with open(os.path.join(HERE, name), 'wb') as f:
        f.write(data)
    c = {'path': name, 'verdict': verdict, 'note': note}
    if needle:
        c['needle'] = needle
    out.append(c)


def module(name):
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name)
        parent, _, leaf = name.rpartition('.')
        if parent:
            setattr(module(parent), leaf, sys.modules[name])
    return sys.modules[name]


def register(cls, mod):
    cls.__module__ = mod
    cls.__qualname__ = cls.__name__
    setattr(module(mod), cls.__name__, cls)
    return cls


class ZeroStageEnum(int, enum.Enum):
    disabled = 0
    optimizer_states = 1
    gradients = 2
    weights = 3
    max_stage = 3


class MEM_FORMAT_ENCODING(enum.Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


class DynamicLossScaler:
    def __init__(self):
        self.cur_scale, self.dynamic, self.cur_iter = 65536.0, True, 10
        self.scale_window, self.min_scale, self.delayed_shift = 1000, 1, 2


@dataclass
class fragment_address:
    numel: int
    start: int


@dataclass
class ChunkStorageMetadata:
    offsets: tuple
    sizes: tuple


class TensorProperties:
    def __init__(self):
        self.dtype, self.requires_grad = None, False
        self.memory_format = MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT

    def __getstate__(self):
        return (self.dtype, None, self.requires_grad, self.memory_format, False)

    def __setstate__(self, s):
        self.dtype, _, self.requires_grad, self.memory_format, _ = s


@dataclass
class Metadata:
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None


DS = 'deepspeed.runtime.zero.config'
SH = 'torch.distributed._shard.sharded_tensor.metadata'
CK = 'torch.distributed._shard.checkpoint.metadata'
register(ZeroStageEnum, DS)
register(MEM_FORMAT_ENCODING, SH)
register(TensorProperties, SH)
register(DynamicLossScaler, 'deepspeed.runtime.fp16.loss_scaler')
register(fragment_address, 'deepspeed.utils.tensor_fragment')
register(ChunkStorageMetadata, CK)
register(Metadata, CK)

getattr_form = sys.version_info[:3] < (3, 11, 5) and sys.version_info[:2] == (3, 11)


def ds_state():
    return {'zero_stage': ZeroStageEnum.gradients, 'loss_scaler': DynamicLossScaler(),
            'param_slice_mappings': [collections.OrderedDict(w=fragment_address(12, 0))],
            'again': ZeroStageEnum.gradients, 'max': ZeroStageEnum.max_stage}


def dcp_state():
    tp = TensorProperties()
    md = {'w': [ChunkStorageMetadata((0, 0), (2, 3)), tp], 'b': TensorProperties()}
    return Metadata(md, None, {'x': MEM_FORMAT_ENCODING.TORCH_CHANNELS_LAST})


# ---- the writers' shapes: safe
for proto in (2, 4):
    b = pickle.dumps(ds_state(), protocol=proto)
    assert (b'getattr' in b) == getattr_form
    put(f'ds_state_p{proto}.pkl', b, 'safe', note='DeepSpeed optimizer state as Python pickles it')
    b = pickle.dumps(dcp_state(), protocol=proto)
    put(f'dcp_metadata_p{proto}.pkl', b, 'safe', note='DCP metadata as Python pickles it')
# the other Enum form (Python >= 3.11.5, 3.12): Class(value)
ZeroStageEnum.__reduce_ex__ = lambda self, proto: (self.__class__, (self._value_,))
MEM_FORMAT_ENCODING.__reduce_ex__ = lambda self, proto: (self.__class__, (self._value_,))
for proto in (2, 4):
    b = pickle.dumps([ds_state(), dcp_state()], protocol=proto)
    assert b'getattr' not in b
    put(f'enum_by_value_p{proto}.pkl', b, 'safe', note='Enum(value), as Python >= 3.11.5 pickles it')
for c in out:
    pickle.loads(open(os.path.join(HERE, c['path']), 'rb').read())  # they load


# ---- the same names in other shapes (protocol 2 opcodes; never loaded)
def g(mod, name):
    return b'c' + mod.encode() + b'\n' + name.encode() + b'\n'


def s(x):
    e = x.encode()
    return b'X' + len(e).to_bytes(4, 'little') + e


P = b'\x80\x02'
ga = g('__builtin__', 'getattr')
zse = g(DS, 'ZeroStageEnum')
mfe = g(SH, 'MEM_FORMAT_ENCODING')
md = g(CK, 'Metadata')
cases = [
    ('getattr_dunder', P + ga + zse + s('__init__') + b'\x86R.', 'dangerous',
     'getattr', 'getattr(ZeroStageEnum, "__init__")'),
    ('getattr_other_member', P + ga + mfe + s('weights') + b'\x86R.', 'dangerous',
     'getattr', 'a member name of another Enum'),
    ('getattr_three_args', P + ga + zse + s('weights') + s('x') + b'\x87R.', 'dangerous',
     'getattr', 'getattr with a default'),
    ('getattr_ungated_class', P + ga + g('collections', 'OrderedDict') + s('fromkeys') +
     b'\x86R.', 'dangerous', 'getattr', 'getattr on a class that is not a gated Enum'),
    ('getattr_result_called', P + ga + zse + s('weights') + b'\x86R)R.', 'dangerous',
     'getattr', 'the member it returns is called'),
    ('getattr_reused_badly', P + ga + b'q\x00' + zse + s('weights') + b'\x86R' +
     b'h\x00' + zse + s('mro') + b'\x86R\x86.', 'dangerous', 'getattr',
     'one use as Python writes it, a second (memo) with another name'),
    ('getattr_unused', P + ga + b'\x85.', 'dangerous', 'getattr', 'named, never called'),
    ('getattr_in_defaultdict', P + g('collections', 'defaultdict') + ga + b'\x85R.',
     'dangerous', 'getattr', 'handed to another callable'),
    ('enum_bad_value', P + mfe + b'K\x07\x85R.', 'dangerous', 'MEM_FORMAT_ENCODING',
     'an Enum called with a value it does not have'),
    ('enum_unused_ds', P + zse + b'\x85.', 'unknown', 'ZeroStageEnum', 'named, never used'),
    ('record_reduce_args', P + md + b'}\x85R.', 'dangerous', 'Metadata',
     'a record called with arguments (REDUCE), not NEWOBJ'),
    ('record_bad_field', P + md + b')\x81}' + s('__class__') + b'K\x01sb.', 'dangerous',
     'Metadata', 'BUILD with a key that is not a field'),
    ('record_bad_state', P + md + b')\x81' + s('x') + b'b.', 'dangerous', 'Metadata',
     'BUILD with a state that is not a dict'),
    ('record_state_holds_getattr', P + md + b')\x81}' + s('planner_data') + ga + b'sb.',
     'dangerous', 'getattr', 'a gated name as a field value'),
    ('record_instance_called', P + md + b')\x81)R.', 'dangerous', 'Metadata',
     'the instance is called'),
    ('record_newobj_args', P + md + b'K\x01\x85\x81.', 'dangerous', 'Metadata',
     'NEWOBJ with arguments'),
    ('ds_record_reduce', P + g('deepspeed.runtime.fp16.loss_scaler', 'DynamicLossScaler') +
     b')R.', 'unknown', 'DynamicLossScaler', 'called (REDUCE), not NEWOBJ'),
]
for name, data, verdict, needle, note in cases:
    put(name + '.pkl', data, verdict, needle, note)

with open(os.path.join(HERE, 'manifest.json'), 'w') as f:
    json.dump(out, f, indent=1)
print(len(out), 'cases')
