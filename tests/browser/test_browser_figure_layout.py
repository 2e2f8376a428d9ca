"""Every figure of ui/figures/ drawn by plotly.js in chromium (no Streamlit server): the legend must not
overlap the plot area, the axis titles or tick labels, the annotations or the title; the title must not
overlap the axes and must fit the figure. Widths: a half-width column of the wide layout and the full width.
Saves test-artifacts/figure_layout_<width>.png (all figures, for a look)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from browser_harness import ARTIFACTS
from figure_cases import CASES

TESTS = Path(__file__).resolve().parents[1]

WIDTHS = (560, 1100)

OVERLAPS_JS = r"""(id) => {
  const root = document.getElementById(id);
  const box = el => {
    const r = el.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height};
  };
  const all = sel => Array.from(root.querySelectorAll(sel)).map(box).filter(r => r.w > 0 && r.h > 0);
  const legend = all('g.legend g.traces');
  const parts = {
    'x-axis title': all('g[class^="g-x"][class$="title"] text'),
    'y-axis title': all('g[class^="g-y"][class$="title"] text'),
    'x tick label': all('g.xtick text'),
    'y tick label': all('g.ytick text'),
    'title': all('g.g-gtitle text'),
    'annotation': all('g.annotation-text-g text'),
    'plot area': all('g.draglayer rect.nsewdrag'),
  };
  const fig = box(root.querySelector('.main-svg'));
  const hit = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const out = [];
  for (const item of legend) {
    if (item.t < fig.t - 1 || item.b > fig.b + 1) out.push('legend outside the figure');
    for (const [name, boxes] of Object.entries(parts)) if (boxes.some(o => hit(item, o))) out.push('legend on ' + name);
  }
  for (const t of parts['title']) {
    for (const name of ['x-axis title', 'x tick label', 'annotation', 'plot area'])
      if (parts[name].some(o => hit(t, o))) out.push('title on ' + name);
    if (t.l < fig.l - 1 || t.r > fig.r + 1 || t.t < fig.t - 1) out.push('title cut off');
  }
  for (const x of parts['x-axis title'])
    if (parts['x tick label'].some(o => hit(x, o))) out.push('x-axis title on tick labels');
  for (const y of parts['y-axis title'])
    if (parts['y tick label'].some(o => hit(y, o))) out.push('y-axis title on tick labels');
  return [...new Set(out)];
}"""


def _page_html(figures: dict) -> str:
    import plotly

    js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    divs, calls = [], []
    for name, fig in figures.items():
        spec = json.loads(fig.to_json())
        for width in WIDTHS:
            div = f"{name}__{width}"
            divs.append(f'<div id="{div}" style="width:{width}px;margin:4px;display:inline-block"></div>')
            calls.append(f"Plotly.newPlot('{div}', {json.dumps(spec['data'])}, {json.dumps(spec['layout'])});")
    return (f"<html><head><meta charset='utf-8'><script>{js}</script></head><body>{''.join(divs)}"
            f"<script>{''.join(calls)}</script></body></html>")


def test_no_legend_or_title_overlaps_in_any_figure(browser_context, tmp_path):
    figures = {name: build() for name, build in sorted(CASES.items())}
    html = tmp_path / "figures.html"
    html.write_text(_page_html(figures), encoding="utf-8")
    page = browser_context.new_page()
    try:
        page.set_viewport_size({"width": 2 * max(WIDTHS) + 60, "height": 1000})
        page.goto(html.as_uri())
        page.wait_for_function(f"document.querySelectorAll('.main-svg').length >= {len(figures) * len(WIDTHS)}")
        page.wait_for_timeout(500)
        problems = {}
        for name in figures:
            for width in WIDTHS:
                found = page.evaluate(OVERLAPS_JS, f"{name}__{width}")
                if found:
                    problems[f"{name} at {width} px"] = found
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "figure_layout.png"), full_page=True)
    finally:
        page.close()
    assert not problems, "layout defects:\n" + "\n".join(f"  {k}: {', '.join(v)}" for k, v in problems.items())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
