"""Two versions of the package side by side: total / fit floor of the boosters' bootstrap, arms alternated.

Each run is its own process (``python -m benchmarks.bench_issue30 boosters --repeats 1``) with the
version's source tree first on ``PYTHONPATH``, so both arms pay the same process start-up and the same
machine load; the order of the two arms alternates from round to round. Prints the median ratio of each
arm, its runs and the load average. Make the "before" tree with ``git archive``:

    mkdir /tmp/before && git archive e1ebc34 | tar -x -C /tmp/before
    python -m benchmarks.ab_versions /tmp/before . --model lightgbm --n 2000 --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _run(tree: Path, model: str, n: int, resamples: int) -> float:
    """One bootstrap of ``model`` at ``n`` rows with the package of ``tree``; its total / fit floor."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.jsonl"
        env = dict(os.environ, PYTHONPATH=str(tree))
        subprocess.run([sys.executable, "-m", "benchmarks.bench_issue30", "boosters", "--models", model, "--n",
                        str(n), "--repeats", "1", "--resamples", str(resamples), "--out", str(out)],
                       cwd=tree, env=env, check=True, capture_output=True)
        return json.loads(out.read_text().splitlines()[-1])["ratio"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="source tree of the first version")
    parser.add_argument("after", type=Path, help="source tree of the second version")
    parser.add_argument("--model", default="lightgbm", choices=["lightgbm", "xgboost", "hgb"])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    arms = {"before": args.before.resolve(), "after": args.after.resolve()}
    ratios: dict[str, list[float]] = {name: [] for name in arms}
    loads = []
    for round_ in range(args.rounds):
        for name in (("before", "after") if round_ % 2 == 0 else ("after", "before")):
            ratios[name].append(_run(arms[name], args.model, args.n, args.resamples))
        loads.append(os.getloadavg()[0])
    for name, values in ratios.items():
        print(f"{args.model} n = {args.n:,} {name}: median total / fit floor {statistics.median(values):.3f} "
              f"(runs {', '.join(f'{v:.3f}' for v in values)})")
    print(f"load average {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
