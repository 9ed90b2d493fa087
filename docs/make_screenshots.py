"""Regenerate the screenshots in docs/img/ from the running app.

    python docs/make_screenshots.py

Starts the app on a fresh temporary data directory (its own SQLite file and
instructor key), drives headless Debian Chromium (/usr/bin/chromium, never a
downloaded browser) through it and writes small palette PNGs:

* ``student-question.png``, ``student-receipt.png``: the student page on a
  phone (360×640), before and after tapping the true answer;
* ``dashboard-projector.png``: the dashboard in projection mode with a
  rehearsal class of 40 simulated students whose true share of Vanilla is 60%;
* ``dashboard-rehearsal.png``: the desk view's "Rehearse with simulated
  students" controls;
* ``study-local-vs-central.png``: the self-study page "Local vs central";
* ``dashboard-lesson-plans.png``: the desk view's "Lesson plans" with the shipped
  CS208 plan;
* ``projector-keys.png``: projection mode at 1280×720 with a question on a running
  countdown and the "?" list of keyboard shortcuts open.

``--only NAME`` (student, dashboard, study, plans, keys) writes one group of pictures.

The simulated students are added with ``Results.add_simulated_reports`` on
the same SQLite file while the projected dashboard is open (the dashboard's own
"Add simulated students" button does the same in batches). A fixed seed keeps
the dashboard picture the same from run to run; the phone's randomizer is the
real one, so the die and the receipt change.
"""

from __future__ import annotations

import argparse
import io
import secrets
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.browser import log_in, settle, wait_metric
from tests.support.server import running_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
OUT = ROOT / "docs" / "img"
MAX_BYTES = 300_000

PHONE = {"width": 360, "height": 640}
PROJECTOR = {"width": 1600, "height": 900}
DESK = {"width": 1280, "height": 1600}

EXERCISE_TEXT = "Vanilla (1) or chocolate (0)?"
EXERCISE_OPTIONS = ("Chocolate", "Vanilla")
EXERCISE_DESIGN = {"design": "die", "faces": 4, "truthful": 3}

REHEARSAL_N = 40
REHEARSAL_SHARE = 0.60
SEED = 4  # 21 of 40 report Vanilla (24 truly prefer it): μ̂ = 0.550, as in docs/instructor-guide.md

#: The address the join panel shows: a typical laptop on a lecture-hall network.
PUBLIC_URL = "http://192.168.1.20:8501"

WAIT_MS = 60_000  # generous: the machine may be busy


