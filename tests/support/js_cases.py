"""The phone samplers' test table, from ldp_core: one row per design and true answer.

``python -m tests.support.js_cases`` prints it as JSON for ``tests/js/randomizer.test.js``,
which runs the page's own ``randomizer.js`` in node on each row's device scheme
(:func:`phone.present.device_scheme`) and compares what it draws with the row's exact
probabilities. Every row also carries a deliberately wrong scheme (ε 30% off, or the
nearest other design) that the same test must reject: its power.

A new mechanism is one more row: its parameters, a wrong neighbour, and (for a report on
a continuous scale) the exact distribution function of its raw report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from itertools import product
from typing import Any

import ldp_core
from classroom.domain import CLASS_EXERCISE
from phone.present import device_scheme

__all__ = ["rows"]

#: Numeric questions are asked on [LO, HI]; the phone maps a value to x in [-1, 1].
LO, HI = 0.0, 12.0

#: (label, design parameters, a wrong neighbour or None for ε × 1.3)
BINARY: list[tuple[str, dict, dict | None]] = [
    ("die 1-4, truthful on 1-3", dict(CLASS_EXERCISE), {"design": "die", "faces": 5,
                                                         "truthful": 4}),
    ("two coins", {"design": "two_coin"}, {"design": "forced", "p_truth": 0.5, "p_yes": 0.3}),
    ("Warner's spinner, p = 0.7", {"design": "warner", "p": 0.7}, {"design": "warner",
                                                                    "p": 0.72}),
    ("RR at ε = 1", {"design": "epsilon", "epsilon": 1.0}, None),
]
CATEGORICAL: list[tuple[str, dict, dict | None]] = [
    ("GRR, d = 4, ε = 1", {"design": "grr", "d": 4, "epsilon": 1.0}, None),
    ("unary encoding, p = 0.75, q = 0.25", {"design": "ue", "d": 4, "p": 0.75, "q": 0.25},
     {"design": "ue", "d": 4, "p": 0.75, "q": 0.22}),
    ("OUE at ε = 1", {"design": "ue", "d": 4, "p": 0.5, "q": 1 / (math.e + 1)},
     {"design": "ue", "d": 4, "p": 0.5, "q": 1 / (math.exp(1.3) + 1)}),
]


def _piecewise_cdf(mech: Any, x: float) -> Callable[[float], float]:
    """P(raw report < t): the phone's window probability spread over the window, the rest
    over the remainder of [-C, C] (Wang et al.'s densities, from ldp_core)."""
    c = mech.big_c
    left, right = (float(v) for v in mech.window(x))
    inside, outside = mech.densities(mech.device_p_window())

    def cdf(t: float) -> float:
        t = min(max(t, -c), c)  # the whole mass by C
        in_window = max(0.0, min(t, right) - left)
        return inside * in_window + outside * (t + c - in_window)
    return cdf


def _laplace_cdf(mech: Any, x: float) -> Callable[[float], float]:
    """P(raw report < t) for x + Laplace(scale)."""
    s = mech.scale

    def cdf(t: float) -> float:
        return 0.5 * math.exp((t - x) / s) if t < x else 1 - 0.5 * math.exp((x - t) / s)
    return cdf


def _duchi(mech: Any, x: float) -> tuple[list[tuple[float, float]], None]:
    """The randomized bit (the phone sends it, not ±c): P(1 | x) = 1/2 + x / (2 c)."""
    p_plus = float(mech.p_plus(x))
    return [(0, 1 - p_plus), (1, p_plus)], None


def _hybrid(mech: Any, x: float) -> tuple[list[tuple[float, float]], Callable]:
    """Duchi et al.'s value ±c_ε with probability 1 - α, else a Piecewise report."""
    minus, plus = (float(v) for v in mech.atoms(x))
    c, alpha = mech.duchi.c_epsilon, mech.p_piecewise
    inner = _piecewise_cdf(mech.piecewise, x)
    return [(-c, minus), (c, plus)], lambda t: alpha * inner(t)


#: (label, design parameters, the exact distribution of a report: its atoms (value,
#: probability) and the distribution function of the raw continuous part, if any)
NUMERIC: list[tuple[str, dict, Callable[[Any, float], tuple[list, Callable | None]]]] = [
    ("Duchi et al., ε = 1", {"design": "duchi", "epsilon": 1.0}, _duchi),
    ("Piecewise Mechanism, ε = 1", {"design": "piecewise", "epsilon": 1.0},
     lambda mech, x: ([], _piecewise_cdf(mech, x))),
    ("Laplace mechanism, ε = 1", {"design": "laplace", "epsilon": 1.0},
     lambda mech, x: ([], _laplace_cdf(mech, x))),
    ("Hybrid Mechanism, ε = 2", {"design": "hybrid", "epsilon": 2.0}, _hybrid),
]
#: Values away from the middle: at x = 0 every Duchi design reports +c half the time.
NUMERIC_VALUES = (1.5, 12.0)


def _off(params: dict, wrong: dict | None) -> dict:
    return wrong if wrong is not None else {**params, "epsilon": params["epsilon"] * 1.3}


def _row(label: str, sampler: str, params: dict, wrong: dict, truth: Any, **exact: Any
         ) -> dict:
    return {"label": label, "sampler": sampler, "truth": truth,
            "scheme": device_scheme(sampler, params), "wrong": device_scheme(sampler, wrong),
            **exact}


def _binary() -> Iterator[dict]:
    for label, params, wrong in BINARY:
        design = ldp_core.binary_design_from_params(params)
        for truth in (0, 1):
            probs = [float(p) for p in design.channel[truth]]
            yield _row(f"{label}, truth {truth}", "binary", params, _off(params, wrong), truth,
                       outcomes=["0", "1"], probs=probs)


def _categorical() -> Iterator[dict]:
    for label, params, wrong in CATEGORICAL:
        oracle = ldp_core.categorical_oracle_from_params(params)
        p, q = oracle.device_pq()
        for truth in (0, 2):
            if params["design"] == "grr":
                outcomes = [str(j) for j in range(oracle.d)]
                probs = [p if j == truth else q for j in range(oracle.d)]
            else:  # unary encoding: independent bits, p for the true one, q for the others
                bits = ["".join(b) for b in product("01", repeat=oracle.d)]
                outcomes, probs = bits, [
                    math.prod((p if j == truth else q) if bit == "1" else
                              (1 - p if j == truth else 1 - q) for j, bit in enumerate(word))
                    for word in bits]
            yield _row(f"{label}, truth {truth}", "categorical", params, _off(params, wrong),
                       truth, outcomes=outcomes, probs=probs)


def _edges(mech: Any, x: float) -> list[float]:
    """About a dozen bin edges around x, each on a boundary of the phone's cells (a snapped
    report then lies in a bin exactly when its raw report does)."""
    low, high = mech.device_grid()
    width = (high - low) / ldp_core.DEVICE_CELLS
    sd = math.sqrt(float(mech.variance(x)))
    margin = 0.02 * (high - low)  # no bin so thin that a few draws decide it
    out: list[float] = []
    for k in range(-6, 7):
        t = min(max(x + 0.45 * k * sd, low + margin), high - margin)
        edge = low + round((t - low) / width) * width
        if not out or edge > out[-1]:
            out.append(edge)
    return out


def _numeric() -> Iterator[dict]:
    for label, base, parts in NUMERIC:
        params = {**base, "lo": LO, "hi": HI}
        mech = ldp_core.numeric_design_from_params(params).mechanism
        for value in NUMERIC_VALUES:
            x = (2 * value - LO - HI) / (HI - LO)
            atoms, cdf = parts(mech, x)
            exact: dict[str, Any] = {"atoms": [a for a, _ in atoms],
                                     "probs": [p for _, p in atoms]}
            if cdf is not None:  # bins of the continuous part, and the report's moments
                edges = _edges(mech, x)
                cum = [0.0, *(cdf(e) for e in edges), cdf(math.inf)]
                exact.update(edges=edges, mean=x, variance=float(mech.variance(x)),
                             probs=exact["probs"] + [b - a for a, b in
                                                     zip(cum, cum[1:], strict=False)])
            yield _row(f"{label}, value {value:g} of [{LO:g}, {HI:g}]", "numeric", params,
                       _off(params, None), value, **exact)


#: Check all that apply: (label, params, wrong params); a set of d = 3 options.
SETS: list[tuple[str, dict, dict]] = [
    ("boxes split, ε = 3 in all", {"design": "survey", "mode": "split", "budget": 3.0, "d": 3},
     {"design": "survey", "mode": "split", "budget": 6.0, "d": 3}),
    ("one box sampled, ε = 1.5", {"design": "survey", "mode": "sample", "budget": 1.5, "d": 3},
     {"design": "survey", "mode": "sample", "budget": 3.0, "d": 3}),
    ("one box sampled, fake coins, ε = 1.5",
     {"design": "survey", "mode": "fake", "budget": 1.5, "d": 3},
     {"design": "survey", "mode": "fake", "budget": 4.0, "d": 3}),
]


def _multiselect() -> Iterator[dict]:
    """Every report of a set, with the phone's exact bit channel (its integer weights)."""
    for label, params, wrong in SETS:
        survey = ldp_core.survey_design_from_params(params)
        t, lie, y, no = survey.randomizer.sampling_weights()
        total, d = t + lie + y + no, survey.d

        def bit(truth: int, sent: str, t: int = t, lie: int = lie, y: int = y,
                total: int = total) -> float:
            one = ((t + y) if truth else (lie + y)) / total
            return one if sent == "1" else 1 - one

        for truth in ([1, 0, 1], [0, 0, 0]):
            if survey.mode == "split":
                outcomes = ["".join(w) for w in product("01", repeat=d)]
                probs = [math.prod(bit(x, c) for x, c in zip(truth, w, strict=True))
                         for w in outcomes]
            elif survey.mode == "sample":
                outcomes = ["".join(c if i == j else "-" for i in range(d))
                            for j in range(d) for c in "01"]
                probs = [bit(truth[w.index(c)], c) / d for w in outcomes
                         for c in [next(ch for ch in w if ch != "-")]]
            else:  # one real bit, fair coins elsewhere
                outcomes = ["".join(w) for w in product("01", repeat=d)]
                probs = [sum(bit(truth[j], w[j]) * 0.5 ** (d - 1) for j in range(d)) / d
                         for w in outcomes]
            yield _row(f"{label}, set {truth}", "multiselect", params, wrong, truth,
                       outcomes=outcomes, probs=probs)


def rows() -> list[dict]:
    """Every row of the table."""
    return [*_binary(), *_categorical(), *_numeric(), *_multiselect()]


if __name__ == "__main__":
    print(json.dumps(rows()))
