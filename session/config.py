"""Configuration: one pydantic model per `[tool.zorkgpt.*]` section of pyproject.toml.

Here are the session's own sections (the game and its turn loop, files, knowledge, the loop break's shared settings);
the others are registered by the modules whose code they set (`SectionTable.register_section`), imported by name
before anything is validated (BUILT_IN_MODULES), as plugins are. Each field's docstring is its documentation; the
designs a section cites (design 000-004) are in docs/design.md. An unknown key or an out-of-range value raises
`ConfigError`, naming the key and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails

from session.config_loading import TableError, describe, located, merged_tables, read_tables
from session.emulator import DEFAULT_TIME_LIMIT
from session.plugins import MODULE_NAME, OBJECT_PATH, import_modules

BUILT_IN_MODULES = ("agents.llm_settings", "managers.loop_break", "session.telemetry_settings")
"""The modules that register the built-in sections (`[tool.zorkgpt.llm]`, each loop-break detector's, in the order
the loop break asks the detectors, `[tool.zorkgpt.telemetry]`), imported by name as plugins are, before any table is
validated or listed: every configuration has their sections, and the session imports neither package."""

STATE_SIGNALS = (
    "new_room",
    "new_world_state",
    "new_room_inventory",
    "new_object_state",
    "new_game_variable",
    "new_position",
    "new_information",
    "new_arrangement",
)
"""The progress signals read off a turn's novelty (managers.novelty.NOVELTY_KINDS holds them, with `new_score`)."""
ProgressSignal = Literal["score", "objective", *STATE_SIGNALS]
DEFAULT_PROGRESS_SIGNALS = ["score", *(signal for signal in STATE_SIGNALS if signal != "new_world_state")]
"""What counts as progress by default: the score and every state signal but `new_world_state`, in that order;
`objective` is opt-in (docs/loop-break.md, why the defaults are what they are)."""
KIND_NAME = r"^[a-z][a-z0-9_-]{0,31}$"
"""What an agent or critic kind may be called. Which kinds exist is the registry's to say (agents.registry, checked
when an episode is wired): the configuration only reads the name."""
KIND_REFERENCE = rf"{KIND_NAME}|{OBJECT_PATH}"
"""What `gameplay.agent` / `gameplay.critic` may say: a registered kind's name, or a plugin's `module:attribute`
(session.plugins.OBJECT_PATH; agents.registry says what it may name)."""


class ConfigError(Exception):
    """The configuration file or a flag holds an unknown key or a value out of range."""


@cache
def import_built_ins() -> None:
    """Import BUILT_IN_MODULES (once per process): each registers its sections."""
    import_modules(BUILT_IN_MODULES)


class Section(BaseModel):
    """The settings of one `[tool.zorkgpt.*]` table: an unknown key is refused, no value is coerced, and each field's
    docstring is its description."""

    # strict: `max_turns_per_episode = true` is an error, not 1
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_assignment=True, strict=True)

    def check_with(self, table: SectionTable) -> None:
        """Raise ValueError when these settings do not fit the others of the table they are a section of (its own
        keys, its other sections); asked once every section of it exists. Nothing to check by default."""


