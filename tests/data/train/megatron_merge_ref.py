"""The reference merge of a Megatron-LM TP/PP/EP checkpoint into HF names,
written from Megatron-LM's own converter logic (NVIDIA/Megatron-LM
d98e8a64ddf3): tools/checkpoint/loader_base.py send_llm_over_queue (word
embeddings and output layer: torch.cat over TP on dim 0; linear_qkv and
linear_fc1: cat on dim 0, fc1 first torch.chunk(2) per rank for SwiGLU into
W and V; linear_proj and linear_fc2: cat on dim 1; norms from TP rank 0),
saver_hf_llava.py recover_lm_qkv_weight/bias (per TP rank: reshape to
(ng, dim * nh/ng + 2 * dim, -1) and slice q, k, v), the true vocabulary
size cutting the padding off (loader_base.compute_true_vocab_size), and
schema_core.py's names; MoE experts (CoreMoETESchema) gathered over expert
ranks. Writes the merged tensors with torch.save.

usage: python3 megatron_merge_ref.py CKPT_DIR CONFIG_JSON OUT.pt
"""
import glob
import json
import os
import re
import sys
from collections import OrderedDict

import torch

ckpt, cfg_path, out = sys.argv[1:4]
cfg = json.load(open(cfg_path))
it = open(os.path.join(ckpt, "latest_checkpointed_iteration.txt")).read().strip()
d = os.path.join(ckpt, "release" if it == "release" else f"iter_{int(it):07d}")
shards = {}
args = None
for f in glob.glob(os.path.join(d, "mp_rank_*", "model_optim_rng.pt")):
    sd = torch.load(f, map_location="cpu")
    args = sd["args"]
    nums = [int(x) for x in re.findall(r"_(\d+)", os.path.basename(os.path.dirname(f)))]
    t = nums[0]
    p = nums[1] if args.pipeline_model_parallel_size > 1 else 0
    e = nums[-1] if args.expert_model_parallel_size > 1 else 0
    shards[(t, p, e)] = sd["model"]
tp, pp, ep = (args.tensor_model_parallel_size, args.pipeline_model_parallel_size,
              args.expert_model_parallel_size)
V = cfg["vocab_size"]
dim, nh, ng = args.kv_channels, args.num_attention_heads // tp, args.num_query_groups // tp


def recover_qkv(per_tp, bias):
    q, k, v = [], [], []
    for x in per_tp:
        qkv = x.reshape(ng, dim * (nh // ng) + 2 * dim, -1)
        q.append(qkv[:, :dim * (nh // ng), :].reshape(dim * (nh // ng) * ng, -1))
        k.append(qkv[:, dim * (nh // ng):dim * (nh // ng) + dim, :].reshape(dim * ng, -1))
        v.append(qkv[:, dim * (nh // ng) + dim:, :].reshape(dim * ng, -1))
    f = (lambda y: torch.cat(y)[:, 0]) if bias else torch.cat
    return f(q), f(k), f(v)


def fc1(per_tp):
    ch = [torch.chunk(x, 2, dim=0) for x in per_tp]
    return torch.cat([c[0] for c in ch]), torch.cat([c[1] for c in ch])


sd = OrderedDict()
sd["model.embed_tokens.weight"] = torch.cat(
    [shards[(t, 0, 0)]["embedding.word_embeddings.weight"] for t in range(tp)])[:V]
per = args.num_layers // pp
moe = bool(args.num_experts)
for L in range(args.num_layers):
    p, i = L // per, L % per
    m, h = f"decoder.layers.{i}.", f"model.layers.{L}."
    g = lambda k, e=0: [shards[(t, p, e)][m + k] for t in range(tp)]  # noqa: E731
    sd[h + "input_layernorm.weight"] = g("self_attention.linear_qkv.layer_norm_weight")[0]
    q, k, v = recover_qkv(g("self_attention.linear_qkv.weight"), False)
    sd[h + "self_attn.q_proj.weight"], sd[h + "self_attn.k_proj.weight"] = q, k
    sd[h + "self_attn.v_proj.weight"] = v
    if args.add_qkv_bias:
        q, k, v = recover_qkv([b.unsqueeze(-1) for b in g("self_attention.linear_qkv.bias")], True)
        sd[h + "self_attn.q_proj.bias"], sd[h + "self_attn.k_proj.bias"] = q, k
        sd[h + "self_attn.v_proj.bias"] = v
    sd[h + "self_attn.o_proj.weight"] = torch.cat(g("self_attention.linear_proj.weight"), dim=1)
    if moe:
        sd[h + "post_attention_layernorm.weight"] = g("pre_mlp_layernorm.weight")[0]
        sd[h + "block_sparse_moe.gate.weight"] = g("mlp.router.weight")[0]
        local = args.num_experts // ep
        for E in range(args.num_experts):
            e, j = E // local, E % local
            x = f"mlp.experts.local_experts.{j}."
            w1, w3 = fc1(g(x + "linear_fc1.weight", e))
            b = h + f"block_sparse_moe.experts.{E}."
            sd[b + "w1.weight"] = w1
            sd[b + "w2.weight"] = torch.cat(g(x + "linear_fc2.weight", e), dim=1)
            sd[b + "w3.weight"] = w3
    else:
        sd[h + "post_attention_layernorm.weight"] = g("mlp.linear_fc1.layer_norm_weight")[0]
        gate, up = fc1(g("mlp.linear_fc1.weight"))
        sd[h + "mlp.gate_proj.weight"], sd[h + "mlp.up_proj.weight"] = gate, up
        sd[h + "mlp.down_proj.weight"] = torch.cat(g("mlp.linear_fc2.weight"), dim=1)
sd["model.norm.weight"] = shards[(0, pp - 1, 0)]["decoder.final_layernorm.weight"]
sd["lm_head.weight"] = torch.cat([shards[(t, pp - 1, 0)]["output_layer.weight"]
                                  for t in range(tp)])[:V]
sd = OrderedDict((k, v.contiguous().clone()) for k, v in sd.items())
torch.save(sd, out)
if len(sys.argv) > 4:  # the HF weights the generator cut the shards from
    orig = torch.load(sys.argv[4])
    assert list(orig) == list(sd), "names or order differ"
    assert all(torch.equal(orig[k], sd[k]) for k in sd), "values differ"
    print("reference equals the original weights")
