#!/usr/bin/python3
"""Tiny Hugging Face directories of the families whose llama.cpp (c392e50)
converter path loads a remote-code tokenizer (Qwen v1, ChatGLM3), made for
references (README.md). Deterministic: numpy's seeded generator, float16
safetensors written by hand, tokenizer files in the families' own formats.

    /usr/bin/python3 make_dirs.py [--large] SHARED_DIR OUT_DIR

Default: the small directories (chatglm3-tiny: llama-tiny's SentencePiece
model from SHARED_DIR/corpus). --large: qwen-tiny, whose qwen.tiktoken must
hold 151643 ranks (QWenTokenizer asserts len(ranks) + 208 special tokens
== the encoding's size, the specials being fixed at 151643..151850), so
its vocabulary and embeddings have the real model's 151936 rows (about
15 MB; made at test time, not committed). Nothing here runs model code."""
import base64
import json
import os
import shutil
import struct
import sys

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].astype(np.float16))
        b = a.tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def bpe(ranks, token, max_rank):
    """tiktoken's byte-pair merge of one piece (lowest rank first), stopped at max_rank."""
    parts = [bytes([b]) for b in token]
    while True:
        best, best_rank = None, None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best_rank is None or r < best_rank):
                best, best_rank = i, r
        if best_rank is None or best_rank >= max_rank:
            return parts
        parts = parts[:best] + [parts[best] + parts[best + 1]] + parts[best + 2:]


def tiktoken_ranks(n, seed):
    """n ranks: the 256 bytes, then concatenations of two earlier tokens (up to
    10 bytes) that the ranks before them merge back into exactly those two
    parts, as a trained BPE's merges do."""
    rng = np.random.default_rng(seed)
    ranks = {bytes([b]): b for b in range(256)}
    toks = [bytes([b]) for b in range(256)]
    while len(ranks) < n:
        ia, ib = rng.integers(0, len(toks), 4096), rng.integers(0, len(toks), 4096)
        for a, b in zip(ia, ib):
            c = toks[a] + toks[b]
            if len(c) > 10 or c in ranks or len(bpe(ranks, c, len(ranks))) != 2:
                continue
            ranks[c] = len(ranks)
            toks.append(c)
            if len(ranks) == n:
                break
    return ranks


