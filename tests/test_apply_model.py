"""A model that travels (issue 31, item 4): release JSON -> new spectra -> predictions, by channel name.

Oracle: the fitted estimator's own ``predict`` on the same spectra in the fit's column order. The release stores
every float with ``repr`` (shortest round-trip), so the rebuilt estimator holds bit-identical coefficients and the
same products in the same order: the predictions agree to the last bit; 1e-12 (relative to the response's scale)
leaves room for nothing but a reordering of the sum, which would itself be a defect of the channel matching at
this size (40 channels, |x| ~ 1: an error of a few ulp, 1e-15).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.cli.commands import main
from engine.data.sample_generators import make_nir_spectra
from engine.release.predict import predict_from_release
from engine.release.travel import SCHEMA_VERSION, TRAVEL_FIELDS, ModelCard

ROOT = Path(__file__).resolve().parents[1]
CHANNELS = [f"{1100 + 10 * j}" for j in range(40)]


def _data(n, seed):
    d = make_nir_spectra(n_samples=n, n_channels=len(CHANNELS), random_state=seed)
    return d.X, d.Y[:, 0]


def _fits():
    from engine.methods.adassp import AdaSSP
    from engine.methods.adassp.release import to_json as adassp_json
    from engine.methods.dp_pcr import DPPCR
    from engine.methods.dp_pcr.release import to_json as dp_pcr_json
    from engine.methods.edpls import EDPLS
    from engine.methods.edpls.recommended import make_strict_edpls
    from engine.methods.edpls.recommended_release import to_json as strict_json
    from engine.methods.edpls.release import to_json as edpls_json

    return {
        "edpls_strict": (lambda: EDPLS(3, 1.0, 1e-5, mode="strict", x_bound=10.0, y_bound=30.0), edpls_json),
        "strict_edpls_chain": (lambda: make_strict_edpls(1.0, 1e-5, y_range=(0.0, 30.0),
                                                         preprocessing=["snv", "sg1"]), strict_json),
        "strict_edpls_private_range": (lambda: make_strict_edpls(2.0, 1e-5, y_range=None), strict_json),
        "dp_pcr": (lambda: DPPCR(3, 1.0, 1e-5, x_bound=10.0, y_bound=30.0), dp_pcr_json),
        "adassp": (lambda: AdaSSP(1.0, 1e-5, x_bound=10.0, y_bound=30.0), adassp_json),
    }


def _new_spectra(seed=9):
    X_new, _ = _data(60, seed)
    frame = pd.DataFrame(X_new, columns=CHANNELS)
    frame["sample id"] = [f"s{i}" for i in range(len(frame))]  # an extra column: ignored with a note
    order = np.random.default_rng(seed).permutation(frame.columns)
    return X_new, frame[list(order)]


@pytest.mark.parametrize("name", list(_fits()))
def test_predictions_equal_the_fitted_estimators_predict(name):
    make, to_json = _fits()[name]
    X, y = _data(400, 1)
    est = make().fit(X, y)
    text = to_json(est, card=ModelCard(CHANNELS, "protein", "% dry matter"))
    X_new, shuffled = _new_spectra()
    pred = predict_from_release(json.loads(text), shuffled)
    expected = est.predict(X_new)
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(pred.iloc[:, 0].to_numpy(), expected, rtol=0, atol=1e-12 * scale)
    assert list(pred.columns) == ["protein (predicted) [% dry matter]"]
    assert pred.attrs["notes"] and "sample id" in pred.attrs["notes"][0]


def test_travel_fields_are_public_with_a_source_and_name_channels_in_order():
    from engine.methods.edpls.recommended import make_strict_edpls
    from engine.methods.edpls.recommended_release import shareable_release

    X, y = _data(300, 2)
    est = make_strict_edpls(1.0, 1e-5, y_range=(0.0, 30.0), preprocessing=["snv", "sg1"]).fit(X, y)
    rel = shareable_release(est, card=ModelCard(CHANNELS, "protein", "%"))
    f = rel["fields"]
    assert f["channels"] == CHANNELS and f["response"] == "protein" and f["response_unit"] == "%"
    assert f["preprocessing_chain"] == "snv+sg1" and f["estimator"] == "StrictEDPLS"
    assert f["schema_version"] == SCHEMA_VERSION and f["engine_version"]
    manifest = {m["field"]: m for m in rel["manifest"]}
    for name in TRAVEL_FIELDS:
        assert manifest[name]["provenance"] == "public" and manifest[name]["from"].strip()


def test_positional_names_when_none_given_and_a_wrong_count_is_refused():
    from engine.methods.adassp import AdaSSP
    from engine.methods.adassp.release import shareable_release

    X, y = _data(200, 3)
    est = AdaSSP(1.0, 1e-5, x_bound=10.0, y_bound=30.0).fit(X, y)
    assert shareable_release(est)["fields"]["channels"][:2] == ["x1", "x2"]
    with pytest.raises(ValueError, match="names 3 channels but the model was fitted on 40"):
        shareable_release(est, card=ModelCard(["a", "b", "c"]))


@pytest.fixture(scope="module")
def dp_pcr_release():
    from engine.methods.dp_pcr import DPPCR
    from engine.methods.dp_pcr.release import shareable_release

    X, y = _data(300, 4)
    return shareable_release(DPPCR(2, 1.0, 1e-5, x_bound=10.0, y_bound=30.0).fit(X, y),
                             card=ModelCard(CHANNELS, "protein"))


def test_missing_channels_are_named(dp_pcr_release):
    _, frame = _new_spectra()
    with pytest.raises(ValueError, match=r"lack 2 of the model's 40 channels: 1100, 1490"):
        predict_from_release(dp_pcr_release, frame.drop(columns=["1100", "1490"]))


def test_unknown_schema_and_non_regression_releases_are_refused(dp_pcr_release):
    _, frame = _new_spectra()
    old = json.loads(json.dumps(dp_pcr_release))
    del old["fields"]["schema_version"]
    with pytest.raises(ValueError, match="unknown release schema"):
        predict_from_release(old, frame)
    future = json.loads(json.dumps(dp_pcr_release))
    future["fields"]["schema_version"] = "privalab.model/99"
    with pytest.raises(ValueError, match="unknown release schema: 'privalab.model/99'"):
        predict_from_release(future, frame)
    other = {**dp_pcr_release, "format": "privalab.pca_gauss.release/1", "method": "pca_gauss"}
    with pytest.raises(ValueError, match="is not a regression"):
        predict_from_release(other, frame)
    with pytest.raises(ValueError, match="not a shareable release"):
        predict_from_release({**dp_pcr_release, "kind": "owner's workbook"}, frame)
    with pytest.raises(ValueError, match="not JSON"):
        predict_from_release(b"protein,1100\n1,2\n", frame)


def test_paper_mode_release_is_refused_for_want_of_an_intercept():
    from engine.methods.edpls import EDPLS
    from engine.methods.edpls.release import shareable_release

    X, y = _data(300, 5)
    rel = shareable_release(EDPLS(2, 5.0, 1e-5, mode="paper").fit(X, y), card=ModelCard(CHANNELS, "protein"))
    _, frame = _new_spectra()
    with pytest.raises(ValueError, match="no intercept"):
        predict_from_release(rel, frame)


def test_cli_predict_writes_the_same_predictions(tmp_path, dp_pcr_release, capsys):
    from engine.methods.dp_pcr.release import estimator_from_release

    X_new, frame = _new_spectra()
    (tmp_path / "release.json").write_text(json.dumps(dp_pcr_release))
    frame.to_csv(tmp_path / "spectra.csv", index=False)
    code = main(["predict", "--model", str(tmp_path / "release.json"), "--data", str(tmp_path / "spectra.csv"),
                 "--out", str(tmp_path / "predictions.csv")])
    assert code == 0
    out = pd.read_csv(tmp_path / "predictions.csv")
    expected = estimator_from_release(dp_pcr_release).predict(X_new)
    np.testing.assert_allclose(out.iloc[:, 0].to_numpy(), expected, rtol=1e-15, atol=1e-12)  # CSV: repr floats
    assert "rows=60" in capsys.readouterr().out
    frame.drop(columns=["1200"]).to_csv(tmp_path / "short.csv", index=False)
    code = main(["predict", "--model", str(tmp_path / "release.json"), "--data", str(tmp_path / "short.csv"),
                 "--out", str(tmp_path / "p2.csv")])
    assert code == 1 and "1200" in capsys.readouterr().err and not (tmp_path / "p2.csv").exists()


def test_apply_page_predicts_and_keeps_its_result_on_bad_input(dp_pcr_release):
    at = AppTest.from_file(str(ROOT / "pages/apply_model.py"), default_timeout=60)
    at.run()
    assert not at.exception and at.title[0].value == "Apply a model"
    X_new, frame = _new_spectra()
    model = json.dumps(dp_pcr_release).encode()
    at.file_uploader(key="apply_model_upload").set_value(("model.json", model, "application/json"))
    at.file_uploader(key="apply_data_upload").set_value(("new.csv", frame.to_csv(index=False).encode(), "text/csv"))
    at.run()
    assert not at.exception and not at.error
    table = at.session_state["apply_result"]["table"]
    assert len(table) == 60 and any("sample id" in i.value for i in at.info)
    short = frame.drop(columns=["1300"]).to_csv(index=False).encode()
    at.file_uploader(key="apply_data_upload").set_value(("short.csv", short, "text/csv")).run()
    assert not at.exception
    assert any("short.csv" in e.value and "1300" in e.value for e in at.error)
    assert at.session_state["apply_result"]["data"] == "new.csv"  # the good result stays
    assert any("last good predictions" in c.value for c in at.caption)
    other = json.dumps({**dp_pcr_release, "format": "privalab.dp_cca.release/1", "method": "dp_cca"}).encode()
    at.file_uploader(key="apply_model_upload").set_value(("cca.json", other, "application/json")).run()
    assert not at.exception
    assert any("cca.json" in e.value and "not a regression" in e.value for e in at.error)
    assert at.session_state["apply_result"]["model"] == "model.json"


def test_a_callers_rowwise_chain_is_applied_and_a_learned_one_refused():
    """A page fits edPLS on spectra it preprocessed (engine.data.preprocess.make_chain, row-wise 'snv+sg1'
    equals basis.rowwise_chain bit for bit): the release names the chain and predict applies it."""
    from engine.data.preprocess import make_chain
    from engine.methods.edpls import EDPLS
    from engine.methods.edpls.release import shareable_release

    X, y = _data(300, 6)
    pipe = make_chain("snv").fit(X)
    est = EDPLS(3, 1.0, 1e-5, mode="strict", x_bound=20.0, y_bound=30.0).fit(pipe.transform(X), y)
    X_new, frame = _new_spectra()
    rel = shareable_release(est, card=ModelCard(CHANNELS, "protein", "", "snv"))
    pred = predict_from_release(rel, frame).iloc[:, 0].to_numpy()
    np.testing.assert_allclose(pred, est.predict(pipe.transform(X_new)), rtol=0, atol=1e-12 * 30)
    learned = shareable_release(est, card=ModelCard(CHANNELS, "protein", "", "msc"))
    with pytest.raises(ValueError, match="preprocessing 'msc' cannot be rebuilt"):
        predict_from_release(learned, frame)


@pytest.mark.parametrize("page", ["edpls", "dp_pcr"])
def test_a_pages_model_file_names_its_channels_and_response_and_applies_to_its_data(page):
    from downloads import buttons, file_of, recorded_downloads

    with recorded_downloads() as seen:
        at = AppTest.from_file(str(ROOT / f"pages/{page}.py"), default_timeout=180)
        at.session_state[f"{page}_unit"] = "% w/w"
        at.run()
        assert not at.exception
        if f"{page}_export_model" not in buttons(at):
            pytest.skip(f"{page} offers no shareable model at its defaults")
        release = json.loads(file_of(at, seen, f"{page}_export_model"))
    fields = release["fields"]
    df = at.session_state["pl_dataset"].df
    assert fields["schema_version"] == SCHEMA_VERSION and fields["response_unit"] == "% w/w"
    assert fields["response"] in df.columns and fields["response"] not in fields["channels"]
    assert set(fields["channels"]) <= {str(c) for c in df.columns} and len(fields["channels"]) > 8
    pred = predict_from_release(release, df)
    assert len(pred) == len(df) and np.all(np.isfinite(pred.iloc[:, 0]))
    assert any(fields["response"] in note for note in pred.attrs["notes"])  # the response column: not a channel
