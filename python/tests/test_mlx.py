"""MLX packed tensors (mlx-lm directories; none exist in ../shared, so one is
built here by hand as mlx.core.quantize lays it out): get_tensor(name,
dtype="float32") gives the dequantized values s * q + b, by rows too, and
logical=True lists the triple as one float tensor."""

import json

import numpy as np
import pytest

import mfmt

ROWS, COLS, GROUP, BITS = 3, 64, 32, 4
NAME = "model.layers.0.self_attn.q_proj"


@pytest.fixture()
def mlx_dir(tmp_path):
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 1 << BITS, size=(ROWS, COLS), dtype=np.uint32)
    # scales/biases: powers of two and small integers, so s*q+b is exact in f32
    scales = (2.0 ** rng.integers(-3, 2, size=(ROWS, COLS // GROUP))).astype(np.float32)
    biases = rng.integers(-4, 4, size=(ROWS, COLS // GROUP)).astype(np.float32)
    # code j of a row at bits 4*(j%8) of uint32 word j/8 (little-endian stream)
    words = np.zeros((ROWS, COLS * BITS // 32), dtype=np.uint32)
    for j in range(COLS):
        words[:, j // 8] |= codes[:, j] << np.uint32(BITS * (j % 8))
    expect = (np.repeat(scales, GROUP, axis=1) * codes.astype(np.float32) +
              np.repeat(biases, GROUP, axis=1)).astype(np.float32)
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "llama", "quantization": {"group_size": GROUP, "bits": BITS}}))
    mfmt.save_file({f"{NAME}.weight": words, f"{NAME}.scales": scales,
                    f"{NAME}.biases": biases,
                    "model.norm.weight": np.ones(COLS, dtype=np.float32)},
                   tmp_path / "model.safetensors")
    return tmp_path, expect


def test_mlx_packed_weight_decodes_to_floats(mlx_dir):
    d, expect = mlx_dir
    with mfmt.open(d) as m:
        assert m.format == "mlx"
        assert m.info(f"{NAME}.weight").dtype == "U32"  # as stored
        got = m.get_tensor(f"{NAME}.weight", dtype="float32")
        assert got.shape == (ROWS, COLS) and np.array_equal(got, expect)
        assert np.array_equal(m.get_slice(f"{NAME}.weight", dtype="float32")[1:3], expect[1:3])
        assert np.array_equal(m.get_tensor("model.norm.weight", dtype="float32"), np.ones(COLS))


def test_mlx_logical_view(mlx_dir):
    d, expect = mlx_dir
    with mfmt.open(d, logical=True) as m:
        info = m.info(f"{NAME}.weight")
        assert info.shape == (ROWS, COLS) and info.dtype == "F32"
        assert f"{NAME}.scales" not in m
        assert np.array_equal(m[f"{NAME}.weight"], expect)
