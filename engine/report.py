"""A one-page run report: what was run, on which data, with which settings, under which guarantee.

Usable from a notebook as well as from the dashboard::

    from engine.report import DataInfo, RunReport
    rep = RunReport(page="dp_cca", method="DP-CCA", data=DataInfo.from_frame(df, "views.csv", "upload"),
                    parameters={"epsilon": 1.0, "delta": 1e-5, "random_state": 0}, mode="strict",
                    ledger=model.privacy_ledger_, headline={"captured correlation": 0.93})
    open("report.html", "w").write(rep.to_html())

The HTML is self-contained (inline style, no script, no network) and every user-provided string
(file names, column names, parameter values) is escaped. The mode's guarantee and the ledger's
total are stated with the same sentences the dashboard shows (:mod:`engine.privacy.wording`).
"""
from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import html
import json
import math
import platform
import re
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .export import encode_value, ledger_totals
from .privacy.ledger import PrivacyLedger
from .privacy.wording import MODE_TEXT, ledger_text

__all__ = ["DataInfo", "RunReport", "data_sha256", "environment_versions", "plain_text"]

REPO_ROOT = Path(__file__).resolve().parents[1]
# Headline numbers such as test errors or clip counts are evaluations for the data owner, computed on the
# private rows without noise: the guarantee above covers the released model, not them.
HEADLINE_NOTE = ("These results are evaluations for the data owner (e.g. errors on held-out private rows, counts of "
                 "clipped rows), computed without noise: the guarantee above covers the released model or data, "
                 "not these numbers. Share them only with the same care as the data.")
MODE_LABEL = {"strict": "Strict (proven DP)", "paper": "Paper-faithful (not proven)", None: "no differential privacy"}
_PACKAGES = (("numpy", "numpy"), ("pandas", "pandas"), ("scikit-learn", "scikit-learn"), ("scipy", "scipy"),
             ("streamlit", "streamlit"), ("plotly", "plotly"), ("dp-accounting", "dp-accounting"))


# --------------------------------------------------------------------------- helpers
def plain_text(markdown: str) -> str:
    """The text of a one-line markdown sentence without emphasis markers (``**a**`` and ``*a*`` -> ``a``)."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", markdown)
    return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)


def _md_html(markdown: str) -> str:
    """Escape, then render ``**bold**`` and ``*italic*`` (the only markdown the guarantee sentences use)."""
    text = html.escape(markdown)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", text)


def _hash_part(h, obj) -> None:
    if isinstance(obj, pd.DataFrame):
        h.update(json.dumps({"shape": list(obj.shape), "columns": [str(c) for c in obj.columns],
                             "dtypes": [str(t) for t in obj.dtypes]}).encode())
        numeric = [i for i, t in enumerate(obj.dtypes)
                   if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)]
        if numeric:  # one block, column by column (Fortran order): fast for wide spectra
            block = obj.iloc[:, numeric].to_numpy(dtype=float)
            h.update(np.asfortranarray(block).tobytes(order="F"))
        for i in sorted(set(range(obj.shape[1])) - set(numeric)):
            h.update(b"\x1f" + str(i).encode() + b"\x1f")
            h.update("\x1f".join(map(str, obj.iloc[:, i].tolist())).encode("utf-8", "surrogatepass"))
    elif isinstance(obj, pd.Series):
        _hash_part(h, obj.to_frame())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(json.dumps({"shape": list(a.shape), "dtype": a.dtype.str}).encode())
        h.update(a.tobytes() if a.dtype.kind != "O" else "\x1f".join(map(str, a.ravel().tolist())).encode())
    elif isinstance(obj, (bytes, bytearray)):
        h.update(bytes(obj))
    elif isinstance(obj, str):
        h.update(obj.encode("utf-8", "surrogatepass"))
    elif isinstance(obj, (list, tuple)):
        for part in obj:
            h.update(b"\x1e")
            _hash_part(h, part)
    else:
        _hash_part(h, np.asarray(obj))


def data_sha256(*parts) -> str:
    """SHA-256 (hex) of data contents: data frames (column names, dtypes and values, not the index),
    arrays (shape, dtype, bytes), bytes or text, in the order given. Equal data give equal hashes
    however they were loaded, so a reader can check that a report belongs to a table."""
    h = hashlib.sha256()
    for p in parts:
        h.update(b"\x1d")
        _hash_part(h, p)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=3, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unavailable"
    commit = out.stdout.strip()
    return commit if re.fullmatch(r"[0-9a-f]{40}", commit) else "unavailable"


@functools.lru_cache(maxsize=1)
def _package_versions() -> tuple:
    out = []
    for label, dist in _PACKAGES:
        try:
            out.append((label, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((label, "not installed"))
    return tuple(out)


def environment_versions() -> dict:
    """Python, the main packages and PrivaLab's git commit ("unavailable" without git or a checkout)."""
    return {"python": platform.python_version(), **dict(_package_versions()), "privalab git commit": _git_commit()}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", " UTC")


