"""ldp_core.survey: split, sample and fake answers for d questions under one budget. The
check values, the variance formulas against simulation (standard-error tolerances, a power
check), the aggregate sampler against a phone-by-phone one, and the privacy of each mode
from its exact joint channel."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldp_core import (
    SURVEY_MODES,
    EpsilonRR,
    fake_channel,
    rr_variance_unit,
    rs_fd_epsilon,
    simulate_survey,
    split_wins_above,
    survey_channel,
    survey_estimates,
    survey_privacy,
    survey_variance_unit,
)

LN3 = math.log(3)


@pytest.mark.parametrize(("d", "split", "sample"), [(3, 7.62, 3.00), (5, 20.88, 5.00)])
def test_check_values(d, split, sample):
    """n Var at ε = ln 3, π = ½, n the number of phones and Var that of one question's
    estimate: split each question at ε/d, or n/d reports per question at ε."""
    assert round(survey_variance_unit("split", LN3, d), 2) == split
    assert round(survey_variance_unit("sample", LN3, d), 2) == sample


def test_the_rr_formula_is_the_channel_formula():
    for eps in (0.2, 1.0, LN3, 3.0):
        for pi in (0.0, 0.3, 0.5, 1.0):
            closed = pi * (1 - pi) + math.exp(eps) / math.expm1(eps) ** 2
            assert rr_variance_unit(eps, pi) == pytest.approx(closed, rel=1e-12)
    shares = np.linspace(0, 1, 5)
    assert rr_variance_unit(1.0, shares) == pytest.approx(
        shares * (1 - shares) + math.e / (math.e - 1) ** 2)


def _estimates(mode: str, eps: float, d: int, reports: np.ndarray, yes: np.ndarray
               ) -> np.ndarray:
    """The estimator written out here, independently of survey_estimates."""
    rr = EpsilonRR(eps / d if mode == "split" else eps)
    a, b = (rr.a, rr.b) if mode != "fake" else fake_channel(rr.a, rr.b, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (yes / reports - b) / (a - b)


@pytest.mark.parametrize("mode", SURVEY_MODES)
def test_survey_estimates_is_the_estimator(mode):
    reports, yes = simulate_survey(mode, LN3, [0.3, 0.6, 0.9], 50, size=200, rng=5)
    assert survey_estimates(mode, LN3, 3, reports, yes) == pytest.approx(
        _estimates(mode, LN3, 3, reports, yes))
    assert np.isnan(survey_estimates("sample", LN3, 3, [0], [0])[0])


@pytest.mark.parametrize("d", [2, 3, 5, 10])
@pytest.mark.parametrize("share", [0.5, 0.1])
def test_split_wins_only_above_the_crossover(d, share):
    eps = split_wins_above(d, share)

    def gap(e: float) -> float:
        return (survey_variance_unit("split", e, d, share)
                - survey_variance_unit("sample", e, d, share))

    assert gap(eps) == pytest.approx(0, abs=1e-9)
    assert all(gap(e) > 0 for e in np.linspace(0.05, 0.99 * eps, 30))
    assert all(gap(e) < 0 for e in np.linspace(1.01 * eps, 19, 30))
    assert split_wins_above(d, 0.0) is None


@pytest.mark.parametrize("mode", SURVEY_MODES)
@pytest.mark.parametrize(("d", "shares"), [(3, [0.5, 0.2, 0.9]), (5, [0.5, 0.1, 0.3, 0.7, 1.0])])
def test_variance_formula_against_simulation(mode, d, shares):
    """20,000 simulated classes of 300 phones (fixed seed): each question's estimate is
    unbiased (4 SE) and n × its variance matches the formula within 4 SE of a variance
    estimate (relative SE √(2 / (S − 1)) for a near-normal estimate); the formula 30% off
    is rejected for some question."""
    n, size, eps = 300, 20_000, LN3
    rng = np.random.default_rng([mode.encode()[0], d])
    reports, yes = simulate_survey(mode, eps, shares, n, size=size, rng=rng)
    est = _estimates(mode, eps, d, reports, yes)
    rel_se = math.sqrt(2 / (size - 1))
    rejected = False
    for j, pi in enumerate(shares):
        col = est[:, j]
        unit = survey_variance_unit(mode, eps, d, pi, n=n if mode == "sample" else None)
        assert abs(col.mean() - pi) <= 4 * math.sqrt(unit / n / size)
        measured = n * col.var(ddof=1)
        assert measured == pytest.approx(unit, rel=4 * rel_se)
        rejected |= abs(measured - 1.3 * unit) > 4 * rel_se * 1.3 * unit
    assert rejected


def test_sample_variance_is_first_order_d_times_the_single_question():
    exact = survey_variance_unit("sample", LN3, 3, n=3000)
    assert exact == pytest.approx(3.0, rel=2e-3)
    assert survey_variance_unit("sample", LN3, 3, n=30) > exact


def _phone_by_phone(mode: str, eps: float, shares: list[float], n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each phone on its own: its true answers, the question it samples, its reports."""
    d = len(shares)
    truth = (rng.random((n, d)) < np.asarray(shares)).astype(np.uint8)
    rr = EpsilonRR(eps / d if mode == "split" else eps)
    real = rr.perturb(truth.ravel(), rng=rng).reshape(n, d)
    if mode == "split":
        return np.full(d, n), real.sum(axis=0)
    chosen = rng.integers(0, d, n)
    mine = np.arange(d)[None, :] == chosen[:, None]
    if mode == "sample":
        answered = np.where(mine, real, 0)
        assert np.all(mine.sum(axis=1) == 1)  # exactly one answered question per phone
        return mine.sum(axis=0), answered.sum(axis=0)
    coins = (rng.random((n, d)) < 0.5).astype(np.uint8)
    sent = np.where(mine, real, coins)  # d answers per phone, one of them real
    return np.full(d, n), sent.sum(axis=0)


