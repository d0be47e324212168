"""The orchestrator: reads like the turn and delegates to the session, the managers and the agents."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from loguru import logger

from agents.base import Agent, Critic, InvalidReply, LLMCallFailed, LLMUnavailable, Proposal, ScriptExhausted
from agents.llm_client import LLMClient
from agents.offline_critic import OfflineCritic
from agents.precheck import ObjectPrecheck
from managers.action_memory import ActionMemory
from managers.context import ContextBuilder
from managers.game_reader import GameReader
from managers.knowledge import Knowledge
from managers.loop_break import DestinationPredictor, LoopBreak, Verdict
from managers.loop_break.penalties import why_rejected
from managers.loop_break.rewind import rewind_note
from managers.map_graph import MapGraph
from managers.novelty import WorldNovelty
from managers.objectives import ObjectiveManager
from orchestration.human_gate import ask_for_guidance
from orchestration.recorder import EpisodeRecorder, RecordsUnwritable
from orchestration.spending import Spending, usage_line
from session.commands import PRIMARY_DIRECTIONS, GameDictionary, canonical_command, why_not_run
from session.config import GameConfiguration
from session.context import AgentContext, Guidance, ObjectiveReview
from session.emulator import EmulatorFailed
from session.events import EventType, emit
from session.jericho_session import JerichoSession, Snapshot
from session.outcomes import classify_outcome
from session.records import (
    BLOCKING_SOURCES,
    BROKEN_ENDINGS,
    DEATH_ENDING,
    LOOP_ENDINGS,
    NOT_RUN,
    UNPARSEABLE_FALLBACK,
    Candidate,
    Ending,
    GameView,
    Judgement,
    TurnRecord,
)

NOT_RUN_REASONS = {
    UNPARSEABLE_FALLBACK: "no game command could be read in the reply; nothing was typed in its place",
    "every_candidate_blocked": "every command proposed was refused; nothing was typed in their place",
}
"""Why a turn ran nothing, by fallback kind: the harness never plays a command the model did not commit to."""
EPISODE_FILE = "episode.json"


class ResumeError(Exception):
    """An episode folder cannot be resumed: no records, a game that replays differently, or an ended episode."""


@dataclass(frozen=True)
class ProgressPoint:
    """The game right after a progress turn (turn 0: the reset), as a rewind restores it."""

    snapshot: Snapshot
    turn: int
    situation: str
    """TurnRecord.situation after that turn: where the abandoned turns began."""


@dataclass
class GameState:
    """Episode-level state (the design's `game_state`)."""

    episode_id: str
    turn_count: int = 0
    previous_zork_score: int = 0
    game_over_flag: bool = False
    termination_reason: Ending | None = None


def new_episode_id() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S") + "-" + uuid.uuid4().hex[:6]


class Orchestrator:
    def __init__(
        self,
        config: GameConfiguration,
        session: JerichoSession,
        agent: Agent,
        critic: Critic,
        llm_client: LLMClient | None = None,
        objectives: ObjectiveManager | None = None,
        episode_id: str | None = None,
        quiet: bool = False,
        human_input: TextIO | None = None,
        human_output: TextIO | None = None,
        knowledge: Knowledge | None = None,
        after_episode: Sequence[Callable[[Path], None]] = (),
    ):
        self.config = config
        self.after_episode = tuple(after_episode)
        """Steps run on the episode's folder once its records and summary are whole (main.py's wiring writes
        report.html), each after a crash or an interrupt too; one that fails with an OSError is logged, not raised."""
        self.knowledge = knowledge
        """What earlier episodes of this game learned; this episode adds to it at its end (None: play fresh)."""
        self.session = session
        self.agent = agent
        self.critic = critic
        self.llm_client = llm_client
        self.quiet = quiet
        self.human_input = human_input or sys.stdin
        self.human_output = human_output or sys.stderr
        self.game_state = GameState(episode_id or new_episode_id())
        self.map = MapGraph()
        self.memory = ActionMemory()
        self.contexts = ContextBuilder(config.orchestrator.history_turns, session.game_name)
        self.objectives = objectives or ObjectiveManager(config.loop_break)
        predictor = DestinationPredictor(config.loop_break.destination_prediction, self.map, session)
        self.loop_break = LoopBreak(config.loop_break, self.map, predictor, config.gameplay.critic_rejection_threshold)
        self.precheck: ObjectPrecheck | None = None
        """Built from the episode's first state (the emulator still holds the last episode's end until reset)."""
        self.view: GameView | None = None
        self.novelty: WorldNovelty | None = None
        self.recorder: EpisodeRecorder | None = None
        self.best_score = 0
        self.spending = Spending(llm_client)
        self.progress_point: ProgressPoint | None = None
        """The game right after the last progress (after the reset at first): where a rewind goes back to. Kept only
        with `on_stuck = "rewind"`."""
        self.abandoning: list[TurnRecord] = []
        """The turns since the last progress: a rewind abandons them. Kept only with `on_stuck = "rewind"` (else a
        loop the loop break lets run would keep every turn)."""
        self.rewinds = 0
        self.abandoned_turns = 0
        self.rewound_to: set[int] = set()
        """The turns rewinds went back to (a point is gone back to once)."""
        self.agent_memory: dict | None = None
        """The agent's memory as last recorded (TurnRecord.agent_memory: a record gives it when it changed)."""
        self.last_record: TurnRecord | None = None
        """The previous turn's record: what the critic's objective review judges."""
        self.review: ObjectiveReview | None = None
        """The critic's objective review this turn (llm objectives), read after the command ran."""
        self.run_info: dict = {}
        """What the caller adds to episode.json for `--resume` (e.g. the replay file)."""
        self.emulator_failure: str | None = None
        """How the live game's emulator failed, when that ended the episode (Ending.EMULATOR_FAILED)."""

    # -- the episode -------------------------------------------------------------------------------------
    def play_episode(self, resume: list[TurnRecord] | None = None) -> Path:
        """Play one episode; returns the path of summary.json (written even when the episode crashes).

        `resume`: the records of an interrupted episode of this folder. The game, the map, the objectives, every
        detector and the agent's place in its script are brought to the state they had after the last of them
        (the emulator is deterministic; the managers are fed the records), then play goes on in the same files.
        """
        started = time.perf_counter()
        folder = Path(self.config.files.episode_dir) / self.game_state.episode_id
        self.recorder = EpisodeRecorder(
            folder,
            self.config.orchestrator.console_log_level,
            self.config.orchestrator.file_log_level,
            self.quiet,
            (self.config.api_key(),),
            bool(resume),
        )
        try:
            self._begin(folder, resume)
        except EmulatorFailed as exc:  # the game could not start, or not replay to where it was: no turn is played
            self._emulator_failed(exc)
            return self._finish(folder, time.perf_counter() - started)
        try:
            self._run_game_loop()
        except KeyboardInterrupt:
            self.game_state.termination_reason = Ending.INTERRUPTED
            raise
        except RecordsUnwritable:
            self.game_state.termination_reason = Ending.RECORDS_UNWRITABLE
            raise
        except BaseException:
            self.game_state.termination_reason = Ending.ERROR
            raise
        finally:
            summary_path = self._finish(folder, time.perf_counter() - started)
        return summary_path

    def _begin(self, folder: Path, resume: list[TurnRecord] | None) -> None:
        """The episode's start: the game reset, what the managers read from it, the records of an episode resumed
        played again (or episode.json written for a new one)."""
        self.view = self.session.reset()
        self.precheck = ObjectPrecheck(self.session)
        self.novelty = WorldNovelty(
            self.view,
            self.session.noisy_globals(),
            self.session.dictionary_range,
            self.session.jericho_noise(),
            self.session.player,
        )
        self.map.visit(self.view.room_id, self.view.room_name, 0)
        if self.agent.prompted or self.critic.prompted:  # a model reads the prompt: what the game itself says
            self.contexts.reader = GameReader(
                self.session.answer_on_copy, self.session.object_vocabulary(), self.session.dictionary_word_length
            )
            self.contexts.dictionary = GameDictionary.of(
                (entry.word for entry in self.session.dictionary()), self.session.dictionary_word_length
            )
        self.contexts.begin(self.view)
        if self._rewinding:
            self._mark_progress(0, self.novelty.situation)
        if resume:
            self.recorder.muted = True
            try:
                self._replay(resume)
            finally:
                self.recorder.muted = False
        else:
            self._write_episode_file(folder)
        logger.bind(event_type=EventType.EPISODE_START).info(
            f"Episode {self.game_state.episode_id}: {self.session.game_name}, agent {self.agent.kind}, "
            f"critic {self.critic.kind}" + (f", resumed after turn {self.game_state.turn_count}" if resume else "")
        )

    def _write_episode_file(self, folder: Path) -> None:
        """episode.json: what `--resume` needs to rebuild this episode (never the API key, only its variable)."""
        info = {
            "episode_id": self.game_state.episode_id,
            "story_file": str(Path(self.session.story_file).resolve()),
            "agent": self.agent.kind,
            "critic": self.critic.kind,
            "config": self.config.model_dump(mode="json"),
            **self.run_info,
        }
        try:
            (folder / EPISODE_FILE).write_text(json.dumps(info, indent=2) + "\n")
        except OSError as exc:
            raise RecordsUnwritable(f"cannot write {folder / EPISODE_FILE}: {exc.strerror or exc}") from None

    def _replay(self, records: list[TurnRecord]) -> None:
        """Bring everything to the state after `records`: play their commands (not their agent or critic) and feed
        the records to every manager, exactly as the turn loop did. Raises ResumeError when the game does not
        replay as recorded, or when the records already ended the episode."""
        for record in records:
            turn = self.game_state.turn_count = record.turn
            view = self.view
            self.objectives.discover(turn, view, self.map, self.contexts.visible_here(view))
            for candidate in record.candidates:
                if not candidate["accepted"] and candidate["source"] != NOT_RUN:
                    self.loop_break.note_rejection(turn, view.room_id, candidate["command"], [])
            after = self.session.step(record.command) if record.ran else replace(view, text=record.response)
            if (after.room_id, after.score, after.text) != (record.room_id_after, record.score_after, record.response):
                raise ResumeError(f"turn {turn}: the game does not replay as recorded ({record.command!r})")
            self.novelty.observe(view, after, record.command, record.result_category, self.session.idle_world)
            self._learn(record)
            self.objectives.restore(record)
            self.spending.add_resumed(record)
            self.last_record = record
            self.view = after
            verdict = self._after_turn(record, [], lambda _, recorded=record: _recorded_guidance(recorded))
            if self._ending(record, verdict) is not None:
                raise ResumeError(f"the records end the episode at turn {turn}: nothing to resume")
            self.recorder.count(record)
            if record.agent_memory is not None:
                self.agent_memory = record.agent_memory
        self.agent.resume(len(records))  # scripted agents go on from where they were
        if self.agent_memory is not None:
            try:
                self.agent.recall(self.agent_memory)
            except ValueError as exc:
                raise ResumeError(f"the agent's recorded memory does not read: {exc}") from None

    def _run_game_loop(self) -> int:
        gameplay = self.config.gameplay
        while not self.game_state.game_over_flag and self.game_state.turn_count < gameplay.max_turns_per_episode:
            self.game_state.turn_count += 1
            try:
                record = self._execute_turn_logic()
            except ScriptExhausted as exc:
                self._end(Ending.SCRIPT_EXHAUSTED, str(exc))
                break
            except LLMUnavailable as exc:
                self._end(Ending.LLM_UNAVAILABLE, str(exc))
                break
            except EmulatorFailed as exc:  # the turn's command (or a probe's read of the live state) crashed the game
                self._emulator_failed(exc)
                break
            try:
                verdict = self._after_turn(record, record.events, self._ask_human)
            except EmulatorFailed as exc:  # a rewind's restore, or the snapshot of a progress point
                self.recorder.write(record)
                self._emulator_failed(exc)
                break
            self.recorder.write(record)
            ending = self._ending(record, verdict)
            if ending is not None:
                self._end(*ending)
        if self.game_state.termination_reason is None:
            self._end(Ending.MAX_TURNS)
        return self.game_state.previous_zork_score

    def _after_turn(self, record: TurnRecord, events: list[dict], guidance: Callable[[str], str]) -> Verdict:
        """What follows every executed turn, in live play and when resuming alike: the loop break's verdict (its
        events into `events`), the guidance a human gate asks for (`guidance`, given the gate's description), the
        objectives pruned, the scores kept."""
        verdict = self.loop_break.observe(record)
        events.extend(verdict.events)
        if verdict.gate is not None and verdict.gate.action == "human":
            self.loop_break.accept_guidance(guidance(verdict.gate.description), record.turn, events)
        self.objectives.prune(record.turn, self.loop_break.progress.last_progress_turn)
        self.game_state.previous_zork_score = record.score_after
        self.best_score = max(self.best_score, record.score_after)
        if self._rewinding and verdict.progress.progress:
            self._mark_progress(record.turn, record.situation)
        elif self._rewinding:
            self.abandoning.append(record)
        if verdict.terminate and self._may_rewind(verdict):
            self._rewind(record, verdict, events)
            verdict.terminate = False
        return verdict

    @property
    def _rewinding(self) -> bool:
        return self.config.loop_break.on_stuck == "rewind"

    def _mark_progress(self, turn: int, situation: str) -> None:
        """The game right after a progress turn (0: the reset) is where a rewind would go back to."""
        self.progress_point = ProgressPoint(self.session.snapshot(), turn, situation)
        self.abandoning = []

    def _may_rewind(self, verdict: Verdict) -> bool:
        """A loop's stop verdict, `on_stuck = "rewind"`, rewinds left, and progress since the last rewind: a point
        is gone back to once (measured on the corpus's stuck trajectories: a first return to a point reached new
        progress within 40 turns 430 times in 892, a return to the same point again 64 times in 455)."""
        config = self.config.loop_break
        if not self._rewinding or verdict.reason not in LOOP_ENDINGS or self.rewinds >= config.max_rewinds:
            return False
        return self.progress_point.turn not in self.rewound_to

    def _rewind(self, record: TurnRecord, verdict: Verdict, events: list[dict]) -> None:
        """Put the game back exactly as it was right after the last progress and play on from there: the turns
        since stay in the records (their branch abandoned), the agent is told what they tried, and what they
        repeated is off the table there for a while."""
        point, abandoned = self.progress_point, self.abandoning
        view, how = self.session.restore(point.snapshot)
        self.rewinds += 1
        self.rewound_to.add(point.turn)
        self.abandoned_turns += len(abandoned)
        self.view = view
        self.contexts.rewind()
        note = rewind_note(abandoned, point.turn, view.room_name, view.score)
        self.loop_break.rewind(record.turn, self.novelty.restart(view), abandoned, note, start=point.situation)
        if self.knowledge is not None:
            self.knowledge.note_loop(abandoned, verdict.reason, self.game_state.episode_id)
        self.abandoning = []
        emit(
            events,
            EventType.REWIND,
            f"Rewind {self.rewinds}: {verdict.why or verdict.reason}; back to turn {point.turn} "
            f"({view.room_name}, score {view.score}), {len(abandoned)} turns abandoned",
            level="WARNING",
            turn=record.turn,
            to_turn=point.turn,
            abandoned=len(abandoned),
            branch=record.branch,
            rewinds=self.rewinds,
            reason=verdict.reason,
            rule=verdict.rule,
            why=verdict.why,
            restored=how,
        )

    def _ending(self, record: TurnRecord, verdict: Verdict) -> tuple[Ending, str] | None:
        """How the episode ends after this turn, with a detail for the log; None: it goes on."""
        budget = self.config.gameplay.max_cost_usd
        if record.victory:
            return Ending.VICTORY, ""
        if record.game_over:
            return DEATH_ENDING, ""
        if verdict.terminate:
            return verdict.reason or Ending.STUCK, ""
        spent = self.spending.cost()["total"]
        if budget is not None and spent >= budget:
            return Ending.BUDGET, f"${spent:.4f} spent of ${budget:.4f}"
        return None

    def _ask_human(self, description: str) -> str:
        return ask_for_guidance(description, list(self.contexts.recent), self.human_input, self.human_output)

    def _execute_turn_logic(self) -> TurnRecord:
        started = time.perf_counter()
        turn = self.game_state.turn_count
        view = self.view
        usage_before = self.spending.snapshot()
        events: list[dict] = []
        forced = self.agent.forced  # read once: a looper agent is forced only during its prefix
        self.objectives.discover(turn, view, self.map, self.contexts.visible_here(view))
        context = self._context(turn, view, events)
        candidates, fallback, parse_failures = self._choose_command(context, events, turn, forced)
        chosen = self._pick(candidates, forced)
        command = chosen.command if chosen is not None and not fallback else ""
        refusal = NOT_RUN_REASONS[fallback.split(":")[0]] if fallback else why_not_run(command)
        if refusal is None:
            after = self.session.step(command)
        else:  # nothing the model committed to can run (or a script's interpreter command): nothing else runs
            after = replace(view, text=f"[not run: {refusal}]")
            fallback = fallback or NOT_RUN
        record = self._record(turn, forced, command, view, after, candidates, chosen, fallback, events)
        record.ran = refusal is None
        memory = self.agent.memory()
        if memory != self.agent_memory:
            record.agent_memory = self.agent_memory = memory
        record.parse_failures = parse_failures
        record.thought = chosen.thought if chosen is not None and not fallback else ""
        record.note = chosen.note if chosen is not None and not fallback else ""
        self._learn(record)
        record.objectives_completed = self.objectives.observe(record)
        if self.review is not None:
            completed, record.objectives_added = self.objectives.review(turn, self.review, self.last_record)
            record.objectives_completed += completed
            self.review = None
        record.llm_calls, record.llm_tokens, record.llm_cost_usd = self.spending.since(usage_before)
        self.last_record = record
        self.view = after
        record.wall_seconds = round(time.perf_counter() - started, 6)
        logger.bind(event_type=EventType.TURN, turn=turn).info(
            f"turn {turn:>4} | {view.room_name} | {command} | score {after.score}"
            + (f" | rejected {record.rejections}" if record.rejections else "")
        )
        return record

    def _record(self, turn, forced, command, view, after, candidates, chosen, fallback, events) -> TurnRecord:
        """The turn's record from the views before and after the command (LLM usage is filled in at the end)."""
        category = classify_outcome(
            command,
            after.text,
            after.room_id != view.room_id,
            after.score != view.score,
            after.inventory != view.inventory,
            after.world_hash != view.world_hash,
            after.game_over,
            after.victory,
            after.room_name,
        )
        novelty = self.novelty.observe(view, after, command, category, self.session.idle_world)
        before_room = after.came_from if view.room_id is None and after.came_from else (view.room_id, view.room_name)
        if chosen is not None and fallback in (None, NOT_RUN):
            judgement = chosen.judgement
        else:  # nothing ran in place of a proposal: nothing was judged
            judgement = Judgement(1.0, f"fallback ({fallback})", source="fallback")
        return TurnRecord(
            turn=turn,
            command=command,
            agent_kind=self.agent.kind,
            forced=forced,
            room_id_before=before_room[0],
            room_name_before=before_room[1],
            room_id_after=after.room_id,
            room_name_after=after.room_name,
            score_before=view.score,
            score_after=after.score,
            world_hash_before=view.world_hash,
            world_hash_after=after.world_hash,
            inventory_before=tuple(o.name for o in view.inventory),
            inventory_after=tuple(o.name for o in after.inventory),
            response=after.text,
            critic_base_score=judgement.base,
            critic_reason=judgement.reason,
            critic_adjusted_score=judgement.score,
            adjustments=judgement.adjustments,
            would_reject=bool(forced and chosen and not chosen.accepted),
            rejections=sum(1 for c in candidates if not c.accepted) if not forced else 0,
            candidates=[_candidate_record(c) for c in candidates],
            llm_calls={},
            llm_tokens={},
            wall_seconds=0.0,
            game_over=after.game_over,
            victory=after.victory,
            new_room="new_room" in novelty.kinds,
            new_world_state="new_world_state" in novelty.kinds,
            novelty=novelty.kinds,
            situation=novelty.situation,
            rolled_dice=after.rolled_dice,
            result_category=category,
            fallback=fallback,
            events=events,
            branch=self.rewinds,
        )

    def _learn(self, record: TurnRecord) -> None:
        """The managers that learn from every executed turn's record (live and when resuming)."""
        self.map.observe(record)
        self.memory.observe(record)
        self.contexts.observe(record)
        if self.knowledge is not None:
            self.knowledge.observe(record, self.game_state.episode_id)

    def _context(self, turn: int, view: GameView, events: list[dict]) -> AgentContext:
        """What the agent and critic may know this turn, with the loop status built on the same facts."""
        objectives = self.objectives.current()
        context = self.contexts.for_agent(
            turn,
            view,
            self.map,
            self.memory,
            objectives,
            completed_objectives=self.objectives.completed(),
            rewinds=self.rewinds,
        )
        read = context.readings
        # Directions never tried here, in their own order: the text's mentions are unverified (a quarter of them
        # lead nowhere: benchmarks.context_truth), so they do not steer a stuck warning.
        untried = tuple(d for d in context.untried_exits if d in PRIMARY_DIRECTIONS)
        things = (
            read.seen
            if read is not None
            else tuple(dict.fromkeys(o.noun for o in view.room_objects if o.name in context.visible_objects))
        )
        status = self.loop_break.status(turn, view, objectives, events, untried, things)
        return replace(
            context,
            max_score=self.session.max_score,
            max_turns=self.config.gameplay.max_turns_per_episode,
            loop_status=status.text,
            banned=status.banned,
            review_objectives=self.objectives.wants_review(turn, self.last_record),
            knowledge=self.knowledge.guidance(view) if self.knowledge is not None else Guidance(),
        )

    # -- agent -> critic -> loop-break adjustment -> accept or regenerate --------------------------------
    def _choose_command(self, context, events: list[dict], turn: int, forced: bool):
        """Candidates in proposal order, the fallback reason (or None) and the turn's reply parse failures."""
        threshold = self.config.gameplay.critic_rejection_threshold
        attempts = 1 if forced else self.config.gameplay.max_rejections + 1
        candidates: list[Candidate] = []
        judged: dict[str, Judgement] = {}  # this turn's rejected proposals by canonical command
        fallback = None
        parse_failures: list[dict] = []
        for _ in range(attempts):
            try:
                proposal = self._propose(context)
            except InvalidReply as exc:
                parse_failures.extend(exc.parse_failures)
                fallback = f"{UNPARSEABLE_FALLBACK}:{exc.kind}"
                break
            parse_failures.extend(proposal.parse_failures)
            command, thought = proposal.command, proposal.thought
            refusal = why_not_run(command)
            again = canonical_command(command) in judged
            if refusal is not None:  # never judged, never run, never a loop: the agent is told why
                judgement = Judgement(0.0, refusal, source=NOT_RUN)
                emit(
                    events,
                    EventType.COMMAND_REFUSED,
                    f"Refused {command[:40]!r}: {refusal}",
                    level="WARNING",
                    turn=turn,
                    command=command[:200],
                    reason=refusal,
                )
            else:
                judgement = self._judge(command, replace(context, proposal_thought=thought), events, turn, judged)
                if context.review_objectives and self._take_review():
                    context = replace(context, review_objectives=False)  # one review a turn
            accepted = judgement.score >= threshold and judgement.source not in BLOCKING_SOURCES
            candidates.append(Candidate(command, judgement, accepted, thought, proposal.note))
            if accepted or forced:
                break
            if refusal is None:
                self.loop_break.note_rejection(turn, context.view.room_id, command, events)
                judged[canonical_command(command)] = judgement
            if again:  # the agent insists on a command already rejected this turn: more asks would only repeat it
                break
            context = context.with_feedback(command, why_rejected(judgement, threshold))
        if not forced and candidates and all(c.judgement.source in BLOCKING_SOURCES for c in candidates):
            fallback = "every_candidate_blocked"
        return candidates, fallback, parse_failures

    def _judge(self, command: str, context, events: list[dict], turn: int, judged: dict[str, Judgement]) -> Judgement:
        """Precheck, loop-break block, critic, loop-break adjustments: the critic is called only when its verdict
        can change the outcome (never for a command off the table, nor again for one it judged this turn).

        The pre-check tells the agent the game's own answer once a turn: an agent that proposes the command again,
        having read it, is judged as any other command (the game would answer the same, and nothing else runs in
        its place)."""
        view = context.view
        earlier = judged.get(canonical_command(command))
        insists = earlier is not None and earlier.source == "precheck"
        checked = None if insists else self.precheck.check(command)
        judgement = checked or self.loop_break.blocked(command, view, events, turn)
        if judgement is None and earlier is not None and not insists:
            return earlier
        judgement = judgement or self._evaluate(command, context)
        return self.loop_break.adjust(command, judgement, view, events, turn)

    def _propose(self, context) -> Proposal:
        while True:
            try:
                return self.agent.propose(context)
            except LLMCallFailed:
                continue  # the client counts failures in a row and raises LLMUnavailable at the limit

    def _take_review(self) -> bool:
        """Keep the critic's objective review of this turn, if its last call gave one."""
        review = self.critic.drain_review()
        if review is not None:
            self.review = review
        return review is not None

    def _evaluate(self, command: str, context) -> Judgement:
        try:
            return self.critic.evaluate(command, context)
        except LLMCallFailed as exc:
            offline = OfflineCritic().evaluate(command, context)
            return Judgement(offline.score, f"[critic call failed: {exc.category}; offline score] {offline.reason}")

    def _pick(self, candidates: list[Candidate], forced: bool) -> Candidate | None:
        """The accepted candidate, else the best-scoring one (the earliest among equals), never a precheck fail."""
        if not candidates:
            return None
        if forced or candidates[-1].accepted:
            return candidates[-1]
        eligible = [c for c in candidates if c.judgement.source not in BLOCKING_SOURCES] or candidates
        return max(eligible, key=lambda c: c.judgement.score)

    # -- bookkeeping -------------------------------------------------------------------------------------
    def _end(self, reason: Ending, detail: str = "") -> None:
        self.game_state.game_over_flag = True
        self.game_state.termination_reason = reason
        logger.bind(event_type=EventType.EPISODE_END, reason=reason).info(
            f"Episode ends after {self.game_state.turn_count} turns: {reason}" + (f" ({detail})" if detail else "")
        )

    def _emulator_failed(self, exc: EmulatorFailed) -> None:
        """The live game's emulator crashed or hung: the episode ends there (the turn in progress is not recorded:
        the game gave no answer to it)."""
        self.emulator_failure = str(exc)
        logger.bind(event_type=EventType.EMULATOR_FAILED).error(f"{exc}: the episode ends")
        self._end(Ending.EMULATOR_FAILED, str(exc))

    def _synthesize(self) -> int:
        """A critic that writes notes (the LLM critic) and a knowledge store: the notes, kept only where the records
        back them."""
        if self.knowledge is None or self.game_state.termination_reason in BROKEN_ENDINGS:
            return 0
        try:
            notes = self.critic.synthesize(self.knowledge.episode_facts())
        except (LLMCallFailed, LLMUnavailable) as exc:
            logger.warning(f"no strategic notes: the call failed ({exc})")
            return 0
        if notes is None:  # a critic that writes none
            return 0
        return self.knowledge.add_notes(notes, self.game_state.episode_id)

    def _save_knowledge(self, summary: dict) -> str | None:
        """Add this episode to the knowledge store (on every ending, crashes included); the store's path."""
        if self.knowledge is None:
            return None
        try:
            path = self.knowledge.save(summary)
        except OSError as exc:  # the episode's own records matter more: say so and go on
            logger.warning(f"knowledge store not written: {exc.strerror or exc}")
            return None
        return str(path) if path is not None else None

    def _finish(self, folder: Path, wall_seconds: float) -> Path:
        notes = self._synthesize()  # first: its call counts in the summary below
        try:
            self.map.export(folder)
        except OSError as exc:  # the summary below says whether the folder is writable at all
            logger.warning(f"map not written: {exc.strerror or exc}")
        unreadable = self.critic.unreadable_verdicts()
        summary = {
            "episode_id": self.game_state.episode_id,
            "game": self.session.game_name,
            "story_file": str(self.session.story_file),
            "fully_supported": self.session.supported,
            "agent": self.agent.kind,
            "critic": self.critic.kind,
            "forced": self.recorder.turns > 0 and self.recorder.forced_turns == self.recorder.turns,
            "turns": self.recorder.turns,
            "final_score": self.view.score if self.view else 0,
            "best_score": self.best_score,
            "max_score": self.session.max_score,
            "unreadable": self.session.unreadable(),
            "termination_reason": self.game_state.termination_reason,
            "emulator_failure": self.emulator_failure,
            # probes of the shadow emulator skipped because it crashed or hung, by probe (JerichoSession._probe)
            "probe_failures": dict(self.session.probe_failures),
            **self.spending.summary(),
            # critic verdicts it could not read (no score, or one outside 0..1): asked again once, then scored offline
            "critic_retries": unreadable["retried"],
            "critic_fallbacks": unreadable["fallback"],
            "rooms_visited": len(self.map.rooms),
            "wall_seconds": round(wall_seconds, 3),
            "loop_break": self.loop_break.summary(self.recorder.turns),
            "rewinds": self.rewinds,
            "abandoned_turns": self.abandoned_turns,
            "completed_objectives": self.objectives.completed_objectives,
        }
        summary["strategy_notes"] = notes
        summary["knowledge_store"] = self._save_knowledge(summary)
        if summary["llm_calls"]:
            logger.bind(event_type=EventType.LLM_USAGE).info(usage_line(summary))
        path = self.recorder.close(summary)
        for step in self.after_episode:
            try:
                step(folder)
            except OSError as exc:  # the records and summary are what matter; what a step makes can be made again
                logger.warning(f"a step after the episode (report.html) failed: {exc.strerror or exc}")
        return path


def _recorded_guidance(record: TurnRecord) -> str:
    """The guidance a human gave at a loop gate in this turn, as recorded ("" when none was)."""
    answers = [e for e in record.events if e.get("event_type") == EventType.LOOP_COUNTER_RESET]
    return str(answers[-1].get("guidance", "")) if answers else ""


def _candidate_record(candidate: Candidate) -> dict:
    judgement = candidate.judgement
    return {
        "command": candidate.command,
        "score": judgement.score,
        "base_score": judgement.base,
        "reason": judgement.reason,
        "source": judgement.source,
        "accepted": candidate.accepted,
        "thought": candidate.thought,
        "note": candidate.note,
    }
