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

  ../scan/dcp_overlap/.metadata
                          dcp113's .metadata with 100 more storage_data
                          entries, each slice 0..811-i of __0_0.distcp: the
                          scan of every slice would be quadratic; past the
                          file's size (+ 64 KiB) the rest is left: unknown
  megatron_hidden_huge.pt megatron/megatron_llama's rank (0, 0) file with
                          args.hidden_size 2^62 and no ffn_hidden_size: the
                          reader's 4 x hidden_size overflowed (UBSan);
                          now every size of args is 1..2^31
  ../scan/dcp_nested/     dcp113/dcp whose "step" item (BytesStorageMetadata,
                          which load_state_dict torch.load's) is a slice of
                          nested.distcp: a torch.save archive (its pickle
                          calls builtins.open('marker', 'w')) inside the
                          bytes of a uint8 tensor, 64 bytes in, 70 KB of
                          zeros after (its end record out of a zip reader's
                          reach from the file's end). Each file scanned
                          safe; torch 1.13's load_state_dict runs the call
                          (--run shows it, in a temporary folder)

usage: python3 gen_hostile.py [--run]   (from this folder; torch 1.13)"""
import copy
import dataclasses
import io
import os
import pickle
import shutil
import sys
import tempfile

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


class Marker:  # pickled as builtins.open('marker', 'w'), nothing else
    def __reduce__(self):
        return (open, ("marker", "w"))


def nested():
    out = "../scan/dcp_nested"  # a scan fixture (tests/data/scan/manifest.json)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree("dcp113/dcp", out)
    os.remove(os.path.join(out, "__0_4.distcp"))  # the "step" item's own file
    inner = io.BytesIO()
    torch.save({"step": Marker()}, inner)
    inner = inner.getvalue()
    data = bytes(64) + inner + bytes(70000)
    outer = io.BytesIO()
    torch.save(torch.frombuffer(bytearray(data), dtype=torch.uint8), outer)
    outer = outer.getvalue()
    at = outer.find(inner)
    with open(os.path.join(out, "nested.distcp"), "wb") as f:
        f.write(outer)
    with open(os.path.join(out, ".metadata"), "rb") as f:
        md = pickle.load(f)
    for k, v in md.storage_data.items():
        if k.fqn == "step":
            v.relative_path, v.offset, v.length = "nested.distcp", at, len(inner)
    with open(os.path.join(out, ".metadata"), "wb") as f:
        pickle.dump(md, f)


def megatron_hidden_huge():
    sd = torch.load("megatron/megatron_llama/iter_0000100/mp_rank_00_000/model_optim_rng.pt")
    sd["args"].hidden_size = 2**62
    sd["args"].ffn_hidden_size = None
    torch.save(sd, "hostile/megatron_hidden_huge.pt")


def overlap():
    out = "../scan/dcp_overlap"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree("dcp113/dcp", out)
    with open(os.path.join(out, ".metadata"), "rb") as f:
        md = pickle.load(f)
    info = type(next(iter(md.storage_data.values())))
    for i in range(100):
        md.storage_data[MetadataIndex("x%d" % i, None)] = info("__0_0.distcp", 0, 811 - i)
    with open(os.path.join(out, ".metadata"), "wb") as f:
        pickle.dump(md, f)


nested()
overlap()
megatron_hidden_huge()
if "--run" in sys.argv:  # torch's own loader, in a throwaway folder
    import torch.distributed._shard.checkpoint as dcp
    ckpt = os.path.abspath("../scan/dcp_nested")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        sd = {"step": 0}
        dcp.load_state_dict(sd, dcp.FileSystemReader(ckpt), no_dist=True)
        print("marker created by torch's load_state_dict:", os.path.exists("marker"))
