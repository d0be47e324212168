"""What a real model is shown (issue 11), rendered from real game states: the contexts a scripted agent received
through the real orchestrator, turned into prompts by agents.prompts."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from agents.prompts import (
    CRITIC_ROLE, HARNESS_NOTE, OBJECTIVES_SHOWN, agent_system_prompt, critic_system_prompt, render_agent_prompt, render_critic_prompt,
    role_of,
)  # fmt: skip
from agents.replay_agent import ReplayAgent
from session.jericho_session import JerichoSession
from tests.conftest import make_config, run_episode, story_file
from tests.factories import SEED_LOOP_BREAK


class ContextCapture(ReplayAgent):
    """Replays commands and keeps the context of every turn."""

    def __init__(self, commands):
        super().__init__(commands)
        self.contexts = {}

    def propose(self, context):
        self.contexts[context.turn] = context
        return super().propose(context)


def contexts_of(rom, tmp_path, commands, **sections):
    agent = ContextCapture(commands)
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(commands)}, **sections)
    run_episode(rom, config, agent)
    return agent.contexts


@pytest.fixture(scope="module")
def walkthrough_contexts(rom_path, tmp_path_factory, walkthrough):
    return contexts_of(rom_path, tmp_path_factory.mktemp("walk"), walkthrough[:80])


def seen(prompt: str) -> list[str]:
    return next(line for line in prompt.splitlines() if line.startswith("You can see:"))[13:].rstrip(".").split(", ")


# -- only what a player knows -------------------------------------------------------------------------------------
def test_the_leaflet_is_hidden_until_the_mailbox_is_opened(rom_path, tmp_path):
    contexts = contexts_of(rom_path, tmp_path, ["open mailbox", "look"])
    first, second = render_agent_prompt(contexts[1]), render_agent_prompt(contexts[2])
    assert "leaflet" in {o.noun for o in contexts[1].view.room_objects}  # it is in the object tree
    assert "leaflet" not in first  # but no player has been told of it
    assert seen(first) == ["door", "small mailbox"]
    assert "leaflet" in seen(second)


def test_room_titles_are_the_printed_ones(tmp_path):
    """lostpig names rooms `(maze)`, `(gnomeRoom)` internally; the prompt says what the game prints."""
    rom = story_file("lostpig.z8")
    steps = JerichoSession(rom).walkthrough()
    contexts = contexts_of(rom, tmp_path, steps)
    titles = {re.search(r"WHERE YOU ARE: (.*)", render_agent_prompt(c)).group(1) for c in contexts.values()}
    assert "Twisty Cave" in titles and "Closet" in titles
    assert not [t for t in titles if t.startswith("(") or "_" in t or re.search(r"[a-z][A-Z]", t)]


def test_zork1_rooms_are_named_as_printed(rom_path, tmp_path, walkthrough):
    """Issue 11 saw "West House", "LDead", "Atlant" and an empty Cyclops room name: the story file's internal names."""
    contexts = contexts_of(rom_path, tmp_path, walkthrough)
    titles = {re.search(r"WHERE YOU ARE: (.*)", render_agent_prompt(c)).group(1) for c in contexts.values()}
    assert {"West of House", "Cyclops Room", "Land of the Dead", "Atlantis Room", "Maintenance Room"} <= titles
    assert not titles & {"West House", "LDead", "Atlant", "Maintenance", ""}


def test_exits_are_the_ones_the_text_names(walkthrough_contexts):
    kitchen = next(c for c in walkthrough_contexts.values() if c.view.room_name == "Kitchen")
    prompt = render_agent_prompt(kitchen)
    assert "Named in the description, not tried yet: east, west, down." in prompt
    for context in walkthrough_contexts.values():
        assert set(context.named_exits) <= set(context.untried_exits)
        assert len(context.named_exits) < 12  # never "every direction never tried"


def test_the_way_to_the_nearest_unexplored_exit(walkthrough_contexts):
    with_path = [c for c in walkthrough_contexts.values() if c.path_to_frontier and not c.named_exits]
    assert with_path
    for context in with_path:
        line = next(x for x in render_agent_prompt(context).splitlines() if x.startswith("Nearest untried exit"))
        assert context.frontier_room in line and ", ".join(context.path_to_frontier) in line


