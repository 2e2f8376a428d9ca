"""Old import path of engine.methods.var_admm.checks (kept for notebooks)."""
import sys

from engine.methods.var_admm import checks as _checks

sys.modules[__name__] = _checks
