"""Old import path of engine.methods.edpls.core (kept for notebooks)."""
import sys

from engine.methods.edpls import core as _core

sys.modules[__name__] = _core
