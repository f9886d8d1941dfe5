"""A Megatron-Core `torch_dist` checkpoint of a Mixtral-like MoE with the
distributed optimizer's fp32 master weights, written by torch 1.13's own
torch.distributed.checkpoint (`save_state_dict` + `FileSystemWriter`) on
eight gloo ranks on 127.0.0.1: TP=2, DP=4, EP=2 (the expert ranks carved
from data parallelism: expert rank d % EP, expert data parallelism
DP / EP = 2), PP=1.

Layouts followed (NVIDIA/Megatron-LM):
- d98e8a64ddf3 megatron/core/transformer/moe/experts.py
  (SequentialMLP.sharded_state_dict): the experts of every layer share the
  key `decoder.layers.mlp.experts.experts.linear_fc1.weight` (fc2 alike)
  with an expert axis after the layer axis (offset: the global expert
  index, size num_experts); fc1 through apply_swiglu_sharded_factory (W at
  chunk tp_rank, V at tp_rank + TP of 2 x TP), fc2 row-parallel; the
  router `decoder.layers.mlp.router.weight` and `pre_mlp_layernorm`
  replicated; expert replica ids (PP, TP, expert DP rank): each expert
  saved by expert DP rank 0;
- 5ab481cb45^ (the last commit with flattened ranges; removed by "Remove
  flattened_range code paths for distributed optimizer checkpointing")
  megatron/core/optimizer/distrib_optimizer.py
  (sharded_param_state_fs_model_space): `optimizer.state.fp32_param.<key>`
  (and `exp_avg`, `exp_avg_sq`) are the model ShardedTensor with
  `flattened_range` = the slice of the rank's TP-local parameter that its
  DP shard of the grad buffer holds; mlp.py apply_swiglu_sharded_factory
  splits that slice between W and V; strategies/torch.py
  (sharded_tensor_to_torch_sharded_tensor, type 2) and resharding.py
  (nd_flattened_tensor_reformulated_global_shape): a flattened tensor of
  global shape [X, Y, Z] and local shape [x, y, z] goes to DCP as
  [X/x, Y/y, Z/z, x*y*z], each piece a chunk at (chunk index..., start)
  of size (1, ..., 1, stop - start).
The buffer (5ab481cb45^ distributed/param_and_grad_buffer.py): each TP
rank's dense parameters in reverse order, each start padded to 64
elements, the end to lcm(DP, 128), split evenly over the DP ranks; the
expert parameters in their own buffer, split over the expert DP ranks.

The bf16 model weights are gen_megatron.py's random HF weights (seed 6) of
a Mixtral of hidden size 12 (rows of 12 elements: the DP pieces start and
end mid-row), the fp32 masters those weights plus noise (seed 7). The
references are megatron_merge_ref.py run on legacy checkpoints
(gen_megatron.write) of each: OUTDIR/megatron_dist_moe.ref.pt (bf16, the
module-state merge) and OUTDIR/megatron_dist_moe.fp32.ref.pt (the master
weights), each also checked against the weights it was cut from.

usage: python3 gen_megatron_dist_moe.py OUTDIR   (OUTDIR/megatron_dist_moe/)
       python3 gen_megatron_dist_moe.py --bad-flat OUTDIR
         (OUTDIR/megatron_dist_moe.badflat.metadata from the checkpoint there)
"""
import io
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_megatron_dist as gd  # noqa: E402  (its dataclass shim first, then torch)
import gen_megatron as gm  # noqa: E402

torch, dist, mp, dcp = gd.torch, gd.dist, gd.mp, gd.dcp
TP, DP, EP, ITER = 2, 4, 2, 100
C = dict(arch="MixtralForCausalLM", hidden=12, nh=4, ng=2, hd=3, ffn=6, layers=2,
         vocab=40, padded=64, qkv_bias=True, experts=4)


