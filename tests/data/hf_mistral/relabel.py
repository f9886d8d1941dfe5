#!/usr/bin/python3
"""The Ministral 3 F16 reference relabelled as arch llama (mistral3.* keys
renamed llama.*), so that llama-quantize of c392e50 (no FMA; it predates
mistral3) can quantize it: the tensors and their names are the same, so its
Q4_K_M gives the reference bytes of every tensor of the mistral3 file.
    relabel.py IN.gguf OUT.gguf   (gguf-py of the convref-new tree)"""
import sys
sys.path.insert(0, "/work/oracles/cfg/convref-new/tree/gguf-py")
import gguf
r = gguf.GGUFReader(sys.argv[1])
w = gguf.GGUFWriter(sys.argv[2], "llama")
for f in r.fields.values():
    k = f.name
    if k.startswith("GGUF.") or k == "general.architecture":
        continue
    nk = "llama." + k[len("mistral3."):] if k.startswith("mistral3.") else k
    t = f.types[0]
    if t == gguf.GGUFValueType.ARRAY:
        st = f.types[-1]
        if st == gguf.GGUFValueType.STRING:
            v = [bytes(f.parts[i]) for i in f.data]
        else:
            v = [f.parts[i].tolist()[0] for i in f.data]
        w.add_key_value(nk, v, t, sub_type=st)
    elif t == gguf.GGUFValueType.STRING:
        w.add_key_value(nk, bytes(f.parts[f.data[0]]).decode("utf-8"), t)
    else:
        w.add_key_value(nk, f.parts[f.data[0]].tolist()[0], t)
for t in r.tensors:
    w.add_tensor(t.name, t.data, raw_shape=list(reversed([int(x) for x in t.shape])), raw_dtype=t.tensor_type)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
