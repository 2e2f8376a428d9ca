"""Issue 31, items 2, 5 and 7 under AppTest: public information declared once, the run history and the privacy
odometer, and the polish users notice (no owner's workbook without data; human headers and short metric labels
are checked on each page's default run in tests/test_pages.py).

Oracles: the odometer's total is checked against the closed-form privacy profile of composed Gaussian
mechanisms (Balle & Wang 2018, Dong, Roth & Su 2019: k Gaussian releases with noise multipliers z_i compose to
one with mu = sqrt(sum 1/z_i^2)), solved with scipy, not with the ledger's code.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from streamlit.testing.v1 import AppTest

from engine.methods.dp_pcr.estimator import DPPCR
from engine.privacy.wording import headline_total
from ui.exports import LABELS
from ui.pca_gauss.notes import degenerate_note
from ui.public_info import range_warning

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 240
SAMPLE = "sample_NIR spectra (synthetic)_moisture"


def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    return at


def page(file: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / file), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def test_bounds_kept_strict_paper_strict_and_across_edpls_and_dp_pcr():
    at = app()
    at.switch_page("pages/edpls.py").run()
    assert not at.exception, at.exception
    at.number_input(key=f"edpls_y_high_{SAMPLE}").set_value(60.0).run()
    assert not at.exception, at.exception
    # strict -> paper: the panel is gone, the declaration is kept
    at.sidebar.radio(key="edpls_mode").set_value("paper").run()
    assert not at.exception, at.exception
    assert not any(n.key == f"edpls_y_high_{SAMPLE}" for n in at.number_input)
    at.sidebar.radio(key="edpls_mode").set_value("strict").run()
    assert at.number_input(key=f"edpls_y_high_{SAMPLE}").value == 60.0
    # the plain estimator shows the same declaration (one panel, one range) and the x bound
    at.radio(key="edpls_strict_estimator").set_value("plain").run()
    assert not at.exception, at.exception
    assert at.number_input(key=f"edpls_y_high_{SAMPLE}").value == 60.0
    (x_key,) = [n.key for n in at.number_input if n.key.startswith("edpls_x_bound_")]
    at.number_input(key=x_key).set_value(30.0).run()
    assert not at.exception, at.exception
    # another page: the same data set and response, the same declaration
    at.switch_page("pages/dp_pcr.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key=f"dp_pcr_y_low_{SAMPLE}").value == 0.0
    assert at.number_input(key=f"dp_pcr_y_high_{SAMPLE}").value == 60.0
    assert at.number_input(key=x_key.replace("edpls", "dp_pcr")).value == 30.0
    assert not [n.label for n in at.number_input if "|y|" in n.label]


def test_dp_pcr_asks_for_a_range_of_y_never_a_bound_on_abs_y():
    at = page("pages/dp_pcr.py")
    labels = [n.label for n in at.number_input]
    assert "Lowest possible y" in labels and "Highest possible y" in labels
    assert not [label for label in labels if "|y|" in label]
    panel = " ".join(m.value for m in at.markdown)
    assert "Public information" in panel
    # the bound on |y| is derived from the range and said so
    assert any("max(|0|, |100|) = 100" in c.value for c in at.caption)
    # the range check runs on the fit's released scale of y (a DP output), and the page shows exactly its verdict
    (run,) = at.session_state["pl_runs"].values()
    assert run["dp_y_scale"] is not None

    class Released:
        y_scale_ = run["dp_y_scale"]

    expected = range_warning((0.0, 100.0), Released())
    shown = [w.value for w in at.warning if "spread" in w.value]
    assert shown == ([] if expected is None else [expected])


def test_dp_pcr_y_scale_is_the_standard_deviation_of_y_without_noise():
    """Oracle: numpy's std (ddof 0: the centred sum over the count). 200 sums of O(1) values: error ~ 1e-14."""
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-0.1, 0.1, (200, 5)), 50 + 3 * rng.standard_normal(200)
    model = DPPCR(n_components=2, epsilon=np.inf, delta=1e-5, x_bound=1.0, y_bound=100.0).fit(X, y)
    assert model.y_scale_ == pytest.approx(float(np.std(y)), rel=1e-9)