@pytest.mark.parametrize("mode", SURVEY_MODES)
def test_aggregate_sampler_matches_phone_by_phone_simulation(mode):
    """The mean and variance of each question's "yes" count: 4,000 phone-by-phone classes
    against 4,000 aggregate draws, within 4 SE of their difference."""
    shares, n, size = [0.5, 0.2, 0.9], 200, 4000
    rng = np.random.default_rng(77)
    by_phone = np.array([_phone_by_phone(mode, LN3, shares, n, rng)[1] for _ in range(size)])
    _, aggregate = simulate_survey(mode, LN3, shares, n, size=size, rng=78)
    for j in range(3):
        x, y = by_phone[:, j].astype(float), aggregate[:, j].astype(float)
        se = math.sqrt(x.var() / size + y.var() / size)
        assert abs(x.mean() - y.mean()) <= 4 * se
        assert x.var() == pytest.approx(y.var(), rel=4 * math.sqrt(4 / size))


def test_sampling_reports_add_up_to_the_class():
    reports, _ = simulate_survey("sample", LN3, [0.5] * 4, 500, size=10, rng=1)
    assert np.all(reports.sum(axis=1) == 500)
    for mode in ("split", "fake"):
        reports, _ = simulate_survey(mode, LN3, [0.5] * 4, 500, size=10, rng=1)
        assert np.all(reports == 500)


def _losses(sets, p: np.ndarray) -> tuple[float, float]:
    """The largest |log ratio| over all pairs of answer sets, and over neighbours (sets
    that differ in one answer)."""
    whole = neighbours = 0.0
    for i, j in itertools.combinations(range(len(sets)), 2):
        loss = float(np.max(np.abs(np.log(p[i]) - np.log(p[j]))))
        whole = max(whole, loss)
        if sum(x != y for x, y in zip(sets[i], sets[j], strict=True)) == 1:
            neighbours = max(neighbours, loss)
    return whole, neighbours