class SectionTable(Section):
    """A table whose sections other modules register (`register_section`): each is validated by its own model under
    its name, beside the table's own keys, with its defaults when not given; a name that is neither a key nor a
    registered section is an unknown key, as in any table. The model's fields never change, whatever is registered."""

    model_config = ConfigDict(extra="allow")  # the registered sections, validated by `_with_registered_sections`
    _path: ClassVar[str]
    """The table's name in messages."""
    _registered: ClassVar[dict[str, type[Section]]]
    """Section name -> its model, in the order they were registered (each table its own)."""

    @classmethod
    def register_section(cls, name: str, model: type[Section]) -> None:
        """Add the section `name`, validated by `model`, after those registered before. The same section again
        changes nothing; ValueError for a name that is another key or section of the table."""
        if name in cls.model_fields or cls._registered.get(name, model) is not model:
            raise ValueError(f"{cls._path}.{name} is taken by another setting or section")
        cls._registered[name] = model

    @classmethod
    def unregister_section(cls, name: str) -> None:
        """Drop a section `register_section` added (a test's toy detector)."""
        cls._registered.pop(name, None)

    @classmethod
    def section_models(cls) -> dict[str, type[Section]]:
        """Section name -> its model: the fields' sections, then the registered ones in their order."""
        import_built_ins()
        own = {name: info.annotation for name, info in cls.model_fields.items() if _is_section(info.annotation)}
        return {**own, **cls._registered}

    def sections(self) -> dict[str, Section]:
        """Every section of this table, by name, in the order of `section_models` (less any registered since it was
        made)."""
        found = {name: getattr(self, name, None) for name in self.section_models()}
        return {name: section for name, section in found.items() if section is not None}

    @model_validator(mode="wrap")
    @classmethod
    def _with_registered_sections(cls, data: Any, handler: ModelWrapValidatorHandler[SectionTable]) -> SectionTable:
        """The registered sections, each validated by its model, every problem reported at once, each at its key;
        then each section checked against the rest of the table (`Section.check_with`)."""
        import_built_ins()
        if not isinstance(data, dict):  # a table given whole, or one of its keys assigned
            table = handler(data)
            table._check_sections()
            return table
        problems: list[InitErrorDetails] = []
        given: dict[str, Section] = {}
        for name, model in cls._registered.items():
            if name in data:
                try:
                    given[name] = model.model_validate(data[name])
                except ValidationError as exc:
                    problems += located(exc, (name,))
        unknown = [name for name in data if name not in cls.model_fields and name not in cls._registered]
        problems += [{"type": "extra_forbidden", "loc": (name,), "input": data[name]} for name in unknown]
        try:
            table = handler({key: value for key, value in data.items() if key in cls.model_fields})
        except ValidationError as exc:
            if not problems:
                raise
            problems = located(exc, ()) + problems
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        sections = {name: given[name] if name in given else model() for name, model in cls._registered.items()}
        object.__setattr__(table, "__pydantic_extra__", sections)
        table._check_sections()
        return table

    def __setattr__(self, name: str, value: Any) -> None:
        # Its extra keys are the registered sections only, validated as they are set: a misspelt setting stays an
        # error, as in every other table (where pydantic refuses it).
        if name in type(self).model_fields or name.startswith("_"):
            super().__setattr__(name, value)
        elif name in self._registered:
            extra = self.__pydantic_extra__
            before, extra[name] = extra[name], self._registered[name].model_validate(value)
            try:
                self._check_sections()
            except ValueError:
                extra[name] = before
                raise
        else:
            raise ValueError(f"{self._path} has no setting or section {name!r}")

    def _check_sections(self) -> None:
        for section in self.sections().values():
            section.check_with(self)


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Section)


class GameplayConfig(Section):
    """`[tool.zorkgpt.gameplay]`: the episode and the agent/critic turn loop."""

    agent: str = Field("auto", pattern=KIND_REFERENCE)
    """Agent kind: one registered in agents/registry.py (`main.py --help` lists them), a plugin's `module:attribute`
    (docs/extending.md), or `auto`: `llm` when the API key variable is set, else `offline`."""
    critic: str = Field("auto", pattern=KIND_REFERENCE)
    """Critic kind: one registered in agents/registry.py (`offline`, `llm`: the model judges every proposal,
    `when_risky`: the model only when its verdict can change the outcome, else the offline score), or `auto`:
    `when_risky` when the API key variable is set, else `offline`."""
    max_turns_per_episode: int = Field(500, ge=1, le=1_000_000)
    """Hard cap on turns in one episode (`termination_reason = "max_turns"`)."""
    critic_rejection_threshold: float = Field(0.5, ge=0.0, le=1.0)
    """A proposal whose (adjusted) critic score is below this is rejected and regenerated."""
    max_rejections: int = Field(3, ge=0, le=20)
    """Regenerations per turn; after that the best-scoring candidate runs."""
    max_cost_usd: float | None = Field(None, gt=0.0, le=1_000_000.0)
    """End the episode (`termination_reason = "budget"`) once its LLM calls have cost this much. Needs a price for
    every model in use (`[tool.zorkgpt.llm] prices`). None: no budget."""
    seed: int | None = Field(None, ge=1, le=2**31 - 1)
    """Emulator RNG seed. None: the game's walkthrough seed (zork1: 12), so runs are reproducible. Jericho reads 0 as
    "no seed" and keeps a C int, hence the range."""
    episodes: int = Field(1, ge=1, le=10_000)
    """Episodes of the game played back to back (`max_turns_per_episode` each), with `run.json` and `run.md` over
    them; each learns from the ones before through the knowledge store."""
    emulator_timeout_seconds: float = Field(DEFAULT_TIME_LIMIT, gt=0.0, le=3600.0)
    """Seconds the game's Z-machine emulator, or the shadow one that plays probes on copies, may take to answer one
    call before its process is killed as hung: the episode ends (`emulator_failed`), or the probe is skipped. A step
    takes milliseconds and an emulator's start well under a second, so a loaded machine never reaches it and a real
    hang costs it once."""


