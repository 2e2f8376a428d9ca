"""The run report a stakeholder reads (issue #19): fixed layout, the column list summarised, figures.

- ``summarise_columns``: the spectral columns counted and given by their range, the response and the other
  columns named (exact strings).
- Layout: the sections in order; key-value tables whose key column is at least 16em and never wraps.
- Figures: a shareable figure is embedded (a real PNG from plotly's static export through the installed
  chromium, checked with Pillow; or a table of its data when static export is unavailable); a figure
  declared non-shareable is refused by the shareable report (its values are nowhere in the HTML) and goes to
  the owner's workbook; an undeclared figure is refused when the report is built.
- Static export fails soft and fast: no kaleido, no browser, a timeout -> a table, never an exception.
- No outside request: the export browser's only route out is the configured proxy (a recording proxy here
  sees the request a figure with a remote image makes; the real one is a closed local port).
"""
from __future__ import annotations

import base64
import io
import re
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

import numpy as np
import plotly.graph_objects as go
import pytest

import engine.reporting.figures as rf
from engine.privacy import PrivacyLedger, Release
from engine.reporting.report import STYLE, DataInfo, ReportFigure, RunReport, summarise_columns

CORN = ["sample_id", *[str(w) for w in range(1100, 2500, 4)], "moisture", "oil", "protein", "starch"]


def static_export_available() -> bool:
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return False
    return rf.browser_path() is not None


needs_browser = pytest.mark.skipif(not static_export_available(), reason="kaleido or chromium not installed")


def marked_figure(values) -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1100.0, 1104.0, 1108.0], y=values, name="private (DP)"))
    fig.update_layout(title="Regression coefficients of the released model")
    return fig


def ledger() -> PrivacyLedger:
    led = PrivacyLedger()
    led.add(Release(name="Gram", mechanism="gaussian", sensitivity=1.0, scale=4.2, epsilon=1.0, delta=1e-6))
    return led


def report(figures=None, **kw) -> RunReport:
    import pandas as pd

    df = pd.DataFrame(np.zeros((3, len(CORN) - 1)), columns=CORN[1:])
    return RunReport(page="edpls", method="edPLS", data=DataInfo.from_frame(df, "corn.csv", "upload"),
                     public_parameters={"response": "protein", "epsilon": 1.0}, mode="strict", ledger=ledger(),
                     figures=figures or {}, **kw)


# ------------------------------------------------------------------------------------------ columns
def test_summary_counts_spectral_columns_and_names_the_response():
    cols = [c for c in CORN if c not in ("sample_id", "moisture", "oil", "starch")]
    assert len(cols) == 351
    assert summarise_columns(cols, "protein") == "350 spectral columns 1100–2496 (step 4), response protein"
    assert summarise_columns(CORN, "protein") == ("350 spectral columns 1100–2496 (step 4), response protein, "
                                                  "4 other columns: sample_id, moisture, oil, starch")
    assert summarise_columns(CORN[1:-4], None, unit="nm") == "350 spectral columns 1100–2496 (step 4) nm"


def test_summary_uneven_descending_few_and_many_columns():
    wavenumbers = [str(v) for v in (4000, 3990, 3970, 3900, 3500, 3000, 2500, 2000, 1500, 1000)]
    assert summarise_columns(wavenumbers) == "10 spectral columns 1000–4000"  # range by value, no step
    assert summarise_columns(["x1", "x2", "y"], "y") == "response y, 2 other columns: x1, x2"
    assert summarise_columns(["a", "b", "c"]) == "a, b, c"
    assert summarise_columns(["1", "2", "y"], "y") == "response y, 2 other columns: 1, 2"  # 2 numbers: listed
    many = [f"c{i}" for i in range(30)]
    assert summarise_columns(many) == "30 columns: c0, c1, c2, c3, c4, c5, …, c24, c25, c26, c27, c28, c29"
    assert summarise_columns([]) == "-"
    assert summarise_columns(["a"], "not there") == "a"


def test_report_lists_the_summary_not_351_names():
    page = report().to_html()
    assert "350 spectral columns 1100–2496 (step 4), response protein" in page
    assert "1104" not in page and "2492" not in page  # no column name listed inline


# ------------------------------------------------------------------------------------------ layout
def test_sections_in_order_and_key_column_never_wraps():
    page = report().to_html()
    heads = re.findall(r"<h2>(.*?)</h2>", page)
    assert heads == ["What was fitted", "Guarantee", "Headline numbers", "Ledger", "Public parameters", "Software"]
    assert "table.kv td:first-child{width:16em;min-width:16em;white-space:nowrap" in STYLE
    assert "word-break:break-word" not in STYLE  # what squeezed the key column to one letter per line
    assert "<td>guarantee of this fit</td><td>proven</td>" in page
    assert re.search(r"<td>total ε</td><td>[0-9.]+</td>", page), "the headline total, proven"


