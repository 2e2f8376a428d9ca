"""PCA-Gauss as a package (issue #17): old import paths still work, modules stay small, audit cases live here."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

import engine.data.tables as tables
import engine.methods.pca_gauss as pg
from engine.methods.pca_gauss import baselines, utility

ROOT = Path(__file__).resolve().parents[1]


def test_old_module_paths_are_the_package_modules():
    assert importlib.import_module("engine.methods.pca_gauss.utility") is utility
    assert importlib.import_module("engine.methods.pca_gauss.baselines") is baselines
    from engine.methods.pca_gauss.baselines import IdentityQueryRelease
    from engine.methods.pca_gauss.utility import _real_space, arrays_from_frame, load_bundled, make_split  # noqa: F401

    assert IdentityQueryRelease is baselines.IdentityQueryRelease
    assert arrays_from_frame is tables.arrays_from_frame and load_bundled is tables.load_bundled
    assert make_split is utility.make_split


def test_package_exports_every_old_public_name():
    for name in pg.__all__:
        assert hasattr(pg, name), name
    # the public names pages, tests and bench import from the package; private ones stay in their modules
    for name in ("FINDINGS", "N_PUBLIC_NOTE", "TASKS", "can_map_back", "owner_sheets", "shareable_release",
                 "model_from_release", "to_json", "pipeline_audit_case", "MODES"):
        assert hasattr(pg, name), name
    for name in ("_draw", "_sampling_covariance", "_public_bounds", "_ReleaseTransformer"):
        assert not hasattr(pg, name), name  # issue #29: no private re-exports


def test_every_module_of_the_package_is_small():
    for path in sorted((ROOT / "engine" / "methods" / "pca_gauss").glob("*.py")) + [ROOT / "engine/data/tables.py"]:
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert n <= 550, f"{path.name}: {n} lines"


@pytest.mark.parametrize("n,k,seed", [(569, 114, 0), (455, 40, 3), (97, 12, 11)])
def test_two_part_split_is_scikit_learns(n, k, seed):
    """make_split's slices come from engine.data.split.split_indices, row for row (and in the same order) as
    scikit-learn's train_test_split that the harness used before, plain and stratified."""
    from sklearn.model_selection import train_test_split

    from engine.methods.pca_gauss.evaluation import _two_parts

    idx = np.arange(n)
    labels = np.arange(n) % 3
    for stratify in (None, labels):
        first, second = _two_parts(n, k, seed, stratify=stratify)
        train, test = train_test_split(idx, test_size=k, random_state=seed, stratify=stratify)
        np.testing.assert_array_equal(first, train)
        np.testing.assert_array_equal(second, test)


# ------------------------------------------------------------------------------------------ compare (method contract)
@pytest.fixture(scope="module")
def cancer_split():
    from engine.methods.pca_gauss.evaluation import make_split

    X, y, _ = tables.arrays_from_frame(tables.load_bundled("breast_cancer"), "classification", "target")
    return make_split(X, y, "classification", random_state=0), tables.documented_public_inputs("breast_cancer")


def test_compare_classification_strict_is_proven(cancer_split):
    from engine.methods.contract import Comparison
    from engine.privacy.wording import ledger_text

    split, doc = cancer_split
    c = pg.compare((split.X_train, split.y_train), (split.X_test, split.y_test), epsilon=1.0, delta=None,
                   task="classification", n_components=3, pca_source="public", bounds=doc.bounds, labels=doc.labels,
                   X_public=split.X_public)
    assert isinstance(c, Comparison) and isinstance(c.private, pg.PCAGauss)
    assert c.private.mode == "strict" and c.private.n_train_ == len(split.X_train)
    assert set(c.headline) == {f"{m} ({w})" for m in ("SVM accuracy", "logistic-regression accuracy")
                               for w in ("synthetic", "real")}
    assert all(0.0 <= v <= 1.0 for v in c.headline.values())
    assert c.headline["SVM accuracy (real)"] > 0.9  # the reference: SVM on the real training rows
    assert c.status == "proven" and c.ledger.total("basic")[0] == pytest.approx(1.0)
    assert c.guarantee == ledger_text(c.ledger) and "proven guarantee" in c.guarantee


def test_compare_regression_without_noise_matches_the_real_data():
    from engine.methods.pca_gauss.evaluation import make_split

    X, y, _ = tables.arrays_from_frame(tables.load_bundled("diabetes"), "regression", "target")
    split = make_split(X, y, "regression", random_state=0)
    kw = dict(task="regression", n_components=5, pca_source="identity", bounds=(-1.0, 1.0), y_bounds=(25.0, 346.0))
    c = pg.compare((split.X_train, split.y_train), (split.X_test, split.y_test), epsilon=np.inf, delta=None,
                   random_state=1, **kw)
    assert c.status == "no privacy" and "No private release" in c.guarantee
    # eps = inf: the synthetic rows come from the exact full-dimensional Gaussian, so a linear model trained on
    # them predicts the real test rows as well as one trained on the real rows (RMSE in the units of y).
    real, syn = c.headline["linear RMSE (real)"], c.headline["linear RMSE (synthetic)"]
    assert 30.0 < real < 100.0 and syn == pytest.approx(real, rel=0.1)
    again = pg.compare((split.X_train, split.y_train), (split.X_test, split.y_test), epsilon=1.0, delta=None,
                       random_state=1, **kw)
    assert again.headline == pg.compare((split.X_train, split.y_train), (split.X_test, split.y_test), epsilon=1.0,
                                        delta=None, random_state=1, **kw).headline  # a known seed reproduces
    assert again.status == "not proven"  # ... and is a caveat


def test_compare_clustering_scores_on_the_training_rows(cancer_split):
    split, doc = cancer_split
    c = pg.compare((split.X_train, None), (split.X_train, split.y_train), epsilon=2.0, delta=None,
                   n_components=2, pca_source="public", bounds=doc.bounds, X_public=split.X_public, K=2)
    assert c.private.task == "unsupervised" and c.status == "proven"
    assert {"silhouette (synthetic)", "silhouette (real)", "transfer ARI (synthetic)",
            "label ARI (real)"} <= set(c.headline)
