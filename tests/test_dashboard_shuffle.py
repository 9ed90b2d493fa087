"""The shuffled guarantee beside ε: the read model carries ldp_core's number (exact for yes/no,
Feldman, McMillan & Talwar's bound otherwise, the worst design of a mixed round), and the
dashboard draws it as one line at the desk and a short one on the projector, rounded up."""

from __future__ import annotations

import math

import pytest

import ldp_core
from classroom.domain import SHUFFLE_DELTA
from tests.support.apptest import app_env
from tests.test_dashboard import DIE, assert_clean, dashboard, seed
from ui.dashboard.shuffle import shuffle_line
from ui.fmt import fmt_up

GRR4 = {"design": "grr", "d": 4, "epsilon": 1.0}
DUCHI = {"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12}


def _captions(at) -> dict[str, str]:
    """Every caption's text and its help."""
    return {str(c.value): c.proto.help for c in at.caption}


def _shuffle_caption(at, start: str) -> tuple[str, str]:
    found = [(text, hlp) for text, hlp in _captions(at).items() if text.startswith(start)]
    assert len(found) == 1, list(_captions(at))
    return found[0]


def test_read_model_carries_the_exact_value_for_a_yes_no_round(app_env):
    _, q = seed(app_env, DIE, 30, 40)
    g = app_env.results.estimate(q.id).shuffle
    assert g == ldp_core.shuffle_guarantee(ldp_core.DieRR(4, 3), 40, SHUFFLE_DELTA)
    assert g.exact and g.n == 40 and g.delta == 1e-6
    assert g.epsilon == ldp_core.shuffle_epsilon(ldp_core.DieRR(4, 3), 40, 1e-6)


def test_no_report_no_guarantee(app_env):
    _, q = seed(app_env, DIE, 0, 0)
    assert app_env.results.estimate(q.id).shuffle is None
    at = dashboard()
    assert_clean(at)
    assert not [t for t in _captions(at) if "shuffler" in t]


def test_a_mixed_round_shows_its_worst_design(app_env):
    """Reports carry their design, so each hides only among its own: 30 die reports and 10
    under ε = 2 RR give the worse of the two guarantees, the 10 at ε = 2."""
    poll, q = seed(app_env, DIE, 20, 30)
    strong = {"design": "epsilon", "epsilon": 2.0}
    app_env.polls.set_design(q.id, strong)
    for i in range(10):
        app_env.reports.submit_report(poll.join_code, q.id, answer=i % 2, design_params=strong,
                                      submission_id=f"mixed-{i:04d}", device_id=f"mixed-device-{i}")
    est = app_env.results.estimate(q.id)
    worst = ldp_core.shuffle_guarantee(ldp_core.EpsilonRR(2.0), 10, 1e-6)
    assert est.shuffle == worst
    assert worst.epsilon > ldp_core.shuffle_epsilon(ldp_core.DieRR(4, 3), 30, 1e-6)
    line, help_text = shuffle_line(est)
    assert "these 40 reports" in line and "own design" in help_text


def test_desk_line_is_the_exact_value_rounded_up(app_env):
    seed(app_env, DIE, 30, 40)
    at = dashboard()
    assert_clean(at)
    exact = ldp_core.shuffle_epsilon(ldp_core.DieRR(4, 3), 40, 1e-6)
    shown = fmt_up(exact)
    assert float(shown) >= exact and float(shown) - exact < 1e-3
    line, help_text = _shuffle_caption(at, "Anonymised by a shuffler")
    assert line == ("Anonymised by a shuffler, these 40 reports would be (ε, 10⁻⁶)\u2011DP "
                    f"with ε = {shown} (exact)")
    for words in ("strip identity and timing", "This server is not one", "device cookie",
                  "per-round HMAC", "what the same reports would guarantee through one",
                  "Exact for this yes/no design", "Rounded up"):
        assert words in help_text, words


def test_projector_shows_the_short_form_beside_epsilon(app_env):
    poll, q = seed(app_env, DIE, 30, 40)
    at = dashboard(query={"projector": "1", "pid": str(poll.id), "qid": str(q.id)})
    assert_clean(at)
    shown = fmt_up(ldp_core.shuffle_epsilon(ldp_core.DieRR(4, 3), 40, 1e-6))
    line, help_text = _shuffle_caption(at, "Shuffled:")
    assert line == f"Shuffled: ε = {shown}"
    assert help_text.startswith("Anonymised by a shuffler, these 40 reports would be")


@pytest.mark.parametrize("projector", [False, True])
def test_a_histogram_question_shows_the_bound(app_env, projector):
    poll = app_env.polls.create_poll("CS208", rehearsal=True)
    q = app_env.polls.add_question(poll.id, "Favourite flavour?", kind="categorical",
                                   options=("Vanilla", "Chocolate", "Mint", "Lemon"),
                                   design_params=GRR4, open_now=True)
    app_env.results.add_simulated_reports(q.id, 60, (0.4, 0.3, 0.2, 0.1), seed=1)
    app_env.running.set_revealed(q.id, True)
    g = app_env.results.estimate(q.id).shuffle
    assert not g.exact and g.epsilon == ldp_core.clones_epsilon(1.0, 60, 1e-6)
    query = {"pid": str(poll.id), "qid": str(q.id)} | ({"projector": "1"} if projector else {})
    at = dashboard(query=query)
    assert_clean(at)
    start = "Shuffled:" if projector else "Anonymised by a shuffler"
    line, help_text = _shuffle_caption(at, start)
    assert f"ε ≤ {fmt_up(g.epsilon)}" in line
    assert "Feldman, McMillan & Talwar" in help_text and "upper bound" in help_text


def test_a_numeric_question_shows_the_bound_at_the_desk(app_env):
    poll = app_env.polls.create_poll("CS208", rehearsal=True)
    q = app_env.polls.add_question(poll.id, "Hours of sleep?", kind="numeric", options=("hours",),
                                   design_params=DUCHI, open_now=True)
    app_env.results.add_simulated_reports(q.id, 50, 7.0, seed=2)
    app_env.running.set_revealed(q.id, True)
    at = dashboard(query={"pid": str(poll.id), "qid": str(q.id)})
    assert_clean(at)
    line, _ = _shuffle_caption(at, "Anonymised by a shuffler")
    bound = ldp_core.clones_epsilon(1.0, 50, 1e-6)
    assert line.endswith(f"ε ≤ {fmt_up(bound)} (bound)")


def test_a_design_without_finite_epsilon_says_so():
    class Est:
        n = 12
        shuffle = ldp_core.ShuffleGuarantee(math.inf, 1e-6, 12, math.inf, True)

    line, _ = shuffle_line(Est())
    assert "could reveal answers outright" in line and "nan" not in line
    short, _ = shuffle_line(Est(), short=True)
    assert short == "Shuffled: ε = ∞"