def test_headline_is_the_tightest_total_and_says_not_proven():
    led = PrivacyLedger()
    for _ in range(10):
        led.add(Release(name="q", mechanism="gaussian", sensitivity=1.0, scale=5.0, epsilon=0.5, delta=1e-7,
                        sensitivity_source="data"))
    rep = RunReport(page="p", method="m", mode="paper", ledger=led, ledger_delta=1e-5)
    head = rep.headline_totals()
    summary = led.summary(1e-5)
    tightest = float(summary["pld"][0])  # the PLD accountant's total: the page's headline too
    assert tightest <= min(float(summary[k][0]) for k in ("basic", "zcdp") if k in summary)
    key = "total ε" if rep.status == "proven" else "total ε (not proven)"
    assert rep.status == "not proven" and head[key] == pytest.approx(tightest)
    assert head[key] < 5.0  # tighter than basic composition's 10 × 0.5


# ------------------------------------------------------------------------------------------ figures
def test_undeclared_figure_is_refused():
    with pytest.raises(TypeError, match="shareable"):
        report({"coef": marked_figure([1, 2, 3])})
    with pytest.raises(TypeError, match="shareable"):
        ReportFigure(marked_figure([1, 2, 3]), shareable="yes")


def test_non_shareable_figure_is_refused_by_the_shareable_report(monkeypatch):
    monkeypatch.setenv(rf.EXPORT_SWITCH, "off")  # tables: every value of a shown figure is in the HTML
    private = marked_figure([0.7316529, 0.8142763, 0.9918274])
    public = marked_figure([0.1234567, 0.2345678, 0.3456789])
    rep = report({"coef": ReportFigure(public, shareable=True), "test predictions": ReportFigure(private,
                                                                                                shareable=False)})
    page = rep.to_html()
    assert "0.123457" in page and "0.345679" in page  # the shareable one, as a table
    for v in ("0.731653", "0.814276", "0.991827", "0.73165", "7316"):
        assert v not in page, f"a value of the non-shareable figure ({v}) is in the shareable report"
    assert "Not in this shareable report: test predictions" in page
    sheets = rep.owner_sheets()
    assert list(sheets["figure test predictions"]["y"]) == pytest.approx([0.7316529, 0.8142763, 0.9918274])
    assert "figure coef" not in sheets


def test_table_fallback_without_browser_or_kaleido(monkeypatch):
    monkeypatch.setenv("PRIVALAB_CHROMIUM", "/nonexistent/chromium")
    rep = report({"coef": ReportFigure(marked_figure([1.5, 2.5, 3.5]), shareable=True)})
    page = rep.to_html()
    assert "<img" not in page and "no Chrome/Chromium found" in page
    assert "<td>private (DP)</td><td>1104</td><td>2.5</td>" in page
    monkeypatch.delenv("PRIVALAB_CHROMIUM")
    monkeypatch.setitem(sys.modules, "kaleido", None)  # import kaleido -> ImportError
    assert rf.render_pngs([marked_figure([1, 2, 3])]) == (None, "kaleido (plotly's static export) is not installed")


def test_long_figure_table_is_sampled_and_says_so():
    fig = go.Figure([go.Scatter(x=np.arange(351), y=np.arange(351) * 2.0, name="a"),
                     go.Scatter(x=np.arange(351), y=np.arange(351) * 3.0, name="b")])
    frame, note = rf.table_sample(rf.figure_frame(fig), max_rows=40)
    assert len(frame) == 40 and list(frame.groupby("trace").size()) == [20, 20]
    assert frame["x"].iloc[0] == 0 and frame["x"].iloc[19] == 350  # both ends kept
    assert note == "40 of 702 points, evenly spaced within each trace"


@needs_browser
def test_static_export_gives_a_real_png_and_one_file_per_report():
    rep = report({"coef": ReportFigure(marked_figure([1.0, -2.0, 3.0]), shareable=True, caption="DP only.")})
    page = rep.to_html()
    match = re.search(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', page)
    assert match, "the figure is embedded as a PNG"
    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(match.group(1))))
    assert img.format == "PNG" and img.size == (rf.WIDTH, rf.HEIGHT)
    assert len(np.unique(np.asarray(img.convert("L")))) > 10, "the image is not blank"
    assert rep.to_html() == page  # rendered once: a second download gives the same file
    assert "<script" not in page.lower() and "http" not in page.split("<h2>Figures</h2>")[1].split("</figure>")[0]


@needs_browser
def test_static_export_is_bounded_in_time():
    start = time.monotonic()
    pngs, why = rf.render_pngs([marked_figure([1, 2, 3])], timeout=0.05)
    assert pngs is None and "did not finish within" in why
    assert time.monotonic() - start < 20


