"""What a real model is shown, rendered from real game states: the contexts a scripted agent received through the real
orchestrator, turned into prompts by agents.prompts."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from agents.prompts import (
    CARRY,
    CRITIC_ROLE,
    DARK,
    DESCRIPTION,
    EXITS_MENTIONED,
    HARNESS_NOTE,
    LAST,
    MAP,
    NOW,
    OPENING,
    SEEN,
    WHERE,
    agent_system_prompt,
    critic_system_prompt,
    render_agent_prompt,
    render_critic_prompt,
    role_of,
)
from agents.replay_agent import ReplayAgent
from managers.game_reader import GameReader, kept_opening
from managers.map_graph import MapGraph
from session.commands import direction_of
from session.jericho_session import JerichoSession
from tests.factories import SEED_LOOP_BREAK
from tests.helpers import make_config, run_episode, story_file


class ContextCapture(ReplayAgent):
    """Replays commands and keeps the context of every turn; prompted, like an LLM: the context carries what the
    game itself says (`AgentContext.readings`)."""

    prompted = True

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


def labelled(prompt: str, label: str) -> str:
    """The rest of the line that starts with `label` ("" when there is none)."""
    return next((line[len(label) :].strip() for line in prompt.splitlines() if line.startswith(label)), "")


def seen(prompt: str) -> list[str]:
    return labelled(prompt, SEEN).rstrip(".").split(", ")


def block(prompt: str, heading: str) -> str:
    """The lines under a heading line, up to the next blank line or capitalised label."""
    lines = prompt.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading)) + 1
    taken = []
    for line in lines[start:]:
        if not line.strip() or re.match(r"^[A-Z]{2,}[A-Z ]*[(:]", line):
            break
        taken.append(line)
    return "\n".join(taken)


# -- only what a player knows, in the game's words ----------------------------------------------------------------
def test_the_leaflet_is_hidden_until_the_mailbox_is_opened(rom_path, tmp_path):
    contexts = contexts_of(rom_path, tmp_path, ["open mailbox", "look"])
    first, second = render_agent_prompt(contexts[1]), render_agent_prompt(contexts[2])
    assert "leaflet" in {o.noun for o in contexts[1].view.room_objects}  # it is in the object tree
    assert "leaflet" not in first  # but no player has been told of it
    assert seen(first) == ["door", "small mailbox"]
    assert "leaflet" in seen(second)


@pytest.mark.slow  # lostpig's whole walkthrough, prompt by prompt
def test_room_titles_are_the_printed_ones(tmp_path):
    """lostpig names rooms `(maze)`, `(gnomeRoom)` internally; the prompt says what the game prints."""
    rom = story_file("lostpig.z8")
    steps = JerichoSession(rom).walkthrough()
    contexts = contexts_of(rom, tmp_path, steps)
    titles = {labelled(render_agent_prompt(c), WHERE) for c in contexts.values()}
    assert "Twisty Cave" in titles and "Gnome Room" in titles
    assert not [t for t in titles if t.startswith("(") and t != DARK or "_" in t or re.search(r"[a-z][A-Z]", t)]


def test_zork1_rooms_are_named_as_printed_and_dark_is_dark(rom_path, tmp_path, walkthrough):
    """Rooms are named as the game prints them, never by the story file's internal names ("West House", "LDead",
    "Atlant"), and a dark room is dark, never "Cellar" under "It is pitch black"."""
    contexts = contexts_of(rom_path, tmp_path, walkthrough[:40])
    prompts = {turn: render_agent_prompt(c) for turn, c in contexts.items()}
    titles = {labelled(p, WHERE) for p in prompts.values()}
    assert {"West of House", "Living Room", "Cellar", "The Troll Room"} <= titles
    assert not titles & {"West House", "LDead", "Atlant", ""}
    dark = [t for t, c in contexts.items() if c.recent and "pitch black" in c.recent[-1][1]]
    assert dark and all(labelled(prompts[t], WHERE) == DARK for t in dark)
    assert all(
        "pitch black" not in block(prompts[t], DESCRIPTION) for t in prompts if labelled(prompts[t], WHERE) == "Cellar"
    )


@pytest.mark.slow  # 60 turns of lostpig, prompt by prompt
def test_what_is_carried_is_the_games_own_inventory_text(tmp_path):
    """lostpig's object table says `(whistle)` for what the game calls a tube, `Brick_1` for two bricks."""
    rom = story_file("lostpig.z8")
    steps = JerichoSession(rom).walkthrough()
    contexts = contexts_of(rom, tmp_path, steps[:60])
    for context in contexts.values():
        carried = block(render_agent_prompt(context), CARRY)
        assert carried and "(whistle)" not in carried and "Brick_1" not in carried
        assert carried.startswith("Grunk have") or "Grunk" in carried


