"""The shared pieces of #17: calibration policy, the moments release, constraints, split, message log, threads.

Oracles: closed forms and brute force (the worst-case row found by search never beats the proven sensitivity,
and the proven one is attained), scikit-learn's own split and validation, threadpoolctl's report.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_info

from engine.data.split import split_indices, train_test_indices
from engine.federation import MessageLog
from engine.methods.constraints import PRIVACY_PARAMETER_CONSTRAINTS
from engine.privacy import (
    GaussianMechanism,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    noise_scale,
    resolve_calibration,
)
from engine.privacy.clipping import row_norms
from engine.privacy.moments import (
    MomentsRelease,
    add_remove_sensitivity,
    centred_moments,
    psd_project,
    replace_one_sensitivity,
    scale_rows,
)
from engine.threads import one_blas_thread


# ---------------------------------------------------------------- calibration policy
@pytest.mark.parametrize("eps, expected", [(0.1, "classic"), (1.0, "classic"), (1.0001, "analytic"), (50, "analytic")])
def test_auto_is_classic_up_to_one(eps, expected):
    assert resolve_calibration("auto", eps) == expected
    assert resolve_calibration("analytic", eps) == "analytic"


def test_classic_above_one_is_refused_and_unknown_names_too():
    with pytest.raises(ValueError, match="proven only for epsilon <= 1"):
        resolve_calibration("classic", 2.0)
    with pytest.raises(ValueError, match="calibration must be"):
        resolve_calibration("exact", 1.0)


def test_noise_scale_matches_the_calibrations_and_laplace():
    assert noise_scale("gaussian", 0.5, 1e-5, 2.0, "auto") == classic_gaussian_sigma(0.5, 1e-5, 2.0)
    assert noise_scale("gaussian", 3.0, 1e-5, 2.0, "auto") == analytic_gaussian_sigma(3.0, 1e-5, 2.0)
    assert noise_scale("laplace", 4.0, sensitivity=2.0) == 0.5
    assert noise_scale("gaussian", math.inf, 1e-5, 1.0) == 0.0
    with pytest.raises(ValueError, match="law"):
        noise_scale("uniform", 1.0, 1e-5)
    mech = GaussianMechanism(0.5, 1e-5, 1.0, "auto")
    assert mech.calibration == "classic" and mech.sigma == classic_gaussian_sigma(0.5, 1e-5)


# ---------------------------------------------------------------- moments release
def _u(z):
    iu = np.triu_indices(z.size)
    return np.outer(z, z)[iu]


def test_scale_rows_puts_every_row_in_the_unit_ball_and_clips_only_rows_beyond_a_bound():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 4)) * 5, rng.normal(size=(300, 1)) * 3
    rows = scale_rows([X, y], [6.0, 2.0], private_centring=True)
    assert row_norms(rows.Z).max() <= 1 + 1e-12
    assert rows.n_clipped == int(((row_norms(X) > 6.0) | (np.abs(y[:, 0]) > 2.0)).sum())
    assert rows.const == pytest.approx(math.hypot(6.0, 2.0)) and rows.Z[:, -1] == pytest.approx(rows.const_z)
    inside = (row_norms(X) <= 6.0) & (np.abs(y[:, 0]) <= 2.0)
    np.testing.assert_allclose(rows.Z[inside, :4] * rows.scale, X[inside], rtol=1e-12)


@pytest.mark.parametrize("weights, const", [((1.0, 1.0), math.sqrt(2.0)), ((1.0, 1.0), 0.0), ((3.0, 1.0), 0.0),
                                            ((3.0, 1.0), math.hypot(3.0, 1.0)), ((1.0,), 0.0)])
def test_add_remove_sensitivity_is_attained_and_never_beaten(weights, const):
    delta = add_remove_sensitivity(weights, const)
    S = math.hypot(*weights, const)
    worst = np.concatenate([[w / S] + [0.0] for w in weights] + ([[const / S]] if const else []))
    assert np.linalg.norm(_u(worst)) == pytest.approx(delta, rel=1e-12)
    rng = np.random.default_rng(1)
    for _ in range(2000):  # random rows at or inside the bounds
        parts = []
        for w in weights:
            v = rng.normal(size=2)
            parts.append(v / np.linalg.norm(v) * w * rng.uniform(0, 1) ** 0.2 / S)
        z = np.concatenate(parts + ([[const / S]] if const else []))
        assert np.linalg.norm(_u(z)) <= delta + 1e-12


def test_replace_one_table_is_attained_by_brute_force_on_a_grid():
    # one block of two coordinates, no constant: sqrt(2) (z = e1, z' = e2)
    swap = _u(np.array([1.0, 0])) - _u(np.array([0, 1.0]))
    assert np.linalg.norm(swap) == pytest.approx(replace_one_sensitivity((1.0,)))
    best = 0.0
    angles = np.linspace(0, 2 * np.pi, 25)
    s = 1 / math.sqrt(2)
    for a, b in itertools.product(angles, angles):  # one block of two coordinates plus the constant 1/sqrt(2)
        z = np.array([s * math.cos(a), s * math.sin(a), s])
        z2 = np.array([s * math.cos(b), s * math.sin(b), s])
        best = max(best, np.linalg.norm(_u(z) - _u(z2)))
    assert best <= replace_one_sensitivity((1.0,), 1.0) + 1e-12
    with pytest.raises(ValueError, match="no proven replace-one"):
        replace_one_sensitivity((2.0, 1.0))


def test_release_is_symmetric_chunked_like_one_draw_and_recorded():
    rng = np.random.default_rng(2)
    rows = scale_rows([rng.normal(size=(40, 3)), rng.normal(size=(40, 1))], [2.0, 1.0], private_centring=True)
    rel = MomentsRelease(1.0, 1e-5, add_remove_sensitivity(rows.weights, rows.const))
    G = rel.gram(rows.Z)
    np.testing.assert_allclose(G, rel.gram(rows.Z, row_chunk=7), rtol=1e-12, atol=1e-14)
    one = rel.randomise(G, 9, np.random.default_rng(5))
    chunked = np.concatenate(list(rel.iter_noisy(G, 9, np.random.default_rng(5), max_entries=2 * 25)))
    np.testing.assert_array_equal(one, chunked)
    assert np.array_equal(one, np.swapaxes(one, 1, 2))
    rec = rel.record(note="test")
    assert rec.scale == rel.sigma == analytic_gaussian_sigma(1.0, 1e-5, rel.sensitivity)
    assert MomentsRelease(math.inf, 1e-5, 1.0).sigma == 0.0


def test_centred_moments_recover_the_exact_mean_and_covariance_without_noise():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3)) * 0.3 + 0.2
    rows = scale_rows([X], [10.0], private_centring=True)
    G = MomentsRelease.gram(rows.Z)[None]
    C, mean, n_hat = centred_moments(G, rows.const_z)
    Zx = rows.Z[:, :3]
    assert n_hat[0] == pytest.approx(200)
    np.testing.assert_allclose(mean[0], Zx.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(C[0], (Zx - Zx.mean(0)).T @ (Zx - Zx.mean(0)), rtol=1e-9, atol=1e-12)
    Cm, mean_m, n = centred_moments(G, rows.const_z, n_public=200)
    np.testing.assert_allclose(Cm[0], np.cov(Zx.T, bias=True), rtol=1e-9, atol=1e-12)
    P = psd_project(np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert np.linalg.eigvalsh(P).min() >= -1e-12


# ---------------------------------------------------------------- constraints, split, log, threads
class _Toy(BaseEstimator):
    _parameter_constraints = {**PRIVACY_PARAMETER_CONSTRAINTS}

    def __init__(self, epsilon=1.0, delta=1e-5, random_state=None):
        self.epsilon, self.delta, self.random_state = epsilon, delta, random_state


@pytest.mark.parametrize("params", [{"epsilon": 0}, {"epsilon": -1}, {"epsilon": float("nan")}, {"delta": 0},
                                    {"delta": 1}, {"random_state": "x"}])
def test_shared_constraints_refuse_bad_budgets(params):
    with pytest.raises(InvalidParameterError):
        _Toy(**params)._validate_params()
    _Toy(epsilon=math.inf, delta=0.5, random_state=np.random.RandomState(0))._validate_params()


def test_split_indices_equals_scikit_learn_and_covers_every_row():
    for n, tf, seed in [(10, 0.3, 0), (57, 0.2, 4), (100, 0.5, 9)]:
        tr, te = train_test_indices(n, tf, random_state=seed)
        ref_tr, ref_te = train_test_split(np.arange(n), test_size=int(round(n * tf)), random_state=seed)
        np.testing.assert_array_equal(tr, np.sort(ref_tr))
        np.testing.assert_array_equal(te, np.sort(ref_te))
    parts = split_indices(101, (0.6, 0.2, 0.2), random_state=np.random.default_rng(1))
    assert [len(p) for p in parts] == [61, 20, 20]
    assert sorted(np.concatenate(parts).tolist()) == list(range(101))
    y = np.repeat([0, 1], [80, 20])
    a, b = split_indices(100, (0.75, 0.25), random_state=0, stratify=y)
    assert y[b].sum() == 5


def test_message_log_records_sends_and_volume():
    class Role:
        def __init__(self, name):
            self.name, self.got = name, {}

        def _receive(self, name, value):
            self.got[name] = value

    log = MessageLog()
    a, b = Role("A"), Role("B")
    value = np.ones((3, 2))
    assert log.send(a, b, "T", value, "scores", phase="fit", step="1") is value
    log.add("B", "A", "q", (), "a scalar", phase="fit", step="2")
    assert b.got["T"] is value and log.messages[0].payload is value and log.messages[1].payload is None
    df = log.to_frame()
    assert df["shape"].tolist() == ["3 x 2", "scalar"] and df["values sent"].tolist() == [6, 1]
    vol = log.volume(by=("sender",)).set_index("sender")
    assert vol.loc["A", "values sent"] == 6 and vol.loc["B", "messages"] == 1



@pytest.mark.parametrize("shape", [(5, 3), (), (np.int64(2), 4)])
def test_add_each_records_what_one_add_per_sender_records(shape):
    one_by_one, batched = MessageLog(), MessageLog()
    senders = ["north", "south", "east"]
    for sender in senders:
        one_by_one.add(sender, "central", "Z_Ai B_Ai^k", shape, "a contribution", step=4)
    batched.add_each(senders, "central", "Z_Ai B_Ai^k", shape, "a contribution", step=4)
    assert batched.records == one_by_one.records
    assert batched.to_frame().equals(one_by_one.to_frame())

def test_one_blas_thread_limits_inside_and_restores_after():
    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS threadpool visible to threadpoolctl")
    before = [i["num_threads"] for i in blas]
    with one_blas_thread():
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    assert [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"] == before
