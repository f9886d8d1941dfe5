"""Megatron-LM checkpoints (legacy `torch` format) laid out as Megatron's
megatron/training/checkpointing.py writes them (NVIDIA/Megatron-LM
d98e8a64ddf3: get_checkpoint_name -> iter_0000100/mp_rank_TT[_PPP][_EEE]/
model_optim_rng.pt, generate_state_dict -> args, checkpoint_version,
iteration, model (state_dict_for_save_checkpoint of the mcore GPTModel with
the Transformer Engine layer spec: tools/checkpoint/schema_core.py names),
optimizer, opt_param_scheduler, rng_state; latest_checkpointed_iteration.txt
beside), each with torch.save, from random HF-named weights split as
tensor/pipeline/expert parallelism splits them: vocab-parallel embedding and
output layer padded to padded_vocab_size, fused QKV per query group,
column-parallel fused SwiGLU fc1 ([W; V] per rank), row-parallel
linear_proj and fc2, replicated norms, MoE experts over expert ranks.

usage: python3 gen_megatron.py OUTDIR
  OUTDIR/megatron_llama/   TP=2 PP=2, GQA (4 heads, 2 groups), vocab 50 padded to 64,
                           config.json beside (LlamaForCausalLM)
  OUTDIR/megatron_mixtral/ TP=2 EP=2, 4 experts, qkv bias; config in
                           OUTDIR/megatron_mixtral.config.json (not beside)
  OUTDIR/megatron_*.orig.pt  the HF weights the shards were cut from
"""
import argparse
import json
import os
import random
import sys
from collections import OrderedDict

import numpy as np
import torch

ITER = 100


def hf_weights(c, seed):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g).bfloat16()  # noqa: E731
    H, nh, ng, hd, F, V = c["hidden"], c["nh"], c["ng"], c["hd"], c["ffn"], c["vocab"]
    w = OrderedDict()
    w["model.embed_tokens.weight"] = r(V, H)
    for L in range(c["layers"]):
        p = f"model.layers.{L}."
        w[p + "input_layernorm.weight"] = r(H)
        w[p + "self_attn.q_proj.weight"] = r(nh * hd, H)
        w[p + "self_attn.k_proj.weight"] = r(ng * hd, H)
        w[p + "self_attn.v_proj.weight"] = r(ng * hd, H)
        if c["qkv_bias"]:
            w[p + "self_attn.q_proj.bias"] = r(nh * hd)
            w[p + "self_attn.k_proj.bias"] = r(ng * hd)
            w[p + "self_attn.v_proj.bias"] = r(ng * hd)
        w[p + "self_attn.o_proj.weight"] = r(H, nh * hd)
        w[p + "post_attention_layernorm.weight"] = r(H)
        if c["experts"]:
            w[p + "block_sparse_moe.gate.weight"] = r(c["experts"], H)
            for e in range(c["experts"]):
                q = p + f"block_sparse_moe.experts.{e}."
                w[q + "w1.weight"] = r(F, H)
                w[q + "w2.weight"] = r(H, F)
                w[q + "w3.weight"] = r(F, H)
        else:
            w[p + "mlp.gate_proj.weight"] = r(F, H)
            w[p + "mlp.up_proj.weight"] = r(F, H)
            w[p + "mlp.down_proj.weight"] = r(H, F)
    w["model.norm.weight"] = r(H)
    w["lm_head.weight"] = r(V, H)
    return w


def pad_vocab(t, padded):
    return torch.cat([t, torch.zeros(padded - t.shape[0], t.shape[1], dtype=t.dtype)])


