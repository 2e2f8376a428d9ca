"""The privacy boundary's core (issue #15): fresh noise, ledger status, the one release builder,
the owner's workbook, keyed fingerprints and the two forms of the run report."""
from __future__ import annotations

import hashlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    FreshGenerator,
    PrivacyLedger,
    Release,
    fresh_generator,
    ledger_totals,
    noise_generator,
)
from engine.privacy.wording import ledger_text
from engine.release.export import ledger_from_dict
from engine.release.fingerprint import data_fingerprint, data_sha256, fingerprint_key, key_id, new_owner_secret
from engine.release.manifest import Field, build_release, estimator_from_release, release_problems, release_to_json
from engine.release.workbook import PRIVATE_NOTICE, OwnerWorkbook
from engine.reporting.report import DataInfo, RunReport


def _ledger(neighbouring="add_remove", source="public") -> PrivacyLedger:
    led = PrivacyLedger(neighbouring=neighbouring)
    led.add(Release.gaussian(name="moments", sigma=3.73, sensitivity=1.0, delta=1e-5, sensitivity_source=source))
    return led


# ------------------------------------------------------------------------------------------- noise
def test_default_noise_is_fresh_and_a_given_seed_is_known():
    (g1, k1), (g2, k2) = noise_generator(None), noise_generator(None)
    assert not k1 and not k2 and isinstance(g1, FreshGenerator)
    assert g1.normal(size=4).tolist() != g2.normal(size=4).tolist()  # 128 bits of OS entropy each
    for seeded in (0, 12345, np.random.default_rng(0), np.random.RandomState(0), np.random.SeedSequence(3)):
        assert noise_generator(seeded)[1] is True
    fresh = fresh_generator()
    assert noise_generator(fresh) == (fresh, False)
    # a known seed reproduces the noise exactly: that is why the ledger must say so
    assert noise_generator(7)[0].normal() == noise_generator(7)[0].normal()


# ------------------------------------------------------------------------------------------- ledger
def test_ledger_status_no_privacy_proven_not_proven():
    empty = PrivacyLedger()
    assert empty.status == "no privacy" and not empty.proven
    assert ledger_totals(empty)["status"] == "no privacy" and ledger_totals(None)["proven"] is False
    led = _ledger()
    assert led.status == "proven" and led.proven
    led.add_caveat(SEED_KNOWN_CAVEAT)
    led.add_caveat(SEED_KNOWN_CAVEAT)  # kept once
    assert led.status == "not proven" and led.caveats == [SEED_KNOWN_CAVEAT]
    assert "the noise seed is known" in ledger_text(led) and "**not** a proven" in ledger_text(led)
    data = _ledger(source="data")
    assert data.status == "not proven" and "private data" in data.reasons_not_proven()[0]


def test_ledger_round_trip_keeps_caveats_and_one_totals_function():
    led = _ledger()
    led.add_caveat("not proven: bounds read off the private rows")
    back = ledger_from_dict(json.loads(json.dumps(led.to_dict())))
    assert back.caveats == led.caveats and back.status == "not proven"
    tot, summ = ledger_totals(led, pld=True), led.summary()
    assert tot["basic"] == list(summ["basic"]) and tot["pld"] == list(summ["pld"])
    assert tot["status"] == summ["status"] == "not proven"
    # the exact Gaussian total of one release is its own epsilon
    assert tot["gdp"][0] == pytest.approx(led.entries[0].epsilon, rel=1e-9)


# ------------------------------------------------------------------------------------------- release
class _Model:
    def __init__(self, epsilon=1.0, n_components=2):
        self.epsilon, self.n_components = epsilon, n_components


def _fields(coef):
    return [Field("coef_", coef, "dp", "moments"), Field("epsilon", 1.0, "public", "budget", role="param"),
            Field("n_components", 2, "public", "user choice", role="param")]


