"""Stand-ins for the DeepSpeed classes a checkpoint pickles, registered
under DeepSpeed's own module names, so that torch.save writes the same
globals DeepSpeed's engine writes (runtime/engine.py _save_checkpoint,
runtime/zero/stage_1_and_2.py and stage3.py state_dict) and so that
DeepSpeed's utils/zero_to_fp32.py can unpickle them here without DeepSpeed
installed. Nothing else of DeepSpeed is needed by either.

With DEEPSPEED_SRC naming a DeepSpeed checkout (not installable here: it
needs pydantic 2 and a newer torch), the loss scalers and fragment_address
are DeepSpeed's own classes: deepspeed/runtime/fp16/loss_scaler.py and
deepspeed/utils/tensor_fragment.py are run from it under their module names
(their imports of deepspeed.comm and deepspeed.utils.logger stood in for).
ZeroStageEnum is copied (deepspeed/runtime/zero/config.py imports pydantic)."""
import enum
import logging
import os
import sys
import types
from dataclasses import dataclass


def _module(name):
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name)
        parent, _, leaf = name.rpartition(".")
        if parent:
            setattr(_module(parent), leaf, sys.modules[name])
    return sys.modules[name]


class DeepSpeedConfig:  # deepspeed/runtime/config.py
    def __init__(self, cfg):
        self._param_dict = cfg
        self.train_batch_size = cfg.get("train_batch_size")


class LossScaler:  # deepspeed/runtime/fp16/loss_scaler.py
    def __init__(self, scale=1):
        self.cur_scale = scale
        self.dynamic = False


class DynamicLossScaler(LossScaler):  # its __init__'s attributes, in order
    def __init__(self, init_scale=2**32, scale_factor=2., scale_window=1000, min_scale=1,
                 delayed_shift=1, consecutive_hysteresis=False, raise_error_at_min_scale=True,
                 dtype=None):
        super().__init__(init_scale)
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.min_scale = min_scale
        self.delayed_shift = delayed_shift
        self.cur_hysteresis = delayed_shift
        self.consecutive_hysteresis = consecutive_hysteresis
        self.raise_error_at_min_scale = raise_error_at_min_scale
        self.dynamic = True
        self.dtype = dtype


class ZeroStageEnum(int, enum.Enum):  # deepspeed/runtime/zero/config.py
    disabled = 0
    optimizer_states = 1
    gradients = 2
    weights = 3
    max_stage = 3


@dataclass
class fragment_address:  # deepspeed/utils/tensor_fragment.py
    numel: int
    start: int


for cls, mod in [(DeepSpeedConfig, "deepspeed.runtime.config"),
                 (LossScaler, "deepspeed.runtime.fp16.loss_scaler"),
                 (DynamicLossScaler, "deepspeed.runtime.fp16.loss_scaler"),
                 (ZeroStageEnum, "deepspeed.runtime.zero.config"),
                 (fragment_address, "deepspeed.utils.tensor_fragment")]:
    cls.__module__ = mod
    setattr(_module(mod), cls.__name__, cls)


def _run_deepspeed_source(root):
    """DeepSpeed's own files, run under their module names."""
    _module("deepspeed").comm = _module("deepspeed.comm")
    _module("deepspeed.utils").logger = logging.getLogger("deepspeed")
    for rel, mod in [("deepspeed/runtime/fp16/loss_scaler.py", "deepspeed.runtime.fp16.loss_scaler"),
                     ("deepspeed/utils/tensor_fragment.py", "deepspeed.utils.tensor_fragment")]:
        m = _module(mod)
        with open(os.path.join(root, rel)) as f:
            exec(compile(f.read(), rel, "exec"), m.__dict__)  # noqa: S102 (DeepSpeed's code)
    g = globals()
    g["LossScaler"] = _module("deepspeed.runtime.fp16.loss_scaler").LossScaler
    g["DynamicLossScaler"] = _module("deepspeed.runtime.fp16.loss_scaler").DynamicLossScaler
    g["fragment_address"] = _module("deepspeed.utils.tensor_fragment").fragment_address


if os.environ.get("DEEPSPEED_SRC"):
    _run_deepspeed_source(os.environ["DEEPSPEED_SRC"])

# what zero_to_fp32.py imports: deepspeed.utils.logger and the key names of
# deepspeed/checkpoint/constants.py
_module("deepspeed.utils").logger = logging.getLogger("deepspeed")
_c = _module("deepspeed.checkpoint.constants")
for k, v in dict(DS_VERSION="ds_version", OPTIMIZER_STATE_DICT="optimizer_state_dict",
                 SINGLE_PARTITION_OF_FP32_GROUPS="single_partition_of_fp32_groups",
                 FP32_FLAT_GROUPS="fp32_flat_groups", ZERO_STAGE="zero_stage",
                 PARTITION_COUNT="partition_count", PARAM_SHAPES="param_shapes",
                 BUFFER_NAMES="buffer_names", FROZEN_PARAM_SHAPES="frozen_param_shapes",
                 FROZEN_PARAM_FRAGMENTS="frozen_param_fragments").items():
    setattr(_c, k, v)
if "tqdm" not in sys.modules:  # zero_to_fp32.py's progress bars
    _module("tqdm").tqdm = lambda it, *a, **k: it