def test_exits_are_the_ones_that_work_now_and_the_ones_the_text_mentions(walkthrough_contexts):
    kitchen = next(c for c in walkthrough_contexts.values() if c.readings.title == "Kitchen")
    prompt = render_agent_prompt(kitchen)
    assert (
        labelled(prompt, EXITS_MENTIONED) == "east, west, up, down."
    )  # it came in by the window: west of Behind House
    for context in walkthrough_contexts.values():
        assert set(context.readings.mentioned_exits) <= set(context.untried_exits)
        worked = {direction_of(d) for d, _ in context.readings.exits}
        back = {direction_of(d) for d, title in context.readings.exits if direction_of(d) not in context.known_exits}
        assert worked - back <= set(context.known_exits) and len(back) <= 1  # the way back, tried on a copy


def test_a_trap_door_barred_behind_the_player_is_no_exit(walkthrough_contexts):
    """zork1: the trap door crashes shut once the player is down. Back in the Living Room, the map still knows
    `down` to the Cellar, but the prompt lists it only while it leads there."""
    back = [c for c in walkthrough_contexts.values() if c.readings.title == "Living Room" and "down" in c.known_exits]
    assert back and any("down" not in dict(c.readings.exits) for c in back)


def test_the_description_is_the_room_as_look_prints_it_now(walkthrough_contexts):
    """Where `look` prints a title, the description is its answer now (on a copy): zork1's Living Room late in the
    walkthrough shows neither the sword nor the lantern, taken long before. Elsewhere it is the last one printed
    here, with its age."""
    for turn, context in walkthrough_contexts.items():
        read = context.readings
        if not read.description:
            continue
        prompt = render_agent_prompt(context)
        heading = labelled(prompt, DESCRIPTION)
        age = turn - 1 - read.description_turn
        if read.description_now:
            assert heading.startswith(f"({NOW})")
        elif age > 0:
            assert heading.startswith(f"(printed {age} turn")
            assert block(prompt, DESCRIPTION).split(" …")[0] in read.description
        else:
            assert heading.startswith("(printed this turn)")
        assert "Your sword" not in read.description  # a passing event, not the room
    titled = [c for c in walkthrough_contexts.values() if c.readings.title and not c.readings.dark]
    assert all(c.readings.description_now for c in titled)
    living = [c for c in titled if c.readings.title == "Living Room" and c.turn > 60]
    assert living and not [c.turn for c in living if "elvish sword" in c.readings.description.lower()]


def test_the_last_response_is_always_shown_verbatim(walkthrough_contexts):
    for context in walkthrough_contexts.values():
        if context.recent:
            prompt = render_agent_prompt(context)
            last = prompt.split(LAST, 1)[1]
            assert context.recent[-1][1].strip() in last
            assert "(the description above)" not in prompt


def test_memory_keeps_what_scrolled_out_of_the_history(walkthrough_contexts):
    late = walkthrough_contexts[max(walkthrough_contexts)]
    prompt = render_agent_prompt(late)
    assert late.readings.seen_elsewhere and "SEEN ELSEWHERE" in prompt
    names = [name for name, _, _ in late.readings.seen_elsewhere]
    assert len(names) == len(set(names)) <= 10


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
        offered = re.findall(r"(?:not tried recently|never tried from here): (.*)", prompt)
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
    """ZorkGPT's prompts ran to 71.5K characters a turn; ours, memory and map included, stay within a tenth of it on
    average and under 10,000 characters at the most."""
    sizes = [len(agent_system_prompt("zork1")) + len(render_agent_prompt(c)) for c in walkthrough_contexts.values()]
    assert max(sizes) < 10_000 and sum(sizes) / len(sizes) < 7_150


