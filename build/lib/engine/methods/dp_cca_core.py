"""Old import path of engine.methods.dp_cca.core (kept for notebooks)."""
import sys

from engine.methods.dp_cca import core as _core

sys.modules[__name__] = _core
