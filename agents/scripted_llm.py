"""Deterministic stand-ins for a model, for tests and benchmarks: scripted replies, no real API, ever.

- `ScriptedOpenAI` replaces `openai.OpenAI` in process: `LLMClient(config, "key", n, client=ScriptedOpenAI(reply))`
  runs the real client wrapper, reply parsing, token accounting and failure handling; only the HTTP call is
  replaced. `reply(messages)` returns the content or raises an `openai` exception to simulate faults.
- `ScriptedServer` is an OpenAI-compatible HTTP server on 127.0.0.1: the real `openai` client, HTTP included,
  talks to it through `base_url`.
- `WalkthroughModel` is a reply function for either: a perfect player that answers every turn with the next step
  of a walkthrough.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

from agents.prompts import role_of


class ScriptedOpenAI:
    def __init__(self, reply: Callable[[list[dict]], str]):
        self.reply = reply
        self.requests: list[list[dict]] = []
        self.params: list[dict] = []
        """Everything else each request sent (model, temperature, the token cap, response_format)."""
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, model: str, messages: list[dict], **params):
        self.requests.append(messages)
        self.params.append({"model": model, **params})
        content = self.reply(messages)
        prompt = sum(len(str(m["content"])) // 4 for m in messages)
        completion = len(str(content).split())
        return SimpleNamespace(
            choices=[SimpleNamespace(message=SimpleNamespace(content=content))],
            usage=SimpleNamespace(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion),
        )


def cycling_replies(replies: list[str], critic_reply: str = '{"score": 0.8, "reason": "plausible"}'):
    """A reply function: agent prompts get `replies` in turn (cycling); critic prompts a fixed JSON verdict."""
    position = 0

    def reply(messages: list[dict]) -> str:
        nonlocal position
        if role_of(messages) != "agent":
            return critic_reply
        text = replies[position % len(replies)]
        position += 1
        return text

    return reply


PLAUSIBLE_VERDICT = {"score": 0.8, "reason": "a plausible next step", "completed": [], "new_objectives": []}
"""The scripted critic's reply to every request: a passing score, and an empty objective review (read only when
the prompt asks for one)."""


class WalkthroughModel:
    """A model that answers the agent's prompts of turn N with step N of `commands`, as JSON the way the prompt
    asks (`{"thought": ..., "command": step}`), and the critic with PLAUSIBLE_VERDICT. Rejected, it proposes the same
    step again (a stubborn model: the most calls a rejection can cost, and the step it means is never given up).

    `turn` says which turn the harness is playing (the orchestrator's turn count): set it once the orchestrator
    is built. Past the last step, the last step is repeated."""

    def __init__(self, commands: list[str], turn: Callable[[], int] = lambda: 1):
        self.commands = commands
        self.turn = turn

    def step(self) -> str:
        """The step of the turn being played."""
        return self.commands[min(max(self.turn(), 1), len(self.commands)) - 1]

    def __call__(self, messages: list[dict]) -> str:
        if role_of(messages) != "agent":
            return json.dumps(PLAUSIBLE_VERDICT)
        command = self.step()
        return json.dumps({"thought": f"Next step of my plan: {command}.", "command": command})


CHARS_PER_TOKEN = 4
"""The scripted server's token estimate (a common rule of thumb for English text with OpenAI's tokenizers)."""


def estimated_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
    """Answer an HTTP request with `payload` as a JSON body."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@dataclass(frozen=True)
class ReasoningModel:
    """How the scripted server answers when it plays a reasoning model.

    As OpenAI documents its o-series and gpt-5 (`refuses_chat_parameters`): a request with `max_tokens`, or with a
    temperature other than 1, is refused with a 400 in OpenAI's words; the model reasons `thinking` tokens the
    reply never shows, then answers; when the cap (`max_completion_tokens`) is spent before the answer is whole, the
    content is empty and finish_reason is `length`, the usage counting the cap as reasoning tokens.
    As DeepSeek-R1 or QwQ are served by vLLM or Ollama (`think_block`): the reasoning is in the content, in a
    `<think>` block before the answer, and a cap cuts the content where it falls (an unclosed block)."""

    thinking: Callable[[int], int] = lambda request: 1500
    """Tokens of reasoning before the answer, by request number (from 1)."""
    refuses_chat_parameters: bool = True
    think_block: bool = False


