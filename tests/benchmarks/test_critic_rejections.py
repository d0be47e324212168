"""On every optimal Jericho walkthrough of the shared corpus, the offline critic, the object pre-check and the loop
break together would reject under 2 % of the commands (`benchmarks/studies/critic_rejections.py` prints the same, per
game and by reason)."""

from __future__ import annotations

import pytest

from benchmarks.studies.critic_rejections import TARGET_SHARE, measure
from tests.helpers import PYPROJECT, story_file

pytestmark = pytest.mark.slow  # every corpus game's optimal walkthrough


def test_optimal_play_is_rarely_rejected():
    corpus = story_file("zork1.z5").parent
    result = measure(corpus, str(PYPROJECT))
    assert len(result["games"]) >= 28
    assert result["share"] < TARGET_SHARE, result["reasons"][:5]
    assert not [row for row in result["games"] if row["would_reject"] > 0.06 * row["turns"]]
