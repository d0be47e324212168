"""The shortest known way to the best score (the store's route), replayed by later episodes; new dice where an earlier
episode died; valuables brought to where putting one away scored. Units on synthetic records, then the real orchestrator
on the real zork1 story file."""

from __future__ import annotations

import json

import pytest

from agents.offline_agent import OfflineAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from managers.knowledge import EpisodeLine, Knowledge, KnowledgeStore, Route, RouteStep, ScoreEvent, load_store
from orchestration.wiring import RunOptions, build_orchestrator
from session.commands import DICE_ROLL, directions_named, every_way_named
from session.context import AgentContext, Guidance
from session.jericho_session import JerichoSession
from session.records import GameObject, GameView
from tests.factories import turn_record
from tests.helpers import make_config, run_episode, story_file

MD5 = "md5"
LAMP, EGG, TROLL = GameObject(1, "brass lantern"), GameObject(2, "jewel-encrusted egg"), GameObject(3, "troll")


def fresh() -> Knowledge:
    return Knowledge(KnowledgeStore(game="g", story_md5=MD5), None)


def step(command: str, room: int, after: int | None = None, score: int = 0, held: tuple[str, ...] = ()) -> RouteStep:
    return RouteStep(
        command=command,
        room_id=room,
        room_id_after=room if after is None else after,
        score_after=score,
        inventory_after=sorted(held),
    )


def with_route(*steps: RouteStep, rerolls: int = 0, episodes: tuple[EpisodeLine, ...] = ()) -> Knowledge:
    store = KnowledgeStore(game="g", story_md5=MD5, episodes=list(episodes))
    store.route = Route(episode="e1", score=steps[-1].score_after, turns=99, steps=list(steps), rerolls=rerolls)
    return Knowledge(store, None)


def view(room: int, score: int = 0, held: tuple[GameObject, ...] = (), here: tuple[GameObject, ...] = ()) -> GameView:
    return GameView(room, f"room {room}", score, 0, held, here, "hash", "")


def ran(
    turn: int,
    command: str,
    before: int,
    after: int | None = None,
    score: tuple[int, int] = (0, 0),
    held: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    changed: bool = True,
    **fields,
):
    """A record of `command` run in room `before` (to `after`), the score and the held names before and after."""
    return turn_record(
        turn,
        command=command,
        room_id_before=before,
        room_id_after=before if after is None else after,
        score_before=score[0],
        score_after=score[1],
        inventory_before=held[0],
        inventory_after=held[1],
        world_hash_before="h",
        world_hash_after=f"h{turn}" if changed else "h",
        **fields,
    )


def end(knowledge: Knowledge, reason: str = "max_turns", episode: str = "e1") -> KnowledgeStore:
    return knowledge.merge({"episode_id": episode, "turns": 9, "best_score": 5, "termination_reason": reason})


# -- building the route --------------------------------------------------------------------------------------------
def test_the_route_leaves_out_what_changed_nothing_and_walks_that_came_back():
    knowledge = fresh()
    records = [
        ran(1, "take lamp", 1, held=((), ("lamp",))),
        ran(2, "look", 1, held=(("lamp",), ("lamp",)), changed=False),  # changed nothing
        ran(3, "north", 1, 2, held=(("lamp",), ("lamp",))),  # a walk ...
        ran(4, "east", 2, 3, held=(("lamp",), ("lamp",))),
        ran(5, "west", 3, 2, held=(("lamp",), ("lamp",))),  # ... back to room 2: the east-west trip goes
        ran(6, "open case", 2, held=(("lamp",), ("lamp",))),
        ran(7, "put lamp in case", 2, score=(0, 5), held=(("lamp",), ())),
        ran(8, "south", 2, 1),
    ]
    for record in records:
        knowledge.observe(record, "e1")
    route = end(knowledge).route
    assert [s.command for s in route.steps] == ["take lamp", "north", "open case", "put lamp in case"]
    assert (route.score, route.turns, route.episode) == (5, 7, "e1")  # up to the best score, not beyond


def test_a_refusal_that_rolled_the_dice_stays_so_a_replay_meets_the_same_dice():
    knowledge = fresh()
    knowledge.observe(ran(1, "take door", 1, changed=False, rolled_dice=True), "e1")
    knowledge.observe(ran(2, "wait", 1, changed=False), "e1")
    knowledge.observe(ran(3, "open mailbox", 1, score=(0, 1)), "e1")
    assert [s.command for s in end(knowledge).route.steps] == ["take door", "open mailbox"]


