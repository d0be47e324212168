"""The loop break on real story files of the shared corpus: each measured cause of healthy play cut short or stuck play
left running, driven through `_run_game_loop` with scripted agents under the default configuration (the tests of the
mechanisms that spare slow healthy stretches run under a tighter 48-turn limit, which those stretches exceed: see
TIGHT_LIMIT)."""

from __future__ import annotations

import pytest

from agents.looper_agent import LooperAgent
from agents.replay_agent import ReplayAgent
from playthroughs import trajectories
from session.commands import direction_of
from session.config import DEFAULT_PROGRESS_SIGNALS
from session.jericho_session import JerichoSession
from session.records import LOOP_ENDINGS
from tests.helpers import make_config, run_episode, story_file

pytestmark = pytest.mark.slow  # stuck and healthy play over the shared corpus

TIGHT_LIMIT = {"no_progress": {"max_turns": 48}, "warning_lead_turns": 8}
"""A no-progress limit of 48 turns, under which the waiting, arrangement and trek mechanisms were measured. The default
64-turn limit spares some of their stretches even without them, so their tests play under this tighter one to show
that the mechanism is what spares the healthy stretch, and that without it the stretch would be stopped."""


def play_walkthrough(tmp_path, name: str, steps: int | None = None):
    story = story_file(name)
    commands = JerichoSession(story).walkthrough()[:steps]
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(commands)})
    return run_episode(story, config, ReplayAgent(commands, kind="walkthrough"))


def kinds_between(result, first: int, last: int) -> set[str]:
    return {kind for r in result.records if first <= r["turn"] <= last for kind in r["novelty"]}


# -- healthy play a rule tuned on zork1 alone would cut short -----------------------------------------------------
def test_one_room_id_for_a_whole_voyage_seastalker(tmp_path):
    """Seastalker's submarine is one room for 50 turns of travel (turns 44-94): its position, a state byte Jericho
    curates, keeps the voyage progressing, and the walkthrough wins."""
    result = play_walkthrough(tmp_path, "seastalker.z3")
    assert result.summary["termination_reason"] == "victory" and result.summary["final_score"] == 100
    voyage = [r for r in result.records if 44 <= r["turn"] <= 94]
    assert {r["room_id_after"] for r in voyage} == {voyage[0]["room_id_after"]}  # one room id all along
    assert sum("new_game_variable" in r["novelty"] for r in voyage) >= 10


def test_sliding_block_puzzle_in_one_room_zork3(tmp_path):
    """Zork III's Royal Puzzle: 60 turns in one room id with no score and no new room (turns 170-231). A move that
    the game answers with a new view of the puzzle is a new position."""
    result = play_walkthrough(tmp_path, "zork3.z5")
    assert result.summary["termination_reason"] == "victory" and result.summary["final_score"] == 7
    puzzle = [r for r in result.records if 170 <= r["turn"] <= 231]
    assert len({r["room_id_after"] for r in puzzle}) == 1
    assert sum("new_position" in r["novelty"] for r in puzzle) >= 15
    assert not [w for w in result.events("loop_break_warning") if 170 <= w["turn"] <= 231]


def test_rooms_past_jerichos_object_cap_spirit(tmp_path):
    """Spirit's rooms from object 177 on are past Jericho's object cap: Jericho says the player is nowhere for
    hundreds of turns. Read from memory, every room is known and named, and the long walkthrough is not stopped."""
    result = play_walkthrough(tmp_path, "spirit.z5", steps=600)
    assert all(r["room_id_after"] is not None for r in result.records)
    assert any(r["room_id_after"] > 176 and r["room_name_after"].strip() for r in result.records)
    assert result.summary["termination_reason"] == "max_turns"
    assert result.summary["rooms_visited"] > 100


