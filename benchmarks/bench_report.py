"""The HTML report of a run folder: what its bytes are made of, how long it takes to write and to load.

    python -m benchmarks.bench_report RUN_FOLDER [--repeats 5]

Writes the report again (``pdpboot report FOLDER -o``) into a temporary folder, splits its size into
inline SVG, hover data, embedded images, the CSV, script and style, and loads it ``--repeats`` times in
headless Chromium (tests/report/cdp.py) at 1280 px: ``loadEventEnd`` of the navigation (ms), median.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from pdpboot.cli import main


def composition(page: str) -> dict[str, int]:
    """Bytes of each part of the page (UTF-8)."""
    def size(parts):
        return sum(len(p.encode()) for p in parts)

    svgs = re.findall(r'<svg class="chart.*?</svg>', page, re.S)
    hover = re.findall(r'data-hover="[^"]*"', page)
    images = re.findall(r'src="data:image/[^"]*"', page)
    csv = re.findall(r'href="data:text/csv[^"]*"', page)
    script = re.findall(r"<script>.*?</script>", page, re.S)
    style = re.findall(r"<style>.*?</style>", page, re.S)
    out = {"total": len(page.encode()), "SVG charts (drawing)": size(svgs), "hover data (JSON)": size(hover),
           "embedded run-folder images": size(images), "CSV of the numbers": size(csv), "script": size(script),
           "style": size(style)}
    out["text, tables, provenance"] = out["total"] - sum(v for k, v in out.items() if k != "total")
    return out


def load_times(path: Path, repeats: int) -> list[float]:
    from tests.report.cdp import Browser, find_browser

    browser = find_browser()
    if browser is None:
        raise SystemExit("No Chromium on PATH (apt-get install chromium).")
    times = []
    with Browser(browser) as b:
        b.size(1280, 900)
        for _ in range(repeats):
            b.open(path.as_uri())
            times.append(float(b.js("performance.getEntriesByType('navigation')[0].loadEventEnd")))
        assert b.errors() == [], b.errors()
    return times


def run(folder: Path, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        start = time.perf_counter()
        assert main(["report", str(folder), "-o", str(path)]) == 0
        seconds = time.perf_counter() - start
        page = path.read_text(encoding="utf-8")
        print(f"written in {seconds:.2f} s (loading the results included)")
        for name, value in composition(page).items():
            print(f"{name:28s} {value / 1024:8.1f} KB")
        times = load_times(path, repeats)
        print(f"load (loadEventEnd) at 1280 px: median {statistics.median(times):.0f} ms, "
              f"min {min(times):.0f}, max {max(times):.0f} ({repeats} loads)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    run(args.folder, args.repeats)
