#!/usr/bin/python3
"""Multimodal-layout variants of ../shared/convert-ref-new directories, the
checkpoint layouts the 2026 converter takes a text model from:

    gen_mm_variants.py SHARED/convert-ref-new/dirs OUT_DIR

  gemma3-mm-tiny     Gemma3ForConditionalGeneration (transformers <= 4.51 names:
                     language_model.model.*, vision_tower.*, multi_modal_projector.*)
  mistral3-mm-tiny   Mistral3ForConditionalGeneration, text model_type "mistral"
                     (Mistral Small 3.1: the converter writes arch llama), names of
                     transformers >= 4.52 (model.language_model.*, model.vision_tower.*)
  ministral3-mm-tiny Mistral3ForConditionalGeneration, text model_type "ministral3"
  llama4-mm-tiny     Llama4ForConditionalGeneration (language_model.model.*,
                     vision_model.*, multi_modal_projector.linear_1)

Config: the text model's config.json becomes text_config under a top level of the
multimodal class; a tiny vision_config. Weights: the text tensors renamed, bytes as
they are, plus small F32 vision tensors (values from a fixed formula), written in
safetensors' layout (header padded to 8, data in key order). Standard library only."""
import json, os, shutil, struct, sys

def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        data = f.read()
    meta = hdr.pop("__metadata__", None)
    return meta, {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in hdr.items()}

def write_st(path, tensors):
    hdr, off, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for k in sorted(tensors):
        dt, shape, b = tensors[k]
        hdr[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

def f32(shape, seed):
    n = 1
    for d in shape:
        n *= d
    return ("F32", shape, struct.pack("<%df" % n, *[((i * 37 + seed) % 101 - 50) / 1000.0 for i in range(n)]))

def variant(src, out, cls, mtype, rename, vision, text_type=None, extra_cfg=None):
    shutil.copytree(src, out)
    cfg = json.load(open(os.path.join(src, "config.json")))
    text = {k: v for k, v in cfg.items() if k not in ("architectures",)}
    if text_type:
        text["model_type"] = text_type
    top = {"architectures": [cls], "model_type": mtype, "text_config": text,
           "vision_config": {"hidden_size": 8, "num_hidden_layers": 1, "model_type": mtype + "_vision"}}
    top.update(extra_cfg or {})
    json.dump(top, open(os.path.join(out, "config.json"), "w"), indent=2, sort_keys=True)
    _, t = read_st(os.path.join(src, "model.safetensors"))
    t = {rename(k): v for k, v in t.items()}
    for i, (k, shape) in enumerate(vision):
        t[k] = f32(shape, i)
    write_st(os.path.join(out, "model.safetensors"), t)

def main():
    src, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    lm_old = lambda k: "language_model." + k          # language_model.model.*, language_model.lm_head
    lm_new = lambda k: k.replace("model.", "model.language_model.", 1) if k.startswith("model.") else k
    variant(os.path.join(src, "gemma3-tiny"), os.path.join(out, "gemma3-mm-tiny"), "Gemma3ForConditionalGeneration",
            "gemma3", lm_old, [("vision_tower.vision_model.embeddings.patch_embedding.weight", [8, 3, 2, 2]),
                               ("multi_modal_projector.mm_input_projection_weight", [8, 64])], "gemma3_text")
    for name, tt in (("mistral3-mm-tiny", "mistral"), ("ministral3-mm-tiny", "ministral3")):
        variant(os.path.join(src, "ministral3-tiny"), os.path.join(out, name), "Mistral3ForConditionalGeneration",
                "mistral3", lm_new, [("model.vision_tower.patch_conv.weight", [8, 3, 2, 2]),
                                     ("model.multi_modal_projector.linear_1.weight", [64, 8])], tt)
    variant(os.path.join(src, "llama4-tiny"), os.path.join(out, "llama4-mm-tiny"), "Llama4ForConditionalGeneration",
            "llama4", lm_old, [("vision_model.patch_embedding.linear.weight", [8, 12]),
                               ("multi_modal_projector.linear_1.weight", [64, 8])], "llama4_text")

if __name__ == "__main__":
    main()
