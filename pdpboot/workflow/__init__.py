"""The command-line workflow behind ``pdpboot run`` / ``pdpboot demo`` (private).

Modules, in the order a run uses them:

``options``     every option in one table, and the frozen ``RunConfig`` built from it
``data``        read the table (separator, decimal comma), IDs/dates/levels, target and task
``modelspec``   ``--model-spec`` (parsed with ast, never evaluated) and ``--model-file``
``model``       the scikit-learn Pipeline, the train/test split, test metrics
``modelcheck``  every model parameter checked before the first fit (declared constraints, a trial fit)
``progress``    progress lines from the bootstrap's bar (run.log, stderr off a terminal)
``effect``      ``EffectReport`` (one per effect) and ``FitContext`` (what a computation reads)
``effect_pd``, ``effect_ale``   the registered effects: computation per strategy, summary section, plots
``registry``    the registered effects (one line each)
``strategy``    uncertainty strategies (bootstrap, none, debiased), chosen once
``compute``     fit, then each effect under the strategy: the part ``repro.py`` re-runs
``intervals``   summary statistics with intervals (ranges, noise reference, level contrasts), flags
``text``        inert Markdown, numbers, file names
``workbook``    the Excel export (cells are data, never formulas)
``report``      the plots
``summary``     ``summary.md``
``provenance``  library versions and checksums (used by ``run`` and ``repro``)
``repro``       ``repro.py``, ``repro_inputs/`` and ``pdpboot reproduce``
``run``         the output folder (built aside, renamed at the end), ``run.log``, ``report.html``, ``RunRecord``

Imports go one way (no cycle): ``run`` -> ``repro`` -> ``compute`` -> ``registry`` -> ``effect_*`` ->
``report``/``intervals``/``effect`` -> ``model``/``data`` -> ``options``; ``provenance``, ``progress`` and
``text`` import nothing of the workflow.
"""


class InputError(Exception):
    """A problem with the user's data or options: reported in one line, exit status 2."""
