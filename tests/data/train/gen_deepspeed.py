"""Writes small DeepSpeed checkpoints laid out as DeepSpeed writes them
(microsoft/DeepSpeed 38327e07f6cd: runtime/engine.py _save_checkpoint and
_save_zero_checkpoint, runtime/zero/stage_1_and_2.py state_dict with its
flatten_dense_tensors_aligned padding and groups_padding, runtime/zero/
stage3.py _rigid_state_dict with per-parameter partitions), each as
torch.save(state, path) as TorchCheckpointEngine.save does.

usage: python3 gen_deepspeed.py OUTDIR [--bench BYTES]
  OUTDIR/zero{1,2,3}/latest + global_step10/...   (world size 3, bf16 module
  states, fp32 master weights, a frozen parameter in zero2/zero3, tied
  lm_head.weight, a buffer), OUTDIR/zero0/ (no ZeRO: the fp32 module).
  --bench BYTES: only OUTDIR/bench/, a ZeRO-2 checkpoint of world size 4
  whose fp32 partitions hold about BYTES bytes.
  --from-hf DIR: only OUTDIR/zero3-hf/, ZeRO-3 (world size 2) whose fp32
  master weights are DIR/model.safetensors' (F16/BF16/F32) tensors.
"""
import os
import sys
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ds_stubs  # noqa: E402  (the DeepSpeed classes the state pickles)

TAG = "global_step10"


def model_spec(frozen):
    # (name, shape, group, trainable); group 0 decays, group 1 (norms) not
    return [("model.embed_tokens.weight", (11, 6), 0, True),
            ("model.layers.0.self_attn.q_proj.weight", (6, 6), 0, True),
            ("model.layers.0.self_attn.k_proj.weight", (3, 6), 0, not frozen),
            ("model.layers.0.mlp.up_proj.weight", (7, 6), 0, True),
            ("model.layers.0.input_layernorm.weight", (6,), 1, True),
            ("model.norm.weight", (5,), 1, True)]


TIED = {"lm_head.weight": "model.embed_tokens.weight"}  # not stored -> holder
BUFFERS = {"model.rotary.inv_freq": torch.tensor([1.0, 0.1, 0.01])}


def masters(spec, seed):
    g = torch.Generator().manual_seed(seed)
    return OrderedDict((n, torch.randn(s, generator=g)) for n, s, _, _ in spec)



def module_state(spec, master, dtype, placeholder=False):
    sd = OrderedDict()
    for n, s, _, _ in spec:
        sd[n] = torch.empty(0, dtype=dtype) if placeholder else master[n].to(dtype)
        if n == "model.layers.0.self_attn.q_proj.weight":
            for k, v in BUFFERS.items():
                sd[k] = v.to(dtype)
    for k, holder in TIED.items():
        sd[k] = sd[holder]
    return sd


def common_state(spec, stage, ws, param_shapes, frozen_shapes, frozen_frags, module):
    cfg = {"train_batch_size": 8 * ws, "bf16": {"enabled": True},
           "zero_optimization": {"stage": stage}}
    return dict(module=module, buffer_names=list(BUFFERS), optimizer=None,
                param_shapes=param_shapes, frozen_param_shapes=frozen_shapes,
                shared_params=dict(TIED) if stage else None,
                frozen_param_fragments=frozen_frags,
                lr_scheduler={"last_epoch": 10, "_step_count": 11, "base_lrs": [1e-3, 1e-3]},
                data_sampler=None, random_ltd=None, sparse_tensor_module_names=set(),
                skipped_steps=0, global_steps=10, global_samples=80 * ws, dp_world_size=ws,
                mp_world_size=1, ds_config=cfg, ds_version="0.16.4")  # engine.py: self.config, the dict given to initialize


def groups_of(spec):
    out = [[], []]
    for n, s, g, trainable in spec:
        if trainable:
            out[g].append((n, s))
    return out


def param_mapping(names, master, left, ps):
    """stage_1_and_2.py _create_param_mapping: each parameter with a fragment
    in this rank's partition [left, left + ps) of the flat group, as
    tensor_fragment.py get_hp_fragment_address gives it."""
    out, at = OrderedDict(), 0
    for n in names:
        lo, hi = max(at, left), min(at + master[n].numel(), left + ps)
        if lo < hi:
            out[n] = ds_stubs.fragment_address(start=lo - left, numel=hi - lo)
        at += master[n].numel()
    return out


