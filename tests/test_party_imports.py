"""What a federation party's process imports (issue 33): Flower 1.42 starts a new ``flwr-clientapp`` process for
every message, so each import a party's handler pulls in is paid once per party per message. The handlers need
numpy, SciPy's linear algebra, ``cryptography``, grpc and the engine's noise; neither scikit-learn nor pandas
(each 0.2-1 CPU s to import). Measured on 2026-11-28: a party's modules with flwr took 0.87-0.97 CPU s, 1.14-1.26 s
while the ledger, the message log and the ADMM trace imported pandas at their top. (P3LS's ``pls`` also reached
scikit-learn for one commit, through ``column_checks``.)

Oracle: ``sys.modules`` of a fresh interpreter that imports exactly what the two ClientApps' handlers import.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr")

ROOT = Path(__file__).resolve().parents[1]
# engine/federation/flower_app/privalab_apps.py (P3LS) and engine/methods/var_admm/flower_roles.py's ClientApp:
# the modules their handlers import, at the top or inside the handler
PARTY_MODULES = ("engine.federation.flower_app.privalab_apps", "engine.methods.p3ls.flower_roles",
                 "engine.methods.var_admm.flower_roles", "engine.methods.var_admm.flower_anderson",
                 "engine.methods.var_admm.solver", "engine.privacy.noise")
NOT_IN_A_PARTY = ("sklearn", "pandas", "streamlit", "dask", "plotly")


def test_a_party_process_imports_neither_scikit_learn_nor_pandas():
    code = ("import json, sys\n" + "".join(f"import {m}\n" for m in PARTY_MODULES)
            + f"print(json.dumps(sorted(m for m in {NOT_IN_A_PARTY!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
