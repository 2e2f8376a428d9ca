"""What a page's modules import (issue 33: "the first tab after the server starts"): a restarted server's first tab
of a page imports that page's modules in its own run, so a library a page's first view does not need is paid by the
first user after every restart. Measured 2026-11-28 (``python -X importtime``): ``ui.public_info``'s labels and store
pulled in edPLS's pipeline and with it chemotools (0.2 s of the PCA-Gauss page's 1.5 s of imports; chemotools'
``utils.discovery`` imports pytest and pygments), and ``engine.data.tables`` scikit-learn's bundled-data loaders
(0.13 s, SciPy's ``scipy.io`` among them), which only the bundled sets need.

Oracle: ``sys.modules`` of a fresh interpreter that imports exactly the module under test.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imported(module: str, watched: tuple[str, ...]) -> list[str]:
    code = (f"import json, sys\nimport {module}\n"
            f"print(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("module", ["ui.public_info", "ui.pca_gauss.sections"])
def test_the_public_information_labels_do_not_import_edpls_or_chemotools(module):
    assert _imported(module, ("chemotools", "engine.methods.edpls", "engine.data.preprocess")) == []


def test_the_bundled_tables_module_imports_scikit_learns_loaders_only_when_a_set_is_read():
    assert _imported("engine.data.tables", ("sklearn.datasets", "scipy.io")) == []