def test_release_carries_its_manifest_and_rebuilds_a_model():
    coef = np.array([0.5, -1.25])
    rel = build_release("demo", "privalab.demo.release/1", _fields(coef), _ledger(), guarantee="g")
    assert [(m["field"], m["provenance"]) for m in rel["manifest"]] == [
        ("coef_", "dp"), ("epsilon", "public"), ("n_components", "public")]
    assert set(rel["fields"]) == {"coef_", "epsilon", "n_components"}  # nothing but the listed fields
    text = release_to_json(rel)
    assert release_problems(text) == []
    est = estimator_from_release(text, _Model, "privalab.demo.release/1")
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.n_components == 2 and est.privacy_ledger_.status == "proven"
    with pytest.raises(ValueError, match="not a shareable"):
        estimator_from_release(text, _Model, "privalab.other.release/1")


@pytest.mark.parametrize("name", ["random_state", "noise_seed", "data_sha256", "n_clipped_", "row_count",
                                  "reference_coef_", "test_rmsep", "fingerprint", "n_samples"])
def test_release_refuses_private_bookkeeping(name):
    with pytest.raises(ValueError, match="owner's workbook"):
        build_release("demo", "f", [Field(name, 1, "public", "x")], _ledger(), guarantee="g")


def test_release_refuses_unknown_sources_and_non_private_fits():
    with pytest.raises(ValueError, match="did not make"):
        build_release("demo", "f", [Field("coef_", 1.0, "dp", "cross_moments")], _ledger(), guarantee="g")
    with pytest.raises(ValueError, match="no privacy"):
        build_release("demo", "f", [Field("coef_", 1.0, "dp", "*")], PrivacyLedger(), guarantee="g")
    with pytest.raises(ValueError, match="provenance"):
        Field("coef_", 1.0, "guessed", "x")
    # under replace-one neighbours N is public and may be released as such
    rel = build_release("demo", "f", [Field("n_samples", 50, "public", "replace-one: N public")],
                        _ledger("replace"), guarantee="g")
    assert rel["fields"]["n_samples"] == 50


def test_release_problems_finds_hashes_and_seeds():
    token = hashlib.sha256(b"private table").hexdigest()
    assert release_problems({"data": token})
    assert release_problems('{"random_state": 0}') and release_problems('{"params": {"seed": 3}}')
    assert release_problems("drawn with seed 42")
    assert release_problems("not proven: the noise seed is known") == []


# ------------------------------------------------------------------------------------------- workbook
def test_owner_workbook_is_marked_private_on_every_sheet():
    wb = OwnerWorkbook("edPLS", {"reference model": pd.DataFrame({"coef": [1.0, 2.0]}),
                                 "counts": {"rows clipped": 3, "n": 84}, "bad/name:*": [1, 2]})
    sheets = pd.read_excel(io.BytesIO(wb.to_xlsx()), sheet_name=None, header=None)
    names = list(sheets)
    assert names[0] == "PRIVATE read me" and PRIVATE_NOTICE.upper() in sheets[names[0]].iloc[:, 0].tolist()
    assert len(names) == 4
    for name in names[1:]:
        assert str(sheets[name].iloc[0, 0]).startswith(PRIVATE_NOTICE)
    assert OwnerWorkbook.file_name("edpls").endswith("_PRIVATE.xlsx")


# ------------------------------------------------------------------------------------------- fingerprint
def test_fingerprint_is_keyed_and_not_a_plain_hash():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]})
    k1, k2 = b"k" * 32, b"j" * 32
    f1 = data_fingerprint(df, key=k1)
    assert re.fullmatch(r"[0-9a-f]{64}", f1)
    assert f1 == data_fingerprint(df.copy(), key=k1) != data_fingerprint(df, key=k2)
    assert f1 != data_sha256(df)
    changed = df.copy()
    changed.iloc[1, 1] = 5.5
    assert data_fingerprint(changed, key=k1) != f1
    # without the key, enumerating candidate tables cannot confirm one: the plain hash of every candidate differs
    assert all(data_sha256(c) != f1 for c in (df, changed))