def save_png(png: bytes, name: str, colors: int = 256) -> Path:
    """Palette-reduce a screenshot and write it under docs/img/; refuse one too big."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    path = OUT / name
    for n in (colors, 128, 64):
        small = img.quantize(colors=n, method=Image.Quantize.MEDIANCUT,
                             dither=Image.Dither.NONE)
        buf = io.BytesIO()
        small.save(buf, format="PNG", optimize=True)
        if buf.tell() <= MAX_BYTES:
            path.write_bytes(buf.getvalue())
            print(f"  {path.relative_to(ROOT)}  {img.width}×{img.height}  "
                  f"{buf.tell() / 1000:.0f} kB")
            return path
    raise SystemExit(f"{name} stays above {MAX_BYTES} bytes even with 64 colours")


def wait_charts(page, count: int, timeout: float = WAIT_MS) -> None:
    """Wait until ``count`` Vega-Lite charts have drawn (a canvas or svg each)."""
    page.wait_for_function(
        """n => [...document.querySelectorAll("[data-testid='stVegaLiteChart']")]
                 .filter(c => c.querySelector('canvas, svg')).length >= n""",
        arg=count, timeout=timeout)
    page.wait_for_timeout(800)  # the last animation frames


def check_clean(page, what: str) -> None:
    """No exception box, no error message, no 'nan' on the page."""
    if page.locator("[data-testid='stException']").count():
        raise SystemExit(f"{what}: the page shows an exception")
    errors = page.locator("[data-testid='stAlertContentError']")
    if errors.count():
        raise SystemExit(f"{what}: the page shows an error: {errors.first.inner_text()}")
    text = page.locator("[data-testid='stMain']").inner_text()
    if any(word.strip("()[],.:;") in ("nan", "NaN") for word in text.split()):
        raise SystemExit(f"{what}: the page shows 'nan'")


def student(browser, base: str, code: str) -> None:
    ctx = browser.new_context(viewport=PHONE, device_scale_factor=2, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{base}/join/{code}")
    page.locator("button[data-answer='1']").wait_for(timeout=WAIT_MS)
    save_png(page.screenshot(scale="device"), "student-question.png")

    page.locator("button[data-answer='1']").click()
    page.locator("#receipt").wait_for(timeout=WAIT_MS)
    if page.locator("[role=alert]").inner_text().strip():
        raise SystemExit(f"phone page: {page.locator('[role=alert]').inner_text()}")
    save_png(page.screenshot(scale="device"), "student-receipt.png")
    ctx.close()


def dashboard(browser, base: str, key: str, svc, poll, question) -> None:
    ctx = browser.new_context(viewport=PROJECTOR, device_scale_factor=1,
                              reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, key)
    settle(page)
    page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={question.id}")
    settle(page)
    wait_metric(page, "Reports received", "0")
    added = svc.results.add_simulated_reports(question.id, REHEARSAL_N, REHEARSAL_SHARE, seed=SEED)
    assert added == REHEARSAL_N, added
    wait_metric(page, "Reports received", str(REHEARSAL_N))
    est = svc.results.estimate(question.id).result.estimate
    wait_metric(page, "Estimate μ̂", f"{est.mu_hat:.3f}".replace("-", "−"))
    wait_charts(page, 3)
    settle(page)
    check_clean(page, "dashboard")
    # The whole projected page: grow the window to the height of its content.
    height = page.evaluate(
        "document.querySelector('[data-testid=\"stMainBlockContainer\"]').scrollHeight")
    page.set_viewport_size({"width": PROJECTOR["width"], "height": int(height) + 8})
    page.wait_for_timeout(1500)
    settle(page)
    page.mouse.move(0, 0)
    save_png(page.screenshot(scale="device"), "dashboard-projector.png")

    # The rehearsal controls on the desk view.
    page.set_viewport_size(DESK)
    page.get_by_role("button", name="Leave projection mode").click()
    settle(page)
    expander = page.locator("[data-testid='stExpander']").filter(
        has_text="Rehearse with simulated students")
    try:
        expander.first.wait_for(timeout=WAIT_MS)
    except Exception:  # noqa: BLE001 - an app without the rehearsal panel
        print("  (no \"Rehearse with simulated students\" panel: dashboard-rehearsal.png "
              "not written)")
        ctx.close()
        return
    expander.first.get_by_text("Rehearse with simulated students").click()
    page.get_by_role("button", name="Add simulated students").wait_for(timeout=WAIT_MS)
    settle(page)
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)
    check_clean(page, "dashboard desk view")
    save_png(expander.first.screenshot(scale="device"), "dashboard-rehearsal.png")
    ctx.close()


def lesson_plans(browser, base: str, key: str) -> None:
    ctx = browser.new_context(viewport=DESK, device_scale_factor=1, reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, key)
    settle(page)
    expander = page.locator("[data-testid='stExpander']").filter(has_text="Lesson plans")
    expander.first.get_by_text("Lesson plans").click()
    page.get_by_role("button", name="Start a class from this plan").wait_for(timeout=WAIT_MS)
    settle(page)
    page.mouse.move(0, 0)
    check_clean(page, "lesson plans")
    save_png(expander.first.screenshot(scale="device"), "dashboard-lesson-plans.png")
    ctx.close()


def projector_keys(browser, base: str, key: str, svc) -> None:
    """Projection mode's "?" list of keys, over a question whose countdown runs."""
    poll = svc.polls.create_poll("Lecture")
    q = svc.polls.add_question(poll.id, EXERCISE_TEXT, options=EXERCISE_OPTIONS,
                               design_params=EXERCISE_DESIGN, countdown_s=90)
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, device_scale_factor=1,
                              reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, key)
    settle(page)
    page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={q.id}")
    page.locator(".ldp-question").first.wait_for(timeout=WAIT_MS)
    settle(page)
    page.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                           timeout=WAIT_MS)
    page.keyboard.press("PageDown")  # opens voting: the countdown starts
    page.locator(".ldp-pacing-clock").wait_for(state="visible", timeout=WAIT_MS)
    settle(page)
    # The toast saying voting is open fades by itself; wait for it to go.
    page.locator("[data-testid='stToast']").first.wait_for(state="detached", timeout=WAIT_MS)
    page.keyboard.press("?")
    page.get_by_role("dialog", name="Keyboard shortcuts").wait_for(timeout=WAIT_MS)
    page.mouse.move(0, 0)
    check_clean(page, "projection mode's keys")
    save_png(page.screenshot(scale="device"), "projector-keys.png")
    ctx.close()


