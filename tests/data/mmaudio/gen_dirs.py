#!/usr/bin/python3
"""Tiny Hugging Face directories of the audio encoders llama.cpp's converter
(ecbcb7ea, 2026-02-27) writes as an mmproj GGUF with --mmproj:

    gen_dirs.py OUT_DIR

  qwen2audio-tiny    Qwen2AudioForConditionalGeneration (WhisperEncoderModel,
                     "qwen2a"): audio_tower.* (a Whisper encoder: conv1, conv2,
                     learned positions, pre-norm blocks, k_proj without bias),
                     multi_modal_projector.linear; BF16
  ultravox-tiny      UltravoxModel ("ultravox"): the same encoder, the stacked
                     SwiGLU projector (ln_pre, linear_1, ln_mid, linear_2),
                     stack_factor 2; F16
  voxtral-tiny       VoxtralForConditionalGeneration ("voxtral"): encoder config
                     in hidden_size/intermediate_size names, projector
                     linear_1 [text, 4 * width], linear_2; BF16
  audioflamingo3-tiny AudioFlamingo3ForConditionalGeneration ("musicflamingo"):
                     projector with biases; F32
  glmasr-tiny        GlmasrModel ("glma"): whisper_config / lm_config,
                     audio_encoder.whisper.*, layer_norm, adapting.0/2, an
                     unused proj, audio_bos_eos_token [2, text]; BF16
  qwen25omni-tiny    Qwen2_5OmniModel ("qwen2.5o"): thinker.visual.* (the
                     Qwen2.5-VL tower) and thinker.audio_tower.* (no stored
                     positions: the converter makes sinusoids), ln_post, proj,
                     audio_bos_eos_token; talker.* / token2wav.* to skip; BF16
  lfm2audio-tiny     Lfm2AudioForConditionalGeneration ("lfm2a", ConformerAudioModel):
                     a FastConformer (conformer.pre_encode.conv.{0,2,3,5,6} +
                     out, 7 layers of macaron FFNs, relative-position attention,
                     a conv module with BatchNorm the converter folds), the
                     audio_adapter MLP, audio_embedding.*, and lfm.* /
                     depthformer.* / audio_loss_weight to skip; BF16

Each holds a small text embedding the converter must skip. Values are
torch.randn with a fixed seed per tensor name (crc32), written in
safetensors' layout (8-aligned header, names sorted) by this script.
Sizes: audio width 32, 3 layers (gguf-py maps conv{bid} below the block count: conv2 needs 3), 2 heads, FFN 64 (Voxtral's 128), 16 mel
bins, 64 positions; text width 64."""
import json, os, struct, sys, zlib

import torch

D, FF, HEADS, LAYERS, MEL, NPOS, TEXT = 32, 64, 2, 3, 16, 64, 64
DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


class Dir:
    def __init__(self, name):
        self.name, self.shapes, self.ints = name, {}, {}

    def add(self, key, shape, gain=False):
        self.shapes[key] = (list(shape), gain)

    def linear(self, key, n_out, n_in, bias=True):
        self.add(key + ".weight", [n_out, n_in])
        if bias:
            self.add(key + ".bias", [n_out])

    def norm(self, key, n, bias=True):
        self.add(key + ".weight", [n], gain=True)
        if bias:
            self.add(key + ".bias", [n])

    def values(self, key):
        shape, gain = self.shapes[key]
        g = torch.Generator().manual_seed(zlib.crc32(key.encode()))
        x = torch.randn(*shape, generator=g)
        return 1.0 + 0.1 * x if gain else 0.05 * x

    def save(self, out, dtype, config, files):
        d = os.path.join(out, self.name)
        os.makedirs(d, exist_ok=True)
        header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
        for key in sorted(list(self.shapes) + list(self.ints)):
            if key in self.ints:  # an int64 scalar (BatchNorm's num_batches_tracked)
                t, dt = torch.tensor(self.ints[key], dtype=torch.int64), "I64"
            else:
                t, dt = self.values(key).to(DT[dtype]).contiguous(), dtype
            raw = (t.view(torch.int16) if dt == "BF16" else t).numpy().tobytes()
            header[key] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
            blobs.append(raw)
            off += len(raw)
        h = json.dumps(header, separators=(",", ":")).encode()
        h += b" " * (-len(h) % 8)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
        for fname, obj in dict(files, **{"config.json": config}).items():
            with open(os.path.join(d, fname), "w") as f:
                json.dump(obj, f, indent=2, sort_keys=True)


