"""Any design from its ``params()``: one entry point for the three families.

Every design, oracle, numeric design and survey writes its defining parameters as a JSON-ready
dict whose ``"design"`` key names it (``DieRR(4, 3).params()`` is ``{"design": "die",
"faces": 4, "truthful": 3}``); :func:`design_from_params` reads any of them back, checked
again. The family builders (:func:`binary_design_from_params`,
:func:`categorical_oracle_from_params`, :func:`numeric_design_from_params`) stay for
callers that want the narrower type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .binary import _DESIGNS as _BINARY
from .binary import BinaryDesign, binary_design_from_params
from .categorical import _BUILDERS as _ORACLES
from .categorical import FrequencyOracle, categorical_oracle_from_params
from .numeric import NUMERIC_NAMES, NumericDesign, numeric_design_from_params
from .survey import SurveyDesign, survey_design_from_params

__all__ = ["design_from_params"]

_FAMILIES: tuple[tuple[tuple[str, ...], Callable[[dict[str, Any]], Any]], ...] = (
    (tuple(_BINARY), binary_design_from_params),
    (tuple(_ORACLES), categorical_oracle_from_params),
    (NUMERIC_NAMES, numeric_design_from_params),
    ((SurveyDesign.kind,), survey_design_from_params),
)


def design_from_params(params: dict[str, Any]
                       ) -> BinaryDesign | FrequencyOracle | NumericDesign | SurveyDesign:
    """The design, oracle or numeric design whose ``params()`` are ``params``; ValueError
    names what is wrong.

    >>> design_from_params({"design": "die", "faces": 4, "truthful": 3})
    DieRR(faces=4, truthful=3)
    >>> design_from_params({"design": "grr", "d": 5, "epsilon": 1.0})
    GRR(d=5, epsilon=1.0)
    >>> design_from_params({"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12}).kind
    'duchi'
    """
    if not isinstance(params, dict) or "design" not in params:
        raise ValueError(f"design parameters must be a dict with a 'design' key, got {params!r}")
    name = params["design"]
    for names, build in _FAMILIES:
        if name in names:
            found: BinaryDesign | FrequencyOracle | NumericDesign | SurveyDesign = build(params)
            return found
    known = sorted(n for names, _ in _FAMILIES for n in names)
    raise ValueError(f"unknown design {name!r}; known: {known}")
