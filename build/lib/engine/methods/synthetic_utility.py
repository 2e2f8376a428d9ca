"""Old import path of engine.methods.pca_gauss.utility (kept for notebooks)."""
import sys

from engine.methods.pca_gauss import utility as _utility

sys.modules[__name__] = _utility
