"""The command-line workflow behind ``pdpboot run`` / ``pdpboot demo`` (private).

Modules, in the order a run uses them:

``options``   every option (command line, config file, defaults) in one table
``data``      read the table, check target and features, decide the task
``model``     the scikit-learn Pipeline, the train/test split, test metrics
``compute``   fit, bootstrap, bands: the part ``repro.py`` re-runs
``workbook``  the Excel export (cells are data, never formulas)
``report``    plots and ``summary.md``
``repro``     ``repro.py``, ``repro_inputs/`` and ``pdpboot reproduce``
``run``       the output folder (built aside, renamed at the end) and ``run.log``
"""


class InputError(Exception):
    """A problem with the user's data or options: reported in one line, exit status 2."""
