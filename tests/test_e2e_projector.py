"""The projector at a glance.

* The class exercise, revealed with 40 simulated students, at 1920×1080 and 1280×800:
  the question, the join code and QR code, n, μ̂, both SDs, the 95% CI, ε and both live
  charts lie inside the screen, no projector text is smaller than 24 px, and no label
  is clipped.
* Every kind of question in every state fits one screen. The three kinds of the
  shipped CS208 lecture (Warner's bribe statement, the longest yes/no question; the 14
  occupations by unary encoding; hours of sleep by the Hybrid Mechanism) are each shown
  as a draft, open for voting (results hidden), closed (results hidden) and revealed
  (closed, results shown), at 1280×720 and 1920×1080. On every screen the question, the
  join panel, the key numbers with the whole 95% CI, the main chart and the controls
  lie inside the viewport, the panels above the control bar (which stays at the bottom
  of the screen); no metric text is cut short with "…"; the numbers row is at least
  24 px at 1280×720. The same with the countdown's clock running (it covers none of
  them) and, at 1280×720, with the join panel hidden.

One server for the module; the reports are seeded through the service, and every
screen is waited for by polling. Screenshots go to the test's artifacts for a look.
"""


from __future__ import annotations

import time
from pathlib import Path

import pytest

from classroom.domain import CLASS_EXERCISE
from classroom.plans import shipped_plan
from tests.support.browser import chromium, log_in, require_browser
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "projector-test-instructor-key"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
SIZES = [(1280, 720), (1920, 1080)]
KINDS = {"yesno": "Statement A", "categorical": "What is your occupation?",
         "numeric": "How many hours did you sleep last night?"}
#: "timed": open, revealed, with a countdown running (its clock sits top right).
STATES = ("draft", "open", "closed", "revealed", "timed")
#: The key numbers of a revealed question, by the label of their metric.
NUMBERS = {"yesno": ["Reports received", "Privacy loss ε", "Estimate μ̂", "SD, fixed class",
                     "95% CI"],
           "categorical": ["Reports received", "Privacy loss ε", "Design"],
           "numeric": ["Reports received", "Estimated mean", "SD, worst case", "95% CI"]}
N = {"yesno": 40, "categorical": 60, "numeric": 30}
WAIT_S = 60.0
METRICS = ["Reports received", "Reported “Vanilla”", "Privacy loss ε", "Estimate μ̂",
           "SD, fixed class", "SD, population", "95% CI"]


def _every_kind_in_every_state(svc) -> dict[tuple[str, str], tuple[int, int]]:
    """One poll per kind with four copies of its question, one in each state: (poll id,
    question id) by (kind, state)."""
    plan = shipped_plan("cs208-local-model")
    pick = {kind: next(q for q in plan.questions if q.text.startswith(start))
            for kind, start in KINDS.items()}
    truth = {"yesno": 0.3, "categorical": [1 / 14] * 14, "numeric": 7.0}
    ids: dict[tuple[str, str], tuple[int, int]] = {}
    for kind, pq in pick.items():
        poll = svc.polls.create_poll(f"projector {kind}")
        made = {state: svc.polls.add_question(poll.id, pq.text, options=pq.options,
                                              design_params=pq.design_params, kind=pq.kind)
                for state in ("draft", "open", "closed", "revealed")}
        for state in ("closed", "revealed", "open"):  # the open one last: it stays open
            q = svc.running.open_question(made[state].id)
            svc.results.add_simulated_reports(q.id, N[kind], truth[kind], seed=7)
            if state != "open":
                svc.running.close_question(q.id)
        svc.running.set_revealed(made["revealed"].id, True)
        for state, q in made.items():
            ids[kind, state] = (poll.id, q.id)
        timed = svc.polls.create_poll(f"projector {kind}, timed")  # a poll has one open question
        q = svc.polls.add_question(timed.id, pq.text, options=pq.options,
                                   design_params=pq.design_params, kind=pq.kind, countdown_s=3600)
        svc.running.open_question(q.id)
        svc.results.add_simulated_reports(q.id, N[kind], truth[kind], seed=7)
        svc.running.set_revealed(q.id, True)
        ids[kind, "timed"] = (timed.id, q.id)
    return ids


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("projector")
    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    svc = PollService.on(store)
    poll = svc.polls.create_poll("CS208")
    q = svc.running.open_question(svc.polls.add_question(
        poll.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
        design_params=dict(CLASS_EXERCISE)).id)
    svc.results.add_simulated_reports(q.id, 40, 0.6, seed=3)
    svc.running.set_revealed(q.id, True)
    ids = _every_kind_in_every_state(svc)
    # The address a laptop on a lecture-hall network has, as the join panel shows it.
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY,
           "LDP_CLASSROOM_PUBLIC_URL": "http://192.168.1.20:8501"}
    with running_server(env) as base:
        yield base, poll, q, ids
    store.close()


