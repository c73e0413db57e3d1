"""The command-line workflow behind ``pdpboot run`` / ``pdpboot demo``: a client of the library.

In the order a run uses them: ``options`` (every option, ``RunConfig``), ``data`` (read the table),
``problem`` (target, features, task), ``modelspec``/``model``/``modelcheck`` (the model, split, metrics),
``strategy`` and the registered effects (``registry``, ``effect_pd``, ``effect_ale``), ``compute`` (what
``repro.py`` re-runs), then the outputs: ``summary``, ``workbook``, ``report`` (plots), ``repro``, ``run``.
"""


class InputError(Exception):
    """A problem with the user's data or options: reported in one line, exit status 2."""
