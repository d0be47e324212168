"""Every configuration key is documented (docs/configuration.md, pyproject.toml), and the figures the README and
docs/ quote are the results files the benchmarks wrote."""

import re
from pathlib import Path

import pytest

from session.config import GameConfiguration, LoopBreakConfig, Section
from session.config_tables import all_sections, markdown_tables
from tests.helpers import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and the docs pages: what a reader is told."""
CONFIGURATION = ROOT / "docs" / "configuration.md"
SECTIONS = all_sections()
"""Every `[tool.zorkgpt.*]` table: the top-level sections and the loop-break detectors' sections under theirs."""
KEYS = [
    (section, key)
    for section, model in SECTIONS.items()
    for key, info in model.model_fields.items()
    if not (isinstance(info.annotation, type) and issubclass(info.annotation, Section))
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
    """`uv run python -m session.config_tables` prints the tables; docs/configuration.md holds them verbatim."""
    assert markdown_tables() in CONFIGURATION.read_text()


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def _pages() -> str:
    return "\n".join(page.read_text() for page in PAGES)


# -- figures the README and docs/ quote come from the files the benchmarks wrote ---------------------------------
RESULTS = ROOT / "docs" / "results"

QUOTE_MARK = re.compile(r"<!-- rows of (docs/results/[\w./-]+) -->\n((?:.+\n)+)")
"""Lines quoted from a results file: `<!-- rows of docs/results/FILE -->` on the line before them, up to the next
blank line (a table, or lines such as a summary's bullets)."""


def _quoted_tables() -> list[tuple[str, str, str]]:
    return [(page.name, *match.groups()) for page in PAGES for match in QUOTE_MARK.finditer(page.read_text())]


def test_the_learning_table_is_quoted_from_its_results_file():
    assert any(source == "docs/results/learning/learning.md" for _, source, _ in _quoted_tables())


@pytest.mark.parametrize("page, source, table", _quoted_tables(), ids=lambda v: str(v)[:40])
def test_a_quoted_table_is_rows_of_its_results_file(page, source, table):
    """Every row of a quoted table is a line the benchmark wrote: a figure main does not give fails here."""
    written = set((ROOT / source).read_text().splitlines())
    missing = [row for row in table.splitlines() if row not in written]
    assert not missing, f"{page}: rows not in {source}: {missing[:3]}"


def test_the_llm_cost_table_is_quoted_from_its_results_file():
    assert any(source == "docs/results/llm_calls.md" for _, source, _ in _quoted_tables())


def test_the_learning_sentence_quotes_its_results_file():
    """The zork1 sentence quotes the best scores `benchmarks.evaluate --learning` wrote (a hand-copied figure once
    outlived the code that gave it), and the results file says which command and commit wrote it (the table itself:
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


@pytest.mark.parametrize("source", sorted({source for _, source, _ in _quoted_tables()}))
def test_a_quoted_results_file_names_its_command_and_commit(source):
    """A quote is only as good as its source: the file says which benchmark command (or batch preset) and which
    commit wrote it."""
    head = "\n".join((ROOT / source).read_text().splitlines()[:5])
    commands = ("uv run python -m benchmarks.", "uv run python main.py batch --preset ")
    assert any(command in head for command in commands), f"{source} does not name the command that wrote it"
    assert re.search(r"\b(Commit: |at )[0-9a-f]{7,40}\b", head), f"{source} does not name its commit"


def test_the_margins_and_the_games_nobody_tuned_on_are_quoted_from_their_results_files():
    """How close healthy play comes to every rule, and the generated games, as benchmarks.margins and
    benchmarks.generated wrote them."""
    sources = {source for _, source, _ in _quoted_tables()}
    assert {"docs/results/margins/margins.md", "docs/results/generated/generated.md"} <= sources


def test_the_price_table_is_the_built_in_prices():
    """docs/llm.md lists the built-in prices; they live in agents.llm_settings.DEFAULT_PRICES."""
    from agents.llm_settings import DEFAULT_PRICES

    page = (ROOT / "docs" / "llm.md").read_text().splitlines()
    for model, price in DEFAULT_PRICES.items():
        cached = price.cached_input if price.cached_input is not None else price.input
        assert f"| `{model}` | {price.input:.3f} | {cached:.3f} | {price.output:.3f} |" in page, model
    listed = [line for line in page if re.match(r"\| `[\w.-]+` \| \d", line)]
    assert len(listed) == len(DEFAULT_PRICES), "a model in docs/llm.md's price table has no built-in price"


def test_the_family_table_is_the_built_in_families():
    """docs/llm.md shows how each model family is called; they live in agents.llm_settings.DEFAULT_FAMILIES."""
    from agents.llm_settings import family_table

    assert family_table() in (ROOT / "docs" / "llm.md").read_text()


DEFAULT_MENTION = re.compile(r"`(\w+(?:[._]\w+)+)`\s+\((-?\d+(?:\.\d+)?)\)")
"""A key with its default in prose: "`max_turns` (64)", or with its section: "`no_progress.max_turns` (64)"."""


def _numeric_defaults() -> dict[str, set[float]]:
    """Every numeric default of every section, by key and by its path below the top-level section (`churn.changes`
    of `[tool.zorkgpt.loop_break.churn]`)."""
    defaults: dict[str, set[float]] = {}
    for path, model in SECTIONS.items():
        below = path.partition(".")[2]
        for key, field in model.model_fields.items():
            if isinstance(field.default, int | float) and not isinstance(field.default, bool):
                for name in {key, f"{below}.{key}" if below else key}:
                    defaults.setdefault(name, set()).add(float(field.default))
    return defaults


def test_a_default_quoted_in_prose_is_the_default():
    """The pages name a key's default beside it; that figure is the model's default, not a copy that drifts. A
    mention whose key no section has (a renamed key) fails too, so the prose follows a rename."""
    defaults = _numeric_defaults()
    mentions = [
        (page.name, key, value)
        for page in PAGES
        if page != CONFIGURATION
        for key, value in DEFAULT_MENTION.findall(page.read_text())
    ]
    assert mentions, "no `key` (default) mention found: the pattern matches none of the pages"
    wrong = [(name, key, value) for name, key, value in mentions if float(value) not in defaults.get(key, ())]
    assert not wrong, f"defaults quoted wrong, or keys no section has: {wrong}"


DIARY = re.compile(
    r"\bissues? \d+|\b20\d\d-\d\d-\d\d\b|\b(?:this )?(?:morning|afternoon|evening)\b|\bseeds? 00\d|\bseed's\b",
    re.IGNORECASE,
)
"""What makes a page a lab notebook: issue numbers, dates, times of day, and "seed" for a design document."""


@pytest.mark.parametrize("page", [p for p in PAGES if p != CONFIGURATION], ids=lambda p: p.name)
def test_a_page_is_reference_not_a_diary(page):
    found = [m.group(0) for m in DIARY.finditer(page.read_text())]
    assert not found, f"{page.name}: {found[:5]}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_into_docs_results_exist(page):
    """A page points at results files that are there."""
    text = page.read_text()
    targets = re.findall(r"\]\((?:docs/)?(results/[^)#\s]+)\)", text)
    base = ROOT / "docs"
    missing = [t for t in targets if not (base / t).exists()]
    assert not missing, f"{page.name}: {missing}"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_between_pages_reach_a_heading(page):
    broken = []
    for target, anchor in re.findall(r"\]\(([\w./-]*\.md|)#([\w-]+)\)", page.read_text()):
        linked = page if not target else (page.parent / target)
        if not linked.exists() or anchor not in _anchors(linked):
            broken.append(f"{target}#{anchor}")
    assert not broken, f"{page.name}: {broken}"


# -- the designs: every one cited is a section of docs/design.md, and the citation links it -----------------------
DESIGN = ROOT / "docs" / "design.md"
DESIGNS = ("000", "001", "002", "003", "004")
DESIGN_MENTION = re.compile(r"\bdesigns?(?:\s+documents?)?(?:'s|')?\s+(\d{3})\b", re.IGNORECASE)
"""A design cited by its number: "design 004", "design document 001's", "Designs 000"."""
DESIGN_LINK = re.compile(r"\[([^\]]*)\]\((?:docs/)?design\.md#([\w-]+)\)")
"""A link into docs/design.md: its text and the anchor it points at."""


def _design_sections() -> dict[str, str]:
    """Design number -> the anchor of its section in docs/design.md (a `## 000: ...` heading)."""
    headings = re.findall(r"^## ((\d{3})\b.*)$", DESIGN.read_text(), re.MULTILINE)
    return {number: re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading, number in headings}


def test_design_md_has_a_section_for_each_design():
    assert sorted(_design_sections()) == list(DESIGNS)


@pytest.mark.parametrize("page", [p for p in PAGES if p != DESIGN], ids=lambda p: p.name)
def test_every_design_cited_links_its_section_of_design_md(page):
    """A page that cites a design by number links the design's section in docs/design.md (the design documents are
    not in the repository, so a page never points at them). configuration.md's tables are the models' docstrings,
    which cite designs in plain words: the page links each design they cite above them."""
    text = page.read_text()
    assert "shared/seeds" not in text, f"{page.name} points at the design documents outside the repository"
    sections = _design_sections()
    wrong = [
        f"[{words}](design.md#{anchor})"
        for words, anchor in DESIGN_LINK.findall(text)
        if anchor not in sections.values() or any(sections.get(n) != anchor for n in re.findall(r"\d{3}", words))
    ]
    assert not wrong, f"{page.name}: links to the wrong section of design.md: {wrong}"
    unlinked_text = DESIGN_LINK.sub("", text)
    if page == CONFIGURATION:
        rows = [line for line in unlinked_text.splitlines() if line.startswith("| `")]
        unlinked_text = "\n".join(line for line in unlinked_text.splitlines() if not line.startswith("| `"))
        linked = {n for words, _ in DESIGN_LINK.findall(text) for n in re.findall(r"\d{3}", words)}
        cited = {m.group(1) for row in rows for m in DESIGN_MENTION.finditer(row)}
        assert cited <= linked, f"configuration.md: its tables cite designs {sorted(cited - linked)} it never links"
    unlinked = [m.group(0) for m in DESIGN_MENTION.finditer(unlinked_text)]
    assert not unlinked, f"{page.name}: designs cited without a link to their section of design.md: {unlinked}"
