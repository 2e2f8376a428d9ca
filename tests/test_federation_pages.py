"""The pages' "Run over Flower (one process per party)" section (ui/federation_run.py), under AppTest.

One Flower run per page on the page's own sample data (slow: a SuperLink and one SuperNode process per
party start, a few rounds of seconds each). Oracle: the in-process run beside it (largest difference
<= 1e-9 for P3LS with the same log; VAR-ADMM: the page's converged fit in both, its own messages over Flower);
the federation is the browser session's (engine/federation/flower/session.py), stopped after each test here.
The data owner's verdict box (gain, risk, cost) is shown under the runs.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ui.federation_run import SECTION_TITLE, p3ls_has_flower

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("flwr")


@pytest.fixture(autouse=True)
def _stop_session_federations():
    from engine.federation.flower.session import stop_all

    yield
    stop_all()


def _verdict(at) -> str:
    return next((m.value for m in at.markdown if m.value.startswith("- **Gain.**")), "")


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_var_admm_page_runs_over_flower_beside_the_in_process_run():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=600)
    at.run()
    assert not at.exception, at.exception
    assert SECTION_TITLE in [h.value for h in at.subheader]
    at.button(key="var_admm_flower_button").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    # the page's own fit (accelerated, tol 1e-6) in both runs: each stops when its next step moves no coefficient
    # by more than 1e-7 of the largest, so the two converged fits differ by about that, not by rounding
    assert float(metrics["Largest difference between the two runs"]) <= 1e-4
    assert int(metrics["Messages (log)"]) > 0 and int(metrics["Messages (log from the wire)"]) > 0
    assert int(metrics["Bytes measured on the wire"].replace(",", "")) > 0
    assert any("logs differ" in m.value and "Gram pieces" in m.value for m in at.markdown)
    verdict = _verdict(at)
    assert "MAE" in verdict and "**Risk.**" in verdict and "bytes on the wire" in verdict, verdict
    # the result stays when another widget reruns the page
    at.run()
    assert "Flower wall time" in _metrics(at)


def test_p3ls_page_shows_the_flower_section():
    from streamlit.testing.v1 import AppTest

    if not (ROOT / "sample_data" / "value_chain.csv").exists():
        pytest.skip("sample_data/value_chain.csv not generated yet")
    at = AppTest.from_file(str(ROOT / "pages" / "p3ls.py"), default_timeout=600)
    at.run()
    assert not at.exception, at.exception
    assert SECTION_TITLE in [h.value for h in at.subheader]
    if not p3ls_has_flower():
        assert any("not in this build" in i.value for i in at.info)
        return
    at.button(key="p3ls_flower_button").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    assert float(metrics["Largest difference between the two runs"]) <= 1e-9
    assert int(metrics["Messages (log)"]) == int(metrics["Messages (log from the wire)"]) > 0
    verdict = _verdict(at)
    assert "R²" in verdict and "must not collude" in verdict, verdict
