"""edPLS's method-contract entry point ``compare`` and the package layout (issue #17)."""
import importlib

import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression

import engine.methods.edpls as edmod
from engine.methods.contract import Comparison
from engine.methods.edpls import EDPLS, compare, edpls_case
from engine.privacy import SEED_KNOWN_CAVEAT
from engine.privacy.audit import AuditCase
from engine.privacy.wording import ledger_text

STRICT = dict(n_components=3, x_bound=6.0, y_bound=8.0)


def _data(n=120, m=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m))
    y = X @ rng.standard_normal(m) + 0.2 * rng.standard_normal(n)
    return (X[:90], y[:90]), (X[90:], y[90:])


def test_compare_strict_returns_the_contract():
    train, test = _data()
    out = compare(train, test, epsilon=2.0, delta=1e-5, **STRICT)
    assert isinstance(out, Comparison)
    assert isinstance(out.private, EDPLS) and out.private.mode == "strict" and out.private.n_components == 3
    assert set(out.headline) == {"RMSEP (private)", "RMSEP (non-private)", "R² (private)", "R² (non-private)"}
    Xte, yte = test
    assert out.headline["RMSEP (private)"] == pytest.approx(np.sqrt(np.mean((yte - out.private.predict(Xte)) ** 2)))
    assert out.ledger is out.private.privacy_ledger_ and len(out.ledger) == 1
    assert out.guarantee == ledger_text(out.ledger)
    assert out.status == "proven" and out.notes == ()  # fresh noise, public bounds


def test_compare_reference_is_plain_pls_at_the_same_k():
    train, test = _data(seed=1)
    out = compare(train, test, epsilon=1.0, delta=1e-5, **STRICT)
    ref = PLSRegression(n_components=3, scale=False).fit(*train)
    np.testing.assert_allclose(out.reference.coef_, ref.coef_.ravel(), rtol=1e-9, atol=1e-12)
    assert not len(out.reference.privacy_ledger_)  # epsilon = inf: nothing released under DP
    pred = ref.predict(test[0]).ravel()
    assert out.headline["RMSEP (non-private)"] == pytest.approx(np.sqrt(np.mean((test[1] - pred) ** 2)), rel=1e-9)


def test_compare_same_seed_same_draw_and_the_seed_is_recorded():
    train, test = _data(seed=2)
    a = compare(train, test, epsilon=1.0, delta=1e-5, random_state=5, **STRICT)
    b = compare(train, test, epsilon=1.0, delta=1e-5, random_state=5, **STRICT)
    np.testing.assert_array_equal(a.private.coef_, b.private.coef_)
    assert a.status == "not proven" and SEED_KNOWN_CAVEAT in a.notes
    assert "not** a proven guarantee" in a.guarantee


def test_compare_paper_mode_is_not_proven():
    train, test = _data(seed=3)
    out = compare(train, test, epsilon=5.0, delta=1e-5, mode="paper", n_components=2)
    assert out.private.mode == "paper" and out.status == "not proven"
    assert len(out.ledger) == 8  # w, t, p, c per component


def test_registry_resolves_compare_estimator_and_audit_case():
    from engine.methods.audit_catalog import make_case
    from engine.methods.registry import method

    spec = method("edpls")
    assert spec.compare is compare and spec.estimator is EDPLS
    case = make_case("edpls", "strict", 1.0, 1e-5)
    assert isinstance(case, AuditCase) and case.expect == "holds"


@pytest.mark.parametrize("mode, expect", [("strict", "holds"), ("paper", "report")])
def test_edpls_case_lives_with_the_method(mode, expect):
    case = edpls_case(mode, 1.0, 1e-5)
    assert case.expect == expect and case.name == f"edpls_{mode}"
    out = case.release(case.D, np.random.default_rng(0), 3)
    assert out.ndim == 2 and out.shape[0] == 3
    from engine.methods.audit_catalog import make_case

    assert make_case("edpls", "strict", 1.0, 1e-5, bug="noise_halved").expect == "violated"


@pytest.mark.parametrize("old", ["edpls_core", "edpls_release", "edpls_pipeline"])
def test_old_alias_module_paths_are_gone(old):
    """The sys.modules alias shims were deleted (issue #29): the real paths are engine.methods.edpls.*."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"engine.methods.{old}")


def test_old_names_keep_working():
    core = importlib.import_module("engine.methods.edpls.core")
    assert core.pls1_from_moments is edmod.pls1_from_moments and core.strict_sensitivity is edmod.strict_sensitivity
    assert core._COPY_LIMIT > 0
    pipeline = importlib.import_module("engine.methods.edpls.pipeline")
    assert pipeline.pipeline_audit_case is edmod.pipeline_audit_case and pipeline.PAGE_DEFAULTS is edmod.PAGE_DEFAULTS


def test_declarative_validation_keeps_the_messages_and_accepts_generators():
    X, y = _data()[0]
    # a set's order follows the string hash (PYTHONHASHSEED): either order is the same message
    either = "'(paper|strict)', '(paper|strict)'"
    with pytest.raises(ValueError, match=r"mode must be one of \{" + either + r"\}\. Got 'tight' instead"):
        EDPLS(mode="tight").fit(X, y)
    with pytest.raises(ValueError, match="calibration must be one of"):
        EDPLS(calibration="exact").fit(X, y)
    EDPLS(n_components=2, random_state=np.random.default_rng(0)).fit(X, y)
    EDPLS(n_components=2, random_state=np.random.SeedSequence(0)).fit(X, y)
    auto = EDPLS(n_components=2, epsilon=0.5, delta=1e-5, calibration="auto", random_state=0).fit(X, y)
    assert {r.calibration for r in auto.privacy_ledger_.entries} == {"classic"}  # eps <= 1: classic