def whisper_encoder(t, p, ff=FF, positions=True, final="layer_norm"):
    """transformers' WhisperEncoder / Qwen2AudioEncoder names under p"""
    t.add(p + "conv1.weight", [D, MEL, 3])
    t.add(p + "conv1.bias", [D])
    t.add(p + "conv2.weight", [D, D, 3])
    t.add(p + "conv2.bias", [D])
    if positions:
        t.add(p + "embed_positions.weight", [NPOS, D])
    for i in range(LAYERS):
        b = p + "layers.%d." % i
        for x in ("q", "k", "v", "out"):
            t.linear(b + "self_attn.%s_proj" % x, D, D, bias=x != "k")
        t.norm(b + "self_attn_layer_norm", D)
        t.linear(b + "fc1", ff, D)
        t.linear(b + "fc2", D, ff)
        t.norm(b + "final_layer_norm", D)
    t.norm(p + final, D)


def whisper_config(mtype, **extra):
    c = {"d_model": D, "encoder_attention_heads": HEADS, "encoder_ffn_dim": FF, "encoder_layers": LAYERS,
         "num_hidden_layers": LAYERS, "num_mel_bins": MEL, "max_source_positions": NPOS, "model_type": mtype,
         "activation_function": "gelu", "dropout": 0.0, "scale_embedding": False}
    c.update(extra)
    return c


def text_config(mtype):
    return {"hidden_size": TEXT, "intermediate_size": 128, "num_attention_heads": 2, "num_hidden_layers": 1,
            "num_key_value_heads": 2, "vocab_size": 32, "model_type": mtype, "rms_norm_eps": 1e-6}


WHISPER_PRE = {"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": MEL, "sampling_rate": 16000,
               "hop_length": 160, "n_fft": 400, "chunk_length": 30, "padding_value": 0.0,
               "return_attention_mask": True}


def qwen2audio(out):
    t = Dir("qwen2audio-tiny")
    t.add("language_model.model.embed_tokens.weight", [32, TEXT])
    whisper_encoder(t, "audio_tower.")
    t.linear("multi_modal_projector.linear", TEXT, D)
    cfg = {"architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
           "audio_token_index": 31, "audio_config": whisper_config("qwen2_audio_encoder"),
           "text_config": text_config("qwen2")}
    t.save(out, "BF16", cfg, {"preprocessor_config.json": WHISPER_PRE})


def ultravox(out):
    t = Dir("ultravox-tiny")
    whisper_encoder(t, "audio_tower.")
    t.norm("multi_modal_projector.ln_pre", 2 * D, bias=False)
    t.linear("multi_modal_projector.linear_1", 128, 2 * D, bias=False)
    t.norm("multi_modal_projector.ln_mid", 64, bias=False)
    t.linear("multi_modal_projector.linear_2", TEXT, 64, bias=False)
    cfg = {"architectures": ["UltravoxModel"], "model_type": "ultravox", "stack_factor": 2,
           "projector_act": "swiglu", "projector_ln_mid": True, "hidden_size": 4096,
           "audio_config": whisper_config("whisper"), "text_config": text_config("llama")}
    t.save(out, "F16", cfg, {"preprocessor_config.json": WHISPER_PRE})


def voxtral(out):
    t = Dir("voxtral-tiny")
    t.add("language_model.model.embed_tokens.weight", [32, TEXT])
    whisper_encoder(t, "audio_tower.", ff=4 * D)
    t.linear("multi_modal_projector.linear_1", TEXT, 4 * D, bias=False)
    t.linear("multi_modal_projector.linear_2", TEXT, TEXT, bias=False)
    ac = {"hidden_size": D, "intermediate_size": 4 * D, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
          "num_key_value_heads": HEADS, "head_dim": D // HEADS, "num_mel_bins": MEL, "max_source_positions": NPOS,
          "model_type": "voxtral_encoder", "activation_function": "gelu", "scale_embedding": False}
    cfg = {"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral", "audio_token_id": 31,
           "audio_config": ac, "text_config": text_config("llama"), "projector_hidden_act": "gelu"}
    t.save(out, "BF16", cfg, {"preprocessor_config.json": WHISPER_PRE})


