"""Progress lines: the time left is estimated without the one-time warm-up."""

import pdpboot.workflow.strategy as progress


def _lines(monkeypatch, events):
    """Feed (time, done) counts of a 50-resample bar; return the emitted lines."""
    times = {"now": 0.0}
    monkeypatch.setattr(progress.time, "perf_counter", lambda: times["now"])
    out = []
    sink = progress.ProgressLines(out.append, min_gap=0.0)
    for t, done in events:
        times["now"] = t
        sink.write(f"\rresamples:  {done}/50 [00:00<?, ?it/s]")
    return out


def test_first_estimate_excludes_warm_up(monkeypatch):
    # 20 s of start-up (workers, compilation), then 1 resample every 0.4 s: the run ends at about 40 s
    events = [(0.0, 0), (20.0, 1), (24.0, 11), (28.0, 21)]
    lines = _lines(monkeypatch, events)
    assert lines[0] == "Bootstrap: 0/50 resamples (0 %)"
    # 39 left at 2.5 fits/s; counting the warm-up gave 0.46 fits/s and "about 85 s left"
    assert lines[1].endswith("2.5 fits/s, about 16 s left")
    assert lines[2].endswith("2.5 fits/s, about 12 s left")


def test_no_rate_before_a_second_measurement(monkeypatch):
    lines = _lines(monkeypatch, [(0.0, 0), (30.0, 6)])
    assert lines[-1].startswith("Bootstrap: 6/50") and "fits/s" not in lines[-1] and "start-up" in lines[-1]