def study(browser, base: str) -> None:
    ctx = browser.new_context(viewport=DESK, device_scale_factor=1, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{base}/local-vs-central")
    page.get_by_text("Local vs central: how the error shrinks with n").wait_for(
        timeout=WAIT_MS)
    settle(page)
    wait_charts(page, 1)
    check_clean(page, "local vs central")
    chart = page.locator("[data-testid='stVegaLiteChart']").first.bounding_box()
    bottom = int(chart["y"] + chart["height"] + 24)
    save_png(page.screenshot(scale="device", clip={"x": 0, "y": 0, "width": DESK["width"],
                                                   "height": bottom}),
             "study-local-vs-central.png")
    ctx.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("student", "dashboard", "study", "plans", "keys"),
                        help="write only this group of pictures")
    only = parser.parse_args().only
    from playwright.sync_api import sync_playwright

    from classroom.service import PollService
    from classroom.store import Store

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ldp-screenshots-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'classroom.db'}"
        key = secrets.token_urlsafe(16)
        env = {"LDP_CLASSROOM_DATA_DIR": tmp, "LDP_CLASSROOM_DATABASE_URL": url,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": key, "LDP_CLASSROOM_PUBLIC_URL": PUBLIC_URL}
        store = Store(url)
        svc = PollService.on(store)
        # The phone votes in one poll; the rehearsal class fills another, so the
        # projected dashboard shows exactly the 40 simulated students.
        phone_poll = svc.polls.create_poll("CS208")
        q = svc.polls.add_question(phone_poll.id, EXERCISE_TEXT, options=EXERCISE_OPTIONS,
                                   design_params=EXERCISE_DESIGN)
        svc.running.open_question(q.id)
        class_poll = svc.polls.create_poll("Class exercise")
        cq = svc.polls.add_question(class_poll.id, EXERCISE_TEXT, options=EXERCISE_OPTIONS,
                                    design_params=EXERCISE_DESIGN)
        svc.running.open_question(cq.id)
        svc.running.set_revealed(cq.id, True)
        print("Writing screenshots:")
        with running_server(env, timeout=90) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                if only in (None, "student"):
                    student(browser, base, phone_poll.join_code)
                if only in (None, "dashboard"):
                    dashboard(browser, base, key, svc, class_poll, svc.polls.question(cq.id))
                if only in (None, "study"):
                    study(browser, base)
                if only in (None, "plans"):
                    lesson_plans(browser, base, key)
                if only in (None, "keys"):
                    projector_keys(browser, base, key, svc)
            finally:
                browser.close()
        store.close()


if __name__ == "__main__":
    main()