def audioflamingo3(out):
    t = Dir("audioflamingo3-tiny")
    t.add("language_model.model.embed_tokens.weight", [32, TEXT])
    whisper_encoder(t, "audio_tower.")
    t.linear("multi_modal_projector.linear_1", TEXT, D)
    t.linear("multi_modal_projector.linear_2", TEXT, TEXT)
    cfg = {"architectures": ["AudioFlamingo3ForConditionalGeneration"], "model_type": "audioflamingo3",
           "audio_token_id": 31, "projector_hidden_act": "gelu", "projector_bias": True,
           "audio_config": whisper_config("audioflamingo3_encoder", layer_norm_eps=1e-5),
           "text_config": text_config("qwen2")}
    t.save(out, "F32", cfg, {"preprocessor_config.json": WHISPER_PRE})


def glmasr(out):
    t = Dir("glmasr-tiny")
    t.add("model.embed_tokens.weight", [32, TEXT])
    t.add("lm_head.weight", [32, TEXT])
    whisper_encoder(t, "audio_encoder.whisper.")
    t.norm("audio_encoder.layer_norm", D)
    t.linear("audio_encoder.proj", D, D)
    t.linear("audio_encoder.adapting.0", 128, 4 * D)
    t.linear("audio_encoder.adapting.2", TEXT, 128)
    t.add("audio_encoder.audio_bos_eos_token.weight", [2, TEXT])
    cfg = {"architectures": ["GlmasrModel"], "model_type": "glmasr", "merge_factor": 4,
           "whisper_config": whisper_config("whisper"), "lm_config": text_config("llama")}
    t.save(out, "BF16", cfg, {"preprocessor_config.json": WHISPER_PRE})


def qwen25omni(out):
    t = Dir("qwen25omni-tiny")
    t.add("thinker.model.embed_tokens.weight", [32, TEXT])
    t.add("talker.codec_head.weight", [8, TEXT])
    t.add("token2wav.code2wav_dit_model.proj.weight", [8, 8])
    whisper_encoder(t, "thinker.audio_tower.", positions=False, final="ln_post")
    t.linear("thinker.audio_tower.proj", TEXT, D)
    t.add("thinker.audio_tower.audio_bos_eos_token.weight", [2, TEXT])
    V, VFF = 32, 64
    t.add("thinker.visual.patch_embed.proj.weight", [V, 3, 2, 4, 4])
    for i in range(3):
        b = "thinker.visual.blocks.%d." % i
        t.norm(b + "norm1", V, bias=False)
        t.norm(b + "norm2", V, bias=False)
        t.linear(b + "attn.q", V, V)
        t.linear(b + "attn.k", V, V)
        t.linear(b + "attn.v", V, V)
        t.linear(b + "attn.proj", V, V)
        t.linear(b + "mlp.gate_proj", VFF, V)
        t.linear(b + "mlp.up_proj", VFF, V)
        t.linear(b + "mlp.down_proj", V, VFF)
    t.norm("thinker.visual.merger.ln_q", V, bias=False)
    t.linear("thinker.visual.merger.mlp.0", 4 * V, 4 * V)
    t.linear("thinker.visual.merger.mlp.2", TEXT, 4 * V)
    ac = whisper_config("qwen2_5_omni_audio_encoder", n_window=50, output_dim=TEXT)
    vc = {"depth": 3, "hidden_size": V, "intermediate_size": VFF, "num_heads": HEADS, "in_channels": 3,
          "out_hidden_size": TEXT, "patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2,
          "window_size": 16, "fullatt_block_indexes": [1], "hidden_act": "silu",
          "model_type": "qwen2_5_omni_vision_encoder"}
    thinker = {"audio_config": ac, "vision_config": vc, "text_config": text_config("qwen2_5_omni_text"),
               "model_type": "qwen2_5_omni_thinker", "audio_token_index": 30, "image_token_index": 31}
    cfg = {"architectures": ["Qwen2_5OmniModel"], "model_type": "qwen2_5_omni", "enable_audio_output": True,
           "thinker_config": thinker, "talker_config": {"model_type": "qwen2_5_omni_talker", "hidden_size": 16},
           "token2wav_config": {"model_type": "qwen2_5_omni_token2wav"}}
    pre = dict(WHISPER_PRE, image_processor_type="Qwen2VLImageProcessor", patch_size=4, merge_size=2,
               temporal_patch_size=2, min_pixels=256, max_pixels=4096,
               image_mean=[0.48145466, 0.4578275, 0.40821073], image_std=[0.26862954, 0.26130258, 0.27577711])
    t.save(out, "BF16", cfg, {"preprocessor_config.json": pre})


