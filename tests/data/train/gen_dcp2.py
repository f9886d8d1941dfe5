"""A torch.distributed.checkpoint folder in the torch 2.x layout as
torch/distributed/checkpoint/{metadata,filesystem}.py write it (torch is
1.13 here, which has no torch.distributed.checkpoint, so the 2.x classes are
stood in for under their own module names): `.metadata` pickles
Metadata(state_dict_metadata, planner_data, storage_data, storage_meta,
version) whose TensorProperties pickle as the tuple their __getstate__
returns (dtype, layout, requires_grad, _MEM_FORMAT_ENCODING member,
pin_memory), and each rank writes one `__R_0.distcp` holding several
torch.save'd chunks one after the other (FileSystemWriter's _write_item:
offset = stream.tell() before torch.save, length after), _StorageInfo with
an empty transform_descriptors. FSDP-style: the optimizer state is saved
beside the model under `optimizer.` names. Rank 0 also saves the whole
tensors as the reference.

usage: python3 gen_dcp2.py OUTDIR   -> OUTDIR/dcp2/ and OUTDIR/dcp2.ref.pt"""
import enum
import io
import os
import pickle
import sys
import types
from dataclasses import dataclass, field
from typing import Any, List, Optional

import torch


def _module(name):
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name)
    return sys.modules[name]


md = _module("torch.distributed.checkpoint.metadata")
fs = _module("torch.distributed.checkpoint.filesystem")


class _MEM_FORMAT_ENCODING(enum.Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


@dataclass
class ChunkStorageMetadata:
    offsets: torch.Size
    sizes: torch.Size


@dataclass
class TensorProperties:
    dtype: torch.dtype = None
    layout: torch.layout = None
    requires_grad: bool = False
    pin_memory: bool = False

    def __getstate__(self):
        return (self.dtype, self.layout, self.requires_grad,
                _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT, self.pin_memory)


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: torch.Size
    chunks: List[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    pass


@dataclass
class StorageMeta:
    checkpoint_id: Any = None
    save_id: Optional[str] = None
    load_id: Optional[str] = None


@dataclass
class Metadata:
    state_dict_metadata: dict
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Optional[StorageMeta] = None
    version: Optional[str] = None


@dataclass(frozen=True)
class MetadataIndex:
    fqn: str
    offset: Optional[torch.Size] = None
    index: Optional[int] = field(hash=False, compare=False, default=None)


@dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int
    transform_descriptors: Optional[list] = None


for c in [_MEM_FORMAT_ENCODING, ChunkStorageMetadata, TensorProperties, TensorStorageMetadata,
          BytesStorageMetadata, StorageMeta, Metadata, MetadataIndex]:
    c.__module__ = md.__name__
    setattr(md, c.__name__, c)
_StorageInfo.__module__ = fs.__name__
fs._StorageInfo = _StorageInfo

WORLD = 2
g = torch.Generator().manual_seed(31)
full = {"model.embed_tokens.weight": torch.randn(9, 6, generator=g).bfloat16(),
        "model.layers.0.self_attn.o_proj.weight": torch.randn(6, 6, generator=g),
        "model.norm.weight": torch.randn(6, generator=g)}
# FSDP2 / torchtitan shard on dimension 0 (Shard(0)); the norm is replicated
split = {"model.embed_tokens.weight": 0, "model.layers.0.self_attn.o_proj.weight": 0}
optim = {"optimizer.state.model.norm.weight.exp_avg": torch.zeros(6)}

out = os.path.join(sys.argv[1], "dcp2")
os.makedirs(out, exist_ok=True)
files = {r: io.BytesIO() for r in range(WORLD)}
sdm, storage = {}, {}


def write_chunk(rank, fqn, t, offsets):
    f = files[rank]
    at = f.tell()
    torch.save(t.clone(), f)
    storage[MetadataIndex(fqn, torch.Size(offsets))] = _StorageInfo(
        f"__{rank}_0.distcp", at, f.tell() - at, [])
    return ChunkStorageMetadata(torch.Size(offsets), t.shape)


for fqn, t in list(full.items()) + list(optim.items()):
    chunks = []
    if fqn in split:
        n = -(-t.shape[0] // WORLD)
        for r in range(WORLD):
            part = t[r * n:(r + 1) * n]
            chunks.append(write_chunk(r, fqn, part, [r * n] + [0] * (t.dim() - 1)))
    else:
        chunks.append(write_chunk(0, fqn, t, [0] * t.dim()))
    sdm[fqn] = TensorStorageMetadata(TensorProperties(t.dtype, torch.strided), t.shape, chunks)
buf = io.BytesIO()
torch.save({"epoch": 1}, buf)
at = files[0].tell()
files[0].write(buf.getvalue())
storage[MetadataIndex("train_state")] = _StorageInfo("__0_0.distcp", at, len(buf.getvalue()), [])
sdm["train_state"] = BytesStorageMetadata()
for r, f in files.items():
    with open(os.path.join(out, f"__{r}_0.distcp"), "wb") as o:
        o.write(f.getvalue())
with open(os.path.join(out, ".metadata"), "wb") as o:
    pickle.dump(Metadata(sdm, None, storage, StorageMeta(), "1.0.0"), o)
torch.save(full, os.path.join(sys.argv[1], "dcp2.ref.pt"))
