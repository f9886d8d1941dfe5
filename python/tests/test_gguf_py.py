"""mfmt for gguf-py users, against gguf-py itself.

The anchor is gguf-py from a llama.cpp checkout named by LLAMA_CPP (c392e50:
it needs numpy only; its vocab module's sentencepiece import is stubbed, as
nothing here uses it). When it is absent, the same checks run against what it
produced, committed in data/gguf_py/ (made by ``python3 test_gguf_py.py
--write`` with LLAMA_CPP set): the bytes its GGUFWriter wrote for SCRIPT, and
what its GGUFReader said of those bytes and of the corpus's converter output.
"""
import json
import os
import sys
import types

import numpy as np
import pytest

from conftest import SHARED

import mfmt

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "gguf_py")
CONVERTED = os.path.join(SHARED, "convert-ref", "llama-tiny-q8_0.gguf")


def load_gguf_py():
    root = os.environ.get("LLAMA_CPP")
    if not root:
        return None
    sys.path.insert(0, os.path.join(root, "gguf-py"))
    sys.modules.setdefault("sentencepiece", types.SimpleNamespace(SentencePieceProcessor=None))
    try:
        import gguf
    except ImportError:
        return None
    return gguf


GGUF = load_gguf_py()


def script(mod, path, *, tensors=True):
    """The same calls on gguf-py's GGUFWriter (mod = gguf) or mfmt's."""
    w = mod.GGUFWriter(path, "llama")
    w.add_type("model")
    w.add_name("tiny test")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -5)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -7)
    w.add_float32("t.f32", 0.1)
    w.add_uint64("t.u64", 2 ** 40)
    w.add_int64("t.i64", -2 ** 40)
    w.add_float64("t.f64", 1.0 / 3.0)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "h\u00e9llo")
    w.add_string("t.empty", "")          # skipped by both
    w.add_array("t.arr_str", ["a", "bc", ""])
    w.add_array("t.arr_int", [1, -2, 3])
    w.add_array("t.arr_float", [0.5, 1.5])
    w.add_array("t.arr_bool", [True, False])
    w.add_array("t.arr_empty", [])        # skipped by both
    w.add_custom_alignment(64)
    if tensors:
        rng = np.random.default_rng(22)
        w.add_tensor("a.weight", rng.standard_normal((3, 5)).astype(np.float32))
        w.add_tensor("b.weight", rng.standard_normal((7,)).astype(np.float16))
        w.add_tensor("c.ids", np.arange(6, dtype=np.int32).reshape(2, 3))
        q8 = rng.integers(0, 256, (2, 34), dtype=np.uint8)  # 2 rows of one Q8_0 block
        w.add_tensor("d.q8", q8, raw_dtype=mod.GGMLQuantizationType.Q8_0)
        w.add_tensor("e.f64", np.array([1.0, 2.0], dtype=np.float64))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    if tensors:
        w.write_tensors_to_file()
    w.close()


def reader_facts(gguf, path):
    """What GGUFReader says: fields (offset, types), tensors (ne, type,
    data offset, bytes), alignment, data offset."""
    r = gguf.GGUFReader(path)
    fields = {k: {"offset": int(f.offset), "types": [int(t) for t in f.types]}
              for k, f in r.fields.items() if not k.startswith("GGUF.")}
    tensors = {t.name: {"ne": [int(x) for x in t.shape], "type": int(t.tensor_type),
                        "data_offset": int(t.data_offset), "n_bytes": int(t.n_bytes),
                        "n_elements": int(t.n_elements)} for t in r.tensors}
    return {"fields": fields, "tensors": tensors, "alignment": int(r.alignment),
            "data_offset": int(r.data_offset)}


def mfmt_facts(path):
    with mfmt.Model(path) as m:
        fields = {k: {"offset": f.offset, "types": [int(t) for t in f.types]} for k, f in m.fields.items()}
        tensors = {t.name: {"ne": list(t.ne), "type": int(t.tensor_type), "data_offset": t.data_offset,
                            "n_bytes": t.n_bytes, "n_elements": t.n_elements} for t in m.tensors.values()}
        return {"fields": fields, "tensors": tensors, "alignment": m.alignment,
                "data_offset": m.data_offset}


def anchor_bytes(tmp_path, name, **kw):
    if GGUF is not None:
        p = str(tmp_path / ("gguf-py-" + name))
        script(GGUF, p, **kw)
        with open(p, "rb") as f:
            return f.read()
    with open(os.path.join(DATA, name), "rb") as f:
        return f.read()


@pytest.mark.parametrize("name,kw", [("writer.gguf", {}), ("vocab.gguf", {"tensors": False})])
def test_writer_bytes_as_gguf_py(tmp_path, name, kw):
    ours = str(tmp_path / name)
    script(mfmt, ours, **kw)
    with open(ours, "rb") as f:
        assert f.read() == anchor_bytes(tmp_path, name, **kw)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".mfmt-gguf-")]


def test_writer_output_reads_back(tmp_path):
    p = str(tmp_path / "w.gguf")
    script(mfmt, p)
    with mfmt.open(p) as m:
        assert m.metadata["t.str"] == "h\u00e9llo" and m.metadata["general.alignment"] == 64
        assert list(m.metadata["t.arr_int"]) == [1, -2, 3]
        assert m.info("d.q8").dtype == "Q8_0" and m.info("d.q8").shape == (2, 32)
        assert m.info("a.weight").ne == (5, 3)
        assert m.fields["t.arr_str"].types == (mfmt.GGUFValueType.ARRAY, mfmt.GGUFValueType.STRING)
        assert m.fields["t.u8"].contents() == 200


def test_writer_left_unfinished_leaves_nothing(tmp_path):
    w = mfmt.GGUFWriter(str(tmp_path / "x.gguf"), "llama")
    w.add_tensor("a", np.zeros(4, np.float32))
    w.write_header_to_file()
    w.close()  # the tensors were never written
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError):
        mfmt.GGUFWriter(None, "llama").add_key_value("general.architecture", "x", 8)


@pytest.mark.parametrize("name", ["writer.gguf", "converted"])
def test_reader_as_gguf_py(tmp_path, name):
    if name == "converted":
        if not os.path.exists(CONVERTED):
            pytest.skip("no ../shared/convert-ref")
        path = CONVERTED
    else:
        path = str(tmp_path / name)
        script(mfmt, path)
    if GGUF is not None:
        want = reader_facts(GGUF, path)
    else:
        with open(os.path.join(DATA, "reader-" + name.replace(".gguf", "") + ".json")) as f:
            want = json.load(f)
    assert mfmt_facts(path) == want


def write_anchor_outputs():
    """Regenerates data/gguf_py (needs LLAMA_CPP)."""
    import tempfile
    assert GGUF is not None, "set LLAMA_CPP to a llama.cpp checkout"
    os.makedirs(DATA, exist_ok=True)
    script(GGUF, os.path.join(DATA, "writer.gguf"))
    script(GGUF, os.path.join(DATA, "vocab.gguf"), tensors=False)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "w.gguf")
        script(GGUF, p)
        facts = reader_facts(GGUF, p)
    with open(os.path.join(DATA, "reader-writer.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    with open(os.path.join(DATA, "reader-converted.json"), "w") as f:
        json.dump(reader_facts(GGUF, CONVERTED), f, indent=1, sort_keys=True)


if __name__ == "__main__" and "--write" in sys.argv:
    write_anchor_outputs()
