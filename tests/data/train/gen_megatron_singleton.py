"""Variants of megatron/megatron_dist in Megatron-Core's singleton_local_shards
layout, which mfmt refuses (test_train.c, test_megatron_singleton):

- megatron_dist.singleton.common.pt: common.pt with the content_metadata
  Megatron-Core stores beside the args (training.py
  `_build_sharded_state_dict_metadata`), singleton_local_shards True;
- megatron_dist.singleton.metadata: the DCP .metadata with the SwiGLU fc1
  key renamed to its singleton form, KEY_w (mlp.py
  apply_swiglu_sharded_factory: KEY_w and KEY_v, each over TP shards), and
  no content_metadata needed to tell.

    python3 gen_megatron_singleton.py   (Debian's python3, torch 1.13)
"""
import dataclasses
import os
import pickle

import gen_megatron_dist  # noqa: F401,E402 (its dataclasses shim: torch 1.13 under Python 3.11)
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "megatron", "megatron_dist", "iter_0000100")
OUT = os.path.join(HERE, "megatron")

common = torch.load(os.path.join(SRC, "common.pt"))
common["content_metadata"] = {
    "distrib_optim_sharding_type": "fully_reshardable",
    "singleton_local_shards": True,
    "chained_optim_avoid_prefix": True,
}
torch.save(common, os.path.join(OUT, "megatron_dist.singleton.common.pt"))

OLD = "decoder.layers.mlp.linear_fc1.weight"
with open(os.path.join(SRC, ".metadata"), "rb") as f:
    meta = pickle.load(f)
sdm = meta.state_dict_metadata
sdm[OLD + "_w"] = sdm.pop(OLD)
meta.storage_data = {
    (dataclasses.replace(k, fqn=OLD + "_w") if k.fqn == OLD else k): v
    for k, v in meta.storage_data.items()
}
with open(os.path.join(OUT, "megatron_dist.singleton.metadata"), "wb") as f:
    pickle.dump(meta, f)
