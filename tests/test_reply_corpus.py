"""Issue 30: the reply reader over the corpus of raw replies real models write (tests/data/replies.toml), and over
every step of every corpus walkthrough, wrapped as the prompt asks and bare."""

from __future__ import annotations

import json

import pytest

from agents.base import InvalidReply
from agents.reply import parse_reply
from benchmarks.reply_corpus import FAILURE, TARGET_EXPECTED, load_corpus, measure
from session.jericho_session import STORY_SUFFIXES, JerichoSession
from tests.conftest import story_file

SOURCES, REPLIES = load_corpus()


def test_the_corpus_is_large_and_every_shape_says_where_it_is_documented():
    assert len(REPLIES) >= 150
    assert {reply["shape"] for reply in REPLIES} == set(SOURCES)
    assert all(len(source) > 20 for source in SOURCES.values())
    assert sum(reply["expect"] == FAILURE for reply in REPLIES) >= 30  # honest failures are measured too


def test_no_reply_becomes_a_different_command_and_almost_all_read_as_expected():
    tally = measure(parse_reply, REPLIES)
    assert tally.different == []
    assert tally.share() >= TARGET_EXPECTED


@pytest.mark.parametrize("reply", [r for r in REPLIES if r["expect"] == FAILURE], ids=lambda r: r["shape"])
def test_an_expected_failure_is_an_invalid_reply_with_guidance(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_reply(reply["raw"])
    assert caught.value.kind and caught.value.detail


def corpus_walkthroughs() -> dict[str, list[str]]:
    folder = story_file("zork1.z5").parent
    stories = sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
    return {story.stem: steps for story in stories if (steps := JerichoSession(story).walkthrough())}


@pytest.mark.slow  # every corpus game's walkthrough
def test_every_walkthrough_step_reads_as_itself_wrapped_and_bare():
    """28 games (lgop has no walkthrough). A blank "press a key" step passes as the empty command in JSON."""
    walkthroughs = corpus_walkthroughs()
    assert len(walkthroughs) == 28
    wrong = []
    for game, steps in walkthroughs.items():
        for step in steps:
            expected = " ".join(step.lower().split())
            replies = [json.dumps({"thought": "…", "command": step})] + ([step] if step.strip() else [])
            for reply in replies:
                try:
                    read = parse_reply(reply)[1]
                except InvalidReply as exc:
                    read = f"InvalidReply {exc.kind}"
                if read != expected:
                    wrong.append((game, reply, read))
    assert wrong == []
