"""The guarantee's wording (issue #19): one headline per result, its unit, plurals, paper mode's label, plain words.

Oracles: :func:`engine.privacy.ledger.ledger_totals` (every accountant's total, computed independently of the
wording), the closed form of a Laplace release (ε = Δ/b, composed over T values: T·Δ/b), the stored audit
figures reproduced by the auditor itself, and the pages' source text (parsed with ``ast``).
"""
from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

from engine.methods.var_admm import defence_ledger
from engine.privacy.ledger import PrivacyLedger, Release, ledger_totals
from engine.privacy.wording import (
    NEIGHBOURING_DETAIL,
    NEIGHBOURING_NOTE,
    PAPER_AUDITS,
    accountants_frame,
    headline_total,
    ledger_text,
    neighbouring_text,
    paper_audit,
    paper_claim,
    paper_label,
    plural,
)

ROOT = Path(__file__).resolve().parents[1]


def _gauss(name="g", sigma=1.0, sensitivity=1.0, delta=1e-5, source="public"):
    return Release.gaussian(name=name, sigma=sigma, sensitivity=sensitivity, delta=delta, sensitivity_source=source)


def _laplace(name="l", b=1.0, sensitivity=1.0, source="public"):
    return Release(name=name, mechanism="laplace", sensitivity=sensitivity, scale=b, epsilon=sensitivity / b,
                   delta=0.0, sensitivity_source=source)


def _ledger(*releases, **kw) -> PrivacyLedger:
    led = PrivacyLedger(**kw)
    led.extend(releases)
    return led


def _eps_in(text: str) -> float:
    return float(re.search(r"\(ε = ([0-9.e+-]+), δ = ", text).group(1))


# ----------------------------------------------------------------------------- one headline
@pytest.mark.parametrize("releases", [
    (_gauss(sigma=2.0), _gauss(sigma=3.0, sensitivity=2.0)),  # Gaussian only: exact composition
    (_gauss(sigma=2.0), _laplace(b=2.0), _laplace(b=4.0)),  # mixed: the PLD accountant
], ids=["gaussian", "mixed"])
def test_headline_is_the_pld_total_and_the_others_are_not_beside_it(releases):
    led = _ledger(*releases)
    oracle = ledger_totals(led, 1e-5, pld=True, as_json=False)
    text = ledger_text(led, 1e-5)
    assert _eps_in(text) == pytest.approx(oracle["pld"][0], rel=1e-3)
    assert headline_total(oracle, 1e-5)[:2] == pytest.approx(oracle["pld"])
    assert min(oracle[k][0] for k in ("zcdp", "basic")) > oracle["pld"][0]  # PLD is the tightest here
    # stated once: no other accountant's total in the sentence
    for key in ("basic", "zcdp"):
        assert f"{oracle[key][0]:.4g}" not in text
    assert text.count("ε = ") == 1 and "Guarantee: (ε = " in text and "proven." in text


def test_without_pld_the_headline_is_the_smallest_valid_total():
    """Without PLD: the smallest of zCDP, exact Gaussian (Gaussian-only ledgers only) and the basic sum when its δ
    is within the target δ; the exact Gaussian total is never used for a ledger with Laplace releases."""
    gauss = _ledger(*[_gauss(sigma=4.0) for _ in range(10)])
    s = ledger_totals(gauss, 1e-4, as_json=False)  # basic δ = 1e-4: valid at δ = 1e-4
    eps, d, key = headline_total(s, 1e-4)
    assert eps == pytest.approx(min(s["gdp"][0], s["zcdp"][0], s["basic"][0])) and key == "gdp"
    mixed = _ledger(_gauss(sigma=4.0), _laplace(b=1.0))
    s = ledger_totals(mixed, 1e-5, as_json=False)
    assert "gdp" not in s
    eps, d, key = headline_total(s, 1e-5)
    assert key in ("zcdp", "basic") and eps == pytest.approx(min(s["zcdp"][0], s["basic"][0]))
    # a basic total at a larger δ than the target is not valid at the target δ
    many = _ledger(*[_gauss(sigma=50.0, delta=1e-5) for _ in range(5)])  # basic δ = 5e-5
    s = ledger_totals(many, 1e-5, as_json=False)
    assert s["basic"][1] > 1e-5 and headline_total(s, 1e-5)[2] != "basic"


