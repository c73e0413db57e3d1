"""The public API stays small: no public callable takes more than 12 parameters, none takes ``**kwargs``.

scikit-learn's ``partial_dependence`` has 12 parameters and SciPy's ``bootstrap`` 12.  Options of the
resampling, of the run and of the grid live in :class:`pdpboot.Resampling`, :class:`pdpboot.Execution` and
:class:`pdpboot.Grid`.
"""

from __future__ import annotations

import inspect

import pytest

import pdpboot

MAX_PARAMETERS = 12


def _public_callables():
    for name in pdpboot.__all__:
        obj = getattr(pdpboot, name)
        if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException)):
            yield pytest.param(name, obj, id=name)


@pytest.mark.parametrize("name, obj", list(_public_callables()))
def test_public_callable_is_small_and_names_every_parameter(name, obj):
    params = inspect.signature(obj).parameters.values()
    assert len(params) <= MAX_PARAMETERS, f"pdpboot.{name} has {len(params)} parameters (> {MAX_PARAMETERS})"
    assert not [p.name for p in params if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)], name