def test_reading_up_is_information_deephome(tmp_path):
    """Deephome's walkthrough looks names up in the library's books: nothing in memory changes, yet each new entry
    is something learnt (`new_information`), and the walkthrough is never stopped."""
    result = play_walkthrough(tmp_path, "deephome.z5")
    assert result.summary["termination_reason"] not in LOOP_ENDINGS
    looked_up = [r for r in result.records if r["command"].lower().startswith("look up")]
    assert looked_up and sum("new_information" in r["novelty"] for r in looked_up) >= len(looked_up) // 2


def test_long_puzzle_stretches_hhgg(tmp_path):
    """The Hitchhiker's Guide walkthrough spends 44 turns without score or new room, which a rule blind to them
    stops at turn 178. Player-caused changes to objects and game variables carry it to its 400 points."""
    result = play_walkthrough(tmp_path, "hhgg.z3")
    assert result.summary["termination_reason"] == "victory" and result.summary["final_score"] == 400
    assert result.summary["loop_break"]["warnings_shown"] <= 0.01 * result.summary["turns"]  # at most 1 %


def test_noisy_walkthrough_is_never_cut_short(tmp_path):
    """zork1's walkthrough with detours (look, inventory, examine, wrong verbs, a step aside and back), about two
    per step, each checked to keep the walkthrough winning: healthy clumsy play, never stopped, 350 points."""
    story = story_file("zork1.z5")
    noisy = trajectories.noisy(story, factor=3, seed=1)
    assert noisy.healthy_until == len(noisy.commands) and noisy.script_score == 350
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(noisy.commands)})
    result = run_episode(story, config, ReplayAgent(noisy.commands))
    assert len(noisy.commands) > 1000
    assert result.summary["termination_reason"] == "victory" and result.summary["final_score"] == 350
    assert not result.events("stuck_termination") and not result.events("loop_gate")


def with_detours(steps: list[str], detours: tuple[str, ...]) -> list[str]:
    """Each step followed by the same harmless detours, as a clumsy player takes a stretch of a walkthrough."""
    return [command for step in steps for command in (step, *detours)]


def jail_with_detours(story, detours: tuple[str, ...] = ("look", "inventory", "examine bar")) -> tuple[list[str], int]:
    """tryst205's walkthrough to the jail, where it waits 14 turns for the sheriff, each wait followed by harmless
    detours (three, as the corpus's noisy walkthroughs at factor 3 do on average), then on. Returns the commands and
    the turn of the step the wait is for (`open door`)."""
    walkthrough = JerichoSession(story).walkthrough()
    jail = walkthrough.index("get bar") + 1
    waits = walkthrough[jail:].index("open door")
    assert walkthrough[jail : jail + waits] == ["wait"] * 14
    waiting = with_detours(walkthrough[jail : jail + waits], detours)
    commands = walkthrough[:jail] + waiting + walkthrough[jail + waits : jail + waits + 3]
    return commands, jail + len(waiting) + 1


@pytest.mark.parametrize(
    "loop_break, detours, stopped",
    [
        ({}, 3, False),
        ({}, 4, False),
        ({"wait_detours": 0}, 4, True),
        ({"wait_allowance": 0}, 3, True),
    ],
)
def test_waiting_for_a_timed_event_with_detours_tryst205(tmp_path, loop_break, detours, stopped):
    """56 or 70 turns of waiting and looking around in tryst205's jail, no progress and every command said before:
    the sheriff comes, the door opens. Waits neither repeat nor, up to wait_allowance, count towards the stop rules,
    and with each wait up to wait_detours turns of looking around do not count either. Counted like other turns,
    they stop this healthy play (measured on noisy walkthroughs: the jail took 52-75 turns over seeds 2-10)."""
    story = story_file("tryst205.z5")
    looks = ("look", "inventory", "examine bar", "examine door")[:detours]
    commands, door = jail_with_detours(story, looks)
    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": len(commands)}, loop_break={**TIGHT_LIMIT, **loop_break}
    )
    result = run_episode(story, config, ReplayAgent(commands))
    assert bool(result.events("stuck_termination")) is stopped
    if stopped:
        assert result.summary["turns"] < door
    else:
        opened = next(r for r in result.records if r["turn"] == door)
        assert opened["command"] == "open door" and opened["novelty"]  # the wait was for this