def adam_state(parts):
    return {"state": {i: {"step": torch.tensor(10.0), "exp_avg": torch.zeros_like(p),
                          "exp_avg_sq": torch.zeros_like(p)} for i, p in enumerate(parts)},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                              "weight_decay": 0.01 if i == 0 else 0.0, "amsgrad": False,
                              "params": [i]} for i in range(len(parts))]}


def write_zero12(out, stage, ws, frozen, seed, spec=None, moments=True):
    spec = spec or model_spec(frozen)
    master = masters(spec, seed)
    d = os.path.join(out, TAG)
    os.makedirs(d, exist_ok=True)
    groups = groups_of(spec)
    param_shapes = [OrderedDict((n, torch.Size(s)) for n, s in grp) for grp in groups]
    fz = [(n, s) for n, s, _, t in spec if not t]
    save_frozen = stage >= 2  # zero_optimization_partition_gradients()
    frozen_shapes = OrderedDict((n, torch.Size(s)) for n, s in fz) if save_frozen else None
    frozen_frags = OrderedDict((n, master[n].bfloat16()) for n, _ in fz) if save_frozen else None
    module = module_state(spec, master, torch.bfloat16)
    torch.save(common_state(spec, stage, ws, param_shapes, frozen_shapes, frozen_frags, module),
               os.path.join(d, "mp_rank_00_model_states.pt"))
    align = 2 * ws  # nccl_start_alignment_factor * world size
    flats = []
    for grp in groups:
        flat = torch.cat([master[n].flatten() for n, _ in grp])
        pad = (align - flat.numel() % align) % align
        flats.append((flat.numel(), torch.cat([flat, torch.zeros(pad)])))
    grp_names = [[n for n, _ in grp] for grp in groups]
    for r in range(ws):
        parts, paddings, mappings = [], [], []
        for numel, flat in flats:
            ps = flat.numel() // ws
            left = r * ps
            padding = ps if numel <= left else left + ps - numel if numel < left + ps else 0
            parts.append(flat[left:left + ps - padding].clone())
            paddings.append(padding)
            mappings.append(param_mapping(grp_names[len(mappings)], master, left, ps))
        # CreateLossScaler (runtime/fp16/loss_scaler.py): dynamic for fp16, static for bf16
        scaler = (ds_stubs.DynamicLossScaler(init_scale=65536, dtype=torch.float16) if stage == 1
                  else ds_stubs.LossScaler(1.0))
        osd = {"loss_scaler": scaler, "dynamic_loss_scale": stage == 1,
               "overflow": False, "clip_grad": 1.0,
               "base_optimizer_state": adam_state(parts if moments else []),
               "single_partition_of_fp32_groups": parts,
               "zero_stage": ds_stubs.ZeroStageEnum(stage), "group_paddings": paddings,
               "partition_count": [ws] * len(parts), "ds_version": "0.16.4",
               "param_slice_mappings": mappings}
        torch.save({"optimizer_state_dict": osd, "ds_config": None, "ds_version": "0.16.4"},
                   os.path.join(d, f"bf16_zero_pp_rank_{r}_mp_rank_00_optim_states.pt"))
    with open(os.path.join(out, "latest"), "w") as f:
        f.write(TAG)


def partition3(t, ws, r):
    flat = t.flatten()
    ps = -(-flat.numel() // ws)
    flat = torch.cat([flat, torch.zeros(ps * ws - flat.numel(), dtype=flat.dtype)])
    return flat[r * ps:(r + 1) * ps].clone()


def read_safetensors(path):
    import json
    import struct
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    hdr = json.loads(b[8:8 + n])
    dt = {"F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32}
    out = OrderedDict()
    for k, v in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0] if kv[0] != "__metadata__" else -1):
        if k == "__metadata__":
            continue
        a, z = v["data_offsets"]
        t = torch.frombuffer(bytearray(b[8 + n + a:8 + n + z]), dtype=dt[v["dtype"]])
        out[k] = t.reshape(v["shape"]).float()
    return out


