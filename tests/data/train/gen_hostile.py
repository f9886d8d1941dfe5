"""Hostile .metadata files for tests/test_train.c (issue: red team of the
training readers). Each is torch 1.13's own .metadata of dcp113/dcp,
unpickled with torch's classes, changed as below and pickled back; the test
copies dcp113/dcp and puts one of them in place of its .metadata.

  dcp_huge_off.metadata   the second chunk of down_proj ([4, 9], split on
                          dimension 1) placed at column 2^63 - 2: the
                          reader's off + size wrapped around and the
                          gather wrote outside the tensor's buffer (heap
                          corruption); now "reaches outside the tensor"
  dcp_row_shift.metadata  embed_tokens' row chunks moved 3 rows down (rows
                          3..10 of a 7-row tensor): chunks split on rows
                          were streamed without looking at their offsets

usage: python3 gen_hostile.py   (from this folder; torch 1.13)"""
import copy
import dataclasses
import os
import pickle

_get_field = dataclasses._get_field


def _get_field_shim(cls, a_name, a_type, *rest):  # as gen_dcp.py (Python 3.11)
    d = cls.__dict__.get(a_name, dataclasses.MISSING)
    if isinstance(d, dataclasses.Field):
        d = d.default
    if d is not dataclasses.MISSING and type(d).__hash__ is None:
        setattr(cls, a_name, dataclasses.field(default_factory=lambda v=d: copy.deepcopy(v)))
    return _get_field(cls, a_name, a_type, *rest)


dataclasses._get_field = _get_field_shim

import torch  # noqa: E402
from torch.distributed._shard.checkpoint.metadata import MetadataIndex  # noqa: E402


def move_chunk(md, fqn, i, new_offsets):
    c = md.state_dict_metadata[fqn].chunks[i]
    info = md.storage_data.pop(MetadataIndex(fqn, c.offsets))
    c.offsets = torch.Size(new_offsets)
    md.storage_data[MetadataIndex(fqn, c.offsets)] = info


def huge_off(md):
    move_chunk(md, "model.layers.0.mlp.down_proj.weight", 1, [0, 2**63 - 2])


def row_shift(md):
    for i, c in enumerate(list(md.state_dict_metadata["model.embed_tokens.weight"].chunks)):
        move_chunk(md, "model.embed_tokens.weight", i, [c.offsets[0] + 3, 0])


for name, change in [("dcp_huge_off", huge_off), ("dcp_row_shift", row_shift)]:
    with open("dcp113/dcp/.metadata", "rb") as f:
        md = pickle.load(f)
    change(md)
    with open(os.path.join("hostile", name + ".metadata"), "wb") as f:
        pickle.dump(md, f)
