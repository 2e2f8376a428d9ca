"""VAR-ADMM privacy decisions as engine functions: the range declaration and the report's statement.

The page used to decide these itself; here they are driven by explicit declarations only.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.methods.var_admm import (
    RANGE_NOT_DECLARED,
    calibrates_from_epsilon,
    defence_ledger,
    noise_defence,
    noise_range_declaration,
    privacy_statement,
)


def test_declared_range_is_public_and_proven():
    d = noise_range_declaration((0.0, 1.2), True)
    assert d.public_range == (0.0, 1.2)
    assert d.declared_public and d.proven
    assert d.sensitivity_source == "public"
    assert d.status == "declared public"
    assert d.caveat is None
    assert d.summary == "**Declared public.**"


def test_undeclared_range_is_not_proven_with_the_ledger_caveat():
    d = noise_range_declaration([-3, 5], False)
    assert d.public_range == (-3.0, 5.0)
    assert not d.declared_public and not d.proven
    assert d.sensitivity_source == "data"
    assert d.status == "not proven"
    assert d.caveat == RANGE_NOT_DECLARED
    assert d.summary == "Not declared public: **not proven**."


@pytest.mark.parametrize("flag", ["yes", 1, None, "False"])
def test_declaration_must_be_a_bool_not_a_truthy_value(flag):
    with pytest.raises(TypeError, match="declared_public"):
        noise_range_declaration((0.0, 1.0), flag)


def test_numpy_bool_is_a_declaration():
    assert noise_range_declaration((0.0, 1.0), np.bool_(True)).declared_public


@pytest.mark.parametrize("bad", [(1.0, 1.0), (2.0, 1.0), (0.0, float("inf")), ("a", 1.0), (1.0,)])
def test_bad_range_is_refused(bad):
    with pytest.raises(ValueError, match="public_range"):
        noise_range_declaration(bad, True)


@pytest.mark.parametrize("declared", [True, False])
def test_the_ledger_follows_the_declaration(declared):
    d = noise_range_declaration((0.0, 1.0), declared)
    led = defence_ledger("laplace", 0.5, (0.0, 1.0), declared, T=10, n_owners=2, seed_known=False)
    assert led.per_series.entries[0].sensitivity_source == d.sensitivity_source
    assert (RANGE_NOT_DECLARED in led.reasons_not_proven()) == (not declared)
    assert led.proven == d.proven


def test_privacy_statement_three_cases():
    Y = np.random.default_rng(0).uniform(0, 1, (20, 2))
    declared = noise_defence(Y, "laplace", 0.5, public_range=(0.0, 1.0), declared_public=True)
    undeclared = noise_defence(Y, "laplace", 0.5, public_range=(0.0, 1.0), declared_public=False)
    uniform = noise_defence(Y, "uniform", 0.5, public_range=(0.0, 1.0), declared_public=True)
    text = privacy_statement(declared)
    assert text.startswith("**The collaborative VAR is not differentially private; the noise defence is.**")
    assert declared.defence.headline() in text
    assert "**not proven**" in privacy_statement(undeclared)
    assert "nothing here carries a guarantee" in privacy_statement(uniform)
    assert "nothing here carries a guarantee" in privacy_statement(None)


@pytest.mark.parametrize("law, mode, expected", [("laplace", "strict", True), ("gaussian", "strict", True),
                                                 ("laplace", "paper", False), ("uniform", "strict", False)])
def test_only_dp_laws_in_strict_mode_calibrate_from_epsilon(law, mode, expected):
    assert calibrates_from_epsilon(law, mode) is expected
