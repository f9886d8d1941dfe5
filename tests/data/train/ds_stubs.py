"""Stand-ins for the DeepSpeed classes a checkpoint pickles, registered
under DeepSpeed's own module names, so that torch.save writes the same
globals DeepSpeed's engine writes (runtime/engine.py _save_checkpoint,
runtime/zero/stage_1_and_2.py and stage3.py state_dict) and so that
DeepSpeed's utils/zero_to_fp32.py can unpickle them here without DeepSpeed
installed. Nothing else of DeepSpeed is needed by either."""
import enum
import logging
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


class DynamicLossScaler:  # deepspeed/runtime/fp16/loss_scaler.py
    def __init__(self):
        self.cur_scale = 65536.0
        self.cur_iter = 10
        self.scale_window = 1000


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
                 (DynamicLossScaler, "deepspeed.runtime.fp16.loss_scaler"),
                 (ZeroStageEnum, "deepspeed.runtime.zero.config"),
                 (fragment_address, "deepspeed.utils.tensor_fragment")]:
    cls.__module__ = mod
    setattr(_module(mod), cls.__name__, cls)

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