def fused_qkv(q, k, v, c, tp, t):
    # per query group: its nh/ng query heads, then its key head, its value head
    nh, ng, hd = c["nh"], c["ng"], c["hd"]
    qpg = nh // ng
    rows = []
    for grp in range(t * ng // tp, (t + 1) * ng // tp):
        rows += [q[grp * qpg * hd:(grp + 1) * qpg * hd], k[grp * hd:(grp + 1) * hd],
                 v[grp * hd:(grp + 1) * hd]]
    return torch.cat(rows).clone()


def rows(x, tp, t):
    n = x.shape[0] // tp
    return x[t * n:(t + 1) * n].clone()


def cols(x, tp, t):
    n = x.shape[1] // tp
    return x[:, t * n:(t + 1) * n].clone()


def fc1(gate, up, tp, t):
    return torch.cat([rows(gate, tp, t), rows(up, tp, t)]).clone()


def shard_model(w, c, tp, pp, ep, t, p, e):
    sd = OrderedDict()
    per = c["layers"] // pp
    if p == 0:
        sd["embedding.word_embeddings.weight"] = rows(pad_vocab(w["model.embed_tokens.weight"],
                                                                c["padded"]), tp, t)
    for i in range(per):
        L = p * per + i
        h, m = f"model.layers.{L}.", f"decoder.layers.{i}."
        sd[m + "self_attention.linear_proj.weight"] = cols(w[h + "self_attn.o_proj.weight"], tp, t)
        sd[m + "self_attention.linear_proj._extra_state"] = None
        sd[m + "self_attention.linear_qkv.layer_norm_weight"] = w[h + "input_layernorm.weight"].clone()
        sd[m + "self_attention.linear_qkv.weight"] = fused_qkv(
            w[h + "self_attn.q_proj.weight"], w[h + "self_attn.k_proj.weight"],
            w[h + "self_attn.v_proj.weight"], c, tp, t)
        if c["qkv_bias"]:
            sd[m + "self_attention.linear_qkv.bias"] = fused_qkv(
                w[h + "self_attn.q_proj.bias"], w[h + "self_attn.k_proj.bias"],
                w[h + "self_attn.v_proj.bias"], c, tp, t)
        sd[m + "self_attention.linear_qkv._extra_state"] = None
        if c["experts"]:
            sd[m + "pre_mlp_layernorm.weight"] = w[h + "post_attention_layernorm.weight"].clone()
            sd[m + "mlp.router.weight"] = w[h + "block_sparse_moe.gate.weight"].clone()
            local = c["experts"] // ep
            for j in range(local):
                x = h + f"block_sparse_moe.experts.{e * local + j}."
                q = m + f"mlp.experts.local_experts.{j}."
                sd[q + "linear_fc1.weight"] = fc1(w[x + "w1.weight"], w[x + "w3.weight"], tp, t)
                sd[q + "linear_fc2.weight"] = cols(w[x + "w2.weight"], tp, t)
        else:
            sd[m + "mlp.linear_fc1.layer_norm_weight"] = w[h + "post_attention_layernorm.weight"].clone()
            sd[m + "mlp.linear_fc1.weight"] = fc1(w[h + "mlp.gate_proj.weight"],
                                                  w[h + "mlp.up_proj.weight"], tp, t)
            sd[m + "mlp.linear_fc1._extra_state"] = None
            sd[m + "mlp.linear_fc2.weight"] = cols(w[h + "mlp.down_proj.weight"], tp, t)
    if p == pp - 1:
        sd["decoder.final_layernorm.weight"] = w["model.norm.weight"].clone()
        sd["output_layer.weight"] = rows(pad_vocab(w["lm_head.weight"], c["padded"]), tp, t)
    return sd


def megatron_args(c, tp, pp, ep):
    return argparse.Namespace(
        num_layers=c["layers"], hidden_size=c["hidden"], ffn_hidden_size=c["ffn"],
        num_attention_heads=c["nh"], group_query_attention=c["ng"] != c["nh"],
        num_query_groups=c["ng"], kv_channels=c["hd"], padded_vocab_size=c["padded"],
        make_vocab_size_divisible_by=16, swiglu=True, untie_embeddings_and_output_weights=True,
        add_qkv_bias=c["qkv_bias"], add_bias_linear=False, normalization="RMSNorm",
        position_embedding_type="rope", tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp, expert_model_parallel_size=ep,
        num_experts=c["experts"] or None, transformer_impl="transformer_engine",
        params_dtype=torch.bfloat16, bf16=True, ckpt_format="torch", iteration=ITER,
        tokenizer_type="HuggingFaceTokenizer", seed=1234)


def write(out, c, tp, pp, ep, seed, config_beside):
    w = hf_weights(c, seed)
    d = os.path.join(out, f"iter_{ITER:07d}")
    random.seed(0)
    np.random.seed(0)
    for t in range(tp):
        for p in range(pp):
            for e in range(ep):
                name = f"mp_rank_{t:02d}"
                if pp > 1:
                    name += f"_{p:03d}"
                if ep > 1:
                    name += f"_{e:03d}"
                os.makedirs(os.path.join(d, name), exist_ok=True)
                model = shard_model(w, c, tp, pp, ep, t, p, e)
                master = [v.float() for v in model.values() if v is not None]
                state = {
                    "args": megatron_args(c, tp, pp, ep), "checkpoint_version": 3.0,
                    "iteration": ITER, "model": model,
                    "optimizer": {"optimizer": {"state": {}, "param_groups": [
                        {"lr": 3e-4, "weight_decay": 0.1, "params": list(range(len(master)))}]},
                        "fp32_from_fp16_params": [master]},
                    "opt_param_scheduler": {"max_lr": 3e-4, "num_steps": ITER * 8},
                    "rng_state": [{"random_rng_state": random.getstate(),
                                   "np_rng_state": np.random.get_state(),
                                   "torch_rng_state": torch.get_rng_state(),
                                   "rng_tracker_states": {}}],
                    "num_floating_point_operations_so_far": 0}
                torch.save(state, os.path.join(d, name, "model_optim_rng.pt"))
    with open(os.path.join(out, "latest_checkpointed_iteration.txt"), "w") as f:
        f.write(str(ITER))
    cfg = {"architectures": [c["arch"]], "hidden_size": c["hidden"],
           "intermediate_size": c["ffn"], "num_attention_heads": c["nh"],
           "num_key_value_heads": c["ng"], "head_dim": c["hd"],
           "num_hidden_layers": c["layers"], "vocab_size": c["vocab"],
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5}
    if c["experts"]:
        cfg.update(num_local_experts=c["experts"], num_experts_per_tok=2)
    cfg_path = os.path.join(out, "config.json") if config_beside else out + ".config.json"
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2)
    torch.save(w, out + ".orig.pt")


if __name__ == "__main__":
    o = sys.argv[1]
    llama = dict(arch="LlamaForCausalLM", hidden=16, nh=4, ng=2, hd=4, ffn=24, layers=4,
                 vocab=50, padded=64, qkv_bias=False, experts=0)
    write(os.path.join(o, "megatron_llama"), llama, 2, 2, 1, 5, True)
    mixtral = dict(arch="MixtralForCausalLM", hidden=16, nh=4, ng=2, hd=4, ffn=8, layers=2,
                   vocab=40, padded=64, qkv_bias=True, experts=4)
    write(os.path.join(o, "megatron_mixtral"), mixtral, 2, 1, 2, 6, False)