def test_a_route_is_replaced_only_by_a_higher_score_or_a_shorter_way_to_the_same():
    knowledge = with_route(step("a", 1), step("b", 1), step("c", 1, score=5))
    knowledge.observe(ran(1, "c", 1, score=(0, 5)), "e2")
    assert [s.command for s in end(knowledge, episode="e2").route.steps] == ["c"]  # the same 5 points, one step
    longer = with_route(step("c", 1, score=5))
    for turn, command in enumerate(("a", "b", "c"), 1):
        longer.observe(ran(turn, command, 1, score=(0, 5 if command == "c" else 0)), "e3")
    assert [s.command for s in end(longer, episode="e3").route.steps] == ["c"]


# -- following it --------------------------------------------------------------------------------------------------
def test_each_step_is_offered_where_the_step_before_left_the_player():
    knowledge = with_route(
        step("take lamp", 1, held=("brass lantern",)),
        step("north", 1, 2, held=("brass lantern",)),
        step("put lamp in case", 2, score=5),
    )
    assert knowledge.route_next(view(1)) == "take lamp"
    knowledge.observe(ran(1, "take lamp", 1, held=((), ("brass lantern",))), "e2")
    assert knowledge.route_next(view(1, held=(LAMP,))) == "north"
    assert knowledge.route_next(view(1)) == ""  # the lamp was dropped since: off the route until it is held again
    knowledge.observe(ran(2, "north", 1, 2, held=(("brass lantern",), ("brass lantern",))), "e2")
    assert knowledge.route_next(view(2, held=(LAMP,))) == "put lamp in case"


def test_a_step_that_ends_otherwise_twice_is_given_up():
    knowledge = with_route(step("open window", 1, 1, score=0, held=("x",)), step("in", 1, 2, score=10))
    for turn in (1, 2):
        assert knowledge.route_next(view(1)) == "open window"
        knowledge.observe(ran(turn, "open window", 1), "e2")  # ends without the x the route holds by then
    assert knowledge.route_next(view(1)) == ""


def test_a_fight_in_the_route_goes_on_while_the_foe_is_in_the_room():
    """The dice fall otherwise on a replay: the recorded blow or two may not be enough."""
    knowledge = with_route(step("north", 1, 5), step("kill troll with sword", 5), step("east", 5, 6, score=5))
    knowledge.observe(ran(1, "north", 1, 5), "e2")
    knowledge.observe(ran(2, "kill troll with sword", 5), "e2")
    assert knowledge.route_next(view(5, here=(TROLL,))) == "kill troll with sword"
    knowledge.observe(ran(3, "kill troll with sword", 5), "e2")
    assert knowledge.route_next(view(5)) == "east"  # the troll is gone


def test_a_step_the_harness_turns_down_is_passed_over():
    knowledge = with_route(step("take wind", 1), step("take log", 1), step("south", 1, 2, score=3))
    assert knowledge.route_next(view(1)) == "take wind"
    assert knowledge.route_then("take wind") == ("take log", "south")
    knowledge.observe(ran(1, "take log", 1), "e2")  # `take wind` was turned down, `take log` played
    assert knowledge.route_next(view(1)) == "south"


def test_several_steps_the_harness_turns_down_are_passed_over():
    """The route's episode meets the thief in the Dome Room (its stiletto, itself and its bag are tried, the dice
    rolled); a replay without the thief passes those steps over and plays on by its own lights from there."""
    thief = (step("take stiletto", 1), step("take thief", 1), step("take large bag", 1))
    knowledge = with_route(*thief, step("tie rope to railing", 1), step("down", 1, 2, score=3))
    assert knowledge.route_then("take stiletto") == ("take thief", "take large bag", "tie rope to railing", "down")
    context = AgentContext(
        turn=1,
        view=view(1),
        knowledge=Guidance(route_next="take stiletto", route_then=knowledge.route_then("take stiletto")),
    )
    for turned_down in ("take stiletto", "take thief", "take large bag"):
        context = context.with_feedback(turned_down, "You can't see any such thing here!")
    assert OfflineAgent().propose(context).command == "tie rope to railing"
    knowledge.observe(ran(1, "tie rope to railing", 1), "e2")
    assert knowledge.route_next(view(1)) == "down"