@pytest.mark.parametrize("wait_detours, stopped", [(3, False), (2, True)])
def test_waiting_for_the_feather_with_detours_balances(tmp_path, wait_detours, stopped):
    """balances' noisy walkthrough of seed 22 (3 detours per step): after `learn lobal` the walkthrough waits 13
    times for a tortoise to drop a feather; with the detours that is 80 turns without progress, 3-7 turns of looking
    around and walking to the Crest of Hill between waits. Leaving out 2 of those with each wait stopped it at turn
    343; 3 (the default) lets it wait for the feather and win."""
    story = story_file("balances.z5")
    built = trajectories.noisy(story, 3, 22)
    assert built is not None and built.healthy_until == len(built.commands)
    config = make_config(
        tmp_path,
        gameplay={"max_turns_per_episode": len(built.commands)},
        loop_break={**TIGHT_LIMIT, "wait_detours": wait_detours},
    )
    result = run_episode(story, config, ReplayAgent(built.commands))
    if stopped:
        assert result.summary["termination_reason"] == "stuck_no_progress" and result.summary["turns"] == 343
    else:
        assert result.summary["termination_reason"] == "victory" and result.summary["final_score"] == 50


@pytest.mark.parametrize("arranging, stopped", [(True, False), (False, True)])
def test_pushing_crates_with_detours_spirit(tmp_path, arranging, stopped):
    """spirit's sliding crates: 29 steps pushing three crates between two rooms and a shop, with 8 harmless detours
    after each. Each crate has stood in each place before, so no object reaches a place it never had; only the
    crates' arrangement is new (the corpus's noisy walkthrough of seed 8 spent 48 turns so). `new_arrangement` sees
    it and the episode reaches the icebox the crates were for; without it, the 48-turn rule stops it in the hall."""
    story = story_file("spirit.z5")
    walkthrough = JerichoSession(story).walkthrough()
    start, icebox = walkthrough.index("push dusty s"), walkthrough.index("unlock icebox with square key")
    detours = ("look", "inventory", "think", "sing", "dance", "wave hands", "smell", "listen")
    pushing = with_detours(walkthrough[start:icebox], detours)
    commands = walkthrough[:start] + pushing + walkthrough[icebox : icebox + 2]
    signals = [s for s in DEFAULT_PROGRESS_SIGNALS if arranging or s != "new_arrangement"]
    config = make_config(
        tmp_path,
        gameplay={"max_turns_per_episode": len(commands)},
        loop_break={**TIGHT_LIMIT, "progress_signals": signals},
    )
    result = run_episode(story, config, ReplayAgent(commands))
    unlock = start + len(pushing) + 1
    assert bool(result.events("stuck_termination")) is stopped
    if stopped:
        assert result.summary["turns"] < unlock
    else:
        pushed = [r for r in result.records if r["command"].startswith("push")]
        assert sum("new_arrangement" in r["novelty"] for r in pushed) >= 10
        unlocked = next(r for r in result.records if r["turn"] == unlock)
        assert unlocked["command"] == "unlock icebox with square key" and "new_object_state" in unlocked["novelty"]


@pytest.mark.parametrize("loop_break, stopped", [({}, False), (TIGHT_LIMIT, True)])
def test_a_script_off_its_track_for_61_turns_temple(tmp_path, loop_break, stopped):
    """temple's noisy walkthrough of seed 13 (3 detours per step): after the detours put the player one room off,
    the walkthrough's own `e`, `x stove` and `x kettle` get nowhere for 61 turns in two corridors and a chamber,
    until the script finds its way back and wins. The 64-turn backstop lets it; a 48-turn one stops it at turn
    303. (The stretch repeats too little for the repetition rule, and tries too little for the fruitless one.)"""
    story = story_file("temple.z5")
    built = trajectories.noisy(story, 3, 13)
    assert built is not None and built.healthy_until == len(built.commands)
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)}, loop_break=loop_break)
    result = run_episode(story, config, ReplayAgent(built.commands))
    if stopped:
        assert result.summary["termination_reason"] == "stuck_no_progress" and result.summary["turns"] == 303
    else:
        assert not result.events("stuck_termination")
        assert result.summary["final_score"] == built.clean_score