def _request_target(line: str) -> str:
    """Host and path an HTTP proxy request line asks for, without the query string: ``CONNECT host:port HTTP/1.1``
    gives the host, ``GET http://host/path?query HTTP/1.1`` the host and path."""
    target = line.split(" ")[1] if " " in line else line
    if "://" not in target:
        return target.rsplit(":", 1)[0].lower()
    parts = urlsplit(target)
    return f"{parts.netloc}{parts.path}".lower()


class RecordingProxy:
    """A local TCP listener that records the first bytes of each connection (an HTTP proxy request line).

    Each connection is served in its own thread: Chromium also opens connections it sends nothing on (preconnects)
    and keeps them open. Served one at a time, each such connection held every later one, the image request
    included, behind a 2 s read timeout; a run of them could outlast the export's own timeout (CI run 34, the
    oldest-versions run: the export timed out at 60 s once, against 1.5-2.5 s in every other run)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.5)
        self.lines: list[str] = []
        self.stop = False
        self.handlers: list[threading.Thread] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            handler = threading.Thread(target=self.answer, args=(conn,), daemon=True)
            handler.start()
            self.handlers.append(handler)

    def answer(self, conn):
        with conn:
            conn.settimeout(2)
            try:
                self.lines.append(conn.recv(4096).decode("latin-1").split("\r\n", 1)[0])  # list.append: atomic
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()
        for handler in self.handlers:  # each ends within its 2 s read timeout
            handler.join(timeout=3)


@needs_browser
def test_export_browser_sends_every_request_to_its_proxy(monkeypatch):
    """The figure asks for a remote image: the request goes to the proxy (here a recorder), not out."""
    proxy = RecordingProxy()
    monkeypatch.setattr(rf, "CLOSED_PROXY", proxy.address)
    fig = marked_figure([1, 2, 3])
    fig.add_layout_image(source="http://example.invalid/privalab-leak.png", x=0, y=1, sizex=1, sizey=1,
                         xref="paper", yref="paper")
    try:
        pngs, why = rf.render_pngs([fig], timeout=60)
    finally:
        proxy.close()
    assert why == "" and pngs and pngs[0].startswith(b"\x89PNG")
    assert any("example.invalid/privalab-leak.png" in line for line in proxy.lines), proxy.lines
    assert rf.CLOSED_PROXY.startswith("127.0.0.1:")
    # Chromium's own background requests (its clock, updates, sign-in, the search engine's start page) also reach
    # the proxy, which refuses them; none is to plotly's or MathJax's CDN. Host and path, not the query string: the
    # random keys in those requests' queries once held "cdn" (CI run 21, oldest versions).
    targets = [_request_target(line) for line in proxy.lines if line]
    assert not any("mathjax" in t or "cdn" in t for t in targets), proxy.lines


# ------------------------------------------------------------------------------------------ page helpers
def test_page_helpers_draw_the_released_values_only():
    import pandas as pd

    from ui.figures.report import private_coefficients, private_values, synthetic_rows

    coef = np.array([0.5, -0.25, 0.125])
    figs = private_coefficients(["1100", "1104", "1108"], coef, label="edPLS (ε = 1)", shareable=True)
    fig = figs["coefficients"].resolve()  # built on download
    assert figs["coefficients"].shareable and len(fig.data) == 1
    assert list(fig.data[0].x) == [1100.0, 1104.0, 1108.0] and list(fig.data[0].y) == list(coef)
    assert private_coefficients(["a", "b"], coef, label="x", shareable=True) == {}  # length mismatch: none
    assert list(private_coefficients(["a", "b", "c"], coef, label="x", shareable=False)["coefficients"]
                .resolve().data[0].x) == [0, 1, 2]
    bars = private_values("canonical correlation", [0.9, 0.4], shareable=False)["canonical correlation"]
    assert not bars.shareable and list(bars.figure.data[0].y) == [0.9, 0.4]
    syn = pd.DataFrame({"c1": [1.0, 2.0, 3.0], "c2": [4.0, 5.0, 6.0], "label": ["a", "b", "a"]})
    fig = synthetic_rows(syn, shareable=True)["synthetic rows"].figure
    assert sorted(t.name for t in fig.data) == ["a", "b"]
    assert sorted(float(v) for t in fig.data for v in t.x) == [1.0, 2.0, 3.0]
    assert synthetic_rows(pd.DataFrame({"x": [1.0]}), shareable=True) == {}


def test_add_figures_checks_the_declaration_and_renders_again(monkeypatch):
    monkeypatch.setenv(rf.EXPORT_SWITCH, "off")
    rep = report()
    first = rep.to_html()
    assert "<h2>Figures</h2>" not in first
    rep.add_figures({"coef": ReportFigure(marked_figure([4.5, 5.5, 6.5]), shareable=True)})
    assert "<h2>Figures</h2>" in rep.to_html() and "5.5" in rep.to_html()
    with pytest.raises(TypeError):
        rep.add_figures({"bare": marked_figure([1, 2, 3])})
