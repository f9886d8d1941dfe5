"""A torch.distributed checkpoint written by torch itself: two ranks of a
gloo process group on 127.0.0.1 each save their shards of ShardedTensors
(ChunkShardingSpec on dimension 0 and 1, uneven) plus replicated tensors and
a non-tensor value with torch 1.13's save_state_dict + FileSystemWriter
(torch/distributed/_shard/checkpoint: `.metadata` pickle, `__0_0.distcp`,
`__1_0.distcp`, each chunk a torch.save'd tensor at an offset). Rank 0 also
saves the full tensors (torch.save) as the reference.

usage: python3 gen_dcp.py OUTDIR   -> OUTDIR/dcp/ and OUTDIR/dcp.ref.pt

torch 1.13 predates Python 3.11's refusal of unhashable dataclass defaults
(sharded_tensor/metadata.py); the shim below turns such a default into a
default_factory before torch's modules are imported."""
import copy
import dataclasses
import os
import sys

_get_field = dataclasses._get_field


def _get_field_shim(cls, a_name, a_type, *rest):
    d = cls.__dict__.get(a_name, dataclasses.MISSING)
    if isinstance(d, dataclasses.Field):
        d = d.default
    if d is not dataclasses.MISSING and type(d).__hash__ is None:
        setattr(cls, a_name, dataclasses.field(default_factory=lambda v=d: copy.deepcopy(v)))
    return _get_field(cls, a_name, a_type, *rest)


dataclasses._get_field = _get_field_shim

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed._shard import sharded_tensor  # noqa: E402
from torch.distributed._shard.sharding_spec import ChunkShardingSpec  # noqa: E402
import torch.distributed._shard.checkpoint as dcp  # noqa: E402

WORLD = 2


def full_state():
    g = torch.Generator().manual_seed(24)
    return {"model.embed_tokens.weight": torch.randn(7, 4, generator=g),
            "model.layers.0.mlp.down_proj.weight": torch.randn(4, 9, generator=g).bfloat16(),
            "model.layers.0.self_attn.q_proj.weight": torch.randn(5, 4, generator=g),
            "model.norm.weight": torch.randn(4, generator=g)}


SHARDED = {"model.embed_tokens.weight": 0, "model.layers.0.mlp.down_proj.weight": 1,
           "model.layers.0.self_attn.q_proj.weight": 0}


def run(rank, out, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD)
    full = full_state()
    sd = {}
    for name, t in full.items():
        if name not in SHARDED:
            sd[name] = t
            continue
        dim = SHARDED[name]
        spec = ChunkShardingSpec(dim=dim, placements=[f"rank:{r}/cpu" for r in range(WORLD)])
        st = sharded_tensor.empty(spec, *t.shape, dtype=t.dtype)
        for shard in st.local_shards():
            o, s = shard.metadata.shard_offsets, shard.metadata.shard_sizes
            idx = tuple(slice(o[d], o[d] + s[d]) for d in range(t.dim()))
            shard.tensor.copy_(t[idx])
        sd[name] = st
    sd["step"] = 10
    dcp.save_state_dict(sd, dcp.FileSystemWriter(os.path.join(out, "dcp")))
    if rank == 0:
        torch.save(full, os.path.join(out, "dcp.ref.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "dcp"), exist_ok=True)
    mp.spawn(run, args=(out, 29517), nprocs=WORLD)
