"""The method registry is complete: every registered method has what the app, the audit and the benches need.

A method added to ``engine.methods.registry.METHODS`` without its page, estimator, ``compare``, audit case,
reproduction script or hostile-upload spec (tests/test_hostile_pages.py) fails here, not silently later.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

from engine.methods.audit_catalog import AUDIT_TARGETS, audit_cases, make_case
from engine.methods.contract import Comparison
from engine.methods.registry import METHODS, method
from engine.privacy.audit import AuditCase
from ui.pages import METHOD_PAGES

ROOT = Path(__file__).resolve().parents[1]
KEYS = [spec.key for spec in METHODS]


def test_keys_are_unique_and_pages_follow_the_registry():
    assert len(set(KEYS)) == len(KEYS)
    assert [p.file for p in METHOD_PAGES] == [spec.page for spec in METHODS]
    with pytest.raises(KeyError, match="registered"):
        method("nope")


@pytest.mark.parametrize("key", KEYS)
def test_each_method_has_its_page_estimator_compare_and_reproduction(key):
    spec = method(key)
    assert (ROOT / spec.page).is_file(), spec.page
    assert (ROOT / spec.reproduction).is_file(), spec.reproduction
    assert issubclass(spec.estimator, BaseEstimator)
    params = inspect.signature(spec.compare).parameters
    assert list(params)[:2] == ["train", "test"] and {"epsilon", "delta", "random_state"} <= set(params)
    assert spec.data_kind in ("spectra", "table", "two_views", "party_blocks", "panel")
    assert spec.export_format in ("model_json", "synthetic_csv", "none")


@pytest.mark.parametrize("key", KEYS)
def test_each_method_that_releases_under_dp_has_an_audit_case_in_every_mode(key):
    spec = method(key)
    if spec.export_format == "none":
        assert spec.audit == (), "a method that releases nothing under DP has nothing to audit"
        return
    assert spec.audit, f"{key} releases under DP but has no audit case"
    for target in spec.audit:
        assert AUDIT_TARGETS[target.key] == (target.label, target.modes)
        for mode in target.modes:
            case = make_case(target.key, mode, 1.0, 1e-5)
            assert isinstance(case, AuditCase) and case.claimed_eps > 0


def test_catalogue_covers_every_target_and_refuses_bad_choices():
    names = {c.method for c in audit_cases(include_bugs=False)}
    assert {"edpls", "dp_pcr", "dp_cca", "pca_gauss"} <= names
    with pytest.raises(ValueError, match="target must be one of"):
        make_case("nope")
    with pytest.raises(ValueError, match="has no 'paper' mode"):
        make_case("dp_pcr", "paper")


def test_comparison_status_follows_the_ledger():
    assert Comparison(None, None, {}, None, "no guarantee").status == "no privacy"