class OrchestratorConfig(Section):
    """`[tool.zorkgpt.orchestrator]`: the turn loop's plumbing."""

    max_consecutive_llm_failures: int = Field(3, ge=1, le=100)
    """Failed LLM calls of one role (agent, critic, objectives) in a row, after the client's own retries, that end
    the episode as `llm_unavailable`: a critic that is always down is not hidden by an agent that answers."""
    max_invalid_replies: int = Field(3, ge=1, le=20)
    """Agent replies that fail validation in one proposal before the turn runs nothing (never a command the model
    did not write: the record says why, and the next turn asks again). Once two proposals in a row had no usable
    reply, one fewer for each further one (at least one), until a reply is usable again."""
    history_turns: int = Field(8, ge=0, le=200)
    """Recent turns (command and response) shown to the agent and critic."""
    console_log_level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Level of the human-readable console log."""
    file_log_level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Level of the JSON log in the episode's folder (`episode.log.jsonl`). DEBUG adds the loop break's
    `progress_check` line, one a turn, which every record in events.jsonl already holds; it costs about 0.04 ms a
    turn."""


class FilesConfig(Section):
    """`[tool.zorkgpt.files]`: where the story file is and where episodes are written."""

    game_file_path: str = "games/zork1.z5"
    """Story file used when neither `--rom` nor `ZORK_ROM` is given (git-ignored)."""
    episode_dir: str = "game_files/episodes"
    """Each episode writes `<episode_dir>/<episode_id>/` (events.jsonl, summary.json, map, log)."""


class KnowledgeConfig(Section):
    """`[tool.zorkgpt.knowledge]`: what earlier episodes of a game learned, carried to the next ones."""

    enabled: bool = True
    """Read the game's store at the start of an episode and add the episode to it at its end. False: play fresh."""
    path: str | None = None
    """The store's JSON file (a Markdown view is written beside it). None: `<episode_dir>/knowledge/<game>.json`."""