def test_holding_more_than_the_route_did_keeps_to_it():
    """The dice let `take sword` work at once where the route's episode was told it held too many things first: the
    route goes on while the player holds at least what it held."""
    knowledge = with_route(
        step("take sword", 1, held=("leaflet",)),
        step("drop leaflet", 1),
        step("take sword", 1, held=("sword",)),
        step("north", 1, 2, held=("sword",)),
    )
    knowledge.observe(ran(1, "take sword", 1, held=(("leaflet",), ("leaflet", "sword"))), "e2")
    assert knowledge.route_next(view(1, held=(GameObject(4, "leaflet"), GameObject(5, "sword")))) == "drop leaflet"


# -- new dice where an earlier episode died ---------------------------------------------------------------------
def line(episode: str, reason: str = "game_over", died_on_route: bool = False) -> EpisodeLine:
    return EpisodeLine(episode=episode, turns=9, best_score=5, termination_reason=reason, died_on_route=died_on_route)


def test_dice_are_rolled_at_the_start_for_deaths_on_the_route_and_after_it_for_deaths_beyond():
    episodes = (line("e1", "max_turns"), line("e2", died_on_route=True), line("e3"), line("e4", "max_turns"))
    knowledge = with_route(
        step("north", 1, 2), step("take egg", 2, score=5, held=("egg",)), rerolls=1, episodes=episodes
    )
    assert knowledge.rerolls_due() == 2  # the route's own roll (its luck) and one for e2's death on it
    knowledge.observe(ran(1, DICE_ROLL, 1, changed=False), "e5")
    knowledge.observe(ran(2, DICE_ROLL, 1, changed=False), "e5")
    assert knowledge.rerolls_due() == 0 and knowledge.route_next(view(1)) == "north"
    knowledge.observe(ran(3, "north", 1, 2), "e5")
    assert knowledge.rerolls_due() == 0  # mid-route: the dice stay as they were
    knowledge.observe(ran(4, "take egg", 2, score=(0, 5), held=((), ("egg",))), "e5")
    assert knowledge.rerolls_due() == 1  # e3 died beyond the route


def test_an_episode_that_dies_before_the_end_of_its_route_says_so():
    knowledge = with_route(step("north", 1, 2), step("take egg", 2, score=5, held=("egg",)))
    knowledge.observe(ran(1, "north", 1, 2), "e2")
    assert end(knowledge, "game_over", "e2").episodes[-1].died_on_route


def test_the_agent_rolls_the_dice_before_anything_else_while_they_are_due():
    context = AgentContext(turn=1, view=view(1), knowledge=Guidance(rerolls=1, route_next="north"))
    assert OfflineAgent().propose(context).command == DICE_ROLL
    assert (
        OfflineAgent().propose(AgentContext(turn=2, view=view(1), knowledge=Guidance(route_next="north"))).command
        == "north"
    )


def test_the_agent_plays_the_step_after_one_the_harness_turned_down():
    context = AgentContext(turn=1, view=view(1), knowledge=Guidance(route_next="take wind", route_then=("take log",)))
    assert OfflineAgent().propose(context.with_feedback("take wind", "there is no 'wind' here")).command == "take log"


# -- valuables brought to where putting one away scored ---------------------------------------------------------
def test_a_valuable_in_hand_goes_where_putting_one_away_scored():
    store = KnowledgeStore(game="g", story_md5=MD5)
    store.score_events = [
        ScoreEvent(room_id=3, room_name="Tree", command="take egg", points=5, episode="e1", turn=3),
        ScoreEvent(room_id=1, room_name="Living Room", command="put egg in case", points=5, episode="e1", turn=9),
    ]
    knowledge = Knowledge(store, None)
    for turn, (way, start, to) in enumerate((("east", 1, 2), ("west", 2, 1), ("east", 1, 2)), 1):  # the map
        knowledge.observe(ran(turn, way, start, to), "e2")
    knowledge.observe(ran(4, "take torch", 2, score=(0, 14), held=((), ("torch",))), "e2")  # a new valuable
    torch = GameObject(7, "torch")
    assert knowledge.guidance(view(2, score=14)).path_to_known == ()  # nothing in hand: nothing to bring
    assert knowledge.guidance(view(2, score=14, held=(torch,))).path_to_known == ("west",)
    knowledge.observe(ran(5, "west", 2, 1, score=(14, 14), held=(("torch",), ("torch",))), "e2")
    home = knowledge.guidance(view(1, score=14, held=(torch,)))
    assert "put torch in case" in home.known_here and home.deposits == ("case",)