# -- stuck play ends sooner -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wandering(tmp_path_factory):
    """zork1 at the middle of its walkthrough, then out and back over 5-10 rooms the walkthrough visited."""
    built = trajectories.stuck(story_file("zork1.z5"), "wandering", 0.5)
    assert built is not None and len(built.loop_rooms) > 4
    return built


def test_a_conversation_is_information_weapon(tmp_path):
    """weapon's last scene: ten bare `reply` commands, each answered with the next line of a conversation, nothing
    else changing. With a look and an inventory after each (as a clumsy player, or the corpus's noisy walkthrough of
    seed 13, takes them) the same few commands repeat for 30 turns; each new line is information, so the episode
    reaches the last `press ignition` and wins."""
    story = story_file("weapon.z5")
    walkthrough = JerichoSession(story).walkthrough()
    talk = walkthrough.index("press ignition") + 1
    replies = walkthrough[talk:].index("press ignition")
    assert walkthrough[talk : talk + replies] == ["reply"] * 10
    commands = walkthrough[:talk] + with_detours(walkthrough[talk : talk + replies], ("look", "inventory"))
    commands += walkthrough[talk + replies :]
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(commands)})
    result = run_episode(story, config, ReplayAgent(commands))
    assert not result.events("stuck_termination")
    assert result.summary["termination_reason"] == "victory"
    said = [r for r in result.records if r["command"] == "reply"]
    assert sum("new_information" in r["novelty"] for r in said) >= len(said) // 2


@pytest.mark.parametrize(
    "loop_break, stopped",
    [
        ({}, False),
        ({"no_progress.trek_rooms": 6, "no_progress.trek_extra_turns": 24, "no_progress.trek_grace": 0}, True),
    ],
)
def test_a_walk_back_through_known_rooms_with_detours_karn(tmp_path, loop_break, stopped):
    """karn's walk from the maintenance shafts to the reactor door (7 steps through 5 rooms) with 7 harmless detours
    after each step: after the first step, 55 turns with nothing new, as a clumsy player takes them (the corpus's
    noisy walkthrough of seed 6 took 52). It keeps reaching rooms it had not been in since the last progress, so the
    no-progress rule waits trek_grace turns after each; with the trek counted only over more than 6 rooms, the
    48-turn rule stopped it one step short of the door."""
    story = story_file("karn.z5")
    walkthrough = JerichoSession(story).walkthrough()
    start = walkthrough.index("close plate") + 1
    door = walkthrough.index("ask k9 about door", start)
    detours = ("look", "inventory", "examine toolkit", "think", "sing", "dance", "wave hands")
    walk = with_detours(walkthrough[start:door], detours)
    commands = walkthrough[:start] + walk + walkthrough[door : door + 2]
    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": len(commands)}, loop_break={**TIGHT_LIMIT, **loop_break}
    )
    result = run_episode(story, config, ReplayAgent(commands))
    asked = start + len(walk) + 1
    assert not kinds_between(result, start + 2, asked - 1) - {"new_world_state"}  # nothing new on the way
    assert bool(result.events("stuck_termination")) is stopped
    if not stopped:
        assert "new_information" in next(r for r in result.records if r["turn"] == asked)["novelty"]


