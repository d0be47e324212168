"""What earlier episodes of a game learned, from their records only: a store carried from episode to episode.

Three parts: `store` (the file: its format, reading and writing it, refusing a corrupt or foreign one), `learning`
(what an episode's records add to it, and the notes they back) and `guidance` (what the agent is shown from it each
turn); `episode` joins them as `Knowledge`, one episode's view of the store.
"""

from managers.knowledge.episode import Knowledge
from managers.knowledge.guidance import EARLIER_LINES, ROUTE_BLOWS, ROUTE_TRIES, Guide
from managers.knowledge.learning import DEATH_WORDS_CHARS, ROUTE_SKIP, STUCK_TAIL, Learning
from managers.knowledge.store import (
    KNOWLEDGE_VERSION,
    Command,
    Death,
    EpisodeLine,
    ItemFacts,
    KnowledgeError,
    KnowledgeStore,
    Loss,
    RoomFacts,
    Route,
    RouteStep,
    ScoreEvent,
    StrategyNote,
    StuckLoop,
    load_store,
    to_markdown,
    write_store,
)

__all__ = [
    "DEATH_WORDS_CHARS",
    "EARLIER_LINES",
    "KNOWLEDGE_VERSION",
    "ROUTE_BLOWS",
    "ROUTE_SKIP",
    "ROUTE_TRIES",
    "STUCK_TAIL",
    "Command",
    "Death",
    "EpisodeLine",
    "Guide",
    "ItemFacts",
    "Knowledge",
    "KnowledgeError",
    "KnowledgeStore",
    "Learning",
    "Loss",
    "RoomFacts",
    "Route",
    "RouteStep",
    "ScoreEvent",
    "StrategyNote",
    "StuckLoop",
    "load_store",
    "to_markdown",
    "write_store",
]