def test_range_warning_is_computed_from_dp_outputs_only():
    class Fit:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    assert "times the fit's private estimate" in range_warning((0.0, 100.0), Fit(y_scale_=1.0))
    assert range_warning((0.0, 10.0), Fit(y_scale_=1.0)) is None  # 10 wide: within 20 spreads
    assert "swamps the response" in range_warning((0.0, 100.0), Fit(y_scale_=0.0))
    assert range_warning((0.0, 100.0), Fit()) is None  # no DP output of y's spread: no warning
    assert range_warning((0.0, 100.0), Fit(y_scale_=float("nan"))) is None


def test_pca_gauss_says_why_a_synthetic_pair_lies_on_a_line():
    class Fit:
        psd_fixed_, min_eig_before_fix_ = True, -0.5

    fit = Fit()
    v = np.array([1.0, 2.0, 0.0])
    fit.covariance_ = np.outer(v, v) + np.diag([0.0, 0.0, 1.0])  # c1 and c2 dependent after the PSD projection
    note = degenerate_note(fit, "c1", "c2", ["c1", "c2", "c3"])
    assert "positive semi-definite cone" in note and "-0.5" in note
    assert degenerate_note(fit, "c1", "c3", ["c1", "c2", "c3"]) is None  # an honest 2-D cloud


def gaussian_epsilon_oracle(mu: float, delta: float) -> float:
    """ε at δ of a mu-GDP mechanism: delta(eps) = Φ(-eps/mu + mu/2) - e^eps Φ(-eps/mu - mu/2)."""
    def gap(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta
    return brentq(gap, 0.0, 50.0, xtol=1e-12)


def test_run_history_two_runs_compared_and_the_odometer_composes_them():
    at = page("pages/dp_pcr.py")
    runs = at.session_state["pl_runs"]
    assert len(runs) == 1
    at.sidebar.number_input(key="dp_pcr_eps").set_value(2.0).run()
    assert not at.exception, at.exception
    runs = at.session_state["pl_runs"]
    assert len(runs) == 2
    # the history table, human headers, and the side-by-side comparison of the two runs
    at.multiselect(key="dp_pcr_compare_runs").set_value([1, 2]).run()
    assert not at.exception, at.exception
    frames = [d.value for d in at.dataframe]
    history = next(f for f in frames if "RMSEP" in f.columns and "Run" in f.columns)
    assert list(history["Run"]) == [1, 2] and list(history["ε"]) == [1.0, 2.0]
    assert set(history["Status"]) == {"proven"}
    side = next(f for f in frames if list(f.columns) == ["Run 1", "Run 2"])
    assert "RMSEP" in side.index and "σ_y (test)" in side.index
    assert [c for c in at.get("plotly_chart") if c.key == "dp_pcr_compare_chart"]
    # the odometer: the two releases composed, checked against the closed-form Gaussian composition
    entries = [r for run in runs.values() for r in run["ledger"].entries]
    assert len(entries) == 2 and all(r.mechanism == "gaussian" for r in entries)
    mu = math.sqrt(sum((r.sensitivity / r.scale) ** 2 for r in entries))
    want = gaussian_epsilon_oracle(mu, sum(r.delta for r in entries))
    odo = next(m for m in at.metric if m.label == "Privacy spent on this data set")
    shown = float(odo.value.removeprefix("ε = "))
    assert shown == pytest.approx(want, rel=2e-3)  # the tile prints 3 significant digits
    assert shown > 2.0  # two releases at ε 1 and 2 cost more than either
    assert any("spends budget" in c.value for c in at.caption)
    # a rerun hits st.cache_data: the same release, not counted again
    at.run()
    assert len(at.session_state["pl_runs"]) == 2
    assert next(m for m in at.metric if m.label == "Privacy spent on this data set").value == odo.value


def test_edpls_odometer_counts_the_private_constant_predictor_beside_the_fit():
    """The recommended fit's page also fits a private constant predictor on the same rows: a second release."""
    at = page("pages/edpls.py")
    (run,) = at.session_state["pl_runs"].values()
    assert len(run["companion_ledgers"]) == 1
    alone = headline_total(run["ledger"].summary())[0]
    odo = next(m for m in at.metric if m.label == "Privacy spent on this data set")
    assert float(odo.value.removeprefix("ε = ")) > alone * 1.01


def test_calculator_offers_no_owners_workbook():
    at = page("pages/calculator.py")
    labels = [b.proto.label for b in at.get("download_button")]
    assert LABELS["workbook"] not in labels
    assert LABELS["tables"] in labels
    assert not any("Owner's workbook" in m.value for m in at.markdown)