def _inside(box, width: int, height: int) -> bool:
    return (box is not None and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= width + 1 and box["y"] + box["height"] <= height + 1)


def _wait_for_charts(page, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while page.locator("[data-testid='stVegaLiteChart'] svg, "
                       "[data-testid='stVegaLiteChart'] canvas").count() < count:
        assert time.monotonic() < deadline, "the live charts did not render"
        page.wait_for_timeout(200)


@pytest.mark.parametrize("width, height", [(1920, 1080), (1280, 800)])
def test_projector_fits_one_screen(classroom, chromium, width, height):
    base, poll, q, _ = classroom
    ctx = chromium.new_context(viewport={"width": width, "height": height},
                               reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.get_by_text("Reports received").filter(visible=True).first.wait_for(timeout=60_000)
    page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={q.id}")
    page.get_by_text("SD, population").first.wait_for(timeout=60_000)
    _wait_for_charts(page, 2)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"projector-{width}x{height}.png"))

    key_elements = {
        "question": page.locator(".ldp-question"),
        "join code": page.locator(".ldp-join-code"),
        "QR code": page.locator("img[alt^='QR code of']"),
        "reports chart": page.locator("[data-testid='stVegaLiteChart']").nth(0),
        "trajectory chart": page.locator("[data-testid='stVegaLiteChart']").nth(1),
    }
    for label in METRICS:
        key_elements[label] = page.locator("[data-testid='stMetric']").filter(
            has=page.locator("[data-testid='stMetricLabel']", has_text=label)).first
    outside = [name for name, loc in key_elements.items()
               if not _inside(loc.bounding_box(), width, height)]
    assert outside == [], f"below the fold or off screen at {width}×{height}: {outside}"

    small = page.evaluate("""() => {
        const out = [];
        const walker = document.createTreeWalker(
            document.querySelector("[data-testid='stMain']"), NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
            const text = t.textContent.trim();
            const el = t.parentElement;
            if (!text || !el || !el.getClientRects().length) continue;
            if (el.closest("[data-testid='stTooltipIcon'], .katex-mathml")) continue;
            const size = parseFloat(getComputedStyle(el).fontSize);
            if (size < 24) out.push(`${size}px: ${text.slice(0, 40)}`);
        }
        return out;
    }""")
    assert small == [], f"projector text below 24 px: {small[:10]}"

    clipped = page.evaluate("""() => [...document.querySelectorAll(
            "[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] div, button p")]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.textContent)""")
    assert clipped == [], f"clipped labels: {clipped}"
    ctx.close()


def test_desk_view_controls_are_not_clipped(classroom, chromium):
    base, poll, q, _ = classroom
    ctx = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.goto(f"{base}/dashboard?pid={poll.id}&qid={q.id}")
    page.get_by_role("button", name="New round").wait_for(timeout=60_000)
    clipped = page.evaluate("""() => [...document.querySelectorAll("button p")]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.textContent)""")
    assert clipped == []
    code = page.locator(".ldp-join-code").bounding_box()
    qr = page.locator("img[alt^='QR code of']").bounding_box()
    assert _inside(code, 1280, 800) and _inside(qr, 1280, 800)
    ctx.close()


@pytest.fixture(scope="module")
def desks(classroom, chromium):
    """One logged-in browser page per screen size, reused by every case."""
    base = classroom[0]
    pages = {}
    for width, height in SIZES:
        ctx = chromium.new_context(viewport={"width": width, "height": height},
                                   reduced_motion="reduce")
        page = ctx.new_page()
        log_in(page, base, KEY)
        pages[width, height] = page
    yield pages
    for page in pages.values():
        page.context.close()


