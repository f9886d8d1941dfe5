"""Pre-quantized Hugging Face checkpoints (tests/data/prequant, made by
make_prequant.py from the producing tools' packing): logical=True lists
the original weights, and get_tensor gives upstream's dequantized values,
equal bit for bit to the independent numpy reference."""

import os

import numpy as np
import pytest

import mfmt

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "prequant")
CASES = ["gptq-4bit-g32-sym", "gptq-3bit-g64-actorder", "awq-gemm-g32", "fp8-block",
         "ct-pack-w4-g32", "mxfp4-gptoss", "nvfp4-modelopt"]


@pytest.mark.parametrize("case", CASES)
def test_logical_tensors_equal_reference(case):
    ref = mfmt.open(os.path.join(DATA, case + ".ref.safetensors"))
    with mfmt.open(os.path.join(DATA, case), logical=True) as m:
        for name in ref.keys():
            got = m.get_tensor(name, dtype="float32")
            want = ref.get_tensor(name, dtype="float32")
            assert got.shape == want.shape
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), name
    ref.close()


def test_corrupt_layout_names_tensor_and_rule():
    with pytest.raises(mfmt.FormatError) as e:
        mfmt.open(os.path.join(DATA, "bad-gidx"), logical=True)
    assert "g_idx[5] = 9 is out of range" in str(e.value)
