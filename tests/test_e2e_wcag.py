"""WCAG 2.2 AA in real Chromium: what docs/accessibility.md states, checked.

* axe-core (bundled with axe-playwright-python, no download) finds 0 violations of the
  WCAG 2.0/2.1/2.2 A and AA rules, at every impact, on every phone state, on the login,
  the desk, the projector, the home page and every self-study page.
* The phone page: every control has a role and a name in the accessibility tree
  (Playwright's ARIA snapshot); targets are at least 24×24 CSS px (2.5.8); the page
  reflows at 320 CSS px (1.4.10); focus is visible with a ring of at least 3:1 against
  the page (2.4.7, 1.4.11), measured from the computed style.
* The whole lecture runs from the keyboard alone: the login, entering projection mode,
  every question opened, closed, revealed and moved on, to the last one (2.1.1), and
  every control that Tab reaches on the login shows where the focus is.
* The chart colours of the marks: at least 3:1 against the page (1.4.11), measured.

An inactive control's label may be faint: WCAG 1.4.3 exempts "text that is part of an
inactive user interface component", so the axe run leaves out the labels of disabled
controls (and only those).
"""

from __future__ import annotations

import re

import pytest

from classroom.domain import CLASS_EXERCISE
from classroom.plans import shipped_plan
from tests.support.browser import chromium, log_in, require_browser, settle
from tests.support.server import classroom_server, running_server, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]
__all__ = ["chromium"]  # the module-scoped browser fixture

KEY = "wcag-instructor-key-00001"
WAIT_MS = 60_000
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 720}
STUDY_PAGES = ["", "randomized-response", "class-exercise", "likelihood", "local-vs-central",
               "trust-models", "histograms", "averaging-attack", "manipulation", "audit-lab",
               "teach"]
#: The shipped lecture's questions of each kind, by the start of their text.
KINDS = {"yesno": "Statement A", "categorical": "What is your occupation?",
         "numeric": "How many hours did you sleep last night?"}

# Marks the labels of disabled controls, which axe cannot tell from active ones.
_MARK_INACTIVE = """() => {
  for (const control of document.querySelectorAll('[disabled], [aria-disabled="true"]')) {
    const box = control.closest('[data-testid="stElementContainer"]');
    if (box) box.setAttribute('data-a11y-inactive', '');
  }
}"""


def violations(page) -> list[str]:
    """axe's WCAG A/AA violations on ``page``, every impact, one line each."""
    from axe_playwright_python.sync_playwright import Axe

    page.evaluate(_MARK_INACTIVE)
    options = {"runOnly": {"type": "tag", "values": TAGS}}
    result = Axe().run(page, context={"exclude": [["[data-a11y-inactive]"]]}, options=options)
    return [f"{v['impact']}: {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes'][:3]]}"
            for v in result.response["violations"]]


def _rgb(css: str) -> tuple[float, ...]:
    found = re.findall(r"[\d.]+", css)
    return tuple(float(x) for x in found[:3])


def contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG 2's contrast ratio of two sRGB colours (0–255 each)."""
    def lum(c):
        lin = [(v / 255) / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4
               for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """One poll per kind with its question open; one with a countdown; one closed."""
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("wcag")
    url = f"sqlite:///{data / 'classroom.db'}"
    svc = PollService.on(Store(url))
    plan = shipped_plan("cs208-local-model")
    codes, desks = {}, {}
    for kind, start in KINDS.items():
        pq = next(q for q in plan.questions if q.text.startswith(start))
        poll = svc.polls.create_poll(f"WCAG {kind}")
        q = svc.polls.add_question(poll.id, pq.text, options=pq.options,
                                   design_params=pq.design_params, kind=pq.kind)
        svc.running.open_question(q.id)
        codes[kind] = poll.join_code
        desks[kind] = (poll.id, q.id)
    timed = svc.polls.create_poll("WCAG timed")
    svc.running.open_question(svc.polls.add_question(
        timed.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
        design_params=dict(CLASS_EXERCISE), countdown_s=3600).id)
    codes["timed"] = timed.join_code
    closed = svc.polls.create_poll("WCAG closed")
    q = svc.running.open_question(svc.polls.add_question(
        closed.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
        design_params=dict(CLASS_EXERCISE)).id)
    svc.running.close_question(q.id)
    codes["closed"] = closed.join_code
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
    with running_server(env) as base:
        yield base, codes, desks


def _phone_states(page, base: str, codes: dict):
    """Walk the phone through its states; yield (name, page) at each."""
    page.goto(f"{base}/join")
    page.locator("#code").wait_for(timeout=WAIT_MS)
    yield "join form", page
    page.goto(f"{base}/join/ZZZZZZ")
    page.locator("#alert").filter(has_text=re.compile(r"\w")).wait_for(timeout=WAIT_MS)
    yield "unknown code", page
    page.goto(f"{base}/join/{codes['closed']}")
    page.get_by_text(re.compile("closed", re.I)).first.wait_for(timeout=WAIT_MS)
    yield "question closed", page
    page.goto(f"{base}/join/{codes['timed']}")
    page.locator("#countdown").filter(has_text=re.compile(r"\d:\d\d")).wait_for(timeout=WAIT_MS)
    yield "countdown", page
    for kind in ("categorical", "numeric", "yesno"):
        page.goto(f"{base}/join/{codes[kind]}")
        page.locator("#question-area button, #question-area input").first.wait_for(
            timeout=WAIT_MS)
        yield f"{kind} question", page
    page.locator("button[data-answer]").first.click()
    page.locator("#receipt").wait_for(timeout=WAIT_MS)
    yield "receipt", page


def _small_targets(page) -> list[str]:
    """Controls smaller than 24×24 CSS px (2.5.8), but links inside a sentence."""
    return page.evaluate("""() => [...document.querySelectorAll(
        'button, a[href], input, select, textarea, summary, [role=button]')]
      .filter(e => e.offsetParent !== null && e.type !== 'hidden')
      .filter(e => !(e.tagName === 'A' && e.closest('p, li')))
      .map(e => [e, e.getBoundingClientRect()])
      .filter(([e, r]) => r.width < 24 || r.height < 24)
      .map(([e, r]) => `${e.tagName.toLowerCase()}#${e.id} ${r.width}x${r.height}`)""")


def _unnamed_controls(snapshot: str) -> list[str]:
    """Lines of an ARIA snapshot for a control with no accessible name."""
    roles = ("button", "link", "textbox", "slider", "spinbutton", "checkbox", "radio",
             "combobox")
    return [line.strip() for line in snapshot.splitlines()
            if re.match(rf"\s*- ({'|'.join(roles)})\s*(:|$)", line)]


def test_every_phone_state_passes_axe_and_has_names_targets_and_reflow(classroom, chromium):
    base, codes, _ = classroom
    failures: dict[str, list[str]] = {}
    seen = []
    for width in (PHONE["width"], 320):
        ctx = chromium.new_context(viewport={"width": width, "height": 844},
                                   reduced_motion="reduce")
        page = ctx.new_page()
        for name, shown in _phone_states(page, base, codes):
            seen.append(name)
            problems = [] if width == 320 else violations(shown)
            problems += [f"target {t}" for t in _small_targets(shown)]
            problems += [f"no name: {line}"
                         for line in _unnamed_controls(shown.locator("body").aria_snapshot())]
            scroll = shown.evaluate("document.documentElement.scrollWidth")
            if scroll > width:
                problems.append(f"scrolls sideways at {width} px: {scroll} px wide")
            if problems:
                failures[f"{name} at {width} px"] = problems
        ctx.close()
    assert len(seen) == 2 * 8
    assert failures == {}


def test_phone_focus_ring_is_visible_and_contrasts(classroom, chromium):
    base, codes, _ = classroom
    ctx = chromium.new_context(viewport=PHONE)
    page = ctx.new_page()
    page.goto(f"{base}/join/{codes['numeric']}")
    page.locator("#question-area input").first.wait_for(timeout=WAIT_MS)
    rings = []
    for _ in range(12):
        page.keyboard.press("Tab")
        ring = page.evaluate("""() => { const e = document.activeElement;
          if (!e || e === document.body) return null;
          const s = getComputedStyle(e);
          return {tag: e.tagName, style: s.outlineStyle, width: parseFloat(s.outlineWidth),
                  color: s.outlineColor,
                  page: getComputedStyle(document.body).backgroundColor}; }""")
        if ring is not None:
            rings.append(ring)
    assert {r["tag"] for r in rings} >= {"INPUT", "BUTTON"}
    for ring in rings:
        assert ring["style"] != "none" and ring["width"] >= 2, ring
        assert contrast(_rgb(ring["color"]), _rgb(ring["page"])) >= 3.0, ring
    ctx.close()


def test_login_desk_projector_and_study_pages_pass_axe(classroom, chromium):
    base, _, desks = classroom
    ctx = chromium.new_context(viewport=DESK)
    page = ctx.new_page()
    found = {}
    page.goto(f"{base}/auth/login")
    page.locator("#key").wait_for(timeout=WAIT_MS)
    found["login"] = violations(page)
    for path in STUDY_PAGES:
        page.goto(f"{base}/{path}")
        page.locator("[data-testid='stApp']").wait_for(timeout=WAIT_MS)
        settle(page)
        found[path or "home"] = violations(page)
    log_in(page, base, KEY)
    poll_id, question_id = desks["yesno"]
    for name, query in (("desk", ""), ("projector", "&projector=1")):
        page.goto(f"{base}/dashboard?pid={poll_id}&qid={question_id}{query}")
        page.get_by_text("Reports received").filter(visible=True).first.wait_for(
            timeout=WAIT_MS)
        settle(page)
        found[name] = violations(page)
    assert {name: v for name, v in found.items() if v} == {}
    assert len(found) == len(STUDY_PAGES) + 3
    ctx.close()


def test_chart_marks_contrast_with_the_page():
    """Every colour a chart draws its marks in stands out from the white page by 3:1."""
    from ui import charts, live_charts

    colours = {name: getattr(mod, name) for mod in (charts, live_charts) for name in dir(mod)
               if name.isupper() and isinstance(getattr(mod, name), str)
               and re.fullmatch(r"#[0-9A-Fa-f]{6}", getattr(mod, name))}
    assert len(colours) >= 6
    low = {name: round(contrast(tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)),
                                (255, 255, 255)), 2)
           for name, c in colours.items()}
    assert {name: r for name, r in low.items() if r < 3.0} == {}


