"""The registered effects of the command line, in the order a run computes and reports them.

Adding an effect: its module (an :class:`~pdpboot.workflow.effect.EffectReport` named ``REPORT``)
and one line below, nothing else: ``--effect`` offers every name registered here (and ``both`` for PD
and ALE), read when a value is checked (handed to :func:`pdpboot.workflow.options.register_choices` below).
"""

from __future__ import annotations

from . import effect_ale, effect_pd
from .effect import EffectReport
from .options import register_choices

EFFECTS: dict[str, EffectReport] = {report.name: report for report in (
    effect_pd.REPORT,
    effect_ale.REPORT,
)}
register_choices("effect", EFFECTS)  # --effect offers these names (and both)


def requested(config) -> list[EffectReport]:
    """The effects ``--effect`` asks for, in registration order."""
    wanted = {"both": ("pd", "ale")}.get(config.effect, (config.effect,))
    return [report for name, report in EFFECTS.items() if name in wanted]


__all__ = ["EFFECTS", "requested"]
