"""Old import path of engine.methods.pca_gauss.baselines (kept for notebooks)."""
import sys

from engine.methods.pca_gauss import baselines as _baselines

sys.modules[__name__] = _baselines