THINKING = "Let me weigh what the room offers. "
"""The words a think block is made of."""
UNSUPPORTED_MAX_TOKENS = (
    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
)
UNSUPPORTED_TEMPERATURE = (
    "Unsupported value: 'temperature' does not support {value} with this model. Only the default (1) value is "
    "supported."
)


class ScriptedServer:
    """`POST /v1/chat/completions` on a free port of 127.0.0.1, answered by `reply(messages)`.

    Usage in every answer is estimated from characters (`CHARS_PER_TOKEN`). Use as a context manager; `base_url`
    is what `[tool.zorkgpt.llm] base_url` takes. With `reasoning`, the server plays a reasoning model
    (ReasoningModel)."""

    def __init__(self, reply: Callable[[list[dict]], str], reasoning: ReasoningModel | None = None):
        self.reply = reply
        self.reasoning = reasoning
        self.calls: Counter = Counter()
        """Requests answered, by role (agent, critic)."""
        self.refused = 0
        """Requests refused for a parameter the reasoning model does not take."""
        self.cut = 0
        """Replies the cap cut before they were whole."""
        self.bodies: list[dict] = []
        """Every request's parameters but its messages, in order."""
        self.last_messages: dict[str, list[dict]] = {}
        """The messages of the last request of each role."""
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(5)

    def answer(self, body: dict) -> tuple[int, dict]:
        """(HTTP status, body) of the answer to one request."""
        messages = body.get("messages") or []
        with self._lock:  # the reply function keeps a script position: one request at a time
            self.bodies.append({key: value for key, value in body.items() if key != "messages"})
            refusal = self._refusal(body)
            if refusal is not None:
                self.refused += 1
                return 400, {"error": {"message": refusal, "type": "invalid_request_error", "param": None}}
            self.calls[role_of(messages)] += 1
            self.last_messages[role_of(messages)] = messages
            content = self.reply(messages)
            request = len(self.bodies) - self.refused
        prompt = sum(estimated_tokens(str(m.get("content", ""))) for m in messages)
        content, completion, reasoning, finish = self._reasoned(content, body, request)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if self.reasoning is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        message = {"role": "assistant", "content": content}
        return 200, {
            "id": f"chatcmpl-scripted-{sum(self.calls.values())}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    def _refusal(self, body: dict) -> str | None:
        if self.reasoning is None or not self.reasoning.refuses_chat_parameters:
            return None
        if "max_tokens" in body:
            return UNSUPPORTED_MAX_TOKENS
        if body.get("temperature", 1) != 1:
            return UNSUPPORTED_TEMPERATURE.format(value=body["temperature"])
        return None

    def _reasoned(self, content: str, body: dict, request: int) -> tuple[str, int, int, str]:
        """(content, completion tokens, reasoning tokens among them, finish_reason) of `content` as the model
        gives it under the request's cap."""
        if self.reasoning is None:
            return content, estimated_tokens(content), 0, "stop"
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        thinking = self.reasoning.thinking(request)
        if self.reasoning.think_block:
            reasoning = THINKING * max(1, thinking * CHARS_PER_TOKEN // len(THINKING))
            content = f"<think>\n{reasoning}</think>\n{content}"
            if cap is not None and estimated_tokens(content) > cap:
                with self._lock:
                    self.cut += 1
                return content[: cap * CHARS_PER_TOKEN], cap, 0, "length"
            return content, estimated_tokens(content), 0, "stop"
        if cap is not None and thinking + estimated_tokens(content) > cap:
            with self._lock:
                self.cut += 1
            return "", cap, min(cap, thinking), "length"
        return content, thinking + estimated_tokens(content), thinking, "stop"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class ChatCompletionsHandler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                status, payload = 404, {"error": {"message": "only /v1/chat/completions is served"}}
                if self.path.endswith("/chat/completions"):
                    status, payload = server.answer(json.loads(self.rfile.read(length) or b"{}"))
                send_json(self, status, payload)

            def log_message(self, *args) -> None:  # no request lines on the console
                pass

        return ChatCompletionsHandler
