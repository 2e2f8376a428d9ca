"""Review N6: results computed from a session's data without noise are cached per session, never across
sessions (a cross-session hit is faster and would tell one user that another fitted the identical table).

Oracle: the engine functions behind the page's cached calls, counted. A rerun in the same session is a hit (no
new call); a second session on the same data and settings computes its own (new calls).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import engine.methods.edpls.pipeline as edpls_pipeline
import engine.methods.edpls.recommended_evaluation as page_strict

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "edpls.py")


@pytest.fixture()
def counted(monkeypatch):
    calls = {"preprocess": 0, "references": 0}

    def wrap(module, name, label):
        original = getattr(module, name)

        def counting(*args, **kwargs):
            calls[label] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)

    wrap(edpls_pipeline, "preprocess", "preprocess")
    wrap(page_strict, "recommended_references", "references")
    return calls


def _session():
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at


def test_noise_free_results_are_not_shared_between_sessions(counted):
    a = _session()
    first = dict(counted)
    assert first["references"] >= 1 and first["preprocess"] >= 1, first
    a.run()  # the same session again: served from its cache
    assert not a.exception and counted == first, counted
    b = _session()  # another session, same sample data and settings: computed again, no hit from session a
    assert counted["references"] == 2 * first["references"] and counted["preprocess"] == 2 * first["preprocess"]
    assert a.session_state["pl_cache_scope"] != b.session_state["pl_cache_scope"]