def test_one_laplace_release_is_pure_dp():
    led = _ledger(_laplace(b=0.5, sensitivity=2.0))
    text = ledger_text(led, 1e-5)
    assert "(ε = 4, δ = 0)-differential privacy" in text  # Δ/b = 4, δ = 0 (closed form)


def test_accountants_table_lists_every_total_and_marks_the_headline():
    led = _ledger(_gauss(sigma=2.0), _laplace(b=2.0))
    oracle = ledger_totals(led, 1e-5, pld=True, as_json=False)
    table = accountants_frame(led, 1e-5)
    marked = table[table["headline"] != ""]
    assert len(marked) == 1 and marked["ε"].iloc[0] == pytest.approx(oracle["pld"][0])
    assert sorted(table["ε"].dropna()) == pytest.approx(sorted(oracle[k][0] for k in ("pld", "zcdp", "basic")))
    gdp = table[table["accountant"].str.contains("Gaussian")]
    assert gdp["valid for this ledger"].iloc[0].startswith("no")  # exact Gaussian: not for a Laplace release


def test_not_proven_states_its_reasons():
    led = _ledger(_gauss(source="data", name="w1"))
    led.add_caveat("not proven: the noise seed is known")
    text = ledger_text(led)
    assert ", not proven.**" in text and "the noise seed is known" in text and "w1" in text
    assert ", proven." not in text
    assert ledger_text(PrivacyLedger()).startswith("No private release")


# ----------------------------------------------------------------------------- plurals and units
def test_plural():
    assert plural(1, "release") == "1 release" and plural(2, "release") == "2 releases"
    assert plural(0, "release") == "0 releases" and plural(1, "series", "series") == "1 series"
    assert "1 noisy release," in ledger_text(_ledger(_gauss()))
    assert "3 noisy releases," in ledger_text(_ledger(_gauss(), _gauss(), _gauss()))


def test_no_counted_plural_written_with_s_in_parentheses():
    """"1 release(s)" / "1 releases": counted nouns go through plural()."""
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("ui/*/*.py"),
                 ROOT / "engine/privacy/wording.py",
                 ROOT / "engine/reporting/report.py"]:
        text = path.read_text()
        assert "release(s)" not in text and "releases(s)" not in text, path


def test_var_admm_headline_names_its_unit():
    """Per series: T·Δ/b (closed form), said to protect an owner's whole series; the per-value ε (Δ/b) is said to
    protect one value, and the per-series sentence never shows it."""
    T, width, b = 2880, 1.2, 1.2
    led = defence_ledger("laplace", b, (0.0, width), True, T, 3, False)
    series, value = ledger_text(led.ledger), ledger_text(led.per_value)
    assert _eps_in(series) == pytest.approx(T * width / b, rel=1e-3)
    assert "per owner's whole series" in series and "replaced by another" in series
    assert _eps_in(value) == pytest.approx(width / b) and "per value of one owner's series" in value
    assert "owner's whole series" not in value.split("(one")[0]
    # the unit survives the shareable round trip
    from engine.release.export import ledger_from_dict
    assert ledger_from_dict(led.ledger.to_dict()).unit == led.ledger.unit


def test_neighbouring_relation_is_stated():
    add = _ledger(_gauss())
    rep = _ledger(_gauss(), neighbouring="replace")
    assert neighbouring_text(add) == "per row (one row added or removed)"
    assert neighbouring_text(rep) == "per row (one row replaced by another)"
    assert "added or removed" in ledger_text(add) and "replaced by another" in ledger_text(rep)
    assert "twice" in NEIGHBOURING_NOTE and "(2ε, (1 + e^ε)·δ)" in NEIGHBOURING_DETAIL


