"""The project reads as reference, not as a diary: no issue numbers and no dates in its code, tests, configuration,
test data or pages (docs/results/ keeps the commits and figures of its runs, and is not read here), every design
cited by number is a section of docs/design.md, and a module that cites a design by number says where the designs
are described. A line that fails names its file and line."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import DATA, ROOT

DESIGN_PAGE = ROOT / "docs" / "design.md"


def _scanned() -> list[Path]:
    """Every Python file of the project (none in a hidden folder such as .venv), the README, the docs pages but not
    docs/results/, pyproject.toml and the tests' data files."""
    python = [p for p in ROOT.rglob("*.py") if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    return sorted([*python, *pages, ROOT / "pyproject.toml", *(p for p in DATA.rglob("*") if p.is_file())])


FILES = _scanned()

URL = re.compile(r"https?://\S+")
"""A web address: its path and fragment may hold numbers and `#` of their own."""
ISSUE_WORD = re.compile(r"\b[Ii]ssues?\s+#?\d+")
"""An issue named by its number, with or without `#`."""
HASH_NUMBER = re.compile(r"(?<![\w&/#])#(\d+)(?![\w-])")
"""`#` and a number standing alone: not a markdown anchor (`#000-the-loop-break` goes on with a hyphen), an HTML
entity (`&#`), a reference of another project's tracker (`owner/repo#N`) or a heading (`##`)."""
DATE = re.compile(r"(?<![\w-])20\d\d-[01]\d-[0-3]\d(?!\d)")
"""A calendar date, alone or opening a timestamp; not the date suffix of a model's name (`...-2024-08-06`)."""
DESIGN_CITED = re.compile(
    r"\bdesigns?(?:\s+documents?)?(?:'s|')?\s+(\d{3}(?:(?:\s*[,/]\s*|\s+(?:and|or|to)\s+)\d{3})*)", re.IGNORECASE
)
"""A design cited by its number, alone or in a list (`design 004`, `designs 000 and 001`, `design 000/001`)."""
SEED_CITED = re.compile(r"\bseeds?(?:'s|')?\s+00\d\b", re.IGNORECASE)
"""A design cited under the name of the documents it grew from, a seed and its number (`00` and a digit: a random
seed of a run is no design)."""
SECTION_MARK = "\N{SECTION SIGN}"
"""The mark of a numbered section: the design documents' own sections are not in the repository."""


def _lines(path: Path):
    """(line number, text) for every line of `path`, web addresses left out."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        yield number, URL.sub("", line)


def _where(path: Path, number: int, found: str) -> str:
    return f"{path.relative_to(ROOT)}:{number}: {found}"


def _is_colour(line: str, match: re.Match) -> bool:
    """`#` and 6 or 8 digits is a colour, and so is `#` and 3 or 4 digits in quotes (`"#123"`)."""
    digits = match.group(1)
    if len(digits) in (6, 8):
        return True
    before, after = line[match.start() - 1 : match.start()], line[match.end() : match.end() + 1]
    return len(digits) in (3, 4) and before in ("'", '"') and after == before


def test_the_scan_reads_code_tests_data_and_pages():
    names = {path.relative_to(ROOT).as_posix() for path in FILES}
    assert {"main.py", "README.md", "docs/design.md", "pyproject.toml", "tests/conftest.py"} <= names
    assert any(name.startswith("tests/data/") for name in names)
    assert not any(name.startswith(("docs/results/", ".venv/")) for name in names)


def test_no_issue_numbers():
    found = [
        _where(path, number, match.group(0))
        for path in FILES
        for number, line in _lines(path)
        for match in [*ISSUE_WORD.finditer(line), *(m for m in HASH_NUMBER.finditer(line) if not _is_colour(line, m))]
    ]
    assert not found, "issue numbers:\n" + "\n".join(found)


def test_no_dates():
    found = [
        _where(path, number, m.group(0)) for path in FILES for number, line in _lines(path) for m in DATE.finditer(line)
    ]
    assert not found, "dates:\n" + "\n".join(found)


def test_no_section_marks_of_the_design_documents():
    found = [
        _where(path, number, line.strip()) for path in FILES for number, line in _lines(path) if SECTION_MARK in line
    ]
    assert not found, "section marks:\n" + "\n".join(found)


def _design_sections() -> set[str]:
    """The designs docs/design.md describes: its `## 000: ...` headings."""
    return set(re.findall(r"^## (\d{3})\b", DESIGN_PAGE.read_text(encoding="utf-8"), re.MULTILINE))


def _citations(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, the citation, its design numbers) for every design cited by number in `path`."""
    return [
        (number, match.group(0), re.findall(r"\d{3}", match.group(1)))
        for number, line in _lines(path)
        for match in DESIGN_CITED.finditer(line)
    ]


def test_every_design_cited_is_a_section_of_design_md():
    sections = _design_sections()
    assert sections, f"no `## 000: ...` heading in {DESIGN_PAGE.relative_to(ROOT)}"
    found = [
        _where(path, number, cited)
        for path in FILES
        for number, cited, designs in _citations(path)
        if not set(designs) <= sections
    ]
    assert not found, f"designs docs/design.md has no section for ({sorted(sections)} have one):\n" + "\n".join(found)


def test_a_design_is_cited_by_its_name_not_as_a_seed():
    found = [
        _where(path, number, m.group(0))
        for path in FILES
        for number, line in _lines(path)
        for m in SEED_CITED.finditer(line)
    ]
    assert not found, "designs cited as seeds:\n" + "\n".join(found)


def test_a_module_citing_a_design_says_where_the_designs_are_described():
    found = [
        str(path.relative_to(ROOT))
        for path in FILES
        if path.suffix == ".py" and _citations(path) and "docs/design.md" not in path.read_text(encoding="utf-8")
    ]
    assert not found, "modules citing a design by number without naming docs/design.md:\n" + "\n".join(found)