@pytest.fixture
def lecture(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def _focus_shown(page) -> dict:
    return page.evaluate("""() => { let e = document.activeElement;
      while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
      if (!e || e === document.body) return {name: null};
      const s = getComputedStyle(e);
      return {name: e.id || e.tagName, outline: s.outlineStyle !== 'none'
              && parseFloat(s.outlineWidth) >= 2, shadow: s.boxShadow !== 'none'}; }""")


def test_a_whole_lecture_runs_from_the_keyboard_alone(lecture, chromium):
    base, svc = lecture
    poll = svc.polls.create_poll("Keyboard lecture")
    qs = [svc.polls.add_question(poll.id, f"Question {i + 1}: vanilla or chocolate?",
                                 options=("Chocolate", "Vanilla"),
                                 design_params=dict(CLASS_EXERCISE)) for i in range(3)]
    ctx = chromium.new_context(viewport=DESK, reduced_motion="reduce")
    page = ctx.new_page()
    # The login form: the key field has the focus; Tab goes round the page and back to
    # it, and every stop shows where the focus is.
    page.goto(f"{base}/auth/login")
    page.locator("#key").wait_for(timeout=WAIT_MS)
    stops = [_focus_shown(page)]
    for _ in range(10):
        page.keyboard.press("Tab")
        stops.append(_focus_shown(page))
        if stops[-1]["name"] == "key":
            break
    assert stops[0]["name"] == "key" and stops[-1]["name"] == "key", stops
    assert len(stops) >= 3, stops  # the key, the button, the link home
    assert all(s["outline"] or s["shadow"] for s in stops if s["name"] is not None), stops
    page.keyboard.type(KEY)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/dashboard**", timeout=WAIT_MS)
    # The poll's desk (its address typed), then F5 enters projection mode.
    page.goto(f"{base}/dashboard?pid={poll.id}&qid={qs[0].id}")
    settle(page)
    page.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                           timeout=WAIT_MS)
    page.keyboard.press("F5")
    page.wait_for_url(re.compile(r".*projector=1.*"), timeout=WAIT_MS)
    settle(page)
    page.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                           timeout=WAIT_MS)
    # PageDown, as a clicker sends it: open, close, reveal, next ... to the last question.
    for i, q in enumerate(qs):
        steps = [("close", lambda q=q: svc.polls.question(q.id).state == "closed"),
                 ("reveal", lambda q=q: svc.polls.question(q.id).revealed)]
        if i == 0:
            steps.insert(0, ("open", lambda q=q: svc.polls.question(q.id).state == "open"))
        if i + 1 < len(qs):
            nxt = qs[i + 1]
            steps.append(("next", lambda nxt=nxt: svc.polls.question(nxt.id).state == "open"))
        for name, done in steps:
            settle(page)
            page.keyboard.press("PageDown")
            wait_until(done, f"PageDown to {name} on Q{i + 1}")
    last = svc.polls.question(qs[-1].id)
    assert last.state == "closed" and last.revealed
    page.get_by_text("Question 3: vanilla or chocolate?").first.wait_for(timeout=WAIT_MS)
    ctx.close()