@pytest.mark.parametrize("fruitless_turns, ending, within", [(30, "fruitless", 30), (0, "game_over", 61)])
def test_semi_novel_stuck_play_ends_as_fruitless_zork1(tmp_path, fruitless_turns, ending, within):
    """zork1 at the middle of its walkthrough, then a new verb, noun or parser error every turn in the same rooms,
    none changing the world: nothing repeats, so the repetition rule never fires. Nearly every turn tries something
    new, so the fruitless rule ends it 30 turns in. Without it, the loop goes on until the thief takes the lamp and a
    grue eats the player in the dark, 61 turns in, 3 turns before the no-progress rule would have ended it."""
    story = story_file("zork1.z5")
    built = trajectories.stuck(story, "semi_novel", 0.5)
    assert built is not None
    config = make_config(
        tmp_path,
        gameplay={"max_turns_per_episode": len(built.commands)},
        loop_break={"fruitless": {"turns": fruitless_turns}},
    )
    result = run_episode(story, config, ReplayAgent(built.commands))
    stops = [stop["rule"] for stop in result.events("stuck_termination")]
    assert stops == ([ending] if ending == "fruitless" else [])
    assert result.summary["termination_reason"] == ("stuck_no_progress" if stops else ending)
    assert result.summary["turns"] - built.loop_start + 1 == within


def test_the_parsers_verb_in_a_global_is_no_progress_partyfoul(tmp_path):
    """partyfoul keeps the parser's verb in globals that its opening scene never moves, so the probes at the start
    do not know them. In the semi-novel loop at 40 % of the walkthrough, `taste door` and `search floor` each give
    such globals values never seen, with news in the answer (one of Frank's dream lines), and would restart every
    clock (74 turns). An idle `look` writes the globals `search floor` moves, so that is no news and the loop ends as
    fruitless within its 60 turns (`taste door` also moves globals a look leaves alone, and still counts). The loop
    is drawn at random: `search floor` leads it."""
    story = story_file("partyfoul.z8")
    built = trajectories.stuck(story, "semi_novel", 0.4)
    commands = built.commands[: built.prefix_turns] + ["search floor"] + built.commands[built.prefix_turns : -1]
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(commands)})
    result = run_episode(story, config, ReplayAgent(commands))
    loop = [r for r in result.records if r["turn"] >= built.loop_start]
    news = [r["command"] for r in loop if "new_game_variable" in r["novelty"]]
    assert loop[0]["command"] == "search floor" and "search floor" not in news
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "fruitless"
    assert result.summary["turns"] - built.loop_start + 1 <= 60


def test_wandering_loop_is_detected_and_stopped_within_40_turns(tmp_path, wandering):
    story = story_file("zork1.z5")
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(wandering.commands)})
    result = run_episode(story, config, ReplayAgent(wandering.commands))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] - wandering.loop_start + 1 <= 40
    [detected] = [e for e in result.events("loop_detected") if e["kind"] == "wandering"]
    assert len(detected["rooms"]) > config.loop_break.room_loops.region_max_rooms


def test_steerable_looper_leaves_a_wandering_loop(tmp_path, wandering):
    """The repeated-move penalty rejects a move already made from the same place since the last progress: a
    stubborn agent falls back to another way and leaves the loop's rooms (here after trying three walls of the
    Cyclops Room it had not tried since the last progress)."""
    story = story_file("zork1.z5")
    prefix, loop = wandering.commands[: wandering.prefix_turns], wandering.commands[wandering.prefix_turns :]
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(wandering.commands)})
    result = run_episode(story, config, LooperAgent(prefix, loop))
    penalties = [e for e in result.events("loop_penalty_applied") if "Repeat penalty" in e["reason"]]
    assert penalties
    outside = [
        r["turn"]
        for r in result.records
        if r["turn"] >= wandering.loop_start
        and r["room_id_after"] not in wandering.loop_rooms
        and r["room_id_after"] is not None
    ]
    assert outside and outside[0] <= penalties[0]["turn"] + 4


@pytest.mark.parametrize("kind", ["ab", "camping"])
@pytest.mark.parametrize("cycle_turns, rule", [(16, "cycle"), (0, "repetition")])
def test_pure_repetition_ends_within_25_turns(tmp_path, kind, cycle_turns, rule):
    """The same commands in the same order: the cycle rule ends the loop 16 turns in; without it, the repetition rule
    (the same commands from the same situations) within 25."""
    story = story_file("zork1.z5")
    built = trajectories.stuck(story, kind, 0.25)
    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": len(built.commands)}, loop_break={"cycle": {"turns": cycle_turns}}
    )
    result = run_episode(story, config, ReplayAgent(built.commands))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] - built.loop_start + 1 <= (16 if cycle_turns else 25)
    [termination] = result.events("stuck_termination")
    assert termination["rule"] == rule