def test_what_was_done_here_is_listed_with_the_games_answers(rom_path, tmp_path):
    """Each try is listed with the game's own answer, latest first: read off a world hash alone, "already done" and
    "changed nothing" would lose failed tries and call a refused one done."""
    tries = ["take mailbox", "open mailbox", "take door", "read leaflet", "take leaflet", "look"]
    context = contexts_of(rom_path, tmp_path, tries)[len(tries)]
    listed = [(command, answer) for command, _, answer in context.readings.tried]
    assert [command for command, _ in listed] == [
        "take leaflet",
        "read leaflet",
        "take door",
        "open mailbox",
        "take mailbox",
    ]
    assert dict(listed)["take mailbox"] == "It is securely anchored."
    prompt = render_agent_prompt(context)
    assert "- take mailbox (turn 1): It is securely anchored." in prompt


def test_a_turn_that_ran_nothing_says_so(walkthrough_contexts):
    context = replace(
        walkthrough_contexts[3], nothing_ran=(False,) * (len(walkthrough_contexts[3].recent) - 1) + (True,)
    )
    last = render_agent_prompt(context).split(LAST, 1)[1]
    assert last.splitlines()[1].startswith("> (nothing ran: none of your replies could be used")


def test_the_agents_last_thoughts_come_back_to_it(rom_path, tmp_path):
    """The agent's own last three thoughts are shown back to it, oldest first."""
    from agents.llm_agent import LLMAgent
    from agents.llm_client import LLMClient
    from agents.llm_critic import LLMCritic
    from agents.scripted_llm import ScriptedOpenAI

    prompts: list[str] = []
    plan = ["open mailbox", "take leaflet", "read leaflet", "north", "east"]

    def reply(messages):
        if role_of(messages) != "agent":
            return '{"score": 0.8, "reason": "fine"}'
        prompts.append(messages[-1]["content"])
        command = plan[len(prompts) - 1]
        return json.dumps({"thought": f"thought number {len(prompts)}: {command}", "command": command})

    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(plan)}, knowledge={"enabled": False})
    client = LLMClient(config.llm, "scripted", 3, client=ScriptedOpenAI(reply))
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies, "zork1")
    run_episode(rom_path, config, agent, LLMCritic(client, config.llm, "zork1"), llm_client=client)
    last = prompts[-1].split("YOUR LAST THOUGHTS:", 1)[1]
    assert "- turn 2: thought number 2: take leaflet" in last and "- turn 4: thought number 4: north" in last
    assert "thought number 1:" not in last  # three are kept


def _read_at(name: str, steps: int):
    session = JerichoSession(story_file(name))
    view = session.reset()
    for command in session.walkthrough()[:steps]:
        view = session.step(command)
    reader = GameReader(session.answer_on_copy, {}, session.dictionary_word_length)
    reader.begin(view)
    return reader.read(steps + 1, view, MapGraph())


@pytest.mark.parametrize(
    ("name", "steps", "future"),
    [
        ("spirit.z5", 1, "Brother Joseph continues speaking."),  # in the answer to `inventory` on the copy
        ("wishbringer.z3", 1, "Mr. Crisp reaches under the service counter"),  # in the answer to `look`
        ("lostpig.z8", 80, "Pig look spooked."),  # in both
    ],
)
def test_the_clock_s_next_words_are_not_shown_as_the_room_or_the_inventory(name, steps, future):
    """A probe on a copy takes a turn, and the game's clock speaks after it: those lines are the next turn's. They
    are printed by `wait` on the same copy too, and left out; the room and the inventory stay."""
    read = _read_at(name, steps)
    assert read.title and read.inventory
    assert future not in read.description and future not in read.inventory