def test_method_ledgers_carry_their_relation():
    """edPLS is add/remove, DP-CCA replace-one: each fit's own ledger says so, and so does its headline."""
    import numpy as np

    from engine.methods.dp_cca import DPCCA
    from engine.methods.edpls import EDPLS
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(80, 4)), rng.normal(size=(80, 2))
    ed = EDPLS(n_components=2, epsilon=1.0, mode="strict", x_bound=3.0, y_bound=3.0).fit(X, Y[:, 0])
    cca = DPCCA(n_components=1, epsilon=1.0, delta=1e-5, mode="strict", row_bound=1.0).fit(X, Y)
    assert "(one row added or removed)" in ledger_text(ed.privacy_ledger_)
    assert "(one row replaced by another)" in ledger_text(cca.privacy_ledger_)


# ----------------------------------------------------------------------------- paper mode
def test_paper_label_says_claimed_and_not_valid():
    label = paper_label("edPLS", 1.0, "edpls")
    audit, exact = paper_audit("edpls", 1.0)
    assert exact and label == (f"edPLS paper mode: claimed ε = 1 per release (not valid; audit finds "
                               f"ε ≥ {audit.epsilon_lb:.3g})")
    assert audit.epsilon_lb > 1.0
    other = paper_label("DP-CCA", 0.5, "dp_cca")  # not measured at 0.5: the nearest measured claim is named
    near, exact = paper_audit("dp_cca", 0.5)
    assert not exact and f"at a claimed ε = {near.claimed_epsilon:g} the audit finds" in other
    assert paper_label("edPLS", 1.0, None).endswith("(not valid: its noise is scaled by the private data)")
    assert paper_claim(None, "pca_gauss").startswith("claimed ε per release (not valid; at a claimed ε = ")


def test_every_stored_audit_exceeds_its_claim():
    assert {a.method for a in PAPER_AUDITS} == {"edpls", "dp_cca", "pca_gauss"}
    assert all(a.epsilon_lb > a.claimed_epsilon for a in PAPER_AUDITS)


def test_a_stored_audit_figure_is_what_the_auditor_measures():
    """The stored figure is reproduced by the catalogue audit with its documented settings (PCA-Gauss at a
    claimed ε = 1: the fastest case, about 2 s)."""
    from engine.methods.audit_catalog import make_case
    from engine.privacy.audit import run_case
    stored, _ = paper_audit("pca_gauss", 1.0)
    r = run_case(make_case("pca_gauss", "paper", 1.0, 1e-5), 1_000_000, 0, alpha=0.01)
    assert r["eps_lb"] == pytest.approx(stored.epsilon_lb, abs=0.01)


# ----------------------------------------------------------------------------- plain words on screen
BANNED = {
    "poster": r"as on the poster",
    "spec reference": r"\bspec\b",
    "equation number": r"\((?:[1-9]\d)\)",
    "proposition number": r"\bProps?\.\s?\d|\bPropositions? \d",
    "gdp": r"\bgdp\b|\bGDP\b",
    "algorithm number": r"\bAlgorithm \d",
    "equation reference": r"\b[Ee]qs?\.\s?\(?\d",
    "figure reference": r"\bFig\.\s?\d",
    "section reference": r"\bSec\.\s?\d",
}


def _visible_strings(path: Path):
    """String constants of a module that can reach the screen: docstrings excluded, and only those with a space
    (a word like "gdp" alone is a key, not a sentence)."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if " " in text:
            yield node.lineno, text


def test_pages_use_plain_words():
    files = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("ui/*/*.py"),
                    *ROOT.glob("ui/figures/*.py"),
                    ROOT / "engine/privacy/wording.py", ROOT / "ui/home/story.py"])
    found = [f"{path.relative_to(ROOT)}:{line}: {what}: {text[:80]!r}"
             for path in files for line, text in _visible_strings(path)
             for what, pattern in BANNED.items() if re.search(pattern, text)]
    assert not found, "\n".join(found)


def test_the_scan_catches_jargon(tmp_path):
    """The scan can fail: a sentence with an equation number is found, the same words in a docstring are not."""
    bad = tmp_path / "bad.py"
    bad.write_text('"""Paper (47), Prop. 3."""\nimport streamlit as st\nst.caption("the base protocol (47)")\n'
                   'st.caption(f"as on the poster, {1}")\nKEY = "gdp"\n')
    texts = [t for _, t in _visible_strings(bad)]
    assert texts == ["the base protocol (47)", "as on the poster, {}"]
    assert math.isfinite(len(texts))