@pytest.mark.parametrize(
    "game, kind, cut, target",
    [("zork2.z5", "line", 0.25, 40), ("wishbringer.z3", "camping", 0.25, 25)],
)
@pytest.mark.parametrize("cycle_turns", [16, 0])
def test_a_loop_the_game_moves_ends_by_its_commands(tmp_path, game, kind, cut, target, cycle_turns):
    """zork2: a line of rooms through the Carousel Room, whose exits are random, reaches rooms the episode never
    saw. wishbringer: camping on the same looks at the Cliff Edge, the fog carries the player off and the looks go on
    there. Each new room restarted every clock (44 and 27 turns); the commands coming round in the same order end
    each loop within its target, 17 and 16 turns in."""
    story = story_file(game)
    built = trajectories.stuck(story, kind, cut)
    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": len(built.commands)}, loop_break={"cycle": {"turns": cycle_turns}}
    )
    result = run_episode(story, config, ReplayAgent(built.commands))
    loop = [r for r in result.records if r["turn"] >= built.loop_start]
    assert any("new_room" in r["novelty"] for r in loop)
    [stop] = result.events("stuck_termination")
    assert (result.summary["turns"] - built.loop_start + 1 <= target) is bool(cycle_turns)
    assert (stop["rule"] == "cycle") is bool(cycle_turns)


def test_an_ab_loop_a_timer_changes_ends_within_25_turns_balances(tmp_path):
    """balances: a tortoise feather falls at the Crest of Hill in the middle of the A-B loop, so every situation after
    it is new; walking the same two ways with the same things in hand still repeats (before walks: 26 turns)."""
    story = story_file("balances.z5")
    built = trajectories.stuck(story, "ab", 0.5)
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    assert any("feather" in r["response"] for r in result.records if r["turn"] >= built.loop_start)
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] - built.loop_start + 1 <= 25


@pytest.mark.parametrize("game, cut", [("balances.z5", 0.5), ("sherlock.z5", 0.75)])
def test_a_random_walk_by_new_doors_and_new_words_ends_within_40_turns(tmp_path, game, cut):
    """A random walk in a small region from the middle of the walkthrough. Now and then it takes a door it had not taken
    from that place (one new turn in the window is allowed: with a window that must repeat whole, balances' walk would
    run 43 turns), and it goes the same way by other words: `in` or `west` into sherlock's Bank Vault, `up` or `west`
    onto balances' Crest of Hill. A known way walked by a new word is a repeat (counted as new, sherlock's would run
    42)."""
    story = story_file(game)
    built = trajectories.stuck(story, "random_walk", cut)
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    words: dict[tuple, set[str]] = {}
    for r in result.records:
        if r["turn"] >= built.loop_start and r["room_id_before"] != r["room_id_after"]:
            words.setdefault((r["room_id_before"], r["room_id_after"]), set()).add(r["command"])
    assert any(len(said) > 1 for said in words.values())
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "repetition"
    assert result.summary["turns"] - built.loop_start + 1 <= 40


@pytest.mark.parametrize("weak, within", [(["new_room_inventory"], 60), ([], 70)])
def test_a_semi_novel_loop_on_the_carousel_is_one_fruitless_stretch_zork2(tmp_path, weak, within):
    """zork2: semi-novel play from the Carousel Room, whose exits are random. Its walks reach the Cool Room, the Stone
    Bridge, the Dragon Room and the End of Ledge, each seen before only with other things in hand: a first visit with
    these things in hand, progress that restarted every clock, and the loop ran 66 turns. The fruitless rule also counts
    across such progress (`weak_signals`) and ends it within its 60 turns."""
    story = story_file("zork2.z5")
    built = trajectories.stuck(story, "semi_novel", 0.25)
    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": len(built.commands)}, loop_break={"weak_signals": weak}
    )
    result = run_episode(story, config, ReplayAgent(built.commands))
    loop = [r for r in result.records if r["turn"] >= built.loop_start]
    assert sum("new_room_inventory" in r["novelty"] and "new_room" not in r["novelty"] for r in loop) >= 3
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "fruitless"
    ended = result.summary["turns"] - built.loop_start + 1
    assert ended <= within and (weak or ended > 60)


