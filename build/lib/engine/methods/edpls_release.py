"""Old import path of engine.methods.edpls.release (kept for notebooks)."""
import sys

from engine.methods.edpls import release as _release

sys.modules[__name__] = _release
