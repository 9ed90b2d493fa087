"""The figures the docs quote, checked against the code they describe (where that is cheap):
the phone page's size, the connection pool, the one engine per process, the request and
file limits, the report's API, and the modules "Adding a question kind" names.

Load and timing figures come from ``bench/`` runs recorded in docs/benchmarks.md; these are
the figures a change to the code can silently make false.
"""

from __future__ import annotations

import ast
import gzip
import inspect
import re
from pathlib import Path

import pytest

from classroom import kinds
from classroom.plans import MAX_PLAN_BYTES
from classroom.service import Reports
from classroom.store import changes, engine
from phone import page, routes
from web import serving

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _kb(n_bytes: int) -> float:
    return n_bytes / 1024


def _close(quoted: float, measured: float) -> bool:
    """A quoted size in KB is true when within 10% (or 1 KB) of the measured one."""
    return abs(quoted - measured) <= max(1.0, 0.1 * measured)


def test_the_phone_page_size_quoted_is_the_page_served() -> None:
    raw = _kb(len(page.PAGE_HTML))
    packed = _kb(len(gzip.compress(page.PAGE_HTML, compresslevel=9, mtime=0)))
    readme = re.search(r"no Streamlit session; (\d+) KB, (\d+) KB compressed", _text("README.md"))
    assert readme, "README.md no longer quotes the phone page's size"
    assert _close(float(readme[1]), raw), f"README says {readme[1]} KB; the page is {raw:.1f}"
    assert _close(float(readme[2]), packed), \
        f"README says {readme[2]} KB compressed; it is {packed:.1f}"
    guide = re.search(r"phone page is small \((\d+) KB compressed\)",
                      _text("docs/instructor-guide.md"))
    assert guide, "the instructor's guide no longer quotes the phone page's size"
    assert _close(float(guide[1]), packed), \
        f"the guide says {guide[1]} KB compressed; it is {packed:.1f}"