def _poll(page, check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(200)


def _settled(page) -> bool:
    return page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").count() \
        == 1 and page.locator("[data-testid^='stSkeleton']").count() == 0


def _visible_text(page, selector: str) -> list[str]:
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)]
        .filter(e => e.getClientRects().length).map(e => e.innerText.trim())""", selector)


def _box(loc):
    return loc.bounding_box() if loc.count() else None


def _outside(box, width: int, height: int) -> bool:
    return (box is None or box["x"] < 0 or box["y"] < 0 or box["x"] + box["width"] > width + 1
            or box["y"] + box["height"] > height + 1)


def _clock(page):
    """The countdown's box in projection mode, or None while it is not shown."""
    clock = page.locator(".ldp-pacing-clock:not([hidden])")
    return clock.first.bounding_box() if clock.count() else None


def _overlap(a, b) -> bool:
    return (a is not None and b is not None and a["x"] < b["x"] + b["width"]
            and b["x"] < a["x"] + a["width"] and a["y"] < b["y"] + b["height"]
            and b["y"] < a["y"] + a["height"])


def _every_number_whole(page, labels, where: str) -> None:
    """No metric value ends in "…", no metric or button text is cut off, and a 95% CI
    shows both its ends."""
    values = _visible_text(page, "[data-testid='stMetricValue']")
    assert values and not [v for v in values if v.endswith(("…", "..."))], (where, values)
    clipped = page.evaluate("""() => [...document.querySelectorAll(
            "[data-testid='stMetricValue'], [data-testid='stMetricValue'] *, "
            + "[data-testid='stMetricLabel'] p, button p")]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.textContent)""")
    assert clipped == [], f"{where}, text cut off: {clipped}"
    if "95% CI" in labels:  # the whole interval: both ends
        ci = _metric_value(page, "95% CI") or ""
        assert " to " in ci or (ci.startswith("[") and ci.endswith("]")), (where, ci)


def _metric_value(page, label: str) -> str | None:
    """The text of the metric ``label``, or None while it is absent or being redrawn."""
    from playwright.sync_api import Error as PlaywrightError

    box = page.locator("[data-testid='stMetric']").filter(
        has=page.locator("[data-testid='stMetricLabel']", has_text=label))
    try:
        return box.first.locator("[data-testid='stMetricValue']").inner_text(
            timeout=500).strip() if box.count() else None
    except PlaywrightError:
        return None


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_projector_shows_everything_on_one_screen(classroom, desks, kind, state, size):
    base, ids = classroom[0], classroom[3]
    width, height = size
    page = desks[size]
    pid, qid = ids[kind, state]
    page.goto(f"{base}/dashboard?projector=1&pid={pid}&qid={qid}")
    revealed = state in ("revealed", "timed")
    n = "0" if state == "draft" else str(N[kind])
    labels = NUMBERS[kind] if revealed else ["Reports received"]
    charts = (2 if kind == "yesno" else 1) if revealed else 0
    voting = {"draft": "Open voting", "open": "Close voting", "timed": "Close voting"}.get(
        state, "Reopen voting")

    def ready() -> bool:
        return (_settled(page) and page.locator(".ldp-question").count() == 1
                and page.locator("img[alt^='QR code of']").count() == 1
                and page.get_by_role("button", name=voting).count() == 1
                and _metric_value(page, "Reports received") == n
                and all(_metric_value(page, label) for label in labels)
                and page.locator("[data-testid='stVegaLiteChart'] svg, "
                                 "[data-testid='stVegaLiteChart'] canvas").count() >= charts
                and (state != "timed" or _clock(page) is not None))
    _poll(page, ready, f"the {kind} question ({state}) on the projector")
    (ARTIFACTS / "projector").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "projector" / f"projector-{kind}-{state}-{width}.png"))

    metric = page.locator("[data-testid='stMetric']")
    panels = {"question": page.locator(".ldp-question"),
              "join code": page.locator(".ldp-join-code"),
              "QR code": page.locator("img[alt^='QR code of']"),
              "join link": page.locator("[data-testid='stCode']").first,
              "status line": page.locator("[data-testid='stMarkdownContainer']",
                                          has_text=" · round ").last}
    for label in labels:
        panels[label] = metric.filter(has=page.locator("[data-testid='stMetricLabel']",
                                                       has_text=label)).first
    for i in range(charts):
        panels[f"chart {i + 1}"] = page.locator("[data-testid='stVegaLiteChart']").nth(i)
    bar = page.locator(".st-key-ldp_projector_controls")
    bar_box = _box(bar)
    assert not _outside(bar_box, width, height), "the control bar is off screen"
    # The panels are on screen and above the bar, so the bar hides none of them.
    hidden = [name for name, loc in panels.items()
              if _outside(_box(loc), width, round(bar_box["y"]))]
    assert hidden == [], f"{kind} {state} at {width}×{height}, not on screen: {hidden}"

    if state == "timed":  # the clock covers nothing: not the question, not the numbers
        clock = _clock(page)
        assert not _outside(clock, width, height), clock
        covered = [name for name, loc in panels.items()
                   if name != "question" and _overlap(clock, _box(loc))]
        # The question's box leaves room for the clock: its words stay clear of it.
        words = page.evaluate("""() => {
            const range = document.createRange();
            range.selectNodeContents(document.querySelector('.ldp-question'));
            return [...range.getClientRects()].map(r => (
                {x: r.x, y: r.y, width: r.width, height: r.height}));
        }""")
        covered += ["question"] if any(_overlap(clock, r) for r in words) else []
        assert covered == [], f"the countdown covers {covered}"

    buttons = [b for b in bar.locator("button").all() if b.is_visible()]
    names = [b.inner_text().strip() for b in buttons]
    for want in (voting, "Hide results" if revealed else "Reveal results",
                 "Leave projection mode"):
        assert any(want in name for name in names), (want, names)
    off = [name for b, name in zip(buttons, names, strict=True)
           if _outside(_box(b), width, height)]
    assert off == [], f"{kind} {state} at {width}×{height}, controls off screen: {off}"

    _every_number_whole(page, labels, f"{kind} {state} at {width}×{height}")
    if width == 1280:
        sizes = page.evaluate("""() => [...document.querySelectorAll(
                "[data-testid='stMetricValue'], [data-testid='stMetricLabel'] p")]
            .filter(e => e.getClientRects().length)
            .map(e => [e.innerText.trim(), parseFloat(getComputedStyle(e).fontSize)])""")
        small = [(text, px) for text, px in sizes if px < 24]
        assert small == [], f"numbers row below 24 px: {small}"


