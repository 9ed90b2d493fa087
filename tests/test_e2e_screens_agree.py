"""One truth on every screen: the phone, the projector, the desk and the exported CSV show
the same numbers, to the shown digit, for every kind of question.

Every kind: the three of the shipped CS208 lecture (the class exercise, the 14
occupations by unary encoding, hours of sleep by the Hybrid Mechanism) and the shipped
check-all-that-apply question, each closed and revealed with a simulated class, are read
in Chromium:

* on a phone (390×844): the "Class results" text;
* on the projector (1280×720) and on the desk (1280×720): the metrics, the status line,
  and for the occupations and the boxes the table of every option;
* from the desk's **Export CSV** (simulated reports included), downloaded as the
  instructor does and estimated again (:func:`classroom.csvio.replay_from_csv`).

Every number is parsed (a phone's ``37.3%`` is the projector's ``0.373``) and compared:
the estimate of each option and both ends of its 95% interval agree on every screen, and
equal what :mod:`classroom.display` writes for the CSV's estimate, whose interval is
rounded outward. ε agrees between the projector, the desk and the CSV's design. A phone
shows the raw (unbiased) shares the projector's table shows, never the post-processed
ones unlabelled.
"""

from __future__ import annotations

import re
import time
from decimal import Decimal

import pytest

from classroom import display
from classroom.csvio import replay_from_csv
from classroom.plans import shipped_plan
from classroom.privacy_numbers import epsilon_up
from tests.support.browser import chromium, log_in, require_browser, settle
from tests.support.server import classroom_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "screens-agree-instructor-key"
WAIT_S = 90.0
#: (shipped question's text start, simulated class's truth, class size)
KINDS = {"yesno": ("Vanilla (1) or chocolate (0)?", 0.6, 40),
         "categorical": ("What is your occupation?", [1 / 14] * 14, 30),
         "numeric": ("How many hours did you sleep", 7.0, 30),
         "multiselect": ("Which languages have you written", (0.8, 0.4, 0.1, 0.3), 30)}
#: The table of every option on the dashboard, by kind: its estimate's column.
TABLE = {"categorical": "Raw unbiased estimate", "multiselect": "Share"}
NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?%?")


def number(text: str) -> Decimal:
    """A number as a screen writes it, as a share: ``37.3%`` and ``0.373`` are both 0.373."""
    text = text.replace("−", "-").replace(",", "")
    return Decimal(text[:-1]) / 100 if text.endswith("%") else Decimal(text)


def numbers(text: str) -> list[Decimal]:
    return [number(t) for t in NUMBER.findall(text)]


@pytest.fixture(scope="module")
def lecture(tmp_path_factory):
    require_browser()
    data = tmp_path_factory.mktemp("agree")
    with classroom_server(data, KEY, timeout=120) as (base, svc):
        plans = [shipped_plan("cs208-local-model"),
                 shipped_plan("survey-check-all-that-apply")]
        made = {}
        for kind, (start, truth, n) in KINDS.items():
            pq = next(q for plan in plans for q in plan.questions if q.text.startswith(start))
            poll = svc.polls.create_poll(f"agree {kind}")
            q = svc.polls.add_question(poll.id, pq.text, options=pq.options,
                                       design_params=pq.design_params, kind=pq.kind)
            svc.running.open_question(q.id)
            svc.results.add_simulated_reports(q.id, n, truth, seed=11)
            svc.running.close_question(q.id)
            svc.running.set_revealed(q.id, True)
            made[kind] = (poll, q)
        yield base, svc, made


def _wait(page, check, what: str):
    deadline = time.monotonic() + WAIT_S
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(200)


def _metrics(page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
        "[data-testid='stMetric']")].map(m => [
            m.querySelector("[data-testid='stMetricLabel']").innerText.trim(),
            m.querySelector("[data-testid='stMetricValue']").innerText.trim()]))""")


def _table(page) -> list[dict[str, str]]:
    """The first table of every option on the page, as rows of header → cell."""
    return page.evaluate("""() => {
        const t = [...document.querySelectorAll("[data-testid='stTable'] table")]
            .find(t => t.innerText.includes('Exact 95% CI'));
        if (!t) return [];
        const head = [...t.querySelectorAll('thead th')].map(th => th.innerText.trim());
        return [...t.querySelectorAll('tbody tr')].map(tr => {
            const cells = [...tr.querySelectorAll('th, td')].map(c => c.innerText.trim());
            const off = cells.length - head.length;
            return Object.fromEntries(head.map((h, i) => [h, cells[i + off]]));
        });
    }""")


def _status_eps(page) -> Decimal:
    line = page.locator("[data-testid='stMarkdownContainer']", has_text=" · round ").last
    found = re.findall(r"ε = ([\d.]+)", line.inner_text())
    assert len(found) == 1, line.inner_text()  # said once
    return Decimal(found[0])


def _expected(svc, kind: str, csv_text: str, q) -> dict:
    """What every screen must show, from the CSV's reports, written by classroom.display."""
    est = replay_from_csv(csv_text)
    if kind == "yesno":
        b = est.result.estimate
        return {"eps": Decimal(epsilon_up(est.epsilon)),
                "rows": {q.options[1]: [number(display.share(b.mu_hat)),
                                        *map(number, display.share_interval(b.exact_low,
                                                                            b.exact_high))]}}
    if kind == "categorical":
        c = est.result
        return {"eps": Decimal(epsilon_up(est.epsilon)),
                "rows": {opt: [number(display.share(s)),
                               *map(number, display.share_interval(lo, hi))]
                         for opt, s, lo, hi in zip(q.options, c.shares("raw"), c.ci_low,
                                                   c.ci_high, strict=True)}}
    if kind == "multiselect":
        return {"eps": Decimal(epsilon_up(est.epsilon)),
                "rows": {opt: [number(display.share(o.mu_hat)),
                               *map(number, display.share_interval(o.exact_low, o.exact_high))]
                         for opt, o in zip(q.options, est.result.options, strict=True)}}
    num = est.result.estimate
    dec = display.value_decimals(num.lo, num.hi)
    lo, hi = display.value_interval(*num.interval(), "", dec)
    return {"eps": Decimal(epsilon_up(est.epsilon)),
            "rows": {"mean": [number(display.value(num.mean, "", dec)), number(lo),
                              number(hi)]}}