def test_the_connection_pool_quoted_is_the_pool_built() -> None:
    most = engine.PG_POOL_SIZE + engine.PG_MAX_OVERFLOW
    arch = " ".join(_text("docs/architecture.md").split())
    assert f"`PG_POOL_SIZE` = {engine.PG_POOL_SIZE} connections" in arch
    assert f"`PG_MAX_OVERFLOW` = {engine.PG_MAX_OVERFLOW} under load: at most {most} " \
           "per process" in arch
    assert f"SQLite's pool is {engine.SQLITE_POOL_SIZE} + {engine.SQLITE_MAX_OVERFLOW}" in arch
    each = most + changes.LISTENING  # and the connection that listens for changes
    assert f"at most {most} per process, and one more that listens for changes" in arch
    fit = re.search(r"\((\w+) app processes fit under the default `max_connections = (\d+)`",
                    arch)
    assert fit and fit[1] == {5: "five", 4: "four", 10: "ten", 20: "twenty"}.get(
        int(fit[2]) // each), "the processes that fit under max_connections"
    deploy = " ".join(_text("docs/deployment.md").split())
    assert (f"pool keeps {engine.PG_POOL_SIZE} connections open and opens up to "
            f"{engine.PG_MAX_OVERFLOW} more under load, so at most {most} per process") in deploy
    assert f"so {each} per process. Ten processes need up to {10 * each}," in deploy


def _calls(name: str) -> list[str]:
    """Where the app's packages call ``name(...)`` (tests and bench left out)."""
    found = []
    for package in ("app.py", "classroom", "phone", "ui", "views", "web"):
        paths = [ROOT / package] if package.endswith(".py") else \
            sorted((ROOT / package).rglob("*.py"))
        for path in paths:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    func = node.func
                    called = func.id if isinstance(func, ast.Name) else \
                        func.attr if isinstance(func, ast.Attribute) else None
                    if called == name:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_one_engine_per_process_as_the_docs_say() -> None:
    """"One engine per process": the composition root builds the one Store, and only the
    Store makes an engine."""
    assert "One engine per process" in _text("docs/architecture.md")
    assert _calls("Store") == [f"web/composition.py:{_line('web/composition.py', 'Store(')}"]
    assert [c.split(":")[0] for c in _calls("make_engine")] == ["classroom/store/storage.py"]


def _line(name: str, needle: str) -> int:
    for i, line in enumerate(_text(name).splitlines(), start=1):
        if needle in line and not line.lstrip().startswith(("#", "from", "import")):
            return i
    raise AssertionError(f"{needle!r} not in {name}")


def test_the_limits_quoted_are_the_limits_enforced() -> None:
    assert routes.MAX_BODY_BYTES == 4 * 1024
    assert "(same origin, JSON, at most 4 KB)" in _text("docs/architecture.md")
    assert f"4 KB and {routes.MAX_JSON_DEPTH} levels of nesting" in _text("docs/deployment.md")
    assert MAX_PLAN_BYTES == 128 * 1024
    assert "size (128 KB)" in _text("docs/architecture.md")
    assert "at most 128 KB" in _text("docs/lesson-plans.md")
    header_s, header_kb = int(serving.HEADER_TIMEOUT_S), serving.MAX_HEADER_BYTES // 1024
    body_s, conns = int(serving.BODY_IDLE_TIMEOUT_S), f"{serving.MAX_CONNECTIONS:,}"
    assert (f"headers within {header_s} s and {header_kb} KB, bodies idle at most {body_s} s, "
            f"{conns} connections at once") in _text("README.md")
    deploy = " ".join(_text("docs/deployment.md").split())
    assert f"within **{header_s} s** and **{header_kb} KB**" in deploy
    assert f"at most **{body_s} s**" in deploy
    assert f"at most **{conns} connections**" in deploy


def test_the_report_api_in_the_architecture_doc_is_the_service_signature() -> None:
    row = re.search(r"^\| `submit_report\((.*?)\)` \|", _text("docs/architecture.md"), re.M)
    assert row, "the architecture doc's API table lost submit_report"
    documented = [p.split(":")[0].split("=")[0].strip() for p in row[1].split(",")]
    params = list(inspect.signature(Reports.submit_report).parameters.values())[1:]
    names = [p.name for p in params]
    first_kw = next(i for i, p in enumerate(params) if p.kind is p.KEYWORD_ONLY)
    assert documented == names[:first_kw] + ["*"] + names[first_kw:]


def test_adding_a_kind_names_modules_that_exist() -> None:
    arch = _text("docs/architecture.md")
    section = arch[arch.index("## Adding a question kind"):]
    for path in re.findall(r"`((?:classroom|ui|phone|ldp_core)/[\w/]+\.py)`", section):
        assert (ROOT / path).exists(), path
    for kind in kinds.KINDS:
        assert (ROOT / "classroom" / "kinds" / f"{kind}.py").exists(), kind


@pytest.mark.parametrize("method", [name for name, value in vars(kinds.QuestionKind).items()
                                    if callable(value) and not name.startswith("_")])
def test_every_method_of_a_kind_is_named_in_the_doc(method: str) -> None:
    arch = _text("docs/architecture.md")
    section = arch[arch.index("## Adding a question kind"):]
    assert f"`{method}`" in section, f"docs/architecture.md does not name {method}"


def _documented_error_tree() -> dict[str, str | None]:
    """``{class: parent}`` from the tree drawn under "### Errors" in the architecture doc."""
    arch = _text("docs/architecture.md")
    block = arch[arch.index("### Errors"):].split("```")[1]
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for line in block.splitlines():
        found = re.match(r"^([│ ]*)[├└]── (\w+)", line)
        if found:
            depth = len(found[1]) // 4 + 1
            del stack[depth:]
            parents[found[2]] = stack[-1]
            stack.append(found[2])
        elif re.match(r"^\w+$", line.strip()) and not stack:
            parents[line.strip()] = None
            stack.append(line.strip())
    return parents


def test_the_error_tree_in_the_architecture_doc_is_the_class_tree() -> None:
    from classroom.domain import errors

    documented = _documented_error_tree()
    actual = {name: (obj.__bases__[0].__name__ if obj is not errors.ClassroomError else None)
              for name, obj in vars(errors).items()
              if isinstance(obj, type) and issubclass(obj, errors.ClassroomError)}
    assert documented == actual


# -- the architecture doc's map, kept true ---------------------------------------------------

def _section(doc: str, title: str) -> str:
    text = _text(doc)
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_the_dashboard_panel_list_names_every_panel_module() -> None:
    listed = re.search(r"composes the panels of `ui/dashboard/`\s*\(([^)]*)\)",
                       _text("docs/architecture.md"))
    assert listed, "docs/architecture.md no longer lists the dashboard's panels"
    names = {n.strip().replace("-", "_") for n in listed[1].replace("\n", " ").split(",")}
    modules = {p.stem for p in (ROOT / "ui" / "dashboard").glob("*.py")} - {"__init__"}
    assert names == modules


def _kind_names_in_code() -> set[str]:
    """Files outside classroom/kinds/ with a kind's name as a string (docstrings aside)."""
    found = set()
    for package in ("classroom", "ui", "views", "phone", "web"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                      ast.ClassDef))
                    and n.body and isinstance(n.body[0], ast.Expr)
                    and isinstance(n.body[0].value, ast.Constant)}
            if any(isinstance(n, ast.Constant) and n.value in kinds.KINDS
                   and id(n) not in docs for n in ast.walk(tree)):
                found.add(path.relative_to(ROOT).as_posix())
    return {p for p in found if not p.startswith("classroom/kinds/")}