def write_zero3(out, ws, frozen, seed, hf=None):
    spec = model_spec(frozen)
    master = masters(spec, seed)
    if hf is not None:
        master = hf
        spec = [(n, tuple(t.shape), 1 if t.dim() == 1 else 0, True) for n, t in hf.items()]
    d = os.path.join(out, TAG)
    os.makedirs(d, exist_ok=True)
    groups = groups_of(spec)
    param_shapes = [OrderedDict((n, torch.Size(s)) for n, s in grp) for grp in groups]
    fz = [(n, s) for n, s, _, t in spec if not t]
    for r in range(ws):
        frozen_shapes = OrderedDict((n, torch.Size(s)) for n, s in fz)
        frozen_frags = OrderedDict((n, partition3(master[n].bfloat16(), ws, r)) for n, _ in fz)
        module = module_state(spec, master, torch.bfloat16, placeholder=True)
        if hf is not None:  # no buffers, no tied weights in this model
            module = OrderedDict((n, torch.empty(0, dtype=torch.bfloat16)) for n in hf)
        else:
            for k, v in BUFFERS.items():
                module[k] = v.bfloat16()
        state = common_state(spec, 3, ws, param_shapes, frozen_shapes, frozen_frags, module)
        if hf is not None:
            state["shared_params"], state["buffer_names"] = {}, []
        torch.save(state, os.path.join(d, f"zero_pp_rank_{r}_mp_rank_00_model_states.pt"))
        flats = [torch.cat([partition3(master[n], ws, r) for n, _ in grp]) for grp in groups]
        osd = {"zero_stage": ds_stubs.ZeroStageEnum(3), "loss_scaler": ds_stubs.LossScaler(1.0),
               "dynamic_loss_scale": True, "overflow": False, "partition_count": ws,
               "optimizer_state_dict": adam_state(flats if hf is None else []),
               "fp32_flat_groups": flats}
        torch.save({"optimizer_state_dict": osd, "ds_config": None, "ds_version": "0.16.4"},
                   os.path.join(d, f"bf16_zero_pp_rank_{r}_mp_rank_00_optim_states.pt"))
    with open(os.path.join(out, "latest"), "w") as f:
        f.write(TAG)


def write_zero0(out, seed):
    spec = model_spec(False)
    master = masters(spec, seed)
    d = os.path.join(out, TAG)
    os.makedirs(d, exist_ok=True)
    module = module_state(spec, master, torch.float32)
    st = common_state(spec, 0, 1, None, None, None, module)
    st["optimizer"] = adam_state([p for n, p in master.items()])
    torch.save(st, os.path.join(d, "mp_rank_00_model_states.pt"))
    with open(os.path.join(out, "latest"), "w") as f:
        f.write(TAG)


def bench_spec(nbytes):
    # llama-like blocks of 1024-wide matrices until the fp32 total reaches nbytes
    spec, n, layer = [("model.embed_tokens.weight", (4099, 1024), 0, True)], 4099 * 1024, 0
    while n * 4 < nbytes:
        for k, s in [("self_attn.q_proj.weight", (1024, 1024)), ("self_attn.o_proj.weight", (1024, 1024)),
                     ("mlp.up_proj.weight", (2753, 1024)), ("mlp.down_proj.weight", (1024, 2753)),
                     ("input_layernorm.weight", (1024,))]:
            spec.append((f"model.layers.{layer}.{k}", s, 1 if len(s) == 1 else 0, True))
            n += s[0] * (s[1] if len(s) > 1 else 1)
        layer += 1
    return spec


if __name__ == "__main__":
    out = sys.argv[1]
    if len(sys.argv) > 3 and sys.argv[2] == "--from-hf":
        hf = read_safetensors(os.path.join(sys.argv[3], "model.safetensors"))
        write_zero3(os.path.join(out, "zero3-hf"), 2, False, 0, hf)
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[2] == "--bench":
        # no Adam moments: they would triple the disk the bench takes, and the
        # merge never reads them
        write_zero12(os.path.join(out, "bench"), 2, 4, False, 7, bench_spec(int(sys.argv[3])),
                     moments=False)
        sys.exit(0)
    write_zero12(os.path.join(out, "zero1"), 1, 3, False, 1)
    write_zero12(os.path.join(out, "zero2"), 2, 3, True, 2)
    write_zero3(os.path.join(out, "zero3"), 3, True, 3)
    write_zero0(os.path.join(out, "zero0"), 4)
