"""The orchestrator: reads like the turn and delegates to the session, the managers and the agents. An episode's
start and finish around it are orchestration/episode.py; how a command is chosen, orchestration/choosing.py."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from loguru import logger

from agents.base import Agent, Critic
from agents.llm_client import LLMClient
from agents.precheck import ObjectPrecheck
from managers.action_memory import ActionMemory
from managers.context import ContextBuilder, Shown, Surroundings
from managers.knowledge import Knowledge
from managers.loop_break import DestinationPredictor, LoopBreak, LoopStatus, Verdict
from managers.loop_break.rewind import Rewinder
from managers.map_graph import MapGraph
from managers.novelty import WorldNovelty
from managers.objectives import ObjectiveManager
from orchestration.choosing import Chooser
from orchestration.episode import (
    GameState,
    ResumeError,
    crash_ending,
    finish,
    log_end,
    log_start,
    new_episode_id,
    open_recorder,
    resume_agent,
    write_episode_file,
)
from orchestration.human_gate import ask_for_guidance
from orchestration.recorder import EpisodeRecorder
from orchestration.spending import Spending
from orchestration.tracing import EpisodeTrace
from orchestration.turn_record import turn_record, with_objectives
from session.config import GameConfiguration
from session.context import AgentContext, Guidance
from session.events import EventType
from session.jericho_session import JerichoSession
from session.outcomes import outcome_between
from session.records import DEATH_ENDING, NOT_RUN, Ending, EpisodeOver, GameView, TurnRecord


class Orchestrator:
    """One episode of one game, turn by turn: `play_episode`."""

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
        self.rewinder = Rewinder(config.loop_break, session)
        gameplay = config.gameplay
        self.chooser = Chooser(
            agent, critic, self.loop_break, gameplay.critic_rejection_threshold, gameplay.max_rejections
        )
        self.view: GameView | None = None
        self.novelty: WorldNovelty | None = None
        self.recorder: EpisodeRecorder | None = None
        self.best_score = 0
        self.spending = Spending(llm_client)
        self.agent_memory: dict | None = None
        """The agent's memory as last recorded (TurnRecord.agent_memory: a record gives it when it changed)."""
        self.last_record: TurnRecord | None = None
        """The previous turn's record: what the critic's objective review judges."""
        self.run_info: dict = {}
        """What the caller adds to episode.json for `--resume` (e.g. the replay file)."""
        self.emulator_failure: str | None = None
        """How the live game's emulator failed, when that ended the episode (Ending.EMULATOR_FAILED)."""
        self.trace = EpisodeTrace(self)
        """The episode's spans, when this process sends traces (session.telemetry); nothing otherwise."""

    # -- the episode -------------------------------------------------------------------------------------
    def play_episode(self, resume: list[TurnRecord] | None = None) -> Path:
        """Play one episode; returns the path of summary.json (written even when the episode crashes).

        `resume`: the records of an interrupted episode of this folder. The game, the map, the objectives, every
        detector and the agent's place in its script are brought to the state they had after the last of them
        (the emulator is deterministic; each record is played again through the turn), then play goes on in the
        same files.
        """
        folder = Path(self.config.files.episode_dir) / self.game_state.episode_id
        with self.trace.episode(self.game_state.episode_id, folder, len(resume or [])):
            return self._play(folder, resume)

    def _play(self, folder: Path, resume: list[TurnRecord] | None) -> Path:
        started = time.perf_counter()
        self.recorder = open_recorder(self.config, folder, self.quiet, bool(resume))
        try:
            self._begin(folder, resume or [])
        except EpisodeOver as over:  # the game could not start, or not replay to where it was: no turn is played
            self._end(over)
            return finish(self, folder, time.perf_counter() - started)
        try:
            self._run_game_loop()
        except BaseException as exc:
            self.game_state.termination_reason = crash_ending(exc)
            raise
        finally:
            summary_path = finish(self, folder, time.perf_counter() - started)
        return summary_path

    def _begin(self, folder: Path, resume: list[TurnRecord]) -> None:
        """The episode's start: the game reset, what the managers read from it, and the records of an episode
        resumed played again (or episode.json written for a new one)."""
        self.view = self.session.reset()
        self.chooser.precheck = ObjectPrecheck(self.session)
        self.novelty = WorldNovelty.of(self.view, self.session)
        self.map.visit(self.view.room_id, self.view.room_name, 0)
        if self.agent.prompted or self.critic.prompted:  # a model reads the prompt: what the game itself says
            self.contexts.read_game(self.session)
        self.contexts.begin(self.view)
        self.rewinder.mark(0, self.novelty.situation)
        if resume:
            self._resume(resume)
        else:
            write_episode_file(folder, self)
        log_start(self, resumed=bool(resume))

    def _resume(self, records: list[TurnRecord]) -> None:
        """Play the records' turns again through the turn (their commands, not their agent's or critic's), muted:
        their lines were logged when they were played. Raises ResumeError when the game does not replay as
        recorded, or when the records already ended the episode."""
        self.recorder.muted = True
        try:
            for recorded in records:
                record = self._replay_turn(recorded)
                stop = self._after_turn(record, replaying=True)
                try:
                    self._check_ending(record, stop)
                except EpisodeOver:
                    raise ResumeError(f"the records end the episode at turn {record.turn}: nothing to resume") from None
        finally:
            self.recorder.muted = False
        resume_agent(self.agent, len(records), self.agent_memory)

    # -- the turn loop -----------------------------------------------------------------------------------
    def _run_game_loop(self) -> None:
        """Turns until one ends the episode: every ending is an EpisodeOver, caught here."""
        try:
            while self.game_state.turn_count < self.config.gameplay.max_turns_per_episode:
                with self.trace.turn(self.game_state.turn_count + 1):
                    record = self._execute_turn_logic()
                    stop = self._after_turn(record)
                    self.trace.took(self.last_record)
                self._check_ending(record, stop)
            raise EpisodeOver(ending=Ending.MAX_TURNS)
        except EpisodeOver as over:
            self._end(over)

    def _execute_turn_logic(self) -> TurnRecord:
        """One turn: the command chosen, run in the game, and the turn's record, built once and whole."""
        started = time.perf_counter()
        turn = self.game_state.turn_count + 1
        view = self.view
        usage_before = self.spending.snapshot()
        forced = self.agent.forced  # read once: a looper agent is forced only during its prefix
        here = self.contexts.surroundings(turn, view, self.map)
        self.objectives.discover(turn, view, self.map, here.visible)
        context, status = self._context(turn, view, here)
        choice = self.chooser.choose(context, turn, forced)
        command, refusal = choice.command, choice.refusal
        after = self.session.step(command) if refusal is None else replace(view, text=f"[not run: {refusal}]")
        category = outcome_between(command, view, after)
        novelty = self.novelty.observe(view, after, command, category, self.session.idle_world, self.session.player)
        memory = self.agent.memory()
        draft = turn_record(
            turn,
            self.agent.kind,
            forced,
            (view, after),
            choice,
            (category, novelty),
            [*status.events, *choice.events],
            self.spending.since(usage_before),
            round(time.perf_counter() - started, 6),
            self.rewinder.rewinds,
            memory if memory != self.agent_memory else None,
        )
        completed, added = self.objectives.reached(draft, choice.review, self.last_record)
        return self._took(with_objectives(draft, completed, added), view, after)

    def _replay_turn(self, recorded: TurnRecord) -> TurnRecord:
        """A turn of an interrupted episode played again to resume it: its rejected proposals noted as when it was
        played, its command run (ResumeError when the game answers otherwise than recorded), its record as written."""
        view = self.view
        self.objectives.discover(recorded.turn, view, self.map, self.contexts.visible_here(view))
        for candidate in recorded.candidates:
            if not candidate["accepted"] and candidate["source"] != NOT_RUN:
                self.loop_break.note_rejection(recorded.turn, view.room_id, candidate["command"])
        after = self.session.step(recorded.command) if recorded.ran else replace(view, text=recorded.response)
        if (after.room_id, after.score, after.text) != (
            recorded.room_id_after,
            recorded.score_after,
            recorded.response,
        ):
            raise ResumeError(f"turn {recorded.turn}: the game does not replay as recorded ({recorded.command!r})")
        category = outcome_between(recorded.command, view, after)
        self.novelty.observe(view, after, recorded.command, category, self.session.idle_world, self.session.player)
        self.spending.add_resumed(recorded)
        self.objectives.restore(recorded)
        return self._took(recorded, view, after)

    def _took(self, record: TurnRecord, view: GameView, after: GameView) -> TurnRecord:
        """What every turn's record is taken into, live or resumed: the managers learn from it, and the game moves
        on to `after`."""
        if record.agent_memory is not None:
            self.agent_memory = record.agent_memory
        self._learn(record)
        self.last_record = record
        self.view = after
        logger.bind(event_type=EventType.TURN, turn=record.turn).info(
            f"turn {record.turn:>4} | {view.room_name} | {record.command} | score {after.score}"
            + (f" | rejected {record.rejections}" if record.rejections else "")
        )
        return record

    def _after_turn(self, record: TurnRecord, replaying: bool = False) -> Verdict | None:
        """What follows every executed turn, in live play and when resuming alike: the loop break's verdict, the
        guidance a human gate asks for (when resuming, the guidance recorded), the objectives pruned, the best score
        kept, a rewind instead of a loop's stop, and the record written with the events they raised (counted when
        resuming: a resumed record has its own). Returns the stop verdict that ends the episode, if any."""
        self.game_state.turn_count = record.turn
        verdict = self.loop_break.observe(record)
        raised = list(verdict.events)
        if verdict.gate is not None and verdict.gate.action == "human":
            guidance = _recorded_guidance(record) if replaying else self._ask_human(verdict.gate.description)
            raised += self.loop_break.accept_guidance(guidance, record.turn)
        self.objectives.prune(record.turn, verdict.progress.last_progress_turn)
        self.best_score = max(self.best_score, record.score_after)
        try:
            self.rewinder.observe(record, verdict.progress.progress)
            rewound = verdict.terminate and self.rewinder.may_rewind(verdict.reason)
            if rewound:
                raised += self._rewind(record, verdict)
        finally:  # written also when a progress point's snapshot or a rewind's restore fails the emulator
            if replaying:
                self.recorder.count(record)
            else:
                self.last_record = replace(record, events=[*record.events, *raised])
                self.recorder.write(self.last_record)
        return verdict if verdict.terminate and not rewound else None

    def _rewind(self, record: TurnRecord, verdict: Verdict) -> tuple[dict, ...]:
        """Put the game back exactly as it was right after the last progress and play on from there: the turns
        since stay in the records (their branch abandoned), the agent is told what they tried, and what they
        repeated is off the table there for a while. Returns the rewind's events."""
        rewound = self.rewinder.rewind(record, verdict.reason, verdict.rule, verdict.why)
        self.view = rewound.view
        self.contexts.rewind()
        situation = self.novelty.restart(rewound.view)
        self.loop_break.rewind(record.turn, situation, rewound.abandoned, rewound.note, start=rewound.point.situation)
        if self.knowledge is not None:
            self.knowledge.note_loop(rewound.abandoned, verdict.reason, self.game_state.episode_id)
        return rewound.events

    def _check_ending(self, record: TurnRecord, stop: Verdict | None) -> None:
        """Raise EpisodeOver when the episode ends after this turn: the game won or lost, a loop's stop verdict
        (`stop`), the budget spent."""
        budget = self.config.gameplay.max_cost_usd
        if record.victory:
            raise EpisodeOver(ending=Ending.VICTORY)
        if record.game_over:
            raise EpisodeOver(ending=DEATH_ENDING)
        if stop is not None:
            raise EpisodeOver(ending=stop.reason or Ending.STUCK)
        spent = self.spending.cost()["total"]
        if budget is not None and spent >= budget:
            raise EpisodeOver(f"${spent:.4f} spent of ${budget:.4f}", Ending.BUDGET)

    def _end(self, over: EpisodeOver) -> None:
        self.game_state.termination_reason = over.ending
        if over.ending == Ending.EMULATOR_FAILED:  # the turn in progress is not recorded: the game gave no answer
            self.emulator_failure = over.detail
        log_end(self.game_state, over)

    def _ask_human(self, description: str) -> str:
        return ask_for_guidance(description, list(self.contexts.recent), self.human_input, self.human_output)

    def _learn(self, record: TurnRecord) -> None:
        """The managers that learn from every executed turn's record (live and when resuming)."""
        self.map.observe(record)
        self.memory.observe(record)
        self.contexts.observe(record)
        if self.knowledge is not None:
            self.knowledge.observe(record, self.game_state.episode_id)

    def _context(self, turn: int, view: GameView, here: Surroundings) -> tuple[AgentContext, LoopStatus]:
        """What the agent and critic may know this turn, built once, with the loop status built on the same facts.
        Directions never tried here steer a stuck warning in their own order: the text's mentions are unverified (a
        quarter of them lead nowhere: benchmarks.context_truth)."""
        objectives = self.objectives.current()
        status = self.loop_break.status(turn, view, objectives, here.untried_primary, here.things)
        shown = Shown(
            objectives=objectives,
            completed_objectives=self.objectives.completed(),
            loop_status=status.text,
            banned=status.banned,
            rewinds=self.rewinder.rewinds,
            max_score=self.session.max_score,
            max_turns=self.config.gameplay.max_turns_per_episode,
            review_objectives=self.objectives.wants_review(turn, self.last_record),
            knowledge=self.knowledge.guidance(view) if self.knowledge is not None else Guidance(),
        )
        return self.contexts.for_agent(turn, view, self.map, self.memory, here, shown), status


def _recorded_guidance(record: TurnRecord) -> str:
    """The guidance a human gave at a loop gate in this turn, as recorded ("" when none was)."""
    answers = [e for e in record.events if e.get("event_type") == EventType.LOOP_COUNTER_RESET]
    return str(answers[-1].get("guidance", "")) if answers else ""