def qwen(shared, out, seed=31):
    """Qwen v1 (QWenLMHeadModel, Qwen-7B's layout): transformer.h.N.attn.c_attn
    (fused qkv with bias), mlp.w1/w2/c_proj, RMSNorm ln_1/ln_2/ln_f; qwen.tiktoken."""
    rng = np.random.default_rng(seed)
    h, ff, heads, layers, vocab = 32, 64, 4, 2, 151936
    cfg = {"architectures": ["QWenLMHeadModel"], "auto_map": {
               "AutoConfig": "configuration_qwen.QWenConfig", "AutoModelForCausalLM": "modeling_qwen.QWenLMHeadModel"},
           "attn_dropout_prob": 0.0, "bf16": False, "emb_dropout_prob": 0.0, "fp16": True, "fp32": False,
           "hidden_size": h, "initializer_range": 0.02, "intermediate_size": ff, "kv_channels": h // heads,
           "layer_norm_epsilon": 1e-06, "max_position_embeddings": 8192, "model_type": "qwen", "no_bias": True,
           "num_attention_heads": heads, "num_hidden_layers": layers, "onnx_safe": None, "rotary_emb_base": 10000,
           "rotary_pct": 1.0, "scale_attn_weights": True, "seq_length": 8192, "tie_word_embeddings": False,
           "tokenizer_class": "QWenTokenizer", "torch_dtype": "float16", "transformers_version": "4.32.0",
           "use_cache": True, "use_dynamic_ntk": True, "use_flash_attn": "auto", "use_logn_attn": True,
           "vocab_size": vocab}
    t = {"transformer.wte.weight": rng.standard_normal((vocab, h)),
         "transformer.ln_f.weight": 1 + 0.1 * rng.standard_normal(h),
         "lm_head.weight": rng.standard_normal((vocab, h))}
    for b in range(layers):
        p = f"transformer.h.{b}."
        t[p + "ln_1.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "attn.c_attn.weight"] = rng.standard_normal((3 * h, h))
        t[p + "attn.c_attn.bias"] = rng.standard_normal(3 * h)
        t[p + "attn.c_proj.weight"] = rng.standard_normal((h, h))
        t[p + "ln_2.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "mlp.w1.weight"] = rng.standard_normal((ff // 2, h))
        t[p + "mlp.w2.weight"] = rng.standard_normal((ff // 2, h))
        t[p + "mlp.c_proj.weight"] = rng.standard_normal((h, ff // 2))

    def files(shared, out):
        ranks = tiktoken_ranks(151643, seed)
        with open(os.path.join(out, "qwen.tiktoken"), "wb") as f:
            for tok, r in ranks.items():
                f.write(base64.b64encode(tok) + b" " + str(r).encode() + b"\n")
        write_json(os.path.join(out, "tokenizer_config.json"), {
            "auto_map": {"AutoTokenizer": ["tokenization_qwen.QWenTokenizer", None]},
            "model_max_length": 8192, "tokenizer_class": "QWenTokenizer"})
        write_json(os.path.join(out, "generation_config.json"), {
            "chat_format": "raw", "eos_token_id": 151643, "pad_token_id": 151643, "max_new_tokens": 512,
            "do_sample": True, "top_k": 0, "top_p": 0.8, "transformers_version": "4.31.0"})
        with open(os.path.join(out, "convref-tokpre.txt"), "w") as f:
            f.write("qwen2\n")
    return cfg, t, files


def chatglm_weights(rng, h, ff, hd, groups, layers, padded):
    """ChatGLMModel's tensors (transformer.embedding / encoder.layers.N / output_layer)."""
    t = {"transformer.embedding.word_embeddings.weight": rng.standard_normal((padded, h)),
         "transformer.rotary_pos_emb.inv_freq": rng.random(hd // 4),
         "transformer.encoder.final_layernorm.weight": 1 + 0.1 * rng.standard_normal(h),
         "transformer.output_layer.weight": rng.standard_normal((padded, h))}
    for b in range(layers):
        p = f"transformer.encoder.layers.{b}."
        t[p + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "self_attention.query_key_value.weight"] = rng.standard_normal((h + 2 * groups * hd, h))
        t[p + "self_attention.query_key_value.bias"] = rng.standard_normal(h + 2 * groups * hd)
        t[p + "self_attention.dense.weight"] = rng.standard_normal((h, h))
        t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "mlp.dense_h_to_4h.weight"] = rng.standard_normal((2 * ff, h))
        t[p + "mlp.dense_4h_to_h.weight"] = rng.standard_normal((h, ff))
    return t


def chatglm3(shared, out, seed=32):
    """ChatGLM3 (ChatGLMModel, chatglm3-6b's layout and _name_or_path):
    transformer.embedding.word_embeddings, encoder.layers.N.self_attention
    .query_key_value (multi-query groups, with bias), dense, mlp.dense_h_to_4h
    (gate and up fused) / dense_4h_to_h, RMSNorms, output_layer, the
    rotary_pos_emb.inv_freq buffer; SentencePiece tokenizer.model."""
    rng = np.random.default_rng(seed)
    h, ff, heads, groups, layers, padded = 32, 48, 4, 2, 2, 336
    hd = h // heads
    cfg = {"_name_or_path": "THUDM/chatglm3-6b", "model_type": "chatglm", "architectures": ["ChatGLMModel"],
           "auto_map": {"AutoConfig": "configuration_chatglm.ChatGLMConfig",
                        "AutoModel": "modeling_chatglm.ChatGLMForConditionalGeneration"},
           "add_bias_linear": False, "add_qkv_bias": True, "apply_query_key_layer_scaling": True,
           "apply_residual_connection_post_layernorm": False, "attention_dropout": 0.0,
           "attention_softmax_in_fp32": True, "bias_dropout_fusion": True, "ffn_hidden_size": ff,
           "fp32_residual_connection": False, "hidden_dropout": 0.0, "hidden_size": h, "kv_channels": hd,
           "layernorm_epsilon": 1e-05, "multi_query_attention": True, "multi_query_group_num": groups,
           "num_attention_heads": heads, "num_hidden_layers": layers, "num_layers": layers, "original_rope": True,
           "padded_vocab_size": padded, "post_layer_norm": True, "rmsnorm": True, "seq_length": 8192,
           "use_cache": True, "torch_dtype": "float16", "transformers_version": "4.30.2",
           "tie_word_embeddings": False, "eos_token_id": 2, "pad_token_id": 0}
    t = chatglm_weights(rng, h, ff, hd, groups, layers, padded)

    def files(shared, out):
        src = os.path.join(shared, "corpus", "hf-dir", "llama-tiny", "tokenizer.model")
        shutil.copyfile(src, os.path.join(out, "tokenizer.model"))
        write_json(os.path.join(out, "tokenizer_config.json"), {
            "auto_map": {"AutoTokenizer": ["tokenization_chatglm.ChatGLMTokenizer", None]},
            "do_lower_case": False, "name_or_path": "THUDM/chatglm3-6b", "remove_space": False,
            "tokenizer_class": "ChatGLMTokenizer",
            "chat_template": "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n"
                             " {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}"
                             "{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"})
    return cfg, t, files


GLM4_SPECIALS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
                 "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>",
                 "<|begin_of_video|>", "<|end_of_video|>"]
GLM4_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
              "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")

def glm4_tokenizer_config(out, base, **extra):
    """glm-4-9b-chat's tokenizer_config.json (its 14 specials from id base),
    with extra keys; and convref's pre-tokenizer hint."""
    cfg = {"added_tokens_decoder": {str(base + i): {"content": c, "lstrip": False, "normalized": False,
                                                    "rstrip": False, "single_word": False, "special": True}
                                    for i, c in enumerate(GLM4_SPECIALS)},
           "clean_up_tokenization_spaces": False, "do_lower_case": False, "eos_token": "<|endoftext|>",
           "model_max_length": 128000, "pad_token": "<|endoftext|>", "padding_side": "left",
           "remove_space": False,
           "chat_template": "[gMASK]<sop>{% for item in messages %}<|{{ item['role'] }}|>\n{{ item['content'] }}"
                            "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"}
    cfg.update(extra)
    write_json(os.path.join(out, "tokenizer_config.json"), cfg)
    with open(os.path.join(out, "convref-tokpre.txt"), "w") as f:
        f.write("chatglm-bpe\n")



def glm4(shared, out, seed=33):
    """GLM-4 (ChatGLMModel, glm-4-9b-chat's layout: _name_or_path not
    chatglm3's, rope_ratio, vocab_size = padded_vocab_size, a list
    eos_token_id) with its vocabulary as a fast tokenizer.json (byte-level
    BPE with GLM-4's split regex and its 14 special tokens after the
    vocabulary; qwen2-tiny's vocabulary and merges)."""
    cfg, t, _ = chatglm3(shared, out, seed)
    cfg["_name_or_path"] = "THUDM/glm-4-9b-chat"
    cfg["rope_ratio"] = 500
    cfg["seq_length"] = 131072
    cfg["layernorm_epsilon"] = 1.5625e-07
    cfg["eos_token_id"] = [317, 324, 326]
    cfg["pad_token_id"] = 317
    cfg["vocab_size"] = cfg["padded_vocab_size"]  # set_vocab reads hparams["vocab_size"] eagerly
    rng = np.random.default_rng(seed + 100)
    for name in list(t):
        t[name] = rng.standard_normal(t[name].shape) if "layernorm" not in name else t[name]

    def files(shared, out):
        src = os.path.join(shared, "corpus", "hf-dir", "qwen2-tiny", "tokenizer.json")
        with open(src, encoding="utf-8") as f:
            tj = json.load(f)
        base = len(tj["model"]["vocab"])
        tj["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": GLM4_REGEX}
        tj["added_tokens"] = [{"id": base + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                               "normalized": False, "special": True} for i, c in enumerate(GLM4_SPECIALS)]
        with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, indent=2, ensure_ascii=False)
            f.write("\n")
        glm4_tokenizer_config(out, base, tokenizer_class="PreTrainedTokenizerFast")
    return cfg, t, files


def glm4_tiktoken(shared, out, seed=35):
    """GLM-4 as glm-4-9b-chat ships it: the remote-code ChatGLM4Tokenizer
    (tokenizer_config.json's auto_map, no tokenizer.json) over a tiktoken
    tokenizer.model ("BASE64 RANK" lines) with the 14 special tokens after the
    ranks in added_tokens_decoder. The ranks are synthetic (300: the 256 bytes,
    concatenations of two earlier tokens that the earlier ranks merge back into
    exactly those two, and two tokens no pair of lower rank reaches, which
    the converter's bpe() leaves in 3 and 4 parts). One head of 128
    (head_dim 128): llama.cpp 53debe6 writes rope.dimension_count 64
    whatever the shape, c392e50 head_dim / 2, the same here."""
    rng = np.random.default_rng(seed)
    h, ff, heads, groups, layers, padded = 128, 64, 1, 1, 2, 336
    hd = h // heads
    cfg = chatglm3(shared, out)[0]  # chatglm3-6b's keys, then glm-4-9b-chat's values
    cfg.update({"_name_or_path": "THUDM/glm-4-9b-chat", "ffn_hidden_size": ff, "hidden_size": h, "kv_channels": hd,
                "layernorm_epsilon": 1.5625e-07, "multi_query_group_num": groups, "num_attention_heads": heads,
                "num_hidden_layers": layers, "num_layers": layers, "padded_vocab_size": padded,
                "vocab_size": padded, "rope_ratio": 500, "seq_length": 131072, "transformers_version": "4.44.0",
                "eos_token_id": [300, 307, 308], "pad_token_id": 300})
    cfg["auto_map"].update({"AutoModelForCausalLM": "modeling_chatglm.ChatGLMForConditionalGeneration",
                            "AutoModelForSeq2SeqLM": "modeling_chatglm.ChatGLMForConditionalGeneration",
                            "AutoModelForSequenceClassification": "modeling_chatglm.ChatGLMForSequenceClassification"})
    t = chatglm_weights(rng, h, ff, hd, groups, layers, padded)

    def files(shared, out):
        ranks = tiktoken_ranks(298, seed)
        for tok in (b"\xe4\xbd\xa0", b"\x00\x01\x02\x03"):  # no pair of them is a rank: 3 and 4 parts
            assert tok not in ranks and all(tok[i:i + 2] not in ranks for i in range(len(tok) - 1))
            ranks[tok] = len(ranks)
        with open(os.path.join(out, "tokenizer.model"), "wb") as f:
            for tok, r in ranks.items():
                f.write(base64.b64encode(tok) + b" " + str(r).encode() + b"\n")
        base = len(ranks)
        glm4_tokenizer_config(out, base, tokenizer_class="ChatGLM4Tokenizer",
                              additional_special_tokens=GLM4_SPECIALS[1:],
                              auto_map={"AutoTokenizer": ["tokenization_chatglm.ChatGLM4Tokenizer", None]})
    return cfg, t, files


def rwkv6qwen2(shared, out, seed=34):
    """RWKV6-Qwen2 (RWKV6Qwen2ForCausalLM, QRWKV6's layout): Qwen2's
    embeddings, MLP and norms with RWKV-6 time mixing in self_attn (LoRA
    token shift time_maa_w1 [h, 5 r] / w2 [5, r, h] in r k v w g order, decay
    LoRA, receptance/key/value q_proj/k_proj/v_proj with biases, grouped
    keys/values, gate, o_proj); Qwen2's tokenizer.json."""
    rng = np.random.default_rng(seed)
    h, ff, heads, kv, layers, vocab, mix, decay = 32, 64, 4, 2, 2, 320, 8, 16
    hd = h // heads
    cfg = {"architectures": ["RWKV6Qwen2ForCausalLM"], "model_type": "rwkv6qwen2", "hidden_size": h,
           "intermediate_size": ff, "num_attention_heads": heads, "num_key_value_heads": kv,
           "num_hidden_layers": layers, "rms_norm_eps": 1e-06, "vocab_size": vocab, "head_size": hd,
           "lora_rank_tokenshift": mix, "lora_rank_decay": decay, "max_position_embeddings": 4096,
           "rope_theta": 1000000.0, "tie_word_embeddings": False, "torch_dtype": "float16",
           "bos_token_id": 317, "eos_token_id": 317, "transformers_version": "4.45.0"}
    t = {"model.embed_tokens.weight": rng.standard_normal((vocab, h)),
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(h),
         "lm_head.weight": rng.standard_normal((vocab, h))}
    for b in range(layers):
        p = f"model.layers.{b}."
        t[p + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
        t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(h)
        a = p + "self_attn."
        for n in ("time_maa_x", "time_maa_w", "time_maa_k", "time_maa_v", "time_maa_r", "time_maa_g", "time_decay"):
            t[a + n] = rng.random((1, 1, h))
        t[a + "time_maa_w1"] = rng.standard_normal((h, 5 * mix))
        t[a + "time_maa_w2"] = rng.standard_normal((5, mix, h))
        t[a + "time_decay_w1"] = rng.standard_normal((h, decay))
        t[a + "time_decay_w2"] = rng.standard_normal((decay, h))
        t[a + "q_proj.weight"] = rng.standard_normal((h, h))
        t[a + "q_proj.bias"] = rng.standard_normal(h)
        t[a + "k_proj.weight"] = rng.standard_normal((kv * hd, h))
        t[a + "k_proj.bias"] = rng.standard_normal(kv * hd)
        t[a + "v_proj.weight"] = rng.standard_normal((kv * hd, h))
        t[a + "v_proj.bias"] = rng.standard_normal(kv * hd)
        t[a + "gate.weight"] = rng.standard_normal((h, h))
        t[a + "o_proj.weight"] = rng.standard_normal((h, h))
        t[p + "mlp.gate_proj.weight"] = rng.standard_normal((ff, h))
        t[p + "mlp.up_proj.weight"] = rng.standard_normal((ff, h))
        t[p + "mlp.down_proj.weight"] = rng.standard_normal((h, ff))

    def files(shared, out):
        src = os.path.join(shared, "corpus", "hf-dir", "qwen2-tiny")
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copyfile(os.path.join(src, name), os.path.join(out, name))
        with open(os.path.join(out, "convref-tokpre.txt"), "w") as f:
            f.write("qwen2\n")
    return cfg, t, files


SMALL = {"chatglm3-tiny": chatglm3, "glm4-tiny": glm4, "glm4-tiktoken-tiny": glm4_tiktoken,
         "rwkv6qwen2-tiny": rwkv6qwen2}
LARGE = {"qwen-tiny": qwen}


def main():
    args = sys.argv[1:]
    large = args[:1] == ["--large"]
    if large:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    shared, root = args
    for name, make in (LARGE if large else SMALL).items():
        out = os.path.join(root, name)
        os.makedirs(out, exist_ok=True)
        cfg, tensors, files = make(shared, out)
        write_json(os.path.join(out, "config.json"), cfg)
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)
        files(shared, out)


if __name__ == "__main__":
    main()
