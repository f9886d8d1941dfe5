"""A Megatron-Core `torch_dist` checkpoint written by torch's own
torch.distributed.checkpoint (torch 1.13: `save_state_dict` +
`FileSystemWriter`), four ranks of a gloo group on 127.0.0.1 (TP=2 PP=2),
each saving the ShardedTensors Megatron-Core makes of its local weights
(NVIDIA/Megatron-LM d98e8a64ddf3):

- megatron/core/dist_checkpointing/strategies/torch.py
  (`sharded_tensor_to_torch_sharded_tensor`, `_replace_state_dict_keys_with_sharded_keys`):
  a DCP entry per ShardedTensor *key*, a torch ShardedTensor whose local
  shards are the rank's tensors viewed with the prepended axes, at their
  global offsets;
- megatron/core/transformer/transformer_block.py (`sharded_state_dict`):
  homogeneous layers share one key `decoder.layers.<name>` with a
  prepended layer axis of size num_layers (offset: the global layer);
- tensor parallelism (tensor_parallel/layers.py, `make_tp_sharded_tensor_for_checkpoint`):
  column-parallel weights split on their first axis, row-parallel on their
  second, vocab-parallel embedding/output on rows (padded vocabulary),
  norms replicated (saved once: the main replica, TP rank 0);
- transformer/mlp.py (`apply_swiglu_sharded_factory`): fc1's local [W; V]
  saved as two shards of one key, W at chunk tp_rank and V at chunk
  tp_rank + TP of 2 x TP chunks;
- dist_checkpointing/core.py: `metadata.json` {"sharded_backend":
  "torch_dist", "sharded_backend_version": 1}; the common state (args,
  iteration, checkpoint_version) in `common.pt` (torch.save, rank 0),
  `rng_state` as ShardedObjects (bytes, key rng_state/shard_P.T_PP.TP),
  and an optimizer moment (`optimizer.state.exp_avg.<key>`).

The local weights are gen_megatron.py's (same HF weights, seed 5, same
split rules), so the merge must equal megatron/megatron_llama.ref.pt.

usage: python3 gen_megatron_dist.py OUTDIR  -> OUTDIR/megatron_dist/ (+ config.json beside)
"""
import argparse
import copy
import dataclasses
import io
import json
import os
import sys

_get_field = dataclasses._get_field


def _get_field_shim(cls, a_name, a_type, *rest):
    # torch 1.13 under Python 3.11: an unhashable dataclass default
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
from torch.distributed._shard.sharded_tensor import Shard, ShardedTensor  # noqa: E402
from torch.distributed._shard.sharded_tensor.metadata import (  # noqa: E402
    ShardedTensorMetadata, TensorProperties)
from torch.distributed._shard.metadata import ShardMetadata  # noqa: E402
import torch.distributed._shard.checkpoint as dcp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_megatron as gm  # noqa: E402

TP, PP, ITER = 2, 2, 100
C = dict(arch="LlamaForCausalLM", hidden=16, nh=4, ng=2, hd=4, ffn=24, layers=4,
         vocab=50, padded=64, qkv_bias=False, experts=0)


def mcore_shards(w, t, p):
    """{key: (global shape, [(tensor viewed with prepended axes, offsets)])} of rank (t, p)."""
    local = gm.shard_model(w, C, TP, PP, 1, t, p, 0)
    L, per = C["layers"], C["layers"] // PP
    out = {}

    def put(key, shape, tensor, offsets):
        out.setdefault(key, (tuple(shape), []))[1].append((tensor.contiguous(), tuple(offsets)))

    for name, x in local.items():
        if x is None:  # Transformer Engine's _extra_state: a ShardedObject, not a weight
            continue
        if name.startswith("decoder.layers."):
            i, rest = name[len("decoder.layers."):].split(".", 1)
            g = p * per + int(i)
            key = "decoder.layers." + rest
            x1 = x.unsqueeze(0)
            if rest.endswith("layer_norm_weight"):
                if t == 0:  # replicated over TP: the main replica is saved
                    put(key, (L,) + tuple(x.shape), x1, (g, 0))
            elif rest == "mlp.linear_fc1.weight":  # apply_swiglu_sharded_factory
                wv = torch.chunk(x1, 2, dim=1)
                n = wv[0].shape[1]
                put(key, (L, 2 * TP * n, x.shape[1]), wv[0], (g, t * n, 0))
                put(key, (L, 2 * TP * n, x.shape[1]), wv[1], (g, (TP + t) * n, 0))
            elif rest in ("self_attention.linear_proj.weight", "mlp.linear_fc2.weight"):
                n = x.shape[1]  # row-parallel: the input axis
                put(key, (L, x.shape[0], TP * n), x1, (g, 0, t * n))
            else:  # column-parallel: linear_qkv
                n = x.shape[0]
                put(key, (L, TP * n) + tuple(x.shape[1:]), x1, (g, t * n) + (0,) * (x.dim() - 1))
        elif name == "decoder.final_layernorm.weight":
            if t == 0:
                put(name, x.shape, x, (0,))
        else:  # embedding / output layer: vocab-parallel rows
            n = x.shape[0]
            put(name, (TP * n, x.shape[1]), x, (t * n, 0))
    if p == PP - 1 and t == 0:  # an optimizer moment (left out by the merge)
        x = local["decoder.final_layernorm.weight"].float()
        put("optimizer.state.exp_avg.decoder.final_layernorm.weight", x.shape, x * 0, (0,))
    return out


