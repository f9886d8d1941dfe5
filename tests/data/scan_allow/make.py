"""Makes own_class.pkl: what CPython's pickle writes for an object of a
user's own class (mypkg.layers.Config), which mfmt scan calls unknown and
`--allow` lifts (tests/check_cli.sh). Run: python3 make.py (in this folder)."""
import pickle
import sys
import types

pkg, layers = types.ModuleType("mypkg"), types.ModuleType("mypkg.layers")


class Config:
    def __init__(self):
        self.hidden = 64


Config.__module__ = "mypkg.layers"
layers.Config = Config
sys.modules["mypkg"], sys.modules["mypkg.layers"] = pkg, layers
with open("own_class.pkl", "wb") as f:
    pickle.dump({"config": Config(), "step": 3}, f, protocol=2)
