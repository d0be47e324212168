"""The imports point one way: orchestration uses managers, agents and session; managers and agents use session and
never import each other; session uses none of them; nothing imports main.py; no module imports itself back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGES = ("agents", "batch", "benchmarks", "managers", "orchestration", "session", "viewer")
FORBIDDEN = {
    "session": {"agents", "managers", "orchestration", "batch", "viewer", "benchmarks", "main"},
    "agents": {"managers", "orchestration", "batch", "viewer", "benchmarks", "main"},
    "managers": {"agents", "orchestration", "batch", "viewer", "benchmarks", "main"},
    "orchestration": {"batch", "benchmarks", "main"},
    "viewer": {"orchestration", "batch", "benchmarks", "main"},
    "batch": {"benchmarks", "main"},
    "benchmarks": {"main"},
}
"""Packages a package never imports, at any depth (a function's own import included)."""


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    """Every project module a file imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found |= {name for name in names if name.split(".")[0] in (*PACKAGES, "main")}
    return found


GRAPH = {_module(path): _imports(path) for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}
GRAPH["main"] = _imports(ROOT / "main.py")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_only_what_is_below_it(package):
    crossing = sorted(
        f"{module} imports {name}"
        for module, names in GRAPH.items()
        if module.split(".")[0] == package
        for name in names
        if name.split(".")[0] in FORBIDDEN[package]
    )
    assert not crossing


def test_no_module_imports_itself_back():
    modules = set(GRAPH)
    edges = {module: {name for name in names if name in modules and name != module} for module, names in GRAPH.items()}
    cycles = []
    for start in modules:
        seen, stack = set(), [(start, [start])]
        while stack:
            module, path = stack.pop()
            for nxt in edges[module]:
                if nxt == start:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    assert not cycles, cycles[:3]


def test_the_orchestrator_imports_no_viewer():
    """report.html is a step after the episode that the wiring hands the orchestrator, not part of the turn loop."""
    assert not [name for name in GRAPH["orchestration.orchestrator"] if name.startswith("viewer")]
