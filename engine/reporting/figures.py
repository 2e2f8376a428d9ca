"""Figures of the run report: static PNGs through plotly's own export, or a table of each figure's data.

A page declares every figure it hands to the report with :class:`ReportFigure` and says explicitly whether
it is shareable (built from differentially private outputs and declared-public inputs only) or not (the
reference model, predictions on private rows, ...). The shareable report embeds only shareable figures; the
others go to the owner's workbook as data tables (:func:`figure_frame`).

Static export is kaleido v1 (plotly's exporter), which drives the installed Chrome/Chromium through
choreographer (:func:`browser_path`: ``PRIVALAB_CHROMIUM``, then ``BROWSER_PATH``, then Debian's
``/usr/bin/chromium``). It never reaches the network: plotly.js is the copy bundled with plotly.py, MathJax
is off (its default is a CDN), and the export browser's proxy is a closed local port, so any http(s)
request it might make fails on this machine. It is bounded in time (:data:`EXPORT_TIMEOUT_S`) and never
raises: without kaleido, without a browser, on a timeout or any export error :func:`render_pngs` returns
the reason and the report shows each figure's data as a table instead.
"""
from __future__ import annotations

import asyncio
import base64
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["EXPORT_TIMEOUT_S", "ReportFigure", "browser_path", "figure_frame", "figure_title", "render_pngs",
           "table_sample"]

# Seconds for one report's whole static export (browser start, every figure, browser stop).
EXPORT_TIMEOUT_S = float(os.environ.get("PRIVALAB_FIGURE_EXPORT_TIMEOUT", "40"))
# "off": never start a browser (tables only), e.g. on a machine where Chromium is too slow to start.
EXPORT_SWITCH = "PRIVALAB_STATIC_FIGURES"
BROWSERS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# The export browser's proxy: a closed port on the loopback interface (9 = discard), so no request leaves.
CLOSED_PROXY = "127.0.0.1:9"
WIDTH, HEIGHT = 900, 450
_LOCK = threading.Lock()  # one export browser at a time (the machine's cores are shared with the app)


@dataclass(frozen=True)
class ReportFigure:
    """One figure handed to the run report.

    figure: a plotly figure (or its dict), or a zero-argument callable returning one (built on download).
    shareable: required, keyword-only: True only for a figure built from DP outputs and declared-public
    inputs; False for anything computed from private rows without noise (owner's workbook only).
    caption: one sentence under the figure.
    """

    figure: Any
    shareable: bool
    caption: str = ""

    def __post_init__(self):
        if not isinstance(self.shareable, bool):
            raise TypeError("ReportFigure.shareable must be declared True or False")

    def resolve(self):
        """The figure, built now when it was given as a function."""
        return self.figure() if callable(self.figure) else self.figure


def as_report_figures(figures) -> dict:
    """Check a ``name -> ReportFigure`` mapping (a bare figure is refused: shareability must be declared)."""
    out = {}
    for name, value in dict(figures or {}).items():
        if not isinstance(value, ReportFigure):
            raise TypeError(f"report figure {name!r}: wrap it in ReportFigure(fig, shareable=True/False)")
        out[str(name)] = value
    return out


def _plotly_dict(fig) -> dict:
    return fig if isinstance(fig, dict) else fig.to_plotly_json()


def figure_title(fig, default: str = "") -> str:
    """The plotly figure's title text, or ``default``."""
    title = (_plotly_dict(fig).get("layout") or {}).get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return str(title) if title else default


def _array(values) -> np.ndarray:
    """A trace's data as an array: plain lists, numpy arrays, or plotly's typed-array spec (``bdata``)."""
    if isinstance(values, dict) and "bdata" in values:
        arr = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values.get("dtype", "f8")))
        shape = values.get("shape")
        if shape:
            arr = arr.reshape([int(n) for n in str(shape).split(",")] if isinstance(shape, str) else shape)
        return arr
    return np.asarray(values, dtype=object)


def _column(values) -> list:
    if values is None:
        return []
    return [v.item() if isinstance(v, np.generic) else v for v in _array(values).ravel()]


