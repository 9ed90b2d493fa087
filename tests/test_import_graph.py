"""No circles in the import graph (grimp, the graph import-linter's contracts read).

* No file circle: no module imports, directly or through others, a module that imports it
  back, counting every import (one inside a function too, where a circle likes to hide).
* No package cycle: within every package, its direct children (subpackages and modules,
  each with everything below it) import each other without a cycle; a package's own
  ``__init__`` may gather its children's names and is left out.

A failure names the modules of the circle, or for a package cycle one import per step.
"""

from __future__ import annotations

from collections import defaultdict

import grimp
import pytest

ROOTS = ("views", "ui", "phone", "web", "classroom", "ldp_core")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*ROOTS, include_external_packages=False)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            step = next(children, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = counter
                    counter += 1
                    stack.append(step)
                    on.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def test_no_module_imports_itself_back(graph):
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & graph.modules
             for m in graph.modules}
    assert _cycles(edges) == [], "file circles"


def _child(module: str, package: str) -> str | None:
    """The direct child of ``package`` that ``module`` lies in (None: not below it)."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1:].split(".")[0]


def test_no_package_cycle(graph):
    packages = {m for m in graph.modules if graph.find_children(m)}
    problems = []
    for package in sorted(packages):
        edges: dict[str, set[str]] = defaultdict(set)
        why: dict[tuple[str, str], str] = {}
        for module in graph.find_descendants(package):
            source = _child(module, package)
            for imported in graph.find_modules_directly_imported_by(module):
                target = _child(imported, package)
                if source and target and source != target:
                    edges[source].add(target)
                    why.setdefault((source, target), f"{module} -> {imported}")
        for cycle in _cycles(dict(edges)):
            steps = [why[a, b] for a in cycle for b in cycle if (a, b) in why]
            problems.append(f"{package}: {cycle} ({'; '.join(steps)})")
    assert problems == [], "package cycles:\n" + "\n".join(problems)


def test_the_checks_find_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _child("classroom.kinds.base", "classroom") == "classroom.kinds"
    assert _child("classroom", "classroom") is None