class DetectorSection(Section):
    """A loop-break detector's own section, `[tool.zorkgpt.loop_break.<name>]` (managers/loop_break/detector.py)."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any] | None:
        """This section's settings under which its stop rule never ends an episode (None: it has no stop rule, or
        it is the backstop that stays)."""
        return None


class LoopBreakConfig(SectionTable):
    """`[tool.zorkgpt.loop_break]`: progress, the stop rules' clock, warnings, objectives; each detector's settings in
    its own section below it (`[tool.zorkgpt.loop_break.churn]`, ...), registered with the detector."""

    _path = "loop_break"
    _registered = {}

    enabled: bool = True
    """Master switch: false turns the whole loop-break system off (no termination, warnings or penalties)."""
    stuck_check_interval: int = Field(1, ge=1, le=1000)
    """Check for termination every N turns (1: every turn; 10 reproduces the original design)."""
    progress_signals: list[ProgressSignal] = Field(default_factory=lambda: list(DEFAULT_PROGRESS_SIGNALS), min_length=1)
    """What counts as progress: `score` (a value never reached this episode), `objective` (verified completion),
    `new_room` (first visit), `new_room_inventory` (first arrival in a room with this inventory),
    `new_object_state` (the command gave an object a place or attributes it never had), `new_game_variable` (the
    command gave a game variable a value it never had), `new_information` (a question, a look-up or a reply answered
    with something never said), `new_position` (a move inside one room id answered with a text never seen),
    `new_arrangement` (a command that is no move left the objects the player pushed, never held, in places they
    never stood in together), `new_world_state` (a whole-world hash never seen; noisy, the design's behaviour). See
    managers/novelty.
    The design's set is ["score", "objective", "new_room"]."""
    enable_objective_based_progress: bool = True
    """Count verified objective completions as progress (needs `objective` in progress_signals)."""
    objective_update_interval: int = Field(10, ge=1, le=1000)
    """llm mode: the critic is asked for new objectives on the first turn and every this many turns (in its verdict:
    no call of its own)."""
    objective_staleness_turns: int = Field(30, ge=1, le=10_000)
    """A discovered objective is dropped after this many turns without progress."""
    max_objectives: int = Field(8, ge=1, le=50)
    """Discovered objectives kept at once (oldest dropped first)."""
    wait_allowance: int = Field(16, ge=0, le=100_000)
    """Waits (`wait`, `z`) since the last progress, up to this many, do not count towards any stop rule and never
    repeat: waiting is how a player lets a timed event come (a sheriff, a falling feather). The waits after them repeat
    like any command, and more than this many in a row all repeat, with every turn since the last progress on the
    repetition rule's clock: a player who only waits is stopped on the first wait past the free ones. 0: a wait is a
    turn like any other (the designs)."""
    wait_detours: int = Field(3, ge=0, le=100)
    """With each wait left out, up to this many of the other turns since the wait before it are left out too: a player
    waiting for a timed event looks around between waits. Turns after the last wait count. A loop that mixes in waits
    gets at most (wait_allowance - 1) × this turns more on the no-progress clock; the repetition rule ends it once its
    waits repeat."""
    weak_signals: list[ProgressSignal] = Field(default_factory=lambda: ["new_room_inventory"])
    """Progress by these signals alone restarts every clock but one: the fruitless rule also counts, and stops on,
    the turns since the last progress by any other signal (every wait left out), so that a semi-novel loop whose walks
    reach rooms it had seen only with other things in hand does not restart its count at each. []: the fruitless rule
    counts from the last progress alone."""
    penalty_min_turns_stuck: int = Field(4, ge=0, le=100_000)
    """Penalties apply only when at least this many turns have passed since the last progress."""
    steering_pressure: float = Field(0.67, ge=0.0, le=1.0)
    """Penalties, the stuck warning and the loop notes to the agent only once a stop rule has come this far towards
    ending the episode (its pressure: the count reached over the count that stops, `Detector.pressure`): below it the
    play may be healthy and is left alone; past it a loop is steered for the rest of the way to its stop. 0: penalties
    from penalty_min_turns_stuck on, as design document 000 has them."""
    enable_stuck_warnings: bool = True
    """Show the stuck warning (countdown, objectives, hints) to the agent and critic."""
    warning_lead_turns: int = Field(8, ge=1, le=100_000)
    """Show the warning this many turns before a stop rule could end the episode at the earliest (must be below
    no_progress.max_turns)."""
    enable_exploration_hints: bool = True
    """Add action-novelty hints and the room's unexplored exits to the warning."""
    action_novelty_window: int = Field(15, ge=1, le=1000)
    """Hints suggest commands not tried within this many recent turns."""
    destination_prediction: Literal["map", "lookahead"] = "map"
    """`map`: predict a move's destination from the learned map; `lookahead`: run it on a snapshot and restore."""
    on_stuck: Literal["end", "rewind"] = "end"
    """What a stop verdict does. `end`: the episode ends (the design's behaviour). `rewind`: the game goes back to
    exactly where it was right after the last progress, what the abandoned turns did is off the table where they did it
    for `rewind_ban_turns`, the agent is told what it tried, and play goes on (turns and LLM calls keep counting;
    max_turns_per_episode and max_cost_usd still end the episode). A point is gone back to once: a verdict with no
    progress since the last rewind ends the episode, as does the verdict after `max_rewinds` rewinds."""
    max_rewinds: int = Field(3, ge=0, le=1000)
    """Rewinds an episode may make (`on_stuck = "rewind"`); the verdict after the last one ends the episode."""
    rewind_ban_turns: int = Field(40, ge=1, le=100_000)
    """After a rewind, each command the abandoned turns made is refused in the situation it was made in for this many
    turns (never every way out of a room: the ways out then stay allowed)."""


class GameConfiguration(SectionTable):
    """The whole `[tool.zorkgpt]` table."""

    _path = "tool.zorkgpt"
    _registered = {}

    gameplay: GameplayConfig = Field(default_factory=GameplayConfig)
    """Episode length and the turn loop."""
    orchestrator: OrchestratorConfig = Field(default_factory=OrchestratorConfig)
    """Turn-loop plumbing."""
    files: FilesConfig = Field(default_factory=FilesConfig)
    """Story file and output folder."""
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    """Learning across episodes."""
    loop_break: LoopBreakConfig = Field(default_factory=LoopBreakConfig)
    """The loop-break system, each detector's settings in a section of its own."""
    plugins: list[Annotated[str, StringConstraints(pattern=MODULE_NAME)]] = Field(default_factory=list)
    """Modules imported before the rest of the configuration is read (`from_toml`, `from_dict`), in every process
    that reads it (batch workers, Ray tasks, `--resume`): each registers agent or critic kinds, detectors, event
    types or markers (docs/extending.md). A module that does not import is one error line."""

    @classmethod
    def from_toml(cls, path: str | Path = "pyproject.toml", overrides: dict[str, dict[str, Any]] | None = None):
        """Load `[tool.zorkgpt.*]` from `path`, apply `overrides` ({section: {key: value}}) and validate.

        A missing file gives the defaults only when it is the default `pyproject.toml`; a named file must exist.
        """
        try:
            data = read_tables(Path(path))
        except TableError as exc:
            raise ConfigError(str(exc)) from None
        return cls.from_dict(data, overrides, source=str(path))

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None, source: str = "config"
    ) -> GameConfiguration:
        """`data` (`[tool.zorkgpt]`) with `overrides` over it, validated; ConfigError names every key at fault."""
        try:
            return cls.model_validate(merged_tables(data, overrides or {}, source))
        except TableError as exc:
            raise ConfigError(str(exc)) from None
        except ValidationError as exc:
            raise ConfigError(describe(exc, source, cls)) from None


@dataclass(frozen=True)
class RunOptions:
    """What a run takes besides the configuration (main.py's flags of the same names)."""

    rom: str | None = None
    """The story file; None: `$ZORK_ROM`, then `[tool.zorkgpt.files] game_file_path`."""
    actions: str | None = None
    """The replay agent's file of commands (`--agent replay --actions FILE`)."""
    quiet: bool = False
    """No per-turn console line."""


def stop_rules_off() -> dict[str, dict[str, Any]]:
    """`[tool.zorkgpt.loop_break]` settings under which no stop rule but the no-progress backstop ends an episode:
    every detector's section answers for its own rule (`DetectorSection.stop_rule_off`)."""
    sections = ((name, model.stop_rule_off()) for name, model in LoopBreakConfig.section_models().items())
    return {name: dict(off) for name, off in sections if off is not None}


def layered(*layers: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Override tables ({section: {key: value}}, as `GameConfiguration.from_toml` takes them) merged in order, a key
    of a later layer over the same key of an earlier one; the layers themselves are left as they were."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for section, values in (layer or {}).items():
            merged.setdefault(section, {}).update(values)
    return merged