def test_a_player_who_only_waits_is_stopped_on_the_first_wait_past_the_free_ones_balances(tmp_path):
    """`wait` from the first turn on: the first wait_allowance waits are how a player lets a timed event come
    (optimal walkthroughs wait up to 16 times in a row). The next one, after nothing but waits, is a loop: the
    repetition rule ends it there, or once the waits fill its window (were the free waits free for good, it would end a
    window later, at 31 turns; were no wait ever a repeat, at 64, by the no-progress rule)."""
    story = story_file("balances.z5")
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 100})
    result = run_episode(story, config, ReplayAgent(["wait"] * 100))
    [stop] = result.events("stuck_termination")
    rules = config.loop_break
    assert stop["rule"] == "repetition" and stop["last_progress_turn"] == 0
    assert result.summary["turns"] == max(rules.wait_allowance + 1, rules.repetition.window)


def test_semi_novel_stuck_play_ends_within_60_turns(tmp_path):
    """New verbs, nouns and parser errors every turn in the same rooms, none changing the world."""
    story = story_file("zork1.z5")
    built = trajectories.stuck(story, "semi_novel", 0.5)
    assert len(set(built.commands[built.prefix_turns :])) > 100  # hardly a command twice
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    assert result.summary["turns"] - built.loop_start + 1 <= 60


def test_a_counter_of_entries_is_no_progress_hhgg(tmp_path):
    """hhgg: semi-novel play in the Engine Room, stepping out to the corridor and back every twelve turns. One of
    Jericho's curated state bytes counts the entries into the Engine Room, so every return is a new game variable,
    which read as progress would never end the loop (258 turns, to the cap); a walk made before between the same two
    rooms with the same things in hand is no progress, so the fruitless rule ends it."""
    story = story_file("hhgg.z3")
    built = trajectories.stuck(story, "semi_novel", 0.3)
    returns = [t for t, c in enumerate(built.commands, start=1) if t > built.loop_start and c == "south"]
    assert len(returns) > 3
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    again = [r for r in result.records if r["turn"] in returns[1:]]
    assert again and not any("new_game_variable" in r["novelty"] for r in again)
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "fruitless"
    assert result.summary["turns"] - built.loop_start + 1 <= 60


def test_semi_novel_play_that_walks_between_tries_ends_as_fruitless_zork1(tmp_path):
    """The same, walking to a neighbour and back after every two tries: half the turns are moves, which the fruitless
    share leaves out, so the rule ends it 30 turns in as it does without the walking (counted over every turn, the
    share stayed near a half and the 64-turn rule ended it)."""
    story = story_file("zork1.z5")
    built = trajectories.stuck(story, "semi_novel_walking", 0.5)
    assert built is not None
    loop = built.commands[built.prefix_turns :]
    assert sum(direction_of(command) is not None for command in loop[:30]) >= 10
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "fruitless"
    assert result.summary["turns"] - built.loop_start + 1 == 30


def test_repeated_observation_is_no_failure_for_the_gate(tmp_path):
    """`look`, `listen` and `examine carpet` again and again are harmless: even with gate_action = terminate,
    the failure gate never counts them (the repetition rule still ends such a loop)."""
    story = story_file("zork1.z5")
    config = make_config(
        tmp_path, loop_break={"action_loops": {"gate_action": "terminate"}}, gameplay={"max_turns_per_episode": 60}
    )
    result = run_episode(story, config, ReplayAgent(["look", "listen", "examine mailbox"] * 20))
    assert not result.events("failure_loop") and not result.events("loop_gate")
    assert result.summary["termination_reason"] == "stuck_no_progress"