# -- no repetition, no contradiction ----------------------------------------------------------------------------------
def test_no_block_is_shown_twice(walkthrough_contexts):
    """The description, each response, each objective: once. (A line the game itself prints again, as a brief
    revisit does, may appear in two blocks.)"""
    for turn, context in walkthrough_contexts.items():
        prompt = render_agent_prompt(context)
        blocks = [context.room_text.strip()] + [response.strip() for _, response in context.recent]
        for block in {b for b in blocks if len(b) > 30}:
            assert prompt.count(block) <= 1, (turn, block)
        assert prompt.count(context.room_text.strip()) == 1
        for objective in context.objectives[:OBJECTIVES_SHOWN]:
            assert prompt.count(f"- {objective}\n") == 1
        assert prompt.count("LAST COMMAND AND RESPONSE") == (1 if context.recent else 0)
        assert "Current game text" not in prompt


def test_history_is_cut_at_a_word(walkthrough_contexts):
    for context in walkthrough_contexts.values():
        for line in render_agent_prompt(context).splitlines():
            if line.endswith(" …"):
                assert line[-3].isalnum() or line[-3] in ".,;:!?'\")"


def test_bans_and_suggestions_agree(rom_path, tmp_path):
    """`e` run again and again at West of House (the door is boarded) is banned as `east`; no suggestion on the same
    turn offers it back, in any spelling."""
    contexts = contexts_of(rom_path, tmp_path, ["e"] * 12, loop_break=SEED_LOOP_BREAK)
    banned = [c for c in contexts.values() if c.banned]
    assert banned and banned[0].banned == ("east",)
    for context in banned:
        prompt = render_agent_prompt(context)
        offered = re.findall(r"(?:Permitted alternatives|Other things to try|not tried recently|exits here): (.*)", prompt)
        for line in offered:
            assert not {"e", "east", "go east"} & {item.strip(" .") for item in line.split(",")}, line


def test_harness_lines_are_marked_and_never_read_as_game_text(rom_path, tmp_path):
    contexts = contexts_of(rom_path, tmp_path, ["look"] * 40, loop_break=SEED_LOOP_BREAK)
    warned = [c for c in contexts.values() if "NO PROGRESS" in c.loop_status]
    assert warned
    prompt = render_agent_prompt(warned[-1])
    notes = prompt.split(f"HARNESS NOTES {HARNESS_NOTE}:", 1)
    assert len(notes) == 2 and "NO PROGRESS" in notes[1] and "NO PROGRESS" not in notes[0]
    assert "DIE" not in prompt
    assert HARNESS_NOTE in agent_system_prompt("zork1") and HARNESS_NOTE in critic_system_prompt("zork1")


def test_repeated_rejections_are_listed_once_with_a_count(walkthrough_contexts):
    context = walkthrough_contexts[1]
    for _ in range(2):
        context = context.with_feedback("take door", "it is part of the house")
    prompt = render_agent_prompt(context)
    assert prompt.count("take door: it is part of the house") == 1 and "(2x)" in prompt


# -- the critic and the system prompts -----------------------------------------------------------------------------
def test_the_game_is_named_from_the_story_file(tmp_path):
    rom = story_file("advent.z5")
    game = JerichoSession(rom).game_name
    assert game == "advent"
    for system in (agent_system_prompt(game), critic_system_prompt(game)):
        assert "advent" in system and "Zork" not in system
    assert role_of([{"content": agent_system_prompt(game)}]) == "agent"
    assert role_of([{"content": critic_system_prompt(game)}]) == "critic"
    assert role_of([{"content": "You are a helpful assistant."}]) == "unknown"


def test_the_critic_has_a_rubric_and_sees_this_turns_rejections(walkthrough_contexts):
    system = critic_system_prompt("zork1")
    assert system.startswith(CRITIC_ROLE.format(game="zork1"))
    for criterion in ("Progress", "Information", "Repetition", "Feasibility", "Risk"):
        assert f"- {criterion}" in system
    context = walkthrough_contexts[5].with_feedback("climb tree", "already up the tree")
    prompt = render_critic_prompt(context, "go down")
    assert "REJECTED EARLIER THIS TURN:\n- climb tree: already up the tree" in prompt
    assert prompt.endswith("Proposed command: go down\n\nYour JSON verdict:")
    assert "Also review the objectives" not in prompt
    reviewing = render_critic_prompt(replace(context, review_objectives=True), "go down")
    assert '"completed"' in reviewing and '"new_objectives"' in reviewing


def test_prompts_are_compact(walkthrough_contexts):
    """ZorkGPT's prompts ran to 71.5K characters a turn; ours stay within a few thousand."""
    sizes = [len(agent_system_prompt("zork1")) + len(render_agent_prompt(c)) for c in walkthrough_contexts.values()]
    assert max(sizes) < 8_000 and sum(sizes) / len(sizes) < 4_500