def test_fingerprint_key_is_per_owner_and_data_set():
    """Review N5: not one key per server process shared by every session."""
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]})
    other = df.assign(b=[4.0, 5.0, 6.5])
    alice, bob = new_owner_secret(), new_owner_secret()
    assert alice != bob and len(alice) == 32
    assert fingerprint_key(alice, df) == fingerprint_key(alice, df.copy())  # one owner, one table: one key
    keys = {fingerprint_key(alice, df), fingerprint_key(bob, df), fingerprint_key(alice, other)}
    assert len(keys) == 3 and all(len(k) == 32 for k in keys)
    a, b = DataInfo.from_frame(df, "t.csv", "upload", owner_secret=alice), DataInfo.from_frame(df, "t.csv", "upload",
                                                                                             owner_secret=bob)
    assert a.fingerprint == DataInfo.from_frame(df, "t.csv", "upload", owner_secret=alice).fingerprint
    assert a.fingerprint != b.fingerprint and a.key != b.key
    # Bob's key does not confirm Alice's fingerprint of the very same table
    assert data_fingerprint(df, key=b.key) != a.fingerprint and data_fingerprint(df, key=a.key) == a.fingerprint
    # without an owner secret every description draws its own key: still never a shared process key
    assert DataInfo.from_frame(df, "t.csv", "upload").key != DataInfo.from_frame(df, "t.csv", "upload").key
    with pytest.raises(ValueError, match="16 random bytes"):
        fingerprint_key(b"short", df)


def test_the_key_never_sits_in_the_workbook_that_holds_the_hmac():
    rep = _report()
    key = rep.data.key
    book = rep.owner_workbook().to_xlsx()
    sheets = pd.read_excel(io.BytesIO(book), sheet_name=None, header=None)
    flat = " ".join(str(v) for s in sheets.values() for v in s.to_numpy().ravel())
    assert rep.data.fingerprint in flat and key_id(key) in flat and rep.key_file_name() in flat
    assert key.hex() not in flat and key.hex().encode() not in book and key not in book
    text = rep.fingerprint_key_file()
    assert key.hex() in text and key_id(key) in text and rep.data.fingerprint in text
    assert data_fingerprint(pd.DataFrame(np.arange(84.0 * 3).reshape(84, 3), columns=["y", "1100", "1102"]),
                            key=bytes.fromhex(key.hex())) == rep.data.fingerprint  # the key file checks the table
    assert key.hex() not in rep.to_html() and key.hex() not in rep.to_json()


# ------------------------------------------------------------------------------------------- report
def _report(neighbouring="add_remove", caveat=None, origin="upload"):
    led = _ledger(neighbouring)
    if caveat:
        led.add_caveat(caveat)
    df = pd.DataFrame(np.arange(84.0 * 3).reshape(84, 3), columns=["y", "1100", "1102"])
    return RunReport(page="edpls", method="edPLS", data=DataInfo.from_frame(df, "alice_lab.csv", origin),
                     parameters={"epsilon": 1.0, "random_state": 0, "n_train": 59},
                     public_parameters={"epsilon": 1.0, "n_components": 2}, mode="strict", ledger=led,
                     headline={"RMSEP (test rows)": 0.123456})


def test_shareable_report_holds_no_hash_seed_count_or_evaluation():
    rep = _report()
    page = rep.to_html()
    assert release_problems(page) == [] and release_problems(rep.to_json()) == []
    assert rep.data.fingerprint not in page and "0.123456" not in page
    assert "<td>84" not in page and "84 ×" not in page and "84 (" not in page
    assert "alice_lab.csv" not in page and "n_train" not in page
    assert "not released (the number of rows is private" in page
    assert rep.status == "proven" and "provably" in rep.guarantee
    sheets = pd.read_excel(io.BytesIO(rep.owner_workbook().to_xlsx()), sheet_name=None, header=None)
    flat = " ".join(str(v) for s in sheets.values() for v in s.to_numpy().ravel())
    assert rep.data.fingerprint in flat and "alice_lab.csv" in flat and "0.123456" in flat


def test_shareable_report_states_public_n_under_replace_one_and_follows_the_ledger():
    page = _report("replace").to_html()
    assert "84 (public: replace-one" in page
    rep = _report(caveat=SEED_KNOWN_CAVEAT)
    assert rep.status == "not proven"
    assert "not proven" in rep.guarantee and "provably" not in rep.guarantee
    assert "noise seed is known" in rep.to_html()