def test_where_putting_valuables_away_scored_no_other_container_gets_them():
    coffin = GameObject(8, "gold coffin")
    held = (GameObject(7, "torch"), LAMP)
    context = AgentContext(
        turn=5, view=view(4, held=held, here=(coffin,)), knowledge=Guidance(valuables=("torch",), deposits=("case",))
    )
    made = []
    for _ in range(6):
        made.append(OfflineAgent().propose(context).command)
        context = context.with_feedback(made[-1], "no")
    assert not any(p.startswith("put") for p in made), made


def test_a_narrow_way_gets_one_thing_less_each_time_treasures_last_the_light_never():
    held = tuple(GameObject(n, name) for n, name in ((3, "sceptre"), (4, "torch"), (5, "sword"), (6, "brass lantern")))
    refused = "You can't get up there with what you're carrying."
    context = AgentContext(
        turn=9,
        view=GameView(7, "Studio", 4, 9, held, (), "hash", refused),
        recent=(("up", refused), ("drop sword", "Dropped."), ("up", refused)),
        knowledge=Guidance(valuables=("sceptre", "torch")),
    )
    made = []
    for _ in range(3):
        made.append(OfflineAgent().propose(context).command)
        context = context.with_feedback(made[-1], "no")
    assert made == ["drop sword", "drop sceptre", "drop torch"]  # dropped here before: dropped again all the same


def test_only_words_that_name_a_way_out_are_mentioned_exits():
    """Only words that name a way out count: over the zork1 walkthrough, 37 of 142 words read as exits move nowhere
    (parts of a room, places beside a thing, `up` in `you wake up`, `in all directions` of trees as of passages)."""
    assert directions_named("A passage leads north and up.") == ("north", "up")
    assert directions_named("This is a circular stone room with passages in all directions.") == ()
    assert directions_named("You are in a forest, with trees in all directions.") == ()
    assert directions_named("The west wall is solid granite. This is the south end of the room.") == ()
    assert directions_named("You are standing in an open field west of a white house.") == ()
    assert directions_named("You wake up. A rope hangs here; you could climb back up it.") == ()
    assert directions_named("A dark staircase can be seen leading upward. A chimney leads down.") == ("up", "down")
    assert directions_named("To the north-east is a small window; passages lead east.") == ("east", "northeast")


def test_passages_in_all_directions_are_each_worth_a_try_trees_in_all_directions_are_not():
    """Passages in all directions are each a way to try: without them the offline agent never tries the Round Room's
    diagonals (its southeast leads to the Engravings Cave, the Dome Room and the torch) and ends with 60 points, not
    84."""
    assert every_way_named("This is a circular stone room with passages in all directions.")
    assert every_way_named("Tunnels lead off in every direction.")
    for text in (
        "This is a forest, with trees in all directions.",
        "Shallow hills stretch out in all directions.",
        "Guy wires converge on it from all directions.",
    ):
        assert not every_way_named(text), text
    diagonals = ("northeast", "northwest", "southeast", "southwest")

    def first_move(text: str) -> str:
        here = GameView(107, "Round Room", 0, 9, (LAMP,), (), "hash", text)
        return (
            OfflineAgent()
            .propose(
                AgentContext(
                    turn=9, view=here, room_text=text, untried_exits=diagonals, path_to_primary_frontier=("west",)
                )
            )
            .command
        )

    assert first_move("Round Room\nThis is a circular stone room with passages in all directions.") in diagonals
    assert first_move("Forest\nThis is a forest, with trees in all directions.") == "west"  # a primary way elsewhere


# -- on the real emulator ------------------------------------------------------------------------------------------
def test_a_record_says_whether_the_command_rolled_the_dice(rom_path, tmp_path):
    """zork1 picks `jump`'s answer at random; waiting and looking roll nothing."""
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(["wait", "jump", "look"], kind="replay"))
    assert [r["rolled_dice"] for r in result.records] == [False, True, False]


