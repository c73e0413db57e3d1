"""The public API stays small: no public callable takes more than 15 parameters, none takes ``**kwargs``.

scikit-learn's ``partial_dependence`` has 12 parameters and SciPy's ``bootstrap`` 12.  Options of the
resampling and of the run live in :class:`pdpboot.Resampling` and :class:`pdpboot.Execution`.
"""

from __future__ import annotations

import inspect

import pytest

import pdpboot

MAX_PARAMETERS = 15


def _public_callables():
    for name in pdpboot.__all__:
        obj = getattr(pdpboot, name)
        if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException)):
            yield name, obj


@pytest.mark.parametrize("name, obj", list(_public_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_public_callable_is_small_and_names_every_parameter(name, obj):
    params = inspect.signature(obj).parameters.values()
    assert len(params) <= MAX_PARAMETERS, f"pdpboot.{name} has {len(params)} parameters (> {MAX_PARAMETERS})"
    assert not [p.name for p in params if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)], name