def _dashboard_rows(page, kind: str, q) -> dict:
    m = _metrics(page)
    if kind == "yesno":
        return {q.options[1]: [number(m["Estimate μ̂"]), *numbers(m["95% CI"])]}
    if kind == "numeric":
        return {"mean": [numbers(m["Estimated mean"])[0], *numbers(m["95% CI"])]}
    rows = _table(page)
    return {r["Option"]: [number(r[TABLE[kind]]), *numbers(r["Exact 95% CI"])] for r in rows}


def _phone_rows(text: str, kind: str, q) -> dict:
    text = text.replace("95% interval", "interval")  # the level is no estimate
    if kind == "yesno":
        line = next(t for t in text.splitlines() if t.startswith("Estimated share"))
        share, lo, hi = NUMBER.findall(line.split(":", 1)[1])[:3]
        return {q.options[1]: [number(share), number(lo), number(hi)]}
    if kind == "numeric":
        line = next(t for t in text.splitlines() if t.startswith("Estimated class average"))
        return {"mean": numbers(line.split(":", 1)[1])[:3]}
    rows = {}
    for opt in q.options:
        line = next(t for t in text.splitlines() if t.startswith(f"{opt}: "))
        rows[opt] = numbers(line[len(opt) + 2:])[:3]
    return rows


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_screen_shows_the_same_numbers(lecture, chromium, kind, tmp_path):
    base, svc, made = lecture
    poll, q = made[kind]
    ctx = chromium.new_context(viewport={"width": 1280, "height": 720},
                               reduced_motion="reduce", accept_downloads=True)
    page = ctx.new_page()
    log_in(page, base, KEY)

    # The desk: its numbers, then its Export CSV with the simulated reports.
    page.goto(f"{base}/dashboard?pid={poll.id}")
    label = "Exact 95% CI" if kind in TABLE else "95% CI"
    _wait(page, lambda: page.get_by_text(label).count() and _status_eps(page), "the desk")
    settle(page)
    desk, desk_eps = _dashboard_rows(page, kind, q), _status_eps(page)
    desk_metric_eps = _metrics(page).get("Privacy loss ε")
    page.get_by_text("Rehearse with simulated students").click()
    page.get_by_text("Include simulated reports in Export CSV").click()
    _wait(page, lambda: page.locator(".st-key-dash_export_sim input").is_checked(),
          "the export checkbox")
    export = page.locator(".st-key-dash_export button").filter(visible=True).first
    settle(page)
    with page.expect_download(timeout=WAIT_S * 1000) as download:
        export.click()
    csv_text = (tmp_path / "export.csv")
    download.value.save_as(csv_text)
    want = _expected(svc, kind, csv_text.read_text(encoding="utf-8"), q)

    # The projector.
    page.goto(f"{base}/dashboard?pid={poll.id}&projector=1")
    _wait(page, lambda: page.get_by_text(label).count() and _status_eps(page),
          "the projector")
    settle(page)
    projector, projector_eps = _dashboard_rows(page, kind, q), _status_eps(page)
    projector_metric_eps = _metrics(page).get("Privacy loss ε")
    ctx.close()

    # A phone.
    phone_ctx = chromium.new_context(viewport={"width": 390, "height": 844},
                                     reduced_motion="reduce")
    phone = phone_ctx.new_page()
    phone.goto(f"{base}/join/{poll.join_code}")
    phone.get_by_text("Class results").wait_for(timeout=WAIT_S * 1000)
    text = phone.locator("#main").inner_text()
    phone_ctx.close()
    assert "Norm-Sub" not in text and "NaN" not in text
    on_phone = _phone_rows(text, kind, q)

    assert len(want["rows"]) == (len(q.options) if kind in TABLE else 1)
    for name, seen in (("desk", desk), ("projector", projector), ("phone", on_phone)):
        assert seen == want["rows"], f"{kind}: the {name} shows {seen}, the CSV {want['rows']}"
    assert desk_eps == projector_eps == want["eps"]
    for shown in (desk_metric_eps, projector_metric_eps):
        assert shown is None or Decimal(shown) == want["eps"]
