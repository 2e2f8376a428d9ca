"""Property tests, part 2: hostile input is a named ValueError for every method (the cases, strategies and
budgets are those of tests/test_properties.py, whose docstring explains the two right-fit exceptions)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from sklearn.decomposition import PCA

from engine.methods.dp_cca import DPCCA
from engine.methods.edpls import EDPLS
from engine.methods.pca_gauss import PCAGauss
from engine.methods.var_admm import lagged_design
from hypothesis_strategies import (
    IN_Y,
    KINDS,
    WHERE,
    block_cases,
    block_frames,
    inject,
    locate,
    pca_cases,
    pca_frame,
    regression_cases,
    regression_frame,
    two_view_cases,
    two_view_frames,
    var_cases,
    var_frame,
)
from test_properties import budget, p3ls_fit, paper_box, rel, var_model

# =============================================================================================
# Hostile input: a named ValueError (the two right-fit exceptions: see the module docstring)
# =============================================================================================
#: What the message must say besides the column's name, per kind of hostile input.
CAUSES = {
    "nan": r"nan|missing|not a number",
    "inf": r"inf",
    "huge": r"overflow|too large|huge|magnitude|range",
    "tiny_column": r"underflow|too small|tiny|magnitude|range",
    "constant": r"constant|no variation|does not vary|zero variance",
    "duplicate": r"duplicat|collinear|identical|same values|linearly dependent|copy of",
    "text": r"numeric|number|text|string",
    "one_row": r"row|sample|observation",
}
assert tuple(CAUSES) == KINDS


def check_named_refusal(fit, frames: dict, kind: str, where, *, accept=None, groups=None):
    """``fit(frames)`` on the hostile copies raises a ValueError naming the column and the problem."""
    bad, wanted = inject(frames, kind, where, groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's overflow warnings are not the answer we look for
        try:
            fit(bad)
        except ValueError as err:
            msg = str(err)
        else:
            if accept is not None and accept(bad, wanted):
                return
            pytest.fail(f"{kind} at {locate(kind, frames, where, groups)}: fitted without an error")
    assert re.search(CAUSES[kind], msg, re.I), f"{kind}: the message does not name the problem: {msg}"
    if wanted:
        assert any(w in msg for w in wanted), f"{kind}: the message names no column of {wanted}: {msg}"
        every = [c for f in frames.values() for c in f.columns]
        if len(every) >= 3:
            assert not all(c in msg for c in every), f"{kind}: the message lists every column: {msg}"


@pytest.mark.parametrize("kind", KINDS)
@budget(8)
@given(case=regression_cases(max_m=6), where=WHERE)
@example(case=(0, 8, 3), where=IN_Y)
def test_edpls_hostile_input_is_a_named_value_error(kind, case, where):
    seed, n, m = case
    X, y = regression_frame(seed, n, m)
    frames = {"X": X, "y": y.to_frame()}
    check_named_refusal(lambda f: EDPLS(2, 1.0, random_state=0).fit(f["X"], f["y"].iloc[:, 0]), frames, kind, where)


@pytest.mark.parametrize("kind", KINDS)
@budget(8)
@given(case=two_view_cases(), where=WHERE)
@example(case=(0, 40, 3, 2), where=IN_Y)
def test_dpcca_hostile_input_is_a_named_value_error(kind, case, where):
    seed, n, dx, dy = case
    X, Y = two_view_frames(seed, n, dx, dy)
    frames = {"X": X, "Y": Y}
    check_named_refusal(lambda f: DPCCA(2, 1.0, random_state=0).fit(f["X"], f["Y"]), frames, kind, where)


def pca_gauss_fits_right(kind: str):
    """PCA-Gauss accepts constant and duplicated columns by design (``pca_gauss.read_records``: PCA inverts
    nothing, and scikit-learn's digits, a data set of the page, has constant and identical pixels): the
    issue's refusal does not apply, but the fit must then be right, never silent garbage. A constant
    column boxes to 0: at eps = inf its row of W is 0 and the rest is the fit without it, with S = W'X'XW /
    (M N) scaled by (M - 1) / M for the extra column in M. A duplicate: eps = inf equals scikit-learn's PCA
    of the boxed data."""
    def constant(bad, wanted):
        X = bad["X"]
        m = X.shape[1]
        j = X.columns.get_loc(wanted[0])
        full = PCAGauss(2, np.inf).fit(X)
        without = PCAGauss(2, np.inf).fit(X.drop(columns=wanted[0]))
        return (rel(full.covariance_raw_, without.covariance_raw_ * (m - 1) / m) < 1e-9
                and float(np.abs(full.components_[j]).max()) < 1e-12
                and rel(np.delete(full.components_, j, axis=0), without.components_) < 1e-9)

    def duplicate(bad, wanted):
        X = bad["X"].to_numpy()
        n, m = X.shape
        est = PCAGauss(2, np.inf).fit(bad["X"])
        lam = PCA(2).fit(paper_box(X)).explained_variance_ * (n - 1)
        return bool(np.allclose(est.covariance_raw_, np.diag(lam) / (m * n), rtol=0, atol=1e-10))

    return {"constant": constant, "duplicate": duplicate}.get(kind)


@pytest.mark.parametrize("kind", KINDS)
@budget(8)
@given(case=pca_cases(), where=WHERE)
def test_pca_gauss_hostile_input_is_a_named_value_error(kind, case, where):
    """A named ValueError; constant and duplicated columns may instead be fitted, correctly (see
    ``pca_gauss_fits_right``)."""
    seed, n, m = case
    frames = {"X": pca_frame(seed, n, m)}
    check_named_refusal(lambda f: PCAGauss(2, 1.0, random_state=0).fit(f["X"]), frames, kind, where,
                        accept=pca_gauss_fits_right(kind))


@pytest.mark.parametrize("kind", KINDS)
@budget(8)
@given(case=block_cases(), where=WHERE)
def test_p3ls_hostile_input_is_a_named_value_error(kind, case, where):
    seed, n, sizes, l = case
    blocks, Y = block_frames(seed, n, sizes, l)
    frames = {f"block{i}": b for i, b in enumerate(blocks)} | {"Y": Y}

    def fit(f):
        return p3ls_fit([f[f"block{i}"] for i in range(len(blocks))], f["Y"])

    check_named_refusal(fit, frames, kind, where, groups={k: "Y" if k == "Y" else "X" for k in frames})


@pytest.mark.parametrize("kind", KINDS)
@budget(8)
@given(case=var_cases(), solver=st.sampled_from(["central", "admm"]), where=WHERE)
def test_var_hostile_input_is_a_named_value_error(kind, case, solver, where):
    """A duplicated owner series may instead be fitted to the minimum-norm solution with a warning, the
    same answer for every seed (the issue's "Identification" clause)."""
    seed, n, p, T = case
    frames = {"Y": var_frame(seed, n, p, T)}
    kw = {"max_iter": 2000} if solver == "admm" else {}

    def min_norm_with_warning(bad, wanted):
        Y = bad["Y"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits = [var_model(solver, p, **kw).set_params(random_state=s).fit(Y) for s in (0, 1)]
        if not any(any(w in str(c.message) for w in wanted) for c in caught):
            return False  # no warning naming the series: a silent fit
        Z, target = lagged_design(Y.to_numpy(), p)
        Zc, tc = Z - Z.mean(axis=0), target - target.mean(axis=0)
        B = np.linalg.pinv(Zc) @ tc  # minimum-norm least squares, owner-major like coef_owner_major_
        return all(rel(f.coef_owner_major_, B) < 1e-6 for f in fits)

    check_named_refusal(lambda f: var_model(solver, p, **kw).fit(f["Y"]), frames, kind, where,
                        accept=min_norm_with_warning if kind == "duplicate" else None)
