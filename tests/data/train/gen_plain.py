"""Plain torch.save training checkpoints around a Hugging Face-named model,
as the trainers save them, and the bare state dict as the reference:
  lightning.ckpt  LightningModule with the model as self.model, compiled
                  (torch.compile's _orig_mod.), as Trainer.save_checkpoint
                  writes it: epoch, global_step, pytorch-lightning_version,
                  state_dict, loops, callbacks, optimizer_states,
                  lr_schedulers, hparams_name, hyper_parameters
  ddp_fsdp.pt     {"model": DDP(FSDP(model)).state_dict(), "optimizer": ...,
                  "scheduler": ..., "rng": torch.get_rng_state(), "step": 300}
                  (module. and _fsdp_wrapped_module. in the names)
  plain.ref.pt    the bare model's state dict
usage: python3 gen_plain.py OUTDIR"""
import os
import sys
from collections import OrderedDict

import torch

g = torch.Generator().manual_seed(9)
sd = OrderedDict()
sd["model.embed_tokens.weight"] = torch.randn(10, 4, generator=g)
sd["model.layers.0.self_attn.q_proj.weight"] = torch.randn(4, 4, generator=g)
sd["model.layers.0.mlp.up_proj.weight"] = torch.randn(6, 4, generator=g).bfloat16()
sd["model.norm.weight"] = torch.randn(4, generator=g)
sd["lm_head.weight"] = torch.randn(10, 4, generator=g)
out = sys.argv[1]
adam = {"state": {0: {"step": torch.tensor(300.0), "exp_avg": torch.zeros(10, 4),
                      "exp_avg_sq": torch.zeros(10, 4)}},
        "param_groups": [{"lr": 1e-3, "params": [0]}]}


def compiled(name):  # model.layers.0... -> model._orig_mod.layers.0...
    return name.replace("model.", "model._orig_mod.", 1) if name.startswith("model.") else name


lightning = {
    "epoch": 3, "global_step": 300, "pytorch-lightning_version": "2.4.0",
    "state_dict": OrderedDict(("model." + compiled(k), v) for k, v in sd.items()),
    "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 4}}}},
    "callbacks": {"ModelCheckpoint{'monitor': None}": {"best_model_score": None}},
    "optimizer_states": [adam], "lr_schedulers": [{"last_epoch": 300, "_step_count": 301}],
    "hparams_name": "kwargs", "hyper_parameters": {"lr": 1e-3}}
torch.save(lightning, os.path.join(out, "lightning.ckpt"))


def fsdp(name):  # module._fsdp_wrapped_module.model.layers.0._fsdp_wrapped_module.self_attn...
    parts = name.split(".")
    if parts[:2] == ["model", "layers"]:
        parts.insert(3, "_fsdp_wrapped_module")
    return "module._fsdp_wrapped_module." + ".".join(parts)


torch.save({"model": OrderedDict((fsdp(k), v) for k, v in sd.items()), "optimizer": adam,
            "scheduler": {"last_epoch": 300}, "rng": torch.get_rng_state(), "step": 300},
           os.path.join(out, "ddp_fsdp.pt"))
torch.save(sd, os.path.join(out, "plain.ref.pt"))
