"""Every configuration key is documented (docs/configuration.md, pyproject.toml), and the figures the README and
docs/ quote are the results files the benchmarks wrote."""

import re
from pathlib import Path

import pytest

from session.config import DetectorSection, GameConfiguration, LoopBreakConfig, detector_sections, markdown_tables

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and the docs pages: what a reader is told."""
CONFIGURATION = ROOT / "docs" / "configuration.md"
SECTIONS = {
    **{section: field.annotation for section, field in GameConfiguration.model_fields.items()},
    **{f"loop_break.{name}": model for name, model in detector_sections().items()},
}
"""Every `[tool.zorkgpt.*]` table: the top-level sections and the loop-break detectors' sections under theirs."""
KEYS = [
    (section, key)
    for section, model in SECTIONS.items()
    for key, info in model.model_fields.items()
    if not (isinstance(info.annotation, type) and issubclass(info.annotation, DetectorSection))
]


@pytest.mark.parametrize("section, key", KEYS)
def test_key_documented(section, key):
    page = CONFIGURATION.read_text()
    assert f"`[tool.zorkgpt.{section}]`" in page
    assert f"| `{key}` |" in page, f"docs/configuration.md lacks a table row for {section}.{key}"
    field = SECTIONS[section].model_fields[key]
    assert field.description, f"{section}.{key} has no docstring"


@pytest.mark.parametrize("section, key", [k for k in KEYS if k[0].startswith("loop_break")])
def test_loop_break_key_in_pyproject(section, key):
    text = (ROOT / "pyproject.toml").read_text()
    table = text.split(f"[tool.zorkgpt.{section}]", 1)[1].split("\n[", 1)[0]
    assert f"\n{key} = " in table, f"pyproject.toml's [tool.zorkgpt.{section}] lacks {key}"


def test_pyproject_gives_the_defaults():
    """The file spells out every loop-break key at its default."""
    assert GameConfiguration.from_toml(ROOT / "pyproject.toml").loop_break == LoopBreakConfig()


def test_configuration_tables_are_generated_from_the_models():
    """`uv run python -m session.config` prints the tables; docs/configuration.md holds them verbatim."""
    assert markdown_tables() in CONFIGURATION.read_text()


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def _pages() -> str:
    return "\n".join(page.read_text() for page in PAGES)


# -- figures the README quotes come from the files the benchmarks wrote (issue 30's) -----------------------------
RESULTS = ROOT / "docs" / "results"

QUOTE_MARK = re.compile(r"<!-- rows of (docs/results/[\w./-]+) -->\n((?:\|.*\n)+)")
"""A table quoted from a results file: `<!-- rows of docs/results/FILE -->` on the line before it."""


def _quoted_tables() -> list[tuple[str, str, str]]:
    return [(page.name, *match.groups()) for page in PAGES for match in QUOTE_MARK.finditer(page.read_text())]


def test_the_learning_table_is_quoted_from_its_results_file():
    assert any(source == "docs/results/learning/learning.md" for _, source, _ in _quoted_tables())


@pytest.mark.parametrize("page, source, table", _quoted_tables(), ids=lambda v: str(v)[:40])
def test_a_quoted_table_is_rows_of_its_results_file(page, source, table):
    """Every row of a quoted table is a line the benchmark wrote: a figure main no longer gives fails here."""
    written = set((ROOT / source).read_text().splitlines())
    missing = [row for row in table.splitlines() if row not in written]
    assert not missing, f"{page}: rows not in {source}: {missing[:3]}"


def test_the_context_audit_rows_are_the_results_files():
    import json

    readme = _pages()
    totals = json.loads((RESULTS / "context_truth.json").read_text())["totals"]
    for kind in ("optimal", "noisy"):
        counts = totals[kind]["counts"]
        cells = [f"**{c['false']}** / {c['checked']:,}" for c in counts.values()]
        exits = totals[kind]["suggested_exits"]
        share = f"{round(100 * exits['lead_somewhere'] / exits['shown'])} %"
        assert f"({totals[kind]['turns']:,} turns) | " + " | ".join(cells) + f" | {share} |" in readme, kind


def test_the_llm_cost_rows_are_the_results_files():
    import json

    readme = _pages()
    now = json.loads((RESULTS / "llm_calls.json").read_text())
    before = json.loads((RESULTS / "llm_calls_f4eedf1.json").read_text())
    for name, row in now.items():
        chars = f"{before[name]['prompt_chars_per_turn']:,} → {row['prompt_chars_per_turn']:,}"
        line = f"| {name} | {row['turns']} ({row['termination_reason']}) | **{row['total_calls_per_turn']:.2f}** "
        assert line in readme and f"| {chars} | ${row['cost_per_turn_usd']:.6f} |" in readme, name


def test_the_learning_sentence_quotes_its_results_file():
    """The README's zork1 sentence quotes the best scores `benchmarks.evaluate --learning` wrote (issue 31: it said 84
    long after main gave 78), and the results file says which command and commit wrote it (the table itself:
    test_a_quoted_table_is_rows_of_its_results_file)."""
    import json

    readme = _pages()
    result = json.loads((RESULTS / "learning" / "learning.json").read_text())
    written = (RESULTS / "learning" / "learning.md").read_text()
    assert result["command"].startswith("uv run python -m benchmarks.evaluate --learning ")
    assert f"Command: `{result['command']}`" in written and f"Commit: {result['commit']}" in written
    [zork1] = [game for game in result["games"] if game["game"] == "zork1"]
    assert "zork1 rises " + " → ".join(str(row["best_score"]) for row in zork1["episodes"]) in readme


def test_the_scenario_figures_are_the_lines_evaluate_wrote():
    """docs/results.md quotes results.md's money, overhead and memory lines as `benchmarks.evaluate` wrote them."""
    written = (RESULTS / "results.md").read_text().splitlines()
    quoted = [line for line in written if line.startswith(("Money:", "Overhead", "Memory"))]
    assert len(quoted) == 3
    page = (ROOT / "docs" / "results.md").read_text().splitlines()
    assert all(line in page for line in quoted)
