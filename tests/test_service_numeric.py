"""Numeric questions through PollService: adding, reporting, validation, the estimate,
rehearsal and CSV, on every store backend."""

from __future__ import annotations

import logging
import math
import secrets

import numpy as np
import pytest

from classroom import BadInput, BadReport, PollService
from classroom.csvio import replay_from_csv
from tests.support.db import count_reports

SLEEP = {"design": "piecewise", "epsilon": 1.0, "lo": 0, "hi": 12}
DUCHI = {"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12}
LAPLACE = {"design": "laplace", "epsilon": 1.0, "lo": 0, "hi": 12}
HYBRID = {"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 12}
HYBRID_LOW = {"design": "hybrid", "epsilon": 0.5, "lo": 0, "hi": 12}  # below ε*: Duchi's


def add(service, poll, params=SLEEP, **kw):
    q = service.polls.add_question(poll.id, "How many hours did you sleep last night?",
                                   kind="numeric", options=("hours",), design_params=params, **kw)
    return service.running.open_question(q.id)


def submit(service, poll, q, answer, *, device=None):
    return service.reports.submit_report(poll.join_code, q.id, answer=answer,
                                         design_params=q.design_params,
                                         submission_id=f"sub-{secrets.token_hex(8)}",
                                         device_id=device or secrets.token_hex(8))


def test_a_numeric_question_keeps_its_unit_range_and_mechanism(service):
    poll = service.polls.create_poll("t")
    q = add(service, poll)
    assert (q.kind, q.unit, q.design_params) == ("numeric", "hours", {
        "design": "piecewise", "epsilon": 1.0, "hi": 12.0, "lo": 0.0})
    assert q.epsilon == pytest.approx(1.0)


@pytest.mark.parametrize(("options", "params", "mode", "message"), [
    (("hours",), {**SLEEP, "lo": 12}, "device", "lo < hi"),
    (("hours",), {**SLEEP, "design": "die"}, "device", "mechanism in"),
    (("hours",), {**SLEEP, "epsilon": 50}, "device", "epsilon must be in"),
    (("a", "b"), SLEEP, "device", "one option: the unit"),
    (("x" * 30,), SLEEP, "device", "unit is 30 characters"),
    (("hours",), SLEEP, "physical", "randomized on the phone"),
])
def test_bad_numeric_questions_are_refused_clearly(service, options, params, mode, message):
    poll = service.polls.create_poll("t")
    with pytest.raises(BadInput, match=message):
        service.polls.add_question(poll.id, "Q?", kind="numeric", options=options,
                                   design_params=params, mode=mode)


def test_receipts_show_the_report_in_the_question_units(service):
    """In the question's units and decimals (2 on [0, 12]), as the projector writes them."""
    poll = service.polls.create_poll("t")
    q = add(service, poll)
    assert submit(service, poll, q, 0.25).answer_label == "7.50 hours"
    assert submit(service, poll, q, -2.0).answer_label == "−6.00 hours"  # outside [0, 12]
    d = add(service, poll, DUCHI)
    c = 1 / math.tanh(0.5)
    assert submit(service, poll, d, 1).answer_label == f"{6 + 6 * c:.2f} hours"


@pytest.mark.parametrize(("params", "answer", "message"), [
    (SLEEP, 10.0, "not a report this mechanism can send"),
    (SLEEP, "high", "a finite number"),
    (SLEEP, math.inf, "a finite number"),
    (SLEEP, True, "a finite number"),
    pytest.param(LAPLACE, 10**400, "a finite number, got a 401-digit integer",
                 id="10^400"),  # float() overflows
    pytest.param(SLEEP, -10**5000, "a finite number, got a negative 16610-bit integer",
                 id="-10^5000"),  # Python will not print it
    (DUCHI, 0.5, "the randomized bit"),
    (DUCHI, 2, "the randomized bit"),
    (LAPLACE, 1e6, "probability below 1e-09"),
    (HYBRID, 4.1, r"its reports lie in \[-4.08299, 4.08299\]"),
    (HYBRID_LOW, 0.5, r"its reports lie in \[-4.08299, 4.08299\]"),
])
def test_impossible_reports_are_refused_and_write_nothing(service, store, params, answer,
                                                          message):
    poll = service.polls.create_poll("t")
    q = add(service, poll, params)
    with pytest.raises(BadReport, match=message):
        submit(service, poll, q, answer)
    assert count_reports(store) == 0


@pytest.mark.parametrize("params", [SLEEP, DUCHI, LAPLACE, HYBRID, HYBRID_LOW])
def test_a_rehearsal_class_is_estimated_within_4_sd(service, params):
    poll = service.polls.create_poll("t")
    q = add(service, poll, params)
    truths = service.results.rehearsal_class(q.id, 400, 7.0, seed=3)
    assert len(truths) == 400 and np.mean(truths) == pytest.approx(7.0)
    assert min(truths) >= 0 and max(truths) <= 12
    assert service.results.add_simulated_answers(q.id, truths, seed=4) == 400
    est = service.results.estimate(q.id)
    num = est.result.estimate
    assert est.n == num.n == 400 and est.n_simulated == 400
    assert abs(num.mean - 7.0) <= 4 * num.sd_worst
    assert num.sd == pytest.approx(num.sd_worst, rel=0.25)
    with pytest.raises(BadInput, match=r"true mean must be a number in \[0, 12\]"):
        service.results.rehearsal_class(q.id, 10, 13.0)
    with pytest.raises(BadInput):
        service.results.add_simulated_answers(q.id, [13.0])


def test_an_empty_numeric_round_has_no_numbers(service):
    poll = service.polls.create_poll("t")
    q = add(service, poll)
    est = service.results.estimate(q.id)
    num = est.result.estimate
    assert est.n == 0 and num.mean is None and num.interval() is None
    assert est.epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("params", [LAPLACE, HYBRID])
def test_the_csv_replays_to_the_same_estimate(service, params):
    poll = service.polls.create_poll("t")
    q = add(service, poll, params)
    service.results.add_simulated_reports(q.id, 50, 5.0, seed=1)
    text = service.results.export_csv(q.id, include_simulated=True)
    assert "hours" in text.splitlines()[1]
    replay = replay_from_csv(text)
    ours = service.results.estimate(q.id).result.estimate
    assert replay.kind == "numeric" and replay.result.estimate.n == 50
    assert replay.result.estimate.mean == pytest.approx(ours.mean, rel=1e-12)


def test_a_hybrid_round_keeps_both_parts_reports_exactly(service):
    """Duchi's values ±c_eps are stored exactly (one group each, whatever the phone), the
    Piecewise part's reports beside them; the worst-case SD is the Hybrid Mechanism's."""
    import ldp_core

    poll = service.polls.create_poll("t")
    q = add(service, poll, HYBRID)
    hm = ldp_core.HybridMechanism(1.0)
    c = hm.duchi.c_epsilon
    for answer in (c, c, -c, 0.25, -3.5):
        submit(service, poll, q, answer)
    est = service.results.estimate(q.id)
    sent = dict(est.result.reports)
    assert sent[6 + 6 * c] == 2 and sent[6 - 6 * c] == 1 and sent[7.5] == 1 and sent[-15.0] == 1
    assert est.result.estimate.mean == pytest.approx(6 + 6 * (c + 0.25 - 3.5) / 5)
    assert est.result.estimate.sd_worst == pytest.approx(6 * math.sqrt(hm.worst_variance() / 5))
    assert est.epsilon == pytest.approx(1.0)


def test_one_forged_laplace_report_is_refused_or_flagged(service, store):
    """The reproduction: [0, 12] hours, ε = 1, 100 honest phones, then one report at the
    old clamp (81 on the [-1, 1] scale, 492 h): it was stored and moved the mean from about
    4.5 h to 9.3 h without a warning. Now it is refused, and one at the phone's own clamp
    (252 h, which an honest phone passes with probability 1e-9) is flagged at once."""
    poll = service.polls.create_poll("t")
    q = add(service, poll, LAPLACE)
    service.results.add_simulated_answers(
        q.id, service.results.rehearsal_class(q.id, 100, 4.5, seed=1),
                                          seed=2)
    before = service.results.estimate(q.id)
    assert before.plausibility.fits
    with pytest.raises(BadReport, match="probability below 1e-09"):
        submit(service, poll, q, 81.0)
    assert count_reports(store) == 100
    bound = q.design.mechanism.device_grid()[1]
    submit(service, poll, q, bound)
    after = service.results.estimate(q.id)
    assert after.n == 101 and after.result.estimate.mean - before.result.estimate.mean > 2  # hours
    assert not after.plausibility.fits and after.plausibility.direction == "extreme_high"


@pytest.mark.parametrize("action", ["report", "question", "estimate", "open", "close",
                                    "budget", "countdown", "epsilon", "range", "store"])
def test_numbers_too_large_for_the_database_or_a_float_are_bad_input(service, store, backend,
                                                                     action, caplog):
    """Before, an answer of 10**400 raised OverflowError (int to float), an id of 2**63 on
    SQLite OverflowError, and an id of 2**31 on PostgreSQL "integer out of range", read
    as "cannot reach its database" with a warning in the log. Each is now a refusal that
    says what is wrong, on both backends, with nothing logged and nothing written."""
    poll = service.polls.create_poll("t")
    q = add(service, poll, LAPLACE)
    huge_id = 2**63 if backend == "sqlite" else 2**31
    attempts = {
        "report": lambda: submit(service, poll, q, 10**400),
        "question": lambda: service.polls.question(huge_id),
        "estimate": lambda: service.results.estimate(huge_id),
        "open": lambda: service.running.open_question(2**31),
        "close": lambda: service.running.close_question(10**30),
        "budget": lambda: service.polls.set_budget(poll.id, 10**400),
        "countdown": lambda: service.running.set_countdown(q.id, 10**5000),
        "epsilon": lambda: service.polls.add_question(poll.id, "Q?", design_params={
            "design": "epsilon", "epsilon": 10**400}),
        "range": lambda: add(service, poll, {**LAPLACE, "hi": 10**400}),
        # below the service's own check: the store maps the driver's overflow itself
        "store": lambda: store.question(huge_id),
    }
    with caplog.at_level(logging.WARNING), pytest.raises((BadInput, BadReport)) as err:
        attempts[action]()
    message = str(err.value)
    assert "database" not in message and "Traceback" not in message
    assert len(message) < 200  # the number is named by its size, not printed whole
    if action in ("question", "estimate", "open", "close", "store"):
        assert "out of range" in message and "2147483647" in message
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert count_reports(store) == 0
    assert [x.id for x in service.polls.questions(poll.id)] == [q.id]