def lfm2audio(out, D=D, H=2, F=4 * D, name="lfm2audio-tiny"):
    """D, H, F: width, heads, FFN width (`gen_dirs.py --lfm2a-512 OUT` makes the runtime check's
    512-wide one: llama.cpp b10256's conformer graph fixes the width at 512; not committed)"""
    t = Dir(name)
    C, K, L, A = 8, 9, 7, 48   # subsampling channels, conv kernel, layers (conv.6 needs 7), adapter
    t.add("lfm.embed_tokens.weight", [32, TEXT])
    t.add("lfm.layers.0.feed_forward.w1.weight", [16, TEXT])
    t.add("depthformer.layers.0.weight", [8, 8])
    t.add("depth_linear.weight", [8, TEXT])
    t.add("audio_loss_weight", [4])
    p = "conformer.pre_encode."
    t.add(p + "conv.0.weight", [C, 1, 3, 3])
    t.add(p + "conv.0.bias", [C])
    for i, (o, k) in ((2, (1, 3)), (3, (C, 1)), (5, (1, 3)), (6, (C, 1))):
        t.add(p + "conv.%d.weight" % i, [C, o, k, k])
        t.add(p + "conv.%d.bias" % i, [C])
    t.linear(p + "out", D, C * (MEL // 8))
    for i in range(L):
        b = "conformer.layers.%d." % i
        for f in ("1", "2"):
            t.norm(b + "norm_feed_forward" + f, D)
            t.linear(b + "feed_forward%s.linear1" % f, F, D)
            t.linear(b + "feed_forward%s.linear2" % f, D, F)
        t.norm(b + "norm_self_att", D)
        for x in ("q", "k", "v", "out"):
            t.linear(b + "self_attn.linear_" + x, D, D)
        t.linear(b + "self_attn.linear_pos", D, D, bias=False)
        t.add(b + "self_attn.pos_bias_u", [H, D // H])
        t.add(b + "self_attn.pos_bias_v", [H, D // H])
        t.norm(b + "norm_conv", D)
        t.add(b + "conv.pointwise_conv1.weight", [2 * D, D, 1])
        t.add(b + "conv.pointwise_conv1.bias", [2 * D])
        t.add(b + "conv.depthwise_conv.weight", [D, 1, K])
        t.add(b + "conv.depthwise_conv.bias", [D])
        t.norm(b + "conv.batch_norm", D)
        t.add(b + "conv.batch_norm.running_mean", [D])
        t.add(b + "conv.batch_norm.running_var", [D], gain=True)  # positive, near 1
        t.ints[b + "conv.batch_norm.num_batches_tracked"] = 1000 + i  # int64, shape [] (BatchNorm1d)
        t.add(b + "conv.pointwise_conv2.weight", [D, D, 1])
        t.add(b + "conv.pointwise_conv2.bias", [D])
        t.norm(b + "norm_out", D)
    t.norm("audio_adapter.model.0", D)
    t.linear("audio_adapter.model.1", A, D)
    t.linear("audio_adapter.model.3", TEXT, A)
    t.add("audio_embedding.embedding.weight", [40, TEXT])
    t.norm("audio_embedding.embedding_norm", TEXT)
    t.linear("audio_embedding.to_logits", 40, TEXT)
    enc = {"feat_in": MEL, "n_layers": L, "d_model": D, "n_heads": H, "ff_expansion_factor": F // D,
           "conv_kernel_size": K, "subsampling": "dw_striding", "subsampling_factor": 8,
           "subsampling_conv_channels": C, "self_attention_model": "rel_pos", "pos_emb_max_len": 5000,
           "xscaling": False}
    lfm = dict(text_config("lfm2"), layer_types=["conv"], conv_L_cache=3, norm_eps=1e-5)
    cfg = {"architectures": ["Lfm2AudioForConditionalGeneration"], "model_type": "lfm2_audio", "encoder": enc,
           "lfm": lfm, "adapter_hidden_dims": [A], "codebooks": 8, "audio_vocab_size": 40}
    t.save(out, "BF16", cfg, {})


def main():
    if sys.argv[1] == "--lfm2a-512":
        return lfm2audio(sys.argv[2], D=512, H=8, F=512, name="lfm2audio-512")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f in (qwen2audio, ultravox, voxtral, audioflamingo3, glmasr, qwen25omni, lfm2audio):
        f(out)


if __name__ == "__main__":
    main()
