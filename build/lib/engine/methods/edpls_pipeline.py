"""Old import path of engine.methods.edpls.pipeline (kept for notebooks)."""
import sys

from engine.methods.edpls import pipeline as _pipeline

sys.modules[__name__] = _pipeline
