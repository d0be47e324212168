"""The obstacle rule: a thing the game refused, tried again and again in other words, between walks over known
ground. Fed records directly: no Jericho, no LLM (the real game it was found on: tests/loop_break/test_real_play.py)."""

from __future__ import annotations

from managers.loop_break.obstacle import ObstacleRetries, things_named
from session.config import LoopBreakConfig
from tests.factories import first_stop, loop_break, turn_record


def _turn(turn: int, command: str, category: str, response: str = "", room: str = "Clearing", **fields):
    return turn_record(
        turn,
        command=command,
        result_category=category,
        response=response,
        room_id_before=7,
        room_id_after=7,
        room_name_before=room,
        room_name_after=room,
        **fields,
    )


def test_things_named_are_the_words_after_the_verb():
    assert things_named("unlock grating with knife") == ("grating", "knife")
    assert things_named("look") == ()


def test_a_variant_of_a_refused_try_is_a_retry_and_the_same_try_again_is_not():
    retries = ObstacleRetries()
    assert not retries.observe(_turn(1, "open grating", "refused", "The grating is locked."))
    assert retries.observe(_turn(2, "unlock grating with knife", "no_effect", "Can you unlock a grating with a knife?"))
    assert not retries.observe(_turn(3, "unlock grating with knife", "no_effect", "Can you unlock it?"))  # said before
    assert not retries.observe(_turn(4, "examine grating", "no_effect", "The grating is closed."))  # looking
    assert retries.observe(_turn(5, "cut grating", "parser_failure", "What do you want to cut the grating with?"))
    assert not retries.observe(_turn(6, "open grating with key", "success", "The grating opens."))  # it worked
    assert retries.retries == 2


def test_nothing_out_of_sight_in_hand_already_or_unknown_to_the_parser_is_an_obstacle():
    """`You can't see any troll here!` and `You already have that!` turn nothing down: a model typing commands
    meant for another place (a game it restarted in its head) is not working on an obstacle. Nor is a verb the parser
    does not know, nor a question (it is answered)."""
    retries = ObstacleRetries()
    retries.observe(_turn(1, "open grating", "refused", "The grating is locked."))
    assert not retries.observe(_turn(2, "use knife on grating", "parser_failure", 'I don\'t know the word "use".'))
    assert not retries.observe(_turn(3, "kick hatch", "refused", "That's not a verb I recognise."))
    assert not retries.observe(_turn(4, "kick hatch again", "refused", "That's not a verb I recognise."))
    assert not retries.observe(_turn(5, "ask guard about grating", "no_effect", "The guard shrugs."))
    retries = ObstacleRetries()
    retries.observe(_turn(1, "attack troll with sword", "refused", "You can't see any troll here!"))
    assert not retries.observe(_turn(2, "kill troll with sword", "refused", "You can't see any troll here!"))
    retries.observe(_turn(3, "take sword", "no_effect", "You already have that!"))
    assert not retries.observe(_turn(4, "drop sword", "refused", "You can't drop that here."))
    assert retries.retries == 0


def test_a_room_is_known_by_its_title():
    """zork1 has two rooms called Clearing: a player stuck on the grating of one tries to cut it in the other."""
    retries = ObstacleRetries()
    retries.observe(_turn(1, "open grating", "refused", "The grating is locked."))
    elsewhere = turn_record(
        2,
        command="cut grating",
        result_category="parser_failure",
        response="What do you want to cut the grating with?",
        room_id_before=8,
        room_name_before="Clearing",
    )
    assert retries.observe(elsewhere)
    assert not retries.observe(_turn(3, "break grating with sword", "refused", "Nice try.", room="Forest"))


def test_the_obstacle_rule_stops_retries_among_walks_once_its_turns_have_passed():
    """Three retries on the locked grating among walks over known ground: the rule fires once `obstacle.turns` have
    passed without progress. With fewer retries, or with the rule off, the same play goes on (other rules off)."""
    config = LoopBreakConfig()
    others_off = {"fruitless": {"turns": 0}, "repetition": {"stop": False}, "cycle": {"turns": 0}}
    tries = ["open grating", "unlock grating with knife", "pull grating", "break grating with sword"]
    answers = ["The grating is locked.", "Can you unlock it?", "You can't move the grating.", "Nice try."]

    def play(**settings):
        records = []
        for turn in range(1, 80):
            if turn % 9 == 1 and turn // 9 < len(tries):
                records.append(_turn(turn, tries[turn // 9], "refused", answers[turn // 9]))
            else:  # a walk to a neighbour and back
                room = 7 if turn % 2 else 8
                records.append(
                    turn_record(
                        turn,
                        command="north" if turn % 2 else "south",
                        room_id_before=15 - room,
                        room_id_after=room,
                        result_category="success",
                        situation=f"s{room}",
                    )
                )
        return first_stop(loop_break(**others_off, **settings), records)

    retries_done = 9 * config.obstacle.retries + 1  # the first try makes the obstacle, each later one is a retry
    assert play() == (max(retries_done, config.obstacle.turns), "obstacle")
    backstop = (config.no_progress.max_turns, "no_progress")
    assert play(obstacle={"retries": len(tries)}) == backstop  # the first try is no retry
    assert play(obstacle={"turns": 0}) == backstop