@pytest.mark.parametrize("mode", SURVEY_MODES)
@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("eps", [0.5, LN3, 2.5])
def test_privacy_from_the_exact_joint_channel(mode, d, eps):
    sets, outs, p = survey_channel(mode, eps, d)
    assert np.allclose(p.sum(axis=1), 1)
    whole, one = _losses(sets, p)
    claimed = survey_privacy(mode, eps, d)
    assert whole == pytest.approx(claimed.spent, rel=1e-9)
    assert one == pytest.approx(claimed.per_answer, rel=1e-9)


def test_the_outputs_of_each_mode():
    _, outs, _ = survey_channel("sample", LN3, 3)
    assert all(sum(r is not None for r in out) == 1 for out in outs)
    _, outs, _ = survey_channel("fake", LN3, 3)
    assert all(len(out) == 3 and None not in out for out in outs)


def test_rs_fd_as_published_protects_each_answer_at_epsilon_and_the_set_at_more():
    """Arcolezi et al.'s amplified randomizer: each answer at ε, the whole set at
    ln(d (e^ε − 1) + 1), which the classroom's budget would have to charge."""
    for d in (2, 3, 5):
        eps_r = rs_fd_epsilon(LN3, d)
        privacy = survey_privacy("fake", eps_r, d)
        assert privacy.per_answer == pytest.approx(LN3, rel=1e-12)
        assert privacy.spent == pytest.approx(math.log(d * 2 + 1), rel=1e-12)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: survey_variance_unit("both", LN3, 3), "mode must be one of"),
    (lambda: survey_variance_unit("split", LN3, 0), "d must be an integer"),
    (lambda: survey_variance_unit("split", -1, 3), "epsilon must be > 0"),
    (lambda: survey_variance_unit("split", LN3, 3, 1.5), "share must be in"),
    (lambda: simulate_survey("split", LN3, [0.5, 2], 10), "share must be in"),
    (lambda: survey_channel("split", LN3, 9), "d must be an integer in 1..8"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("mode", SURVEY_MODES)
def test_survey_design_question_channel_and_variance(mode):
    """One question's reports follow a binary design whose channel is the mode's, and the
    yes/no estimator's variance on it is the survey's n Var (population model)."""
    from ldp_core import BinaryCounts, SurveyDesign, design_from_params

    survey = SurveyDesign(mode, LN3, 4)
    q = survey.question_design()
    rr = EpsilonRR(LN3 / 4 if mode == "split" else LN3)
    expected = (rr.a, rr.b) if mode != "fake" else fake_channel(rr.a, rr.b, 4)
    assert (q.a, q.b) == pytest.approx(expected, rel=1e-12)
    assert survey.epsilon == pytest.approx(LN3, rel=1e-12)
    assert design_from_params(survey.params()) == survey
    if mode != "sample":  # every phone reports every question: n reports of this channel
        lam = q.report_probability(0.3)
        unit = lam * (1 - lam) / (q.a - q.b) ** 2
        assert survey.variance_unit(0.3) == pytest.approx(unit, rel=1e-12)
        counts = BinaryCounts.single(q, 30, 100)
        assert counts.summary().mu_hat == pytest.approx(
            float(survey_estimates(mode, LN3, 4, [100], [30])[0]), rel=1e-12)


def test_survey_design_refuses_what_it_cannot_be():
    from ldp_core import SurveyDesign, survey_design_from_params

    with pytest.raises(ValueError, match="d must be an integer in 2..20"):
        SurveyDesign("split", 1.0, 1)
    with pytest.raises(ValueError, match="mode must be one of"):
        SurveyDesign("some", 1.0, 3)
    with pytest.raises(ValueError, match="epsilon must be in"):
        SurveyDesign("split", 1e-6, 3)  # ε/d below RR's smallest ε
    with pytest.raises(ValueError, match="bad parameters for a survey"):
        survey_design_from_params({"design": "survey", "mode": "split", "d": 3})
