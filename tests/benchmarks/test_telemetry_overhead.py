"""benchmarks.telemetry_overhead on a short run: every receiver played, the figures and records the same under each,
the results written with the command and commit."""

from __future__ import annotations

import json

import pytest

from benchmarks import telemetry_overhead
from session import telemetry
from session.telemetry_settings import TelemetryConfig


@pytest.mark.slow  # nine short episodes, and the spans of two receivers that never take them
def test_the_benchmark_plays_every_receiver_and_writes_its_figures(rom_path, tmp_path, no_proxy):
    out = tmp_path / "telemetry_overhead.json"
    try:
        assert (
            telemetry_overhead.main(["--rom", str(rom_path), "--turns", "5", "--rounds", "3", "--out", str(out)]) == 0
        )
    finally:
        telemetry.configure(TelemetryConfig(enabled=False))
    result = json.loads(out.read_text())
    assert list(result["modes"]) == ["none", "unreachable", "hanging"]
    assert result["same_figures_and_records"] is True
    for mode in result["modes"].values():
        assert len(mode["wall_seconds"]) == 3 and mode["same_figures_and_records"]
    assert result["modes"]["none"]["spans"] is None
    for mode in ("unreachable", "hanging"):
        assert result["modes"][mode]["spans"]["sent"] == 0
    assert result["llm_calls_per_episode"] == 10
    table = out.with_suffix(".md").read_text()
    assert "Command: `uv run python -m benchmarks.telemetry_overhead --rom" in table and "Commit: " in table
    assert "| receiver | episodes | median wall s | vs none |" in table
