"""The calculator's inverse σ → ε and its marker at the chosen ε (issue #19).

Oracles: the round trip ε → σ (analytic Gaussian, Balle & Wang) → ε to 1e-9; Google's dp-accounting privacy loss
distribution of the Gaussian mechanism at that σ (an independent implementation of the exact (ε, δ) curve); the
exact Theorem 8 condition (δ at the returned ε equals the target δ).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from engine.privacy.calculator import sigma_curve
from engine.privacy.calibration import analytic_gaussian_sigma, gaussian_delta, gaussian_epsilon
from ui.calculator.figures import sigma_curve_figure

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 3.0, 10.0, 50.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
@pytest.mark.parametrize("sens", [1.0, 2.5])
def test_round_trip_epsilon_sigma_epsilon(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    back = gaussian_epsilon(sigma, delta, sens)
    assert abs(back - eps) <= 1e-9 * max(1.0, eps)
    assert gaussian_delta(sigma, back, sens) == pytest.approx(delta, rel=1e-6)


@pytest.mark.parametrize("sigma, delta", [(0.3, 1e-5), (1.0, 1e-6), (3.7, 1e-5), (20.0, 1e-8)])
def test_inverse_matches_dp_accounting_pld(sigma, delta):
    ours = gaussian_epsilon(sigma, delta, 1.0)
    theirs = pld.from_gaussian_mechanism(sigma, sensitivity=1.0,
                                         value_discretization_interval=1e-4).get_epsilon_for_delta(delta)
    assert ours == pytest.approx(theirs, abs=1e-3)


def test_more_noise_buys_a_smaller_epsilon():
    eps = [gaussian_epsilon(s, 1e-5, 1.0) for s in (0.5, 1.0, 2.0, 4.0)]
    assert all(a > b for a, b in zip(eps, eps[1:]))


def test_figure_marks_the_chosen_epsilon_and_the_inverse():
    curve = sigma_curve(np.geomspace(0.05, 50, 10), 1e-5, 1.0)
    sigma = analytic_gaussian_sigma(2.0, 1e-5, 1.0)
    fig = sigma_curve_figure(curve, 1.0, 1e-5, chosen=(2.0, sigma), inverse=(1.0, gaussian_epsilon(1.0, 1e-5)))
    marks = [t for t in fig.data if t.mode == "markers"]
    assert len(marks) == 2
    assert marks[0].x[0] == 2.0 and marks[0].y[0] == pytest.approx(sigma)
    assert "chosen ε = 2" in marks[0].name
    assert marks[1].y[0] == 1.0 and marks[1].x[0] == pytest.approx(gaussian_epsilon(1.0, 1e-5))
    # an infinite inverse is not drawn (a log axis has no place for it)
    fig = sigma_curve_figure(curve, 1.0, 1e-5, chosen=(2.0, sigma), inverse=(1e-3, float("inf")))
    assert len([t for t in fig.data if t.mode == "markers"]) == 1


def test_page_shows_epsilon_for_a_typed_sigma():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "calculator.py"), default_timeout=60)
    at.run()
    assert not at.exception
    at.number_input(key="calc_sigma_inv").set_value(2.0).run()
    assert not at.exception
    want = gaussian_epsilon(2.0, 1e-5, 1.0)
    metric = next(m for m in at.metric if m.label.startswith("Smallest ε at σ = 2"))
    assert float(metric.value) == pytest.approx(want, rel=1e-4)
