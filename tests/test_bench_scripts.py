"""Every bench script starts: it imports what it needs (the installed project and bench/_common.py, no
sys.path edits) and answers ``--help`` with its usage. A script that cannot even start fails here instead of
in the hands of the next person who runs it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.methods.registry import METHODS

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))
# Out of the fast lane (pytest -m 'not slow'): a fresh interpreter per bench script, importing the whole stack.
pytestmark = pytest.mark.slow


def test_the_registry_reproductions_are_among_the_scripts():
    names = {p.name for p in SCRIPTS}
    assert {Path(spec.reproduction).name for spec in METHODS} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_starts_and_prints_its_usage(script):
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout.lower() and "--quick" in out.stdout
