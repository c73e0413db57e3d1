"""The report in a real browser: headless Chromium over the DevTools protocol (tests/report/cdp.py).

No console errors, no network request, every figure drawn (right count, non-empty), the hover shows
the numbers stored in the result (formatted here, independently of the report's code), the feature
and output pickers work, and the page reads at 1280 px and 390 px without sideways scrolling.
Screenshots go to ``$PDPBOOT_SCREENSHOTS`` when set (to look at them), else to a temporary folder.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from pdpboot.report import write_report

from .cdp import Browser, find_browser

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="browser test skipped: no headless Chromium on PATH (Debian: apt-get install chromium; "
                            "or set PDPBOOT_CHROMIUM); .ci/run installs it when it can")


def g4(value) -> str:
    """A number as the report prints it (4 significant digits), written out here independently."""
    value = float(value)
    return "0" if value == 0 else f"{value:.4g}"


@pytest.fixture(scope="module")
def browser():
    with Browser(BROWSER) as b:
        yield b


def _shots(tmp_path) -> Path:
    folder = Path(os.environ.get("PDPBOOT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


VISIBLE_CHARTS = """(() => [...document.querySelectorAll('svg.chart')].filter(s => s.getBoundingClientRect().width > 0)
  .map(s => { const r = s.getBoundingClientRect(); return {w: r.width, h: r.height, right: r.right,
    kind: s.classList.contains('surface') ? 'surface' : 'curve',
    points: s.querySelectorAll('circle.pt').length, cells: s.querySelectorAll('g.cells rect').length,
    drawn: [...s.querySelectorAll('polyline.est, polygon.band, g.cells rect')]
      .some(e => { const b = e.getBBox(); return b.width > 0 && b.height >= 0; })}; }))()"""


TOPS = "[...document.querySelectorAll('.fig[data-key]')].slice(0, 2).map(f => f.getBoundingClientRect().top)"
#: wait two frames: the scroll event (which hides the tooltip) fires before the mouse moves
SETTLE = "await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));"


def _hover_vertex(b: Browser, chart: int, k: int) -> list[str]:
    """Move the mouse onto the k-th grid point of the estimate of the chart-th visible curve; the tooltip lines."""
    x, y = b.js(f"""(async () => {{ const s = [...document.querySelectorAll('svg.chart.curve')]
        .filter(s => s.getBoundingClientRect().width > 0)[{chart}];
      s.scrollIntoView({{block: 'center'}}); {SETTLE}
      const line = s.querySelector('polyline.est'), p = line.points.getItem({k}).matrixTransform(line.getScreenCTM());
      return [p.x, p.y]; }})()""")
    b.mouse(x, y)
    return b.js("document.getElementById('tip').hidden ? null : [...document.getElementById('tip').children]"
                ".map(d => d.textContent)")


def test_report_in_chromium(regression_result, multiclass_result, tmp_path):
    res = regression_result
    path = write_report([res], tmp_path / "report.html")
    shots = _shots(tmp_path)
    with Browser(BROWSER) as b:
        b.call("Network.enable")
        b.size(1280, 900)
        b.open(path.as_uri())
        assert b.js("document.documentElement.getAttribute('data-ready')") == "1"
        load_ms = b.js("performance.getEntriesByType('navigation')[0].loadEventEnd")
        assert load_ms < 5000, f"the report took {load_ms:.0f} ms to load"

        # every figure: 2 curves (temp, day) + a surface and its band width (temp x hour), one output
        charts = b.js(VISIBLE_CHARTS)
        assert [c["kind"] for c in charts] == ["curve", "curve", "surface", "surface"]
        assert all(c["w"] > 250 and c["h"] > 150 and c["drawn"] for c in charts), charts
        grid = res["temp__hour"].ds
        assert charts[2]["cells"] == grid.sizes["temp"] * grid.sizes["hour"]  # one cell per grid pair
        assert charts[1]["points"] == res["day"].ds.sizes["day"]  # a point per level

        # hover: grid value, estimate and both bands of the 3rd grid point of temp, as stored in the result
        ds = res["temp"].ds.isel(output=0)
        k = 2
        lines = _hover_vertex(b, 0, k)
        b.screenshot(shots / "report_hover_curve.png", full=False)
        pw, sim = ds["pd_band_pointwise"].isel(temp=k), ds["pd_band"].isel(temp=k)
        ice = ds["ice"].isel(temp=k)
        assert lines == [f"temp = {g4(ds['temp'][k])}", f"PD estimate: {g4(ds['pd'][k])}",
                         f"95% pointwise band: [{g4(pw.sel(ci_bound='lower'))}, {g4(pw.sel(ci_bound='upper'))}]",
                         f"95% simultaneous band: [{g4(sim.sel(ci_bound='lower'))}, {g4(sim.sel(ci_bound='upper'))}]",
                         f"ICE curves (15 rows): {g4(ice.min())} to {g4(ice.max())}"]
        # hover on a surface cell: the cell (i, j) drawn at that place shows its own numbers
        i, j = 5, 2
        nb = grid.sizes["hour"]
        x, y = b.js(f"""(async () => {{ const s = [...document.querySelectorAll('svg.chart.surface')][1];
            s.scrollIntoView({{block: 'center'}}); {SETTLE}
            const r = s.querySelectorAll('g.cells rect')[{i * nb + j}].getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        b.mouse(x, y)
        lines = b.js("[...document.getElementById('tip').children].map(d => d.textContent)")
        one = grid.isel(output=0, temp=i, hour=j)
        band = one["pd_band_pointwise"] if "pd_band_pointwise" in one else one["pd_band"]
        lo, hi = float(band.sel(ci_bound="lower")), float(band.sel(ci_bound="upper"))
        assert lines[0] == f"temp = {g4(grid['temp'][i])}, hour = {g4(grid['hour'][j])}"
        assert lines[1] == f"PD estimate: {g4(one['pd'])}"
        assert lines[-1] == f"width of the band: {g4(hi - lo)}"
        marks = b.js("[...document.querySelectorAll('.cell-mark')].map(m => m.getAttribute('visibility'))")
        assert marks == ["visible", "visible"]  # the cell outlined in the surface and in its width map
        b.screenshot(shots / "report_hover_cell.png", full=False)
        b.mouse(2, 2)
        assert b.js("document.getElementById('tip').hidden")

        # the feature picker: one figure, then all again
        shown = b.js("""(() => { const s = document.getElementById('feature'); s.value = 'temp__hour';
            s.dispatchEvent(new Event('change'));
            return [...document.querySelectorAll('.fig[data-key]')].filter(f => f.offsetParent !== null)
              .map(f => f.dataset.key); })()""")
        assert shown == ["temp__hour"]
        shown = b.js("""(() => { const s = document.getElementById('feature'); s.value = '';
            s.dispatchEvent(new Event('change'));
            return [...document.querySelectorAll('.fig[data-key]')].filter(f => f.offsetParent !== null)
              .length; })()""")
        assert shown == 3

        # layout at 1280 px: two curves side by side; nothing wider than the window
        assert b.js("document.documentElement.scrollWidth") <= 1280
        tops = b.js(TOPS)
        assert tops[0] == tops[1]
        b.screenshot(shots / "report_1280.png")

        # 390 px (a phone): one column, no sideways scrolling, tick labels at least 10 px tall
        b.size(390, 844, mobile=True)
        b.open(path.as_uri())
        assert b.js("document.documentElement.scrollWidth") <= 390
        charts = b.js(VISIBLE_CHARTS)
        assert len(charts) == 4 and all(c["right"] <= 390 and c["w"] > 300 for c in charts), charts
        tops = b.js(TOPS)
        assert tops[0] < tops[1]
        tick = b.js("document.querySelector('svg.chart .tl').getBoundingClientRect().height")
        assert tick >= 10, f"tick labels {tick:.1f} px tall at 390 px"
        b.screenshot(shots / "report_390.png")

        # a multiclass result: the output picker shows each class's panels only
        path2 = write_report([multiclass_result], tmp_path / "multiclass.html")
        b.size(1280, 900)
        b.open(path2.as_uri())
        classes = [str(c) for c in multiclass_result["temp"].ds["output"].values]
        assert b.js("[...document.getElementById('output').options].map(o => o.value)") == classes
        for label in classes:
            visible = b.js(f"""(() => {{ const s = document.getElementById('output'); s.value = {label!r};
                s.dispatchEvent(new Event('change'));
                return [...document.querySelectorAll('.panel')].filter(p => p.offsetParent !== null)
                  .map(p => p.dataset.output); }})()""")
            assert visible == [label, label]
        lines = _hover_vertex(b, 0, 0)
        last = multiclass_result["temp"].ds["pd"].sel(output=classes[-1])
        assert lines[1] == f"PD estimate: {g4(last[0])}"

        assert b.errors() == []
        requests = b.network_requests()
        assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests
    assert (shots / "report_1280.png").stat().st_size > 20_000


def test_screenshot_size_sanity():
    """The helper's numbers format like the report's (a check of the test's own formatter)."""
    assert g4(np.float64(12.345678)) == "12.35" and g4(0.0) == "0" and g4(1.5e-7) == "1.5e-07"
