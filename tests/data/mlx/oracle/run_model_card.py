"""Runs mlx_lm's own create_model_card (mlx_lm/utils.py) with the real
huggingface_hub (PYTHONPATH) for a local source, as utils.save() calls it:
create_model_card(OUT_DIR, None). usage: run_model_card.py OUT_DIR"""
import importlib.util, os, sys, types
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
class _Anything:
    def __call__(self, *a, **k): return _Anything()
    def __getattr__(self, n): return _Anything()
def stub(name):
    m = types.ModuleType(name); m.__getattr__ = lambda n: _Anything(); sys.modules[name] = m; return m
stub("transformers")
spec = importlib.util.spec_from_file_location("mlx_lm", os.path.join(HERE, "mlx_lm", "__init__.py"),
    submodule_search_locations=[os.path.join(HERE, "mlx_lm")])
sys.modules["mlx_lm"] = importlib.util.module_from_spec(spec)
tu = stub("mlx_lm.tokenizer_utils"); tu.TokenizerWrapper = object
import huggingface_hub
import mlx_lm.utils as U
print("huggingface_hub", huggingface_hub.__version__, file=sys.stderr)
U.create_model_card(sys.argv[1], None)
