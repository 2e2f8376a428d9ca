"""PCA-Gauss as a package (issue #17): old import paths still work, modules stay small, audit cases live here."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

import engine.data.tables as tables
import engine.methods.pca_gauss as pg
from engine.methods.pca_gauss import audit_case, baselines, utility
from engine.privacy import audit

ROOT = Path(__file__).resolve().parents[1]


def test_old_module_paths_are_the_package_modules():
    assert importlib.import_module("engine.methods.synthetic_utility") is utility
    assert importlib.import_module("engine.methods.pca_gauss_baselines") is baselines
    from engine.methods.pca_gauss_baselines import IdentityQueryRelease
    from engine.methods.synthetic_utility import _real_space, arrays_from_frame, load_bundled, make_split  # noqa: F401

    assert IdentityQueryRelease is baselines.IdentityQueryRelease
    assert arrays_from_frame is tables.arrays_from_frame and load_bundled is tables.load_bundled
    assert make_split is utility.make_split


def test_package_exports_every_old_public_name():
    for name in pg.__all__:
        assert hasattr(pg, name), name
    # names pages, tests and bench import from the old module, private ones included
    for name in ("FINDINGS", "N_PUBLIC_NOTE", "TASKS", "can_map_back", "owner_sheets", "shareable_release",
                 "model_from_release", "to_json", "pipeline_audit_case", "_draw", "_sampling_covariance",
                 "_public_bounds", "_ReleaseTransformer", "MODES"):
        assert hasattr(pg, name), name


def test_every_module_of_the_package_is_small():
    for path in sorted((ROOT / "engine" / "methods" / "pca_gauss").glob("*.py")) + [ROOT / "engine/data/tables.py"]:
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert n <= 550, f"{path.name}: {n} lines"


@pytest.mark.parametrize("mode,bug", [("strict", None), ("paper", None), ("strict", "noise_halved")])
def test_audit_case_copy_matches_the_catalogue(mode, bug):
    ours, theirs = audit_case.pca_gauss_case(mode, 1.0, bug=bug), audit.pca_gauss_case(mode, 1.0, bug=bug)
    for field in ("name", "method", "mode", "claimed_eps", "delta", "neighbours", "expect", "note", "bug"):
        assert getattr(ours, field) == getattr(theirs, field)
    np.testing.assert_array_equal(ours.D, theirs.D)
    np.testing.assert_array_equal(ours.D_prime, theirs.D_prime)
    a = ours.release(ours.D, np.random.default_rng(3), 5)
    b = theirs.release(theirs.D, np.random.default_rng(3), 5)
    np.testing.assert_array_equal(a, b)


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