def test_an_answer_that_begins_with_the_prompt_still_names_the_room():
    """sherlock prints `>` before every answer: `look` and `inventory` share that first line, yet the game reads
    commands, and the room has its title."""
    read = _read_at("sherlock.z5", 5)
    assert read.title == "Holmes's Study" and "newspaper" in read.inventory


def test_the_way_back_is_shown_once_a_copy_shows_it_leads_back(walkthrough_contexts):
    """The move that brought the player in, reversed, is listed among the exits that work when, tried on a copy,
    it leads back to the room the player came from: zork1's walkthrough enters rooms it never leaves the way it
    came, and before, most prompts listed no exit that worked."""
    contexts = [walkthrough_contexts[turn] for turn in sorted(walkthrough_contexts)]
    backs = 0
    for previous, context in zip(contexts, contexts[1:]):
        came_from = previous.view.room_id
        if came_from == context.view.room_id or not context.readings.title:
            continue
        for direction, title in context.readings.exits:
            if direction_of(direction) not in context.known_exits:  # not walked from here: the way back
                backs += 1
                assert title == previous.readings.title
    assert backs > 0
    none_yet = sum(not c.readings.exits for c in contexts if c.readings.title)
    assert none_yet < 0.25 * len(contexts)


def test_the_opening_stands_first_and_what_scored_and_what_was_read_stay(rom_path, tmp_path, walkthrough_contexts):
    """The game's opening (its title and premise) opens every prompt, the same each turn; the points scored and the
    texts read whole stay once they scroll out of the history."""
    late = render_agent_prompt(walkthrough_contexts[60])
    assert late.startswith(OPENING) and "Infocom" in late.split("TURN 60", 1)[0]
    assert "POINTS SCORED SO FAR" in late and "turn 4, Up a Tree: Get egg (+5)" in late
    assert render_agent_prompt(walkthrough_contexts[61]).split("TURN 61")[0] == late.split("TURN 60")[0]
    contexts = contexts_of(rom_path, tmp_path, ["open mailbox", "take leaflet", "read leaflet"] + ["look"] * 10)
    prompt = render_agent_prompt(contexts[13])
    assert "WHAT YOU READ (turn 3, read leaflet):" in prompt and "WELCOME TO ZORK!" in prompt


def test_a_move_that_changed_nothing_is_said_tried_without_moving(rom_path, tmp_path):
    """zork1's boarded front door: `east` at West of House changes nothing, and the prompt says so."""
    contexts = contexts_of(rom_path, tmp_path, ["east", "look"])
    assert "Tried here without moving: east." in render_agent_prompt(contexts[2])


def test_a_long_opening_keeps_its_start_and_the_first_room():
    banner = "A long banner. " * 300
    opening = f"{banner}\n\nCellar\nYou are in a damp cellar. Stairs lead up."
    kept = kept_opening(opening, "Cellar")
    assert kept.startswith("A long banner.") and kept.endswith("Cellar\nYou are in a damp cellar. Stairs lead up.")
    assert len(kept) <= 2500 and kept_opening("Short.", "") == "Short."


def test_the_map_lists_the_rooms_walked_between_this_one_first(walkthrough_contexts):
    late = walkthrough_contexts[80]
    prompt = render_agent_prompt(late)
    assert MAP in prompt
    assert late.readings.map[0].startswith(f"{late.readings.title}: ") and len(late.readings.map) <= 25
    everywhere = "\n".join(c for context in walkthrough_contexts.values() for c in context.readings.map)
    assert "West of House: " in everywhere and "north -> North of House" in everywhere


def test_a_reply_s_note_is_read_bounded_and_only_from_what_the_model_says():
    from agents.reply import reply_note

    assert reply_note('{"thought": "t", "command": "north", "note": "The code is 3-1-4."}') == "The code is 3-1-4."
    assert reply_note('{"thought": "t", "command": "north", "note": ""}') == ""
    assert reply_note("north") == "" and reply_note('<think>{"note": "x"}</think> north') == ""
    assert len(reply_note('{"command": "n", "note": "' + "x" * 500 + '"}')) == 200
