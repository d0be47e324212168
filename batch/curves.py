"""What the money bought, per game of a batch: `curves.svg` beside results.md, points and walkthrough progress against
the dollars and against the LLM calls each episode spent.

One row of panels per game: points (best score / max score) against $, progress (the share of the walkthrough's
checkpoints reached, session.checkpoints) against $, then both against LLM calls. Each finished episode is a dot in
its cell's colour; each cell gets a line from nothing spent (every episode starts at 0) to its mean episode, so the
steeper of two cells bought more per dollar or per call. A game whose episodes made no LLM call (an offline agent
and critic) spent nothing: its panels are drawn against turns instead, and say so; one whose calls have no price is
drawn against calls only. A game without a walkthrough has no progress, and one without a maximum score no points
share: their panels say so rather than draw zeros.

The picture is SVG text written here (no plotting library, nothing fetched): it opens in a browser, and GitHub shows
it inside results.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from xml.sax.saxutils import escape, quoteattr

from batch.jobs import finished_rows, points_share

CURVES_FILE = "curves.svg"
CELL_COLORS = ("#2c7be5", "#e67e22", "#27ae60", "#8e44ad", "#c0392b", "#16a085", "#d4ac0d", "#7f8c8d", "#e84393")
"""One colour per cell, in the order the cells first appear in the rows (more cells than colours: they repeat)."""

PANEL_WIDTH = 300
PANEL_HEIGHT = 220
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 46, 14, 28, 40
"""Inside a panel: room for the y ticks and label (left), the title (top) and the x ticks and label (bottom)."""
HEADER_HEIGHT = 64
"""The picture's title and the legend of the cells."""


@dataclass(frozen=True)
class Axis:
    """What an episode spent, on the x axis."""

    name: str
    field: str
    """The manifest row's field (batch.jobs.run_job)."""
    label: str
    ticks: Callable[[float, float], str]
    """A value's text, given the largest on the axis (it sets the decimals)."""


@dataclass(frozen=True)
class Measure:
    """What an episode got, on the y axis (a share, 0..1)."""

    name: str
    label: str
    value: Callable[[dict], float | None]
    """The row's share, or None when the game gives none (no maximum score, no walkthrough)."""
    missing: str
    """What the panel says when no episode of the game has the share."""


def _dollars(value: float, top: float) -> str:
    if value == 0:
        return "$0"
    return f"${value:.{2 if top >= 1 else 3 if top >= 0.1 else 4}f}"


def _count(value: float, top: float) -> str:
    return f"{value:.0f}" if top >= 10 or value == int(value) else f"{value:.1f}"


def progress_share(row: dict) -> float | None:
    return row.get("progress")  # None without a walkthrough; a manifest row from before progress has none either


AXES = {
    "usd": Axis("usd", "cost_usd", "dollars spent per episode", _dollars),
    "calls": Axis("calls", "llm_calls", "LLM calls per episode", _count),
    "turns": Axis("turns", "turns", "turns per episode (no LLM calls)", _count),
}
MEASURES = (
    Measure("points", "points (best score / max)", points_share, "the game gives no maximum score"),
    Measure("progress", "walkthrough progress", progress_share, "no walkthrough checkpoints"),
)


def axes_for(rows: list[dict]) -> tuple[list[str], str | None]:
    """The x axes a game's episodes are drawn against, and a note when it is not both $ and calls."""
    if not any(row.get("llm_calls") for row in rows):
        return ["turns"], "no LLM calls (an offline agent and critic): nothing spent, drawn against turns"
    if not any(row.get("cost_usd") for row in rows):
        return ["calls"], "no cost recorded (no price for the models): drawn against LLM calls only"
    return ["usd", "calls"], None


def write_curves(rows: list[dict], out_dir: Path) -> Path:
    """`out_dir/curves.svg` of a batch's manifest rows (batch.jobs.run_job's: crashed and unstarted jobs are left
    out); its path."""
    path = Path(out_dir) / CURVES_FILE
    path.write_text(curves_svg(rows), encoding="utf-8")
    return path