def test_a_second_episode_reaches_the_first_ones_best_score_in_fewer_turns(rom_path, tmp_path, walkthrough):
    """Episode 1 plays the walkthrough's opening with detours (looks, a trip there and back); episode 2 is the
    offline agent with the store: it replays the route and scores as much, sooner."""
    script = []
    for command in walkthrough[:12]:
        script += [command, "look", "inventory"] + (["south", "north"] if command == "north" else [])
    config = make_config(tmp_path / "1", gameplay={"max_turns_per_episode": len(script)})
    path = tmp_path / "zork1.json"
    first = run_episode(
        rom_path,
        config,
        ReplayAgent(script, kind="replay"),
        knowledge=Knowledge(load_store(path, "zork1", JerichoSession(rom_path).story_md5), path),
    )
    best = first.summary["best_score"]
    assert best > 0
    first_turn = next(r["turn"] for r in first.records if r["score_after"] >= best)
    store = load_store(path, "zork1", JerichoSession(rom_path).story_md5)
    assert store.route.score == best and len(store.route.steps) < first_turn
    config = make_config(tmp_path / "2", gameplay={"max_turns_per_episode": len(store.route.steps) + 5})
    second = run_episode(rom_path, config, OfflineAgent(), knowledge=Knowledge(store, path))
    reached = [r["turn"] for r in second.records if r["score_after"] >= best]
    assert reached and reached[0] <= len(store.route.steps) < first_turn


def test_a_second_episode_on_one_session_starts_as_a_fresh_one(tmp_path):
    """An episode played on a session that already played one judges as one on a fresh session: the object
    pre-check plays each command from the live state, never from where the last episode ended (an earlier pre-check
    read gold's rooms there, and objects out of play at the end passed for rooms)."""
    story = story_file("gold.z5")
    session = JerichoSession(story)
    walk = [c for c in session.walkthrough() if c][:60]

    def orchestrator(folder: str, turns: int, commands: list[str], on: JerichoSession):
        config = make_config(tmp_path / folder, gameplay={"max_turns_per_episode": turns})
        return build_orchestrator(
            config,
            RunOptions(quiet=True),
            session=on,
            agent=ReplayAgent(commands, kind="replay"),
            critic=OfflineCritic(),
            knowledge=None,
            after_episode=(),
        )

    orchestrator("1", 60, walk, session).play_episode()
    again = orchestrator("2", 1, ["look"], session)
    again.play_episode()
    first = orchestrator("3", 1, ["look"], JerichoSession(story))
    first.play_episode()
    for command in ("take cheese", "examine sign", "take lamp", "north"):
        assert again.chooser.precheck.check(command) == first.chooser.precheck.check(command)
    assert again.chooser.precheck.check("take cheese") is not None  # not in sight at the start


@pytest.mark.parametrize("reason", ["game_over", "max_turns"])
def test_an_old_store_without_a_route_still_loads(tmp_path, reason):
    path = tmp_path / "g.json"
    path.write_text(
        '{"version": 1, "game": "g", "story_md5": "md5", "episodes": [{"episode": "e", "turns": 3, '
        f'"best_score": 0, "termination_reason": "{reason}"}}]}}'
    )
    store = load_store(path, "g", MD5)
    assert store.route is None and not store.episodes[0].died_on_route


@pytest.mark.parametrize("command", ["restore", "north. quit", "x" * 200, "take \x00lamp"])
@pytest.mark.parametrize("where", ["route.steps.0.command", "score_events.0.command"])
def test_a_stored_command_that_could_never_have_run_makes_the_store_corrupt(tmp_path, command, where):
    """A store is a file anyone can edit or share: an interpreter command or an impossible text where the store keeps
    commands is a clear error, never a command offered to an agent."""
    from managers.knowledge import KnowledgeError

    store = KnowledgeStore(
        game="g",
        story_md5=MD5,
        route=Route(episode="e", score=5, turns=3, steps=[step("north", 1)]),
        score_events=[ScoreEvent(room_id=1, room_name="Hall", command="take egg", points=5, episode="e", turn=2)],
    )
    data = store.model_dump(mode="json")
    if where.startswith("route"):
        data["route"]["steps"][0]["command"] = command
    else:
        data["score_events"][0]["command"] = command
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    with pytest.raises(KnowledgeError, match=f"corrupt at {where}"):
        load_store(path, "g", MD5)


def test_the_first_step_is_offered_only_where_it_begins():
    """A route's step is offered only in its room, never wherever the player stands ("take door" on turns 1-14)."""
    knowledge = with_route(step("open mailbox", 1), step("north", 1, after=2))
    assert knowledge.route_next(view(1)) == "open mailbox"
    assert knowledge.route_next(view(3)) == ""
