"""A one-page run report: what was run, on which data, with which settings, under which guarantee.

Usable from a notebook as well as from the dashboard::

    from engine.reporting.report import DataInfo, RunReport
    rep = RunReport(page="dp_cca", method="DP-CCA", data=DataInfo.from_frame(df, "views.csv", "upload"),
                    parameters={"epsilon": 1.0, "delta": 1e-5, "random_state": 0}, mode="strict",
                    ledger=model.privacy_ledger_, headline={"captured correlation": 0.93})
    open("report.html", "w").write(rep.to_html())

The HTML is self-contained (inline style, no script, no network) and every user-provided string
(file names, column names, parameter values) is escaped. The mode's guarantee and the ledger's
total are stated with the same sentences the dashboard shows (:mod:`engine.privacy.wording`).

Two forms, never mixed (issue #15):

- ``to_html()`` / ``to_dict()`` (``kind="shareable"``, the default): the *shareable* report. It holds
  the method, the mode, the declared-public parameters (``public_parameters``), the ledger and its
  guarantee sentence, and the data's schema (columns). No row count unless the neighbouring relation
  makes it public (replace-one), no data hash, no seed, no evaluation on private rows.
- ``owner_sheets()``: the owner's view (every parameter, the headline evaluations, the exact shape,
  the keyed fingerprint :func:`engine.release.fingerprint.data_fingerprint`) for the owner's workbook
  (:class:`engine.release.workbook.OwnerWorkbook`), marked "contains private information".
"""
from __future__ import annotations

import base64
import datetime as _dt
import functools
import html
import json
import math
import platform
import re
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.privacy.ledger import Neighbouring, PrivacyLedger, ledger_totals
from engine.privacy.wording import ACCOUNTANT_NAMES, MODE_TEXT, headline_total, ledger_text, neighbouring_text, plural
from engine.release.export import encode_value
from engine.release.fingerprint import data_fingerprint, data_sha256, fingerprint_key, key_id, new_owner_secret
from engine.release.workbook import OwnerWorkbook
from engine.reporting.figures import (
    ReportFigure,
    as_report_figures,
    figure_frame,
    figure_title,
    render_pngs,
    table_sample,
)

__all__ = ["DataInfo", "ReportFigure", "RunReport", "data_sha256", "environment_versions", "plain_text",
           "summarise_columns"]

REPO_ROOT = Path(__file__).resolve().parents[2]
# Headline numbers such as test errors or clip counts are evaluations for the data owner, computed on the
# private rows without noise: the guarantee above covers the released model, not them.
HEADLINE_NOTE = ("These results are evaluations for the data owner (e.g. errors on held-out private rows, counts of "
                 "clipped rows), computed without noise: the guarantee above covers the released model or data, "
                 "not these numbers. Share them only with the same care as the data.")
MODE_LABEL = {"strict": "Strict (public bounds, provable settings)", "paper": "Paper-faithful (not proven)",
              None: "no differential privacy"}
_PACKAGES = (("numpy", "numpy"), ("pandas", "pandas"), ("scikit-learn", "scikit-learn"), ("scipy", "scipy"),
             ("streamlit", "streamlit"), ("plotly", "plotly"), ("kaleido", "kaleido"),
             ("dp-accounting", "dp-accounting"))


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
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", " UTC")


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
    shape of the table as loaded, the columns the run used, and the keyed fingerprint
    (:func:`engine.release.fingerprint.data_fingerprint`, HMAC-SHA256 under the owner's key) of the contents.

    The shareable report shows only the origin and the columns; name, shape and fingerprint go to the
    owner's workbook."""

    name: str
    origin: str
    shape: tuple
    columns: list = field(default_factory=list)
    fingerprint: str = ""
    note: str = ""
    #: the fingerprint's key (32 bytes): never in a report or workbook, only in :meth:`RunReport.fingerprint_key_file`
    key: bytes = field(default=b"", repr=False)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, name: str, origin: str, columns=None, note: str = "",
                   owner_secret: bytes | None = None) -> DataInfo:
        """``owner_secret``: the owner's session secret (``ui.exports.owner_secret``); the key is then
        :func:`engine.release.fingerprint.fingerprint_key` of this owner and this table. None draws a fresh
        secret (a key for this description only)."""
        key = fingerprint_key(new_owner_secret() if owner_secret is None else owner_secret, df)
        return cls(str(name), str(origin), tuple(int(x) for x in df.shape),
                   [str(c) for c in (df.columns if columns is None else columns)], data_fingerprint(df, key=key), note,
                   key)

    @classmethod
    def from_parts(cls, name: str, origin: str, parts, columns=(), shape=None, note: str = "",
                   owner_secret: bytes | None = None) -> DataInfo:
        """Several frames or arrays (e.g. two views): the fingerprint (and its key) covers all of them, in order."""
        parts = list(parts)
        if shape is None:
            rows = max((len(p) for p in parts), default=0)
            shape = (rows, sum(int(np.shape(p)[1]) if np.ndim(p) > 1 else 1 for p in parts))
        key = fingerprint_key(new_owner_secret() if owner_secret is None else owner_secret, *parts)
        return cls(str(name), str(origin), tuple(int(x) for x in shape), [str(c) for c in columns],
                   data_fingerprint(*parts, key=key), note, key)

    @property
    def public_name(self) -> str:
        """The name the shareable report may show: sample and generated sets by name, an upload not."""
        first = (self.origin.split() or [""])[0]
        return self.name if first in ("sample", "generated", "scikit-learn") else "the owner's file"