def curves_svg(rows: list[dict]) -> str:
    """The picture's SVG text: one row of panels per game, the cells in colour."""
    finished = finished_rows(rows)
    cells = list(dict.fromkeys(row["cell"] for row in finished))
    colors = {cell: CELL_COLORS[index % len(CELL_COLORS)] for index, cell in enumerate(cells)}
    games = sorted({row["game"] for row in finished})
    columns = 2 * len(MEASURES)
    width = columns * PANEL_WIDTH
    height = HEADER_HEIGHT + max(1, len(games)) * (PANEL_HEIGHT + 24)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'font-family="system-ui, sans-serif">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        '<text x="8" y="20" font-size="15" font-weight="bold">Points and walkthrough progress against $ and against '
        "LLM calls, per game</text>",
        _legend(colors),
    ]
    if not games:
        parts.append(f'<text x="8" y="{HEADER_HEIGHT + 20}" font-size="13">no finished episode</text>')
    for index, game in enumerate(games):
        parts.append(
            _game_row(
                game, [r for r in finished if r["game"] == game], colors, HEADER_HEIGHT + index * (PANEL_HEIGHT + 24)
            )
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _legend(colors: dict[str, str]) -> str:
    items, x = [], 8
    for cell, color in colors.items():
        items.append(
            f'<g class="legend-cell" data-cell={quoteattr(cell)}><circle cx="{x + 5}" cy="38" r="5" fill="{color}"/>'
            f'<text x="{x + 14}" y="42" font-size="12">{escape(cell)}</text></g>'
        )
        x += 24 + 7 * len(cell)
    items.append(
        '<text x="8" y="58" font-size="11" fill="#555">dots: episodes; lines: from nothing spent to the cell\'s mean '
        "episode (the larger dot)</text>"
    )
    return "\n".join(items)


def _game_row(game: str, rows: list[dict], colors: dict[str, str], top: float) -> str:
    axes, note = axes_for(rows)
    parts = [
        f'<g class="game" data-game={quoteattr(game)}>',
        f'<text x="8" y="{top + 16}" font-size="13" font-weight="bold">{escape(game)}</text>',
    ]
    if note:
        parts.append(
            f'<text class="note" x="{8 + 9 * len(game) + 12}" y="{top + 16}" font-size="11" fill="#8a6d00">'
            f"{escape(note)}</text>"
        )
    column = 0
    for axis_name in axes:
        for measure in MEASURES:
            panel = _Panel(AXES[axis_name], measure, column * PANEL_WIDTH, top + 22)
            parts.append(panel.draw(rows, colors))
            column += 1
    parts.append("</g>")
    return "\n".join(parts)


class _Panel:
    """One measure against one axis for one game's episodes, at (`left`, `top`) of the picture."""

    def __init__(self, axis: Axis, measure: Measure, left: float, top: float):
        self.axis, self.measure, self.left, self.top = axis, measure, left, top
        self.plot_left = left + MARGIN_LEFT
        self.plot_right = left + PANEL_WIDTH - MARGIN_RIGHT
        self.plot_top = top + MARGIN_TOP
        self.plot_bottom = top + PANEL_HEIGHT - MARGIN_BOTTOM
        self.x_max = 1.0

    def x(self, value: float) -> float:
        return self.plot_left + (self.plot_right - self.plot_left) * value / self.x_max

    def y(self, share: float) -> float:
        return self.plot_bottom - (self.plot_bottom - self.plot_top) * min(max(share, 0.0), 1.0)

    def draw(self, rows: list[dict], colors: dict[str, str]) -> str:
        field, value = self.axis.field, self.measure.value
        shown = [row for row in rows if value(row) is not None]
        self.x_max = max([float(row.get(field) or 0) for row in rows] + [0.0]) * 1.05 or 1.0
        parts = [
            f'<g class="panel" data-axis="{self.axis.name}" data-measure="{self.measure.name}">',
            f'<text x="{self.left + PANEL_WIDTH / 2}" y="{self.top + 14}" font-size="12" text-anchor="middle">'
            f"{escape(self.measure.label)}</text>",
            self._frame(),
        ]
        if not shown:
            parts.append(
                f'<text class="missing" x="{(self.plot_left + self.plot_right) / 2}" '
                f'y="{(self.plot_top + self.plot_bottom) / 2}" font-size="11" text-anchor="middle" fill="#777">'
                f"{escape(self.measure.missing)}</text>"
            )
        for cell, color in colors.items():
            mine = [row for row in shown if row["cell"] == cell]
            if mine:
                parts.append(self._cell(cell, color, mine))
        parts.append("</g>")
        return "\n".join(parts)

    def _frame(self) -> str:
        left, right, top, bottom = self.plot_left, self.plot_right, self.plot_top, self.plot_bottom
        parts = [
            f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#999"/>',
            f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#999"/>',
        ]
        for share in (0.0, 0.5, 1.0):
            parts.append(f'<line x1="{left}" x2="{right}" y1="{self.y(share)}" y2="{self.y(share)}" stroke="#eee"/>')
            parts.append(
                f'<text x="{left - 4}" y="{self.y(share) + 4}" font-size="10" text-anchor="end">'
                f"{share * 100:.0f} %</text>"
            )
        top_value = self.x_max / 1.05
        for value, anchor in ((0.0, "start"), (top_value / 2, "middle"), (top_value, "end")):
            parts.append(
                f'<text x="{self.x(value):.1f}" y="{bottom + 13}" font-size="10" text-anchor="{anchor}">'
                f"{escape(self.axis.ticks(value, top_value))}</text>"
            )
        parts.append(
            f'<text class="x-label" x="{(left + right) / 2}" y="{bottom + 30}" font-size="11" text-anchor="middle">'
            f"{escape(self.axis.label)}</text>"
        )
        middle = (top + bottom) / 2
        parts.append(
            f'<text class="y-label" x="{self.left + 12}" y="{middle}" font-size="11" text-anchor="middle" '
            f'transform="rotate(-90 {self.left + 12} {middle})">share</text>'
        )
        return "\n".join(parts)

    def _cell(self, cell: str, color: str, rows: list[dict]) -> str:
        field, value = self.axis.field, self.measure.value
        mean_x = mean(float(row.get(field) or 0) for row in rows)
        mean_y = mean(value(row) for row in rows)
        parts = [
            f'<g class="cell" data-cell={quoteattr(cell)}>',
            f'<line class="mean-line" x1="{self.x(0):.1f}" y1="{self.y(0):.1f}" x2="{self.x(mean_x):.1f}" '
            f'y2="{self.y(mean_y):.1f}" stroke="{color}" stroke-width="1.5"/>',
        ]
        for row in rows:
            spent, share = float(row.get(field) or 0), value(row)
            title = f"{row.get('id', cell)}: {self.axis.ticks(spent, spent)}, {share * 100:.1f} %"
            parts.append(
                f'<circle class="episode" data-id={quoteattr(str(row.get("id", "")))} cx="{self.x(spent):.1f}" '
                f'cy="{self.y(share):.1f}" r="3.5" fill="{color}" fill-opacity="0.6">'
                f"<title>{escape(title)}</title></circle>"
            )
        title = f"{cell}, mean of {len(rows)} episodes: {self.axis.ticks(mean_x, mean_x)}, {mean_y * 100:.1f} %"
        parts.append(
            f'<circle class="mean" cx="{self.x(mean_x):.1f}" cy="{self.y(mean_y):.1f}" r="6" fill="{color}" '
            f'stroke="#fff" stroke-width="1.5"><title>{escape(title)}</title></circle>'
        )
        parts.append("</g>")
        return "\n".join(parts)