def test_the_places_that_name_a_kind_are_the_ones_the_doc_lists() -> None:
    text = _section("docs/architecture.md", "Adding a question kind")
    listed = re.search(r"a kind's name appears only\s+in: (.*?); `tests/test_docs_figures.py`",
                       text, re.S)
    assert listed, "the doc no longer lists where a kind's name appears"
    named = set(re.findall(r"`([\w/]+\.py)`", listed[1])) | {"ui/dashboard/kinds.py"}
    assert _kind_names_in_code() == named


def test_the_find_your_way_section_names_files_that_exist() -> None:
    text = _section("docs/architecture.md", "Find your way")
    paths = set(re.findall(r"`((?:phone|classroom|ui|web|ldp_core)/[\w/.<>]+)`", text))
    assert len(paths) >= 10
    for path in paths:
        if "<" not in path:
            assert (ROOT / path).exists(), path
    # A refresh writes only in a rehearsal: the live panel's one call that may write.
    live = _text("ui/dashboard/live.py")
    assert "rehearsal_tick(question_id)" in live and "rehearsal_tick" in text
    assert "add_simulated_answers" in inspect.getsource(
        __import__("ui.dashboard.actions", fromlist=["rehearsal_tick"]).rehearsal_tick)


def test_the_mypy_scope_quoted_is_the_one_configured() -> None:
    import tomllib

    config = tomllib.loads(_text("pyproject.toml"))["tool"]["mypy"]
    strict = next(o for o in config["overrides"] if "disallow_untyped_defs" in o)["module"]
    line = next(x for x in _text("requirements-dev.txt").splitlines() if x.startswith("mypy"))
    assert "every package" in line and len(config["files"]) >= 6
    assert re.findall(r"\b(ldp_core|classroom|web|phone)\b", line.split("required in")[1]) \
        == [m.removesuffix(".*") for m in strict]


def test_the_classroom_docstring_names_every_package_and_module() -> None:
    import classroom

    children = {p.stem if p.suffix else p.name for p in (ROOT / "classroom").iterdir()
                if (p.suffix == ".py" and p.stem != "__init__")
                or (p.is_dir() and (p / "__init__.py").exists())}
    named = set(re.findall(r":mod:`\.(\w+)`", classroom.__doc__ or ""))
    assert named == children


def test_the_burst_p95_quoted_in_deployment_is_the_benchmarks() -> None:
    bench = re.search(r"5,000 phones in a 20-s burst \(pinned p95 ([\d.]+) s, unpinned "
                      r"([\d.]+) s\)", _text("docs/benchmarks.md"))
    deploy = re.search(r"p95 tap-to-receipt of ([\d.]+) s with the server pinned to one core "
                       r"\(([\d.]+) s\s+unpinned", _text("docs/deployment.md"))
    assert bench and deploy and (bench[1], bench[2]) == (deploy[1], deploy[2])


def test_the_fast_command_names_markers_that_exist() -> None:
    import tomllib

    command = re.search(r'python -m pytest -m "([^"]+)"', _text("README.md"))
    assert command, "README.md no longer shows the fast command"
    used = set(re.findall(r"not (\w+)", command[1]))
    declared = {m.split(":")[0] for m in
                tomllib.loads(_text("pyproject.toml"))["tool"]["pytest"]["ini_options"]["markers"]}
    assert used == {"server", "browser", "postgres", "slow"} and used <= declared
