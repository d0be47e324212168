"""Markdown tables for results files (the benchmarks', a batch's, a run's): one writer, so that every table reads
alike and a figure's cell is written the same way in each.

A table is a header of column names, the `|---|` rule under it, one line per row and, last, any totals rows:

    | game | max | ep 1 |
    |---|---|---|
    | zork1 | 350 | 35 |
    | **mean** | | **35.0** |

A row's cell is written as `str()` gives it, a space either side (an empty value reads `|  |`). The header and the
totals rows are labels: an empty cell there is a bare `| |` (a header's blank corner, a total with nothing to sum).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_table(
    columns: Sequence[str], rows: Iterable[Sequence[object]], totals: Iterable[Sequence[object]] = ()
) -> list[str]:
    """The lines of the table (no trailing newline): `columns` over `rows`, then `totals` (see the module)."""
    lines = [_label_line(columns), "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    lines += [_label_line(row) for row in totals]
    return lines


def percent(share: float | None) -> str:
    """A share as a results table writes it: `12.3 %`, or `-` when there is none (never 0: nothing was measured)."""
    return "-" if share is None else f"{100 * share:.1f} %"


def _label_line(cells: Sequence[object]) -> str:
    return "|" + "".join(f" {cell} |" if cell != "" else " |" for cell in cells)