def params(w, t, e):
    """[(local name, [(key, global shape, tensor viewed with prepended axes, offsets)])]
    of rank (t, expert rank e): a TP-local parameter and the ShardedTensors it is saved as."""
    local = gm.shard_model(w, C, TP, 1, EP, t, 0, e)
    L, E, per = C["layers"], C["experts"], C["experts"] // EP
    out = []
    for name, x in local.items():
        if x is None:
            continue
        sh = []
        if name.startswith("decoder.layers."):
            i, rest = name[len("decoder.layers."):].split(".", 1)
            g, x1 = int(i), x.unsqueeze(0)
            if rest.startswith("mlp.experts.local_experts."):
                j, what = rest[len("mlp.experts.local_experts."):].split(".", 1)
                ge, x2 = e * per + int(j), x1.unsqueeze(1)
                key = "decoder.layers.mlp.experts.experts." + what
                if what == "linear_fc1.weight":
                    w_, v_ = torch.chunk(x2, 2, dim=2)
                    n = w_.shape[2]
                    shape = (L, E, 2 * TP * n, x.shape[1])
                    sh = [(key, shape, w_, (g, ge, t * n, 0)),
                          (key, shape, v_, (g, ge, (TP + t) * n, 0))]
                else:  # linear_fc2: row-parallel
                    n = x.shape[1]
                    sh = [(key, (L, E, x.shape[0], TP * n), x2, (g, ge, 0, t * n))]
            elif rest in ("self_attention.linear_qkv.layer_norm_weight",
                          "pre_mlp_layernorm.weight", "mlp.router.weight"):
                sh = [("decoder.layers." + rest, (L,) + tuple(x.shape), x1,
                       (g,) + (0,) * x.dim())]
            elif rest == "self_attention.linear_proj.weight":
                n = x.shape[1]
                sh = [("decoder.layers." + rest, (L, x.shape[0], TP * n), x1, (g, 0, t * n))]
            else:  # linear_qkv weight / bias: column-parallel
                n = x.shape[0]
                sh = [("decoder.layers." + rest, (L, TP * n) + tuple(x.shape[1:]), x1,
                       (g, t * n) + (0,) * (x.dim() - 1))]
        elif name == "decoder.final_layernorm.weight":
            sh = [(name, tuple(x.shape), x, (0,))]
        else:  # vocab-parallel rows
            n = x.shape[0]
            sh = [(name, (TP * n, x.shape[1]), x, (t * n, 0))]
        out.append((name, [(k, s, y.contiguous(), o) for k, s, y, o in sh]))
    return out


def replicated_over_tp(name):
    return name.endswith("layer_norm_weight") or name.endswith("layernorm.weight") or \
        name.endswith("router.weight")


def flat_pieces(shards, s, e):
    """The flattened slice [s, e) of a parameter saved as `shards` (one after the
    other in its flat order): per shard, (start, stop) in its own flat order."""
    out, k0 = [], 0
    for sh in shards:
        n = sh[2].numel()
        lo, hi = max(s, k0), min(e, k0 + n)
        if lo < hi:
            out.append((sh, lo - k0, hi - k0))
        k0 += n
    return out


