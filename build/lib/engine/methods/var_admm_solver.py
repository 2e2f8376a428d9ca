"""Old import path of engine.methods.var_admm.solver (kept for notebooks)."""
import sys

from engine.methods.var_admm import solver as _solver

sys.modules[__name__] = _solver
