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


def _reach(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every node reachable from ``start`` by one or more edges."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return seen


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of two or more nodes that all reach each other, sorted."""
    reach = {node: _reach(edges, node) for node in edges}
    groups = {tuple(sorted({node} | {m for m in reach[node] if node in reach.get(m, ())}))
              for node in edges}
    return sorted(list(g) for g in groups if len(g) > 1)


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
