"""Trajectories built once per story file and kept: building noisy walkthroughs is slow (each detour is checked
against the rest of the walkthrough), so each trajectory is stored as JSON under a cache folder, named by the story
file's contents and its builder's version, and read back on the next run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path

from playthroughs import trajectories
from playthroughs.trajectories import STUCK_KINDS, Trajectory

GENERATOR_VERSIONS = {"optimal": 1, "noisy": 1, "stuck": 3}
"""Bump a builder's version when playthroughs/trajectories.py builds different commands for it: its cached
trajectories are then rebuilt."""


def build(story: Path, kinds: set[str], factors: list[int], seeds: list[int], cuts: list[float], cache: Path):
    """Every trajectory of `kinds` for one story file (None entries dropped), from the cache when built before."""
    key = hashlib.md5(story.read_bytes()).hexdigest()[:12]
    plan: list[tuple[str, tuple]] = []
    if "optimal" in kinds:
        plan.append(("optimal", ()))
    if "noisy" in kinds:
        plan += [("noisy", (factor, seed)) for factor in factors for seed in seeds]
    for kind in STUCK_KINDS:
        if kind in kinds or "stuck" in kinds:
            plan += [("stuck", (kind, cut)) for cut in cuts]
    built = []
    for builder, args in plan:
        path = (
            cache
            / f"{story.stem}-{key}-{builder}-v{GENERATOR_VERSIONS[builder]}-{'-'.join(map(str, args)) or 'x'}.json"
        )
        trajectory = cached(path, partial(getattr(trajectories, builder), story, *args))
        if trajectory is not None:
            built.append(trajectory)
    return built


def cached(path: Path, make: Callable[[], Trajectory | None]) -> Trajectory | None:
    """The trajectory stored at `path`, else `make()`'s, stored there (None too: a game without one)."""
    if path.is_file():
        data = json.loads(path.read_text())
        return Trajectory(**{**data, "loop_rooms": set(data["loop_rooms"])}) if data else None
    trajectory = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**asdict(trajectory), "loop_rooms": sorted(trajectory.loop_rooms)} if trajectory else None
    path.write_text(json.dumps(payload))
    return trajectory
