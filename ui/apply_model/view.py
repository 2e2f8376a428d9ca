"""The "Apply a model" page: a release JSON and a spectra file in, a predictions table and CSV out.

The work is ``engine.release.predict.predict_from_release`` (the CLI's ``predict`` calls the same function);
this module only reads the uploads, keeps the last good result in ``st.session_state`` (a bad upload shows its
error and leaves the previous predictions on the page) and draws the table.
"""
from __future__ import annotations

import streamlit as st

from engine.data import load_table
from engine.data.validate import DataError
from engine.release.predict import predict_from_release, read_release

__all__ = ["RESULT_KEY", "apply_section", "model_summary"]

#: The last good predictions: {"model": name, "data": name, "table": DataFrame, "notes": [...], "release": {...}}.
RESULT_KEY = "apply_result"


def model_summary(info: dict) -> str:
    """One line about the applied model, from its public travel fields."""
    unit = f" [{info['response_unit']}]" if info.get("response_unit") else ""
    return (f"{info.get('estimator', '?')} predicting **{info.get('response', 'y')}**{unit}, chain "
            f"'{info.get('preprocessing_chain', 'none')}', written by PrivaLab {info.get('engine_version', '?')}")


def _run(model_upload, data_upload) -> None:
    """Predict and store the result; on bad input an error naming the file, the previous result kept."""
    try:
        release = read_release(model_upload.getvalue())
        frame = load_table(data_upload)
        table = predict_from_release(release, frame)
    except DataError as err:
        st.error(f"{data_upload.name}: {err}")
        return
    except ValueError as err:
        st.error(f"{model_upload.name} on {data_upload.name}: {err}")
        return
    st.session_state[RESULT_KEY] = {"model": model_upload.name, "data": data_upload.name, "table": table,
                                    "notes": list(table.attrs.get("notes", [])),
                                    "release": dict(table.attrs.get("release", {}))}


def apply_section() -> None:
    """The two uploaders, the predictions of the last good pair and their CSV."""
    c1, c2 = st.columns(2)
    model_upload = c1.file_uploader("Model: a shareable release JSON", type=["json"], key="apply_model_upload",
                                    help="The 'shareable release' JSON of edPLS, DP-PCR or AdaSSP (a page's "
                                         "download or `privalab fit --out`)")
    data_upload = c2.file_uploader("Spectra: CSV, TSV or Excel", type=["csv", "tsv", "txt", "xlsx"],
                                   key="apply_data_upload",
                                   help="One row per sample; the model's channel columns matched by name")
    if model_upload is not None and data_upload is not None:
        token = (model_upload.name, model_upload.size, data_upload.name, data_upload.size)
        if st.session_state.get("apply_token") != token:
            st.session_state["apply_token"] = token
            _run(model_upload, data_upload)
    result = st.session_state.get(RESULT_KEY)
    if result is None:
        st.info("Upload a model and a spectra file to get predictions.")
        return
    if model_upload is None or data_upload is None or (model_upload.name, data_upload.name) != (result["model"],
                                                                                                 result["data"]):
        st.caption(f"Showing the last good predictions: {result['model']} on {result['data']}.")
    st.markdown(model_summary(result["release"]))
    for note in result["notes"]:
        st.info(note)
    table = result["table"]
    st.metric("Rows predicted", f"{len(table):,}")
    st.dataframe(table, use_container_width=True)
    st.download_button("Download predictions (CSV)", table.to_csv(index=False).encode("utf-8"),
                       file_name=f"{result['data'].rsplit('.', 1)[0]}_predictions.csv", mime="text/csv",
                       key="apply_download", on_click="ignore")