def _number(name: str) -> float | None:
    try:
        value = float(name)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _listing(cols: list, head: int) -> str:
    if len(cols) <= 2 * head:
        return ", ".join(cols)
    return ", ".join(cols[:head]) + ", …, " + ", ".join(cols[-head:])


def summarise_columns(columns, response: str | None = None, *, unit: str = "", head: int = 6,
                      min_spectral: int = 10) -> str:
    """The columns a run used, in one line a reader takes in at a glance.

    Columns named by a number (wavelengths, wavenumbers, channels) are counted and given by their range
    once there are ``min_spectral`` of them: ``"351 spectral columns 1100–2498 (step 4) nm, response
    protein"``; other columns are listed (``head`` first and last when there are many). ``unit`` is added
    to the range only when the caller knows it (a column name carries none)."""
    cols = [str(c) for c in columns]
    if not cols:
        return "-"
    resp = str(response) if response is not None and str(response) in cols else None
    rest = [c for c in cols if c != resp]
    numeric = [(c, _number(c)) for c in rest if _number(c) is not None]
    parts = []
    if len(numeric) >= min_spectral:
        names, values = [c for c, _ in numeric], np.array([v for _, v in numeric])
        lo, hi = names[int(np.argmin(values))], names[int(np.argmax(values))]
        steps = np.abs(np.diff(values))
        step = f" (step {_fmt(float(steps[0]))})" if len(steps) and np.allclose(steps, steps[0], rtol=1e-6) else ""
        parts.append(f"{len(names)} spectral columns {lo}–{hi}{step}{' ' + unit if unit else ''}")
        rest = [c for c in rest if _number(c) is None]
    if resp is not None:
        parts.append(f"response {resp}")
    if rest:
        listing = _listing(rest, head)
        parts.append(listing if not parts and len(rest) <= 2 * head else
                     f"{len(rest)} {'other ' if parts else ''}column{'s' if len(rest) != 1 else ''}: {listing}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- report
@dataclass
class RunReport:
    """Everything needed to reproduce and judge one run of a page (see the module docstring).

    mode: "strict", "paper", or None for a page without differential privacy; ``mode_text`` then
    states what does hold (default: :data:`engine.privacy.wording.MODE_TEXT` of the mode).
    ledger: the privacy ledger of the result (None: nothing was released privately).
    headline: the page's main numbers, label -> value (evaluations for the owner: workbook only).
    parameters: every setting of the run (owner's view, workbook only).
    public_parameters: the inputs the user declared public (ε, δ, public bounds, k, ...): the only
    parameters the shareable report shows. Seeds never belong here.
    figures: the page's key figures, name -> :class:`engine.reporting.figures.ReportFigure` with an explicit
    ``shareable=True/False``: the shareable report embeds only the shareable ones (static PNG, or a table
    of the figure's data where static export is unavailable); the others go to the owner's workbook.
    """

    page: str
    method: str
    data: DataInfo | None = None
    preprocessing: str = "none"
    parameters: dict = field(default_factory=dict)
    public_parameters: dict = field(default_factory=dict)
    mode: str | None = None
    mode_text: str | None = None
    ledger: PrivacyLedger | None = None
    ledger_delta: float | None = None
    headline: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    created: str = field(default_factory=_now)
    versions: dict = field(default_factory=environment_versions)
    _images: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        self.figures = as_report_figures(self.figures)

    # ----------------------------------------------------------------- derived
    @property
    def status(self) -> str:
        """The fit's guarantee from its own ledger: "proven", "not proven" or "no privacy"."""
        return "no privacy" if self.ledger is None else self.ledger.status

    @property
    def guarantee_markdown(self) -> str:
        """The guarantee paragraph of the report, in Markdown."""
        if self.mode_text is not None:
            return self.mode_text
        no_mode = "No differential-privacy guarantee applies to this page."
        text = no_mode if self.mode is None else MODE_TEXT.get(self.mode, no_mode)
        if self.mode == "strict" and self.status != "proven":
            reasons = [] if self.ledger is None else self.ledger.reasons_not_proven()
            text = ("**Strict-mode settings**, but this fit is **not proven**: "
                    + ("; ".join(r.removeprefix("not proven: ") for r in reasons) or "nothing was released with noise")
                    + ".")
        return text

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
        """The report's file name for the page, with the extension ``ext``."""
        return f"{re.sub(r'[^A-Za-z0-9_-]+', '_', self.page)}_report.{ext}"

    def _rows_statement(self) -> str:
        if self.data is None:
            return "-"
        if self.ledger is not None and self.ledger.neighbouring is Neighbouring.REPLACE_ONE and len(self.data.shape):
            return f"{self.data.shape[0]} (public: replace-one neighbours keep the row count fixed)"
        return "not released (the number of rows is private under add/remove neighbours)"

    # ----------------------------------------------------------------- shareable outputs
    def to_dict(self) -> dict:
        """Plain JSON data of the shareable report (public parameters, ledger, totals, guarantee)."""
        summary = self._summary()
        return encode_value({
            "kind": "shareable report", "page": self.page, "method": self.method, "created": self.created,
            "versions": self.versions,
            "data": None if self.data is None else {
                "name": self.data.public_name, "origin": self.data.origin, "columns": list(self.data.columns),
                "rows": self._rows_statement()},
            "preprocessing": self.preprocessing, "public_parameters": self.public_parameters,
            "mode": self.mode, "status": self.status, "guarantee": self.guarantee,
            "ledger": {"releases": self.ledger_rows(), "totals": ledger_totals(self.ledger),
                       "pld": None if summary is None else summary["pld"],
                       "statement": self.ledger_statement(summary)},
        })

    def to_json(self, **json_kwargs) -> str:
        """The report as JSON (no NaN, non-ASCII kept)."""
        json_kwargs.setdefault("allow_nan", False)
        json_kwargs.setdefault("ensure_ascii", False)
        return json.dumps(self.to_dict(), **json_kwargs)

    def headline_totals(self, summary: dict | None = None) -> dict:
        """The shareable headline: releases, the tightest total (ε, δ) and its accountant, the relation."""
        summary = summary if summary is not None else self._summary()
        if summary is None:
            return {"noisy releases": 0, "total ε": "∞ (nothing released with calibrated noise)"}
        eps, delta, key = headline_total(summary)  # the one tightest valid total, as the page's headline
        assert self.ledger is not None, "a summary is the summary of this report's ledger"
        proven = self.status == "proven"
        return {"noisy releases": summary["n_releases"],
                "total ε" + ("" if proven else " (not proven)"): eps, "at δ": delta,
                "accountant": f"{ACCOUNTANT_NAMES[key]} (tightest valid)",
                "guarantee": neighbouring_text(self.ledger)}

    def add_figures(self, figures: dict) -> RunReport:
        """Add ``name -> ReportFigure`` entries (each with its declared shareability)."""
        self.figures = {**self.figures, **as_report_figures(figures)}
        self._images = None
        return self

    def _figure_html(self, e) -> list:
        shared = {n: f for n, f in self.figures.items() if f.shareable}
        withheld = [n for n, f in self.figures.items() if not f.shareable]
        if not shared and not withheld:
            return []
        parts = ["<h2>Figures</h2>"]
        figs = {n: f.resolve() for n, f in shared.items()}
        pngs, why = self._static_images(figs)
        if why:
            parts.append(f"<p class='note'>Static images unavailable ({e(why)}): each figure's data as a table.</p>")
        for i, (name, fig) in enumerate(figs.items()):
            parts.append(f"<figure><figcaption><strong>{e(figure_title(fig, name))}</strong>"
                         + (f" {e(shared[name].caption)}" if shared[name].caption else "") + "</figcaption>")
            if pngs:
                alt = e(f"{figure_title(fig, name)} (static image)")
                parts.append(f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(pngs[i]).decode()}">')
            else:
                frame, note = table_sample(figure_frame(fig))
                parts.append(_table(frame.itertuples(index=False), list(frame.columns), e)
                             + (f"<p class='note'>{e(note)}</p>" if note else ""))
            parts.append("</figure>")
        if withheld:
            parts.append(f"<p class='note'>Not in this shareable report: {e(', '.join(withheld))} (computed from "
                         "private rows without noise; their data are in the owner's workbook).</p>")
        return parts

    def _static_images(self, figs: dict) -> tuple:
        """PNGs of the shareable figures, rendered once per report (a second download gives the same file)."""
        if self._images is None:
            self._images = render_pngs(list(figs.values())) if figs else ([], "")
        return self._images

    def to_html(self) -> str:
        """The shareable report as one self-contained HTML page (no script, no external resource).

        Sections: what was fitted, guarantee, headline numbers, figures (shareable ones only), ledger, public
        parameters, software."""
        e = html.escape
        summary = self._summary()

        def kv(d: dict) -> str:
            return _table(d.items(), None, e, kv=True) if d else "<p>none</p>"

        parts = [f"<h1>PrivaLab run report: {e(self.method)}</h1>",
                 "<p class='guarantee'>Shareable report: it holds the privacy ledger, the guarantee and the inputs "
                 "declared public. Evaluations on private rows, exact counts and the data fingerprint are in the "
                 "owner's workbook, not here.</p>", "<h2>What was fitted</h2>"]
        fitted = {"method": self.method, "page": self.page, "date": self.created}
        if self.data is None:
            fitted["data set"] = "none: this page uses no data set"
        else:
            d = self.data
            fitted.update({"data set": d.public_name, "origin": d.origin, "rows": self._rows_statement(),
                           f"columns used ({len(d.columns)})": summarise_columns(
                               d.columns, self.public_parameters.get("response"))})
        fitted["preprocessing"] = str(self.preprocessing)
        parts.append(kv(fitted))
        parts.append("<h2>Guarantee</h2>")
        parts.append(kv({"mode": MODE_LABEL.get(self.mode, str(self.mode)), "guarantee of this fit": self.status}))
        parts.append(f"<p class='guarantee'>{_md_html(self.guarantee_markdown)}</p>")
        if self.ledger is not None:
            ledger_html = _md_html(ledger_text(self.ledger, self.ledger_delta, summary=summary))
        else:
            ledger_html = e(self.ledger_statement())
        parts.append(f"<p>{ledger_html}</p>")
        parts.append("<h2>Headline numbers</h2>" + kv(self.headline_totals(summary)))
        parts.append("<p class='note'>Errors and counts on the owner's private rows are evaluations without noise: "
                     "they are in the owner's workbook only.</p>")
        parts += self._figure_html(e)
        rows = self.ledger_rows()
        parts.append("<h2>Ledger</h2>")
        if rows:
            assert self.ledger is not None and summary is not None  # ledger rows: a ledger with releases
            parts.append(f"<h3>Privacy ledger ({e(plural(len(rows), 'release'))}, guarantee "
                         f"{e(neighbouring_text(self.ledger))})</h3>")
            keys = ("release", "mechanism", "sensitivity", "sensitivity source", "noise scale", "epsilon", "delta",
                    "note")
            parts.append(_table([[r[k] for k in keys] for r in rows], ["release", "mechanism", "sensitivity",
                                                                        "sensitivity source", "noise scale", "ε",
                                                                        "δ", "note"], e))
            totals = [(ACCOUNTANT_NAMES[key], *summary[key]) for key in ("pld", "gdp", "zcdp", "basic")
                      if key in summary]
            parts.append("<h3>Totals</h3>" + _table(totals, ["accounting", "total ε", "δ"], e))
        else:
            parts.append("<p>No release with calibrated noise.</p>")
        parts.append("<h2>Public parameters</h2>" + kv(self.public_parameters))
        parts.append("<h2>Software</h2>" + kv(self.versions))
        return _page(f"PrivaLab run report: {self.method}", parts)

    # ----------------------------------------------------------------- owner's view
    def owner_sheets(self) -> dict:
        """The owner's view of the run for :class:`engine.release.workbook.OwnerWorkbook` (private)."""
        run: dict[str, Any] = {"page": self.page, "method": self.method, "date": self.created, "mode": self.mode,
                               "guarantee of this fit": self.status, "guarantee": self.guarantee,
                               "ledger statement": self.ledger_statement(), "preprocessing": self.preprocessing}
        if self.data is not None:
            d = self.data
            run.update({"data set": d.name, "origin": d.origin, "shape (rows × columns)": " × ".join(map(str, d.shape)),
                        "columns used": len(d.columns),
                        "fingerprint (HMAC-SHA256)": d.fingerprint,
                        # the key is never in the file that holds the HMAC: a separate key file, matched by its id
                        "fingerprint key": f"not in this workbook: the separate key file {self.key_file_name()}",
                        "fingerprint key id": key_id(d.key) if d.key else "-", "data note": d.note})
        # sheet name -> a dict (key, value rows), a DataFrame or a list of lines (OwnerWorkbook writes each)
        sheets: dict[str, Any] = {"run": run, "parameters (all)": {k: _fmt(v) for k, v in self.parameters.items()},
                  "results (private rows)": {k: _fmt(v) for k, v in self.headline.items()}}
        if self.ledger is not None and len(self.ledger):
            sheets["ledger"] = pd.DataFrame(self.ledger_rows())
        if self.data is not None:
            sheets["columns used"] = pd.DataFrame({"column": list(self.data.columns)})
        if self.notes:
            sheets["notes"] = [plain_text(str(n)) for n in self.notes]
        for name, fig in self.figures.items():  # the figures kept out of the shareable report: their data
            if not fig.shareable:
                sheets[f"figure {name}"] = figure_frame(fig.resolve())
        sheets["software"] = dict(self.versions)
        return sheets

    def key_file_name(self) -> str:
        """The file name of the owner's fingerprint key file (marked PRIVATE)."""
        return f"{re.sub(r'[^A-Za-z0-9_-]+', '_', self.page)}_fingerprint_KEY_PRIVATE.txt"

    def fingerprint_key_file(self) -> str:
        """The owner's fingerprint key as a text file of its own (never inside the workbook holding the HMAC)."""
        if self.data is None or not self.data.key:
            return ""
        d = self.data
        return (f"PrivaLab fingerprint key: PRIVATE, keep it apart from the owner's workbook.\n"
                f"key (hex): {d.key.hex()}\nkey id: {key_id(d.key)}\ndata set: {d.name}\n"
                f"fingerprint (HMAC-SHA256 of the data under this key): {d.fingerprint}\n"
                "Check a file: engine.release.fingerprint.data_fingerprint(table, key=bytes.fromhex(key)) must "
                "equal the fingerprint in the workbook whose 'fingerprint key id' is this key id.\n")

    def owner_workbook(self, extra: dict | None = None) -> OwnerWorkbook:
        """The owner's workbook of this run: :meth:`owner_sheets` plus the page's own private sheets
        (``extra``: reference model, test values, results tables, clip counts, ...)."""
        return OwnerWorkbook(f"{self.method} ({self.page}, {self.created})", {**self.owner_sheets(), **(extra or {})},
                             notes=[HEADLINE_NOTE])


def _table(rows, header, e, kv: bool = False) -> str:
    head = "" if header is None else "<tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{e(_fmt(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table class='{'kv' if kv else 'grid'}'>{head}{body}</table>"


# A fixed layout: key-value tables span the page; the key column is at least 16em wide and never wraps (a
# long value wraps inside its own cell, anywhere, instead of squeezing the key to one letter per line).
STYLE = ("body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:62em;margin:2em auto;padding:0 1em;"
         "color:#222;line-height:1.4}h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;"
         "margin-top:1.6em}h3{font-size:1em}table{border-collapse:collapse;margin:.5em 0}"
         "td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top;font-size:.9em}"
         "th{background:#f4f4f4;white-space:nowrap}table.kv{width:100%}"
         "table.kv td:first-child{width:16em;min-width:16em;white-space:nowrap;background:#fafafa;font-weight:600}"
         "table.kv td+td{overflow-wrap:anywhere}table.grid td{overflow-wrap:anywhere;min-width:4em}"
         "figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}"
         "figcaption{margin-bottom:.3em}.guarantee{background:#f6f8fa;padding:.5em;border-left:3px solid #888}"
         ".note{color:#555;font-size:.9em}")


def _page(title: str, parts: list) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