def _fmt(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return "∞" if v == math.inf else "−∞" if v == -math.inf else "nan" if math.isnan(v) else f"{v:.6g}"
    if v is None:
        return "None"
    if isinstance(v, str):
        return v
    try:
        return json.dumps(encode_value(v), ensure_ascii=False)
    except Exception:  # noqa: BLE001 - anything else is shown by its text
        return str(v)


# --------------------------------------------------------------------------- data
@dataclass
class DataInfo:
    """The data a run used: name (file or sample set), origin ("sample", "upload", "generated", ...),
    shape of the table as loaded, the columns the run used, and :func:`data_sha256` of the contents."""

    name: str
    origin: str
    shape: tuple
    columns: list = field(default_factory=list)
    sha256: str = ""
    note: str = ""

    @classmethod
    def from_frame(cls, df: pd.DataFrame, name: str, origin: str, columns=None, note: str = "") -> "DataInfo":
        return cls(str(name), str(origin), tuple(int(x) for x in df.shape),
                   [str(c) for c in (df.columns if columns is None else columns)], data_sha256(df), note)

    @classmethod
    def from_parts(cls, name: str, origin: str, parts, columns=(), shape=None, note: str = "") -> "DataInfo":
        """Several frames or arrays (e.g. two views): the hash covers all of them, in order."""
        parts = list(parts)
        if shape is None:
            rows = max((len(p) for p in parts), default=0)
            shape = (rows, sum(int(np.shape(p)[1]) if np.ndim(p) > 1 else 1 for p in parts))
        return cls(str(name), str(origin), tuple(int(x) for x in shape), [str(c) for c in columns],
                   data_sha256(*parts), note)


# --------------------------------------------------------------------------- report
@dataclass
class RunReport:
    """Everything needed to reproduce and judge one run of a page (see the module docstring).

    mode: "strict", "paper", or None for a page without differential privacy; ``mode_text`` then
    states what does hold (default: :data:`engine.privacy.wording.MODE_TEXT` of the mode).
    ledger: the privacy ledger of the result (None: nothing was released privately).
    headline: the page's main numbers, label -> value.
    """

    page: str
    method: str
    data: DataInfo | None = None
    preprocessing: str = "none"
    parameters: dict = field(default_factory=dict)
    mode: str | None = None
    mode_text: str | None = None
    ledger: PrivacyLedger | None = None
    ledger_delta: float | None = None
    headline: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    created: str = field(default_factory=_now)
    versions: dict = field(default_factory=environment_versions)

    # ----------------------------------------------------------------- derived
    @property
    def guarantee_markdown(self) -> str:
        if self.mode_text is not None:
            return self.mode_text
        return MODE_TEXT.get(self.mode, "No differential-privacy guarantee applies to this page.")

    @property
    def guarantee(self) -> str:
        """The mode's guarantee sentence, as plain text."""
        return plain_text(self.guarantee_markdown)

    def _summary(self) -> dict | None:
        if self.ledger is None or not len(self.ledger):
            return None
        return self.ledger.summary(self.ledger_delta)

    def ledger_statement(self, summary: dict | None = None) -> str:
        """The total's sentence, as the page's ledger view says it (plain text)."""
        if self.ledger is None:
            return "No privacy ledger: nothing on this page was released from private data with calibrated noise."
        return plain_text(ledger_text(self.ledger, self.ledger_delta, summary=summary or self._summary()))

    def ledger_rows(self) -> list:
        """One dict per release: name, mechanism, sensitivity (and its source), noise scale, ε, δ, note."""
        if self.ledger is None:
            return []
        return [{"release": r.name, "mechanism": r.mechanism, "sensitivity": r.sensitivity,
                 "sensitivity source": r.sensitivity_source, "noise scale": r.scale, "epsilon": r.epsilon,
                 "delta": r.delta, "claimed epsilon": r.claimed_epsilon, "note": r.note}
                for r in self.ledger.entries]

    def file_name(self, ext: str = "html") -> str:
        return f"{re.sub(r'[^A-Za-z0-9_-]+', '_', self.page)}_report.{ext}"

    # ----------------------------------------------------------------- outputs
    def to_dict(self) -> dict:
        """Plain JSON data of the report (the ledger with basic/zCDP totals and the page's sentence)."""
        summary = self._summary()
        return encode_value({
            "page": self.page, "method": self.method, "created": self.created, "versions": self.versions,
            "data": None if self.data is None else {
                "name": self.data.name, "origin": self.data.origin, "shape": list(self.data.shape),
                "columns": list(self.data.columns), "sha256": self.data.sha256, "note": self.data.note},
            "preprocessing": self.preprocessing, "parameters": self.parameters,
            "mode": self.mode, "guarantee": self.guarantee,
            "ledger": {"releases": self.ledger_rows(), "totals": ledger_totals(self.ledger),
                       "pld": None if summary is None else summary["pld"],
                       "statement": self.ledger_statement(summary)},
            "headline": self.headline, "notes": list(self.notes),
        })

    def to_json(self, **json_kwargs) -> str:
        json_kwargs.setdefault("allow_nan", False)
        json_kwargs.setdefault("ensure_ascii", False)
        return json.dumps(self.to_dict(), **json_kwargs)

    def to_html(self) -> str:
        """The report as one self-contained HTML page (no script, no external resource)."""
        e = html.escape
        summary = self._summary()

        def table(rows, header=None) -> str:
            head = "" if header is None else "<tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>"
            body = "".join("<tr>" + "".join(f"<td>{e(_fmt(c))}</td>" for c in r) + "</tr>" for r in rows)
            return f"<table>{head}{body}</table>"

        def kv(d: dict) -> str:
            return table([(k, v) for k, v in d.items()]) if d else "<p>none</p>"

        parts = [f"<h1>PrivaLab run report: {e(self.method)}</h1>",
                 kv({"page": self.page, "method": self.method, "date": self.created})]
        parts.append("<h2>Data</h2>")
        if self.data is None:
            parts.append("<p>No data set: this page uses none.</p>")
        else:
            d = self.data
            parts.append(kv({"name": d.name, "origin": d.origin, "shape (rows × columns)": f"{d.shape[0]} × {d.shape[1]}"
                             if len(d.shape) == 2 else " × ".join(map(str, d.shape)) or "-",
                             f"columns used ({len(d.columns)})": ", ".join(d.columns) or "-",
                             "SHA-256 of the contents": d.sha256}))
            if d.note:
                parts.append(f"<p class='note'>{e(d.note)}</p>")
        parts.append("<h2>Preprocessing</h2>" + f"<p>{e(str(self.preprocessing))}</p>")
        parts.append("<h2>Parameters</h2>" + kv(self.parameters))
        parts.append("<h2>Privacy</h2>")
        parts.append(kv({"mode": MODE_LABEL.get(self.mode, str(self.mode))}))
        parts.append(f"<p class='guarantee'>{_md_html(self.guarantee_markdown)}</p>")
        parts.append(f"<p>{_md_html(ledger_text(self.ledger, self.ledger_delta, summary=summary)) if self.ledger is not None else e(self.ledger_statement())}</p>")
        rows = self.ledger_rows()
        if rows:
            parts.append(f"<h3>Privacy ledger ({len(rows)} release(s), {e(self.ledger.neighbouring)} neighbours)</h3>")
            parts.append(table([[r[k] for k in ("release", "mechanism", "sensitivity", "sensitivity source",
                                                "noise scale", "epsilon", "delta", "note")] for r in rows],
                               ["release", "mechanism", "sensitivity", "sensitivity source", "noise scale", "ε",
                                "δ", "note"]))
            totals = [("basic composition", *summary["basic"])]
            totals += [(name, *summary[key]) for key, name in (("zcdp", "zCDP"), ("pld", "PLD accountant"),
                                                               ("gdp", "exact Gaussian (GDP)")) if key in summary]
            parts.append("<h3>Totals</h3>" + table(totals, ["accounting", "total ε", "δ"]))
            parts.append(f"<p>{'Proven guarantee: every sensitivity comes from public bounds.' if summary['proven'] else 'Not a proven guarantee: some sensitivities were computed from the private data.'}</p>")
        parts.append("<h2>Results</h2>" + kv(self.headline)
                     + f"<p class='note'>{e(HEADLINE_NOTE)}</p>")
        if self.notes:
            parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_md_html(str(n))}</li>" for n in self.notes) + "</ul>")
        parts.append("<h2>Software</h2>" + kv(self.versions))
        style = ("body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:60em;margin:2em auto;"
                 "padding:0 1em;color:#222}h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;"
                 "margin-top:1.5em}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;"
                 "padding:.25em .5em;text-align:left;vertical-align:top;font-size:.9em;word-break:break-word}"
                 "th{background:#f4f4f4}.guarantee{background:#f6f8fa;padding:.5em;border-left:3px solid #888}"
                 ".note{color:#555}")
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>PrivaLab run report: {e(self.method)}</title><style>{style}</style></head><body>\n"
                + "\n".join(parts) + "\n</body></html>\n")
