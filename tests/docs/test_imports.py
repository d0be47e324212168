"""The imports point one way: orchestration uses managers, agents and session; managers and agents use session and
never import each other; session uses none of them; playthroughs (what tests and benchmarks play with) never imports
the benchmarks, and no test outside tests/benchmarks does; nothing imports main.py; no module imports itself back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGES = ("agents", "batch", "benchmarks", "managers", "orchestration", "playthroughs", "session", "viewer")
FORBIDDEN = {
    "session": {"agents", "managers", "orchestration", "batch", "viewer", "playthroughs", "benchmarks", "main"},
    "agents": {"managers", "orchestration", "batch", "viewer", "playthroughs", "benchmarks", "main"},
    "managers": {"agents", "orchestration", "batch", "viewer", "playthroughs", "benchmarks", "main"},
    "orchestration": {"batch", "playthroughs", "benchmarks", "main"},
    "viewer": {"orchestration", "batch", "playthroughs", "benchmarks", "main"},
    "batch": {"playthroughs", "benchmarks", "main"},
    "playthroughs": {"benchmarks", "main"},
    "benchmarks": {"main"},
}
"""Packages a package never imports, at any depth (a function's own import included)."""


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


IMPORTING_CALLS = {"import_module", "__import__", "run_module"}
"""Calls that import a module named by a string: importlib.import_module, __import__ and runpy.run_module."""


def _imported_names(path: Path) -> set[str]:
    """Every module a file imports, at module level or inside a function, with an import statement or by a call that
    imports a module named by a literal string (IMPORTING_CALLS)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called in IMPORTING_CALLS and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def _imports(path: Path) -> set[str]:
    """Every project module a file imports (`_imported_names`)."""
    return {name for name in _imported_names(path) if name.split(".")[0] in (*PACKAGES, "main")}


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


def _importers_of(package: str, files: list[Path]) -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in _imported_names(path)
        if name.split(".")[0] == package
    )


def test_no_test_outside_tests_benchmarks_imports_the_benchmarks():
    """Tests of the product play through `playthroughs`; a test of a benchmark's report, study or figure lives in
    tests/benchmarks. conftest.py and the helpers are tests too."""
    outside = [path for path in sorted((ROOT / "tests").rglob("*.py")) if "benchmarks" not in path.parts]
    assert len(outside) > 50  # the whole suite was read, not a folder of it
    assert not _importers_of("benchmarks", outside)


def test_playthroughs_never_imports_the_benchmarks():
    files = sorted((ROOT / "playthroughs").rglob("*.py"))
    assert files
    assert not _importers_of("benchmarks", files)


def test_an_import_by_name_counts_as_an_import(tmp_path):
    """The check reads importlib.import_module("benchmarks.corpus") and runpy.run_module as imports; a string that
    only names a module (a command line, a docstring) is none."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\nimport runpy\n"
        "importlib.import_module('benchmarks.corpus')\nrunpy.run_module('benchmarks.margins')\n"
        "COMMAND = ['python', '-m', 'benchmarks.evaluate']\n"
    )
    assert _imported_names(sample) == {"importlib", "runpy", "benchmarks.corpus", "benchmarks.margins"}


def test_no_class_name_is_defined_twice_outside_the_tests():
    """A class name means one thing across the tree (nested classes too): two classes of one name would make a reader
    (and an import) take one for the other."""
    defined: dict[str, list[str]] = {}
    top = [p for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file() and p.name != "tests"]
    for path in sorted(f for p in top for f in ([p] if p.is_file() else p.rglob("*.py"))):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append(_module(path))
    assert len(defined) > 100
    assert not {name: modules for name, modules in defined.items() if len(modules) > 1}
