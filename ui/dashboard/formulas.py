"""The formulas the dashboard shows for a design, in LaTeX, with the design's own
numbers (coefficients from ``ldp_core.formulas``)."""

from __future__ import annotations

import math
from fractions import Fraction

from classroom import designs
from ldp_core import privacy_ratio, unbiased_coefficients, worst_variance_unit
from ui.fmt import fmt_eps, fmt_eps_value, fmt_fixed


def design_text(design) -> str:
    """The design in one line with its numbers (:func:`classroom.designs.describe`)."""
    return designs.describe(design.params())


def design_with_eps(design, eps: float) -> str:
    """The design in one line and its ε, said once: some designs name their ε already
    ("Hybrid Mechanism on [0, 12], ε = 1.10"), the others get it after a comma."""
    text = design_text(design)
    return text if "ε =" in text else f"{text}, {fmt_eps(eps)}"


def _nice(x: object, max_den: int = 100) -> Fraction | None:
    """``x`` as a small fraction when it is one (exactly, or to 1e-9), else None."""
    if isinstance(x, Fraction) and x.denominator <= max_den:
        return x
    try:
        fx = float(x)  # type: ignore[arg-type]  # any object: float() raises, caught below
    except (TypeError, ValueError):
        return None
    if not math.isfinite(fx):
        return None
    fr = Fraction(fx).limit_denominator(max_den)
    return fr if abs(float(fr) - fx) < 1e-9 else None


def _tex(x: object, digits: int = 3) -> str:
    """A coefficient in LaTeX: an integer, a small fraction, or a short decimal."""
    fr = _nice(x)
    if fr is None:
        return f"{float(x):.{digits}g}"  # type: ignore[arg-type]  # a coefficient: a number
    sign = "-" if fr < 0 else ""
    fr = abs(fr)
    if fr.denominator == 1:
        return f"{sign}{fr.numerator}"
    return rf"{sign}\tfrac{{{fr.numerator}}}{{{fr.denominator}}}"


def _times(coef: str, sep: str) -> str:
    """``coef`` as a factor in front of a fraction: nothing for 1, a bare minus for -1."""
    return {"1": "", "-1": "-"}.get(coef, coef + sep)


def mu_formula(design, n: int, v: int, mu: float | None) -> str:
    """``μ̂ = slope·V/n − offset`` (from ldp_core.formulas), with the numbers put in."""
    slope, offset = unbiased_coefficients(design)
    s = _tex(slope)
    tail = "" if offset == 0 else f" {'-' if offset > 0 else '+'} {_tex(abs(offset))}"
    thin, cdot = r"\,", r"\cdot"
    general = rf"\hat\mu = {_times(s, thin)}\frac{{V}}{{n}}{tail}"
    if n <= 0 or mu is None:
        return f"${general}$"
    put = rf"{_times(s, cdot)}\frac{{{v}}}{{{n}}}{tail}"
    value = fmt_fixed(mu, 3).replace("\u2212", "-")
    return rf"${general} = {put} = {value}$"


def sd_formula(design, n: int, sd: float | None) -> str:
    """``SD = sqrt(unit / n)`` (from ldp_core.formulas), with n put in."""
    unit = worst_variance_unit(design)
    fr = _nice(unit)
    if fr is not None:
        den = "" if fr.denominator == 1 else str(fr.denominator)
        general = rf"\sqrt{{\frac{{{fr.numerator}}}{{{den}n}}}}"
        put = rf"\sqrt{{\frac{{{fr.numerator}}}{{{fr.denominator * n}}}}}"
    else:
        general = rf"\sqrt{{{float(unit):.3g}/n}}"
        put = rf"\sqrt{{{float(unit):.3g}/{n}}}"
    if n <= 0 or sd is None:
        return rf"$\mathrm{{SD}} = {general}$"
    return rf"$\mathrm{{SD}} = {general} = {put} = {fmt_fixed(sd, 3)}$"


def eps_formula(design, eps: float) -> str:
    ratio = privacy_ratio(design)
    if math.isinf(ratio):
        return r"$\varepsilon = \infty$: some report gives the answer away"
    fr = _nice(ratio)
    inner = (str(fr.numerator) if fr is not None and fr.denominator == 1 else
             rf"\tfrac{{{fr.numerator}}}{{{fr.denominator}}}" if fr is not None else
             f"{float(ratio):.3g}")
    return rf"$\varepsilon = \ln {inner} \approx {fmt_eps_value(eps)}$"


def channel_text(design) -> str:
    a, b = _tex(design.a), _tex(design.b)
    return rf"$a = P(\text{{report 1}} \mid 1) = {a},\ b = P(\text{{report 1}} \mid 0) = {b}$"
