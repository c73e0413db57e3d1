"""The command-line workflow behind ``pdpboot run`` / ``pdpboot demo``: a client of the library.

In the order a run uses them: ``options`` (every option, ``RunConfig``, text helpers), ``data`` (read the
table), ``problem`` (target, features, task), ``model`` (the model, its parameters checked, split, metrics),
``strategy`` (the ``--uncertainty`` strategies, the registered effects ``effect_pd``/``effect_ale`` on
``effect``, progress, and ``compute``: what ``repro.py`` re-runs), then the outputs: ``report`` (plots,
intervals, workbook), ``repro`` (provenance), ``run`` (the run folder, ``summary.md``).
"""


class InputError(Exception):
    """A problem with the user's data or options: reported in one line, exit status 2."""