@pytest.mark.parametrize("kind", list(KINDS))
def test_without_the_join_panel_the_numbers_take_the_width_and_still_fit(classroom, desks,
                                                                         kind):
    """Once everyone has joined the instructor unticks "Show join panel": the live panel
    takes the whole width, and the question, the key numbers, the main chart and the
    controls still lie on the screen above the bar, at 1280×720."""
    base, ids = classroom[0], classroom[3]
    page = desks[1280, 720]
    pid, qid = ids[kind, "revealed"]
    page.goto(f"{base}/dashboard?projector=1&pid={pid}&qid={qid}")
    charts = 2 if kind == "yesno" else 1
    drawn = "[data-testid='stVegaLiteChart'] svg, [data-testid='stVegaLiteChart'] canvas"
    _poll(page, lambda: _settled(page) and page.locator(".ldp-join-code").count() == 1
          and page.locator(drawn).count() >= charts, f"the {kind} question")
    toggle = page.locator("[data-testid='stCheckbox']").filter(has_text="Show join panel")
    toggle.click()
    try:
        _poll(page, lambda: _settled(page) and page.locator(".ldp-join-code").count() == 0
              and all(_metric_value(page, label) for label in NUMBERS[kind])
              and page.locator(drawn).count() >= charts, "the panel without the join code")
        page.screenshot(path=str(ARTIFACTS / "projector" / f"projector-{kind}-nojoin-1280.png"))
        bar = _box(page.locator(".st-key-ldp_projector_controls"))
        assert not _outside(bar, 1280, 720)
        panels = {"question": page.locator(".ldp-question")}
        for label in NUMBERS[kind]:
            panels[label] = page.locator("[data-testid='stMetric']").filter(
                has=page.locator("[data-testid='stMetricLabel']", has_text=label)).first
        for i in range(charts):
            panels[f"chart {i + 1}"] = page.locator("[data-testid='stVegaLiteChart']").nth(i)
        hidden = [name for name, loc in panels.items()
                  if _outside(_box(loc), 1280, round(bar["y"]))]
        assert hidden == [], f"{kind} without the join panel, not on screen: {hidden}"
    finally:  # the page is shared: the join panel comes back for the other cases
        toggle.click()
        _poll(page, lambda: page.locator(".ldp-join-code").count() == 1, "the join panel")


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_notice_in_the_control_bar_covers_no_number(classroom, desks, kind):
    """A key with nothing to do (N on the poll's last question) is said in the control bar,
    above its buttons: the bar grows upwards, and the question, the key numbers and the
    main chart still lie above it at 1280×720; no toast appears anywhere."""
    base, ids = classroom[0], classroom[3]
    page = desks[1280, 720]
    pid, qid = ids[kind, "revealed"]  # the last question of its poll
    page.goto(f"{base}/dashboard?projector=1&pid={pid}&qid={qid}")
    charts = 2 if kind == "yesno" else 1
    drawn = "[data-testid='stVegaLiteChart'] svg, [data-testid='stVegaLiteChart'] canvas"
    _poll(page, lambda: _settled(page) and page.locator(drawn).count() >= charts
          and all(_metric_value(page, label) for label in NUMBERS[kind])
          and page.evaluate("() => !!window.__ldpPacing && window.__ldpPacing.attached"),
          f"the {kind} question")
    page.keyboard.press("n")
    notice = page.locator(".st-key-ldp_projector_controls .ldp-notice")
    _poll(page, lambda: _settled(page) and notice.count() == 1
          and page.locator(drawn).count() >= charts, "the notice")
    page.screenshot(path=str(ARTIFACTS / "projector" / f"projector-{kind}-notice-1280.png"))
    assert "last question" in notice.inner_text()
    assert page.locator("[data-testid='stToast']").count() == 0
    bar = _box(page.locator(".st-key-ldp_projector_controls"))
    assert not _outside(_box(notice), 1280, 720)
    panels = {"question": page.locator(".ldp-question"),
              "status line": page.locator("[data-testid='stMarkdownContainer']",
                                          has_text=" · round ").last}
    for label in NUMBERS[kind]:
        panels[label] = page.locator("[data-testid='stMetric']").filter(
            has=page.locator("[data-testid='stMetricLabel']", has_text=label)).first
    for i in range(charts):
        panels[f"chart {i + 1}"] = page.locator("[data-testid='stVegaLiteChart']").nth(i)
    hidden = [name for name, loc in panels.items()
              if _outside(_box(loc), 1280, round(bar["y"]))]
    assert hidden == [], (f"{kind} with a notice, under the bar at y = {bar['y']}: "
                          f"{[(name, _box(panels[name])) for name in hidden]}")
    size = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector("
                         "'.ldp-notice')).fontSize)")
    assert size >= 24