def rank_entries(w, m, t, d):
    """{dcp key: (global shape, [(tensor, offsets)])} saved by rank (TP t, DP d)."""
    e, ed = d % EP, d // EP  # expert rank, expert data-parallel rank (EP carved from DP)
    ent = {}

    def put(key, shape, x, o):
        ent.setdefault(key, (tuple(shape), []))[1].append((x.clone(), tuple(o)))

    model, master = params(w, t, e), params(m, t, e)
    dense = [(nm, sh, ms) for (nm, sh), (_, ms) in zip(model, master) if ".experts." not in nm]
    experts = [(nm, sh, ms) for (nm, sh), (_, ms) in zip(model, master) if ".experts." in nm]
    # model weights: the main replica (DP 0; TP 0 for TP-replicated ones); experts by their owner
    for nm, sh, _ in dense:
        if d == 0 and (t == 0 or not replicated_over_tp(nm)):
            for k, s, x, o in sh:
                put(k, s, x, o)
    for nm, sh, _ in experts:  # replica id (PP, TP, expert DP rank)
        for k, s, x, o in sh:
            if ed == 0:
                put(k, s, x, o)

    def optimizer_state(group, dp, my):
        # param_and_grad_buffer.py (5ab481cb45^): parameters in reverse order, each
        # start padded to 64 elements, the bucket's end to lcm(DP, 128); one bucket,
        # split evenly over the DP ranks
        starts, b = [], 0
        for nm, _, ms in reversed(group):
            b = -(-b // 64) * 64
            starts.append((b, nm, ms))
            b += sum(y[2].numel() for y in ms)
        size = -(-b // (128 * dp // math.gcd(128, dp))) * (128 * dp // math.gcd(128, dp)) // dp
        lo, hi = my * size, (my + 1) * size
        for b, nm, ms in starts:
            n = sum(y[2].numel() for y in ms)
            s, e_ = max(lo, b), min(hi, b + n)
            if s < e_ and (t == 0 or not replicated_over_tp(nm)):
                for (k, shape, x, o), a, z in flat_pieces(ms, s - b, e_ - b):
                    frag = tuple(gs // xs for gs, xs in zip(shape, x.shape))
                    idx = tuple(oo // xs for oo, xs in zip(o, x.shape))
                    flat = x.reshape(-1)[a:z]
                    put("optimizer.state.fp32_param." + k, frag + (x.numel(),),
                        flat.reshape((1,) * len(frag) + (z - a,)), idx + (a,))
                    if nm.endswith("router.weight") or "linear_fc2" in nm:
                        put("optimizer.state.exp_avg." + k, frag + (x.numel(),),
                            torch.zeros((1,) * len(frag) + (z - a,)), idx + (a,))

    optimizer_state(dense, DP, d)
    optimizer_state(experts, DP // EP, ed)
    return ent


def run(rank, out, port, w, m):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=TP * DP)
    t, d = rank % TP, rank // TP
    everyone = {(tt, dd): rank_entries(w, m, tt, dd) for tt in range(TP) for dd in range(DP)}
    sd = gd.torch_sharded(everyone, (t, d), rank, lambda tt, dd: dd * TP + tt)
    rng = io.BytesIO()
    torch.save([{"torch_rng_state": torch.get_rng_state()}], rng)
    sd[f"rng_state/shard_0.{t}_1.{TP}"] = rng.getvalue()
    it = os.path.join(out, f"iter_{ITER:07d}")
    dcp.save_state_dict(sd, dcp.FileSystemWriter(it))
    if rank == 0:
        with open(os.path.join(it, "metadata.json"), "w") as f:
            json.dump({"sharded_backend": "torch_dist", "sharded_backend_version": 1}, f)
        args = gm.megatron_args(C, TP, 1, EP)
        args.ckpt_format = "torch_dist"
        args.use_distributed_optimizer = True
        args.data_parallel_size = DP
        args.ckpt_fully_parallel_save = True
        torch.save({"args": args, "checkpoint_version": 3.0, "iteration": ITER,
                    "num_floating_point_operations_so_far": 0},
                   os.path.join(it, "common.pt"))
        with open(os.path.join(out, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write(str(ITER))
    dist.barrier()
    dist.destroy_process_group()


def reference(outdir, weights, name):
    """megatron_merge_ref.py on a legacy checkpoint (gen_megatron.write) of weights."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        legacy = os.path.join(tmp, "fp32")
        orig_hf = gm.hf_weights
        gm.hf_weights = lambda c, seed: weights
        try:
            gm.write(legacy, C, TP, 1, EP, 6, True)
        finally:
            gm.hf_weights = orig_hf
        subprocess.check_call([sys.executable, os.path.join(here, "megatron_merge_ref.py"),
                               legacy, os.path.join(legacy, "config.json"),
                               os.path.join(outdir, name),
                               legacy + ".orig.pt"])


def bad_flat(outdir):
    """A .metadata whose fp32 master entry of decoder.final_layernorm.weight
    ([1, 12]: one chunk of 12) is filed under decoder.layers.pre_mlp_layernorm.weight
    ([2, 12] in the model): self-consistent for DCP, not a flattened state of the
    parameter it names (megatron.c `unflatten`'s rule)."""
    import pickle
    from torch.distributed._shard.checkpoint.metadata import MetadataIndex
    it = os.path.join(outdir, "megatron_dist_moe", f"iter_{ITER:07d}")
    with open(os.path.join(it, ".metadata"), "rb") as f:
        md = pickle.load(f)
    src = "optimizer.state.fp32_param.decoder.final_layernorm.weight"
    dst = "optimizer.state.fp32_param.decoder.layers.pre_mlp_layernorm.weight"
    sdm = md.state_dict_metadata
    sdm[dst] = sdm.pop(src)
    md.storage_data = {(MetadataIndex(dst, k.offset, k.index) if k.fqn == src else k): v
                       for k, v in md.storage_data.items() if k.fqn != dst}
    with open(os.path.join(outdir, "megatron_dist_moe.badflat.metadata"), "wb") as f:
        pickle.dump(md, f)


if __name__ == "__main__" and sys.argv[1:2] == ["--bad-flat"]:
    bad_flat(sys.argv[2])
elif __name__ == "__main__":
    outdir = sys.argv[1]
    out = os.path.join(outdir, "megatron_dist_moe")
    os.makedirs(os.path.join(out, f"iter_{ITER:07d}"), exist_ok=True)
    w = gm.hf_weights(C, 6)
    g = torch.Generator().manual_seed(7)
    m = type(w)((k, v.float() + 1e-3 * torch.randn(v.shape, generator=g)) for k, v in w.items())
    cfg = {"architectures": [C["arch"]], "hidden_size": C["hidden"],
           "intermediate_size": C["ffn"], "num_attention_heads": C["nh"],
           "num_key_value_heads": C["ng"], "head_dim": C["hd"],
           "num_hidden_layers": C["layers"], "vocab_size": C["vocab"],
           "num_local_experts": C["experts"], "num_experts_per_tok": 2,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    mp.spawn(run, args=(out, 29533, w, m), nprocs=TP * DP)
    reference(outdir, w, "megatron_dist_moe.ref.pt")
    reference(outdir, m, "megatron_dist_moe.fp32.ref.pt")