def figure_frame(fig) -> pd.DataFrame:
    """Every trace's points as rows: trace, x, y (and z / text where a trace has them)."""
    frames = []
    for i, trace in enumerate(_plotly_dict(fig).get("data") or []):
        name = trace.get("name") or f"trace {i + 1}"
        cols = {k: _column(trace.get(k)) for k in ("x", "y", "z") if trace.get(k) is not None}
        if trace.get("type") in ("heatmap", "contour", "surface") and "z" in cols:
            z = _array(trace["z"])
            cols = {"z (rows × columns)": [" × ".join(map(str, z.shape))]}
        n = max((len(v) for v in cols.values()), default=0)
        if not n:
            continue
        frame = pd.DataFrame({k: v + [None] * (n - len(v)) for k, v in cols.items()})
        frame.insert(0, "trace", str(name))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"trace": []})


def table_sample(frame: pd.DataFrame, max_rows: int = 40) -> tuple[pd.DataFrame, str]:
    """At most ``max_rows`` rows, evenly spaced within each trace, and the note saying so ("" if all)."""
    if len(frame) <= max_rows:
        return frame, ""
    groups = list(frame.groupby("trace", sort=False))
    per = max(2, max_rows // max(1, len(groups)))
    parts = []
    for _, g in groups:
        idx = np.unique(np.linspace(0, len(g) - 1, min(per, len(g))).round().astype(int))
        parts.append(g.iloc[idx])
    return pd.concat(parts), f"{sum(len(p) for p in parts)} of {len(frame)} points, evenly spaced within each trace"


def browser_path() -> str | None:
    """The Chrome/Chromium the export drives: PRIVALAB_CHROMIUM, BROWSER_PATH, then Debian's (None: none)."""
    for env in ("PRIVALAB_CHROMIUM", "BROWSER_PATH"):
        value = os.environ.get(env, "").strip()
        if value:
            return value if Path(value).is_file() else None
    return next((p for p in BROWSERS if Path(p).is_file()), None)


def _plotly_js() -> Path | None:
    try:
        import plotly
    except ImportError:
        return None
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return path if path.is_file() else None


def _sizes(fig) -> dict:
    layout = _plotly_dict(fig).get("layout") or {}
    return {"format": "png", "width": int(layout.get("width") or WIDTH), "height": int(layout.get("height") or HEIGHT),
            "scale": 1}


def render_pngs(figures: list, timeout: float | None = None) -> tuple[list | None, str]:
    """PNG bytes of every figure (one browser for all), or (None, why not). Never raises; bounded in time."""
    if not figures:
        return [], ""
    if os.environ.get(EXPORT_SWITCH, "").strip().lower() in ("off", "0", "false", "no"):
        return None, f"static export is switched off ({EXPORT_SWITCH})"
    try:
        import kaleido
    except ImportError:
        return None, "kaleido (plotly's static export) is not installed"
    path, js = browser_path(), _plotly_js()
    if path is None:
        return None, "no Chrome/Chromium found for plotly's static export"
    if js is None:
        return None, "plotly's bundled plotly.js was not found"
    timeout = EXPORT_TIMEOUT_S if timeout is None else float(timeout)
    dicts = [_plotly_dict(f) for f in figures]
    result: dict = {}

    async def export():
        async with kaleido.Kaleido(n=1, timeout=timeout, plotlyjs=str(js), mathjax=False, path=path,
                                   proxy_server=CLOSED_PROXY) as k:
            return [await k.calc_fig(d, opts=_sizes(d)) for d in dicts]

    def work():
        try:
            result["pngs"] = asyncio.run(asyncio.wait_for(export(), timeout))
        except BaseException as exc:  # noqa: BLE001 - any failure means: tables instead
            result["error"] = exc

    if not _LOCK.acquire(timeout=timeout):
        return None, f"another static export was still running after {timeout:.0f} s"
    start = time.monotonic()  # after the lock: a wait for another export is not this export's time
    try:
        worker = threading.Thread(target=work, name="privalab-static-figures", daemon=True)
        worker.start()
        worker.join(timeout + 10)  # the export cancels itself at ``timeout``; the margin covers closing the browser
    finally:
        _LOCK.release()
    timed_out = time.monotonic() - start >= timeout  # a cancelled start surfaces as the browser's own error
    if worker.is_alive() or timed_out or isinstance(result.get("error"), (asyncio.TimeoutError, TimeoutError)):
        return None, f"plotly's static export did not finish within {timeout:.0f} s"
    if "error" in result:
        return None, f"plotly's static export failed ({type(result['error']).__name__})"
    pngs = result.get("pngs") or []
    if len(pngs) != len(dicts) or not all(isinstance(p, bytes) and p.startswith(b"\x89PNG") for p in pngs):
        return None, "plotly's static export returned no image"
    return pngs, ""