def torch_sharded(everyone, me, rank, rank_of):
    """{key: torch ShardedTensor} of rank `me`'s entries, whose global metadata lists
    every rank's shards of the key (everyone: {(i, j): {key: (shape, [(tensor, offsets)])}},
    rank_of(i, j): the process rank)."""
    sd = {}
    for key, (shape, shards) in everyone[me].items():
        metas = [ShardMetadata(list(o), list(x.shape), f"rank:{rank_of(*r)}/cpu")
                 for r, theirs in everyone.items() for x, o in theirs.get(key, (None, []))[1]]
        x0 = shards[0][0]
        props = TensorProperties(dtype=x0.dtype, layout=x0.layout, requires_grad=False,
                                 memory_format=torch.contiguous_format, pin_memory=False)
        md = ShardedTensorMetadata(shards_metadata=metas, size=torch.Size(shape),
                                   tensor_properties=props)
        local = [Shard.from_tensor_and_offsets(x, list(o), rank) for x, o in shards]
        sd[key] = ShardedTensor._init_from_local_shards_and_global_metadata(
            local, sharded_tensor_metadata=md, process_group=None)
    return sd


def run(rank, out, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=TP * PP)
    w = gm.hf_weights(C, 5)
    t, p = rank % TP, rank // TP
    everyone = {(tt, pp): mcore_shards(w, tt, pp) for tt in range(TP) for pp in range(PP)}
    sd = torch_sharded(everyone, (t, p), rank, lambda tt, pp: pp * TP + tt)
    # Megatron hands DCP an io.BytesIO of the torch.save'd object, which torch
    # 2.x's FileSystemWriter writes as raw bytes; torch 1.13's would
    # torch.save the BytesIO object itself (a pickle of _io.BytesIO), so
    # here the bytes go as a bytes value: the nearest 1.13 writes.
    rng = io.BytesIO()
    torch.save([{"torch_rng_state": torch.get_rng_state()}], rng)
    sd[f"rng_state/shard_{p}.{t}_{PP}.{TP}"] = rng.getvalue()
    d = os.path.join(out, f"iter_{ITER:07d}")
    dcp.save_state_dict(sd, dcp.FileSystemWriter(d))
    if rank == 0:
        with open(os.path.join(d, "metadata.json"), "w") as f:
            json.dump({"sharded_backend": "torch_dist", "sharded_backend_version": 1}, f)
        args = gm.megatron_args(C, TP, PP, 1)
        args.ckpt_format = "torch_dist"
        torch.save({"args": args, "checkpoint_version": 3.0, "iteration": ITER,
                    "num_floating_point_operations_so_far": 0},
                   os.path.join(d, "common.pt"))
        with open(os.path.join(out, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write(str(ITER))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    out = os.path.join(sys.argv[1], "megatron_dist")
    os.makedirs(os.path.join(out, f"iter_{ITER:07d}"), exist_ok=True)
    cfg = {"architectures": [C["arch"]], "hidden_size": C["hidden"],
           "intermediate_size": C["ffn"], "num_attention_heads": C["nh"],
           "num_key_value_heads": C["ng"], "head_dim": C["hd"],
           "num_hidden_layers": C["layers"], "vocab_size": C["vocab"],
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    mp.spawn(run, args=(out, 29531), nprocs=TP * PP)