@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_the_desk_shows_every_number_whole(classroom, desks, kind, state, size):
    """The desk, where the guide sends the instructor for the what-if step, with the same
    checks as the projector's: at 1280×720 and 1920×1080, for every kind in every state,
    no number or label on the whole page is cut short ("11.08…"), the 95% CI shows both
    ends, and the status line says ε once."""
    base, ids = classroom[0], classroom[3]
    width, height = size
    page = desks[size]
    pid, qid = ids[kind, state]
    page.goto(f"{base}/dashboard?pid={pid}&qid={qid}")
    revealed = state in ("revealed", "timed")
    n = "0" if state == "draft" else str(N[kind])
    labels = NUMBERS[kind] if revealed else ["Reports received"]
    charts = (2 if kind == "yesno" else 1) if revealed else 0
    status = page.locator("[data-testid='stMarkdownContainer']", has_text=" · round ")

    def ready() -> bool:
        return (_settled(page) and page.locator(".ldp-join-code").count() == 1
                and _metric_value(page, "Reports received") == n
                and all(_metric_value(page, label) for label in labels)
                and status.count() >= 1
                and page.locator("[data-testid='stVegaLiteChart'] svg, "
                                 "[data-testid='stVegaLiteChart'] canvas").count() >= charts)
    _poll(page, ready, f"the {kind} question ({state}) at the desk")
    (ARTIFACTS / "desk").mkdir(parents=True, exist_ok=True)
    status.last.scroll_into_view_if_needed()  # the live panel, from its status line down
    page.screenshot(path=str(ARTIFACTS / "desk" / f"desk-{kind}-{state}-{width}.png"))

    _every_number_whole(page, labels, f"{kind} {state} at {width}×{height}")
    line = status.last.inner_text()
    assert line.count("ε =") == 1, line
