"""Answering a chat's questions in turn (``Serving``, a part of ``ChatApp``): each question's reply is
shown as it comes, and a user who stops waiting gets the cited sentences that are ready at once."""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import gradio as gr

import qa
from qa.errors import FAILED, one_line
from qa.notices import say
from qa.surfaces.web.guard.clients import who
from qa.surfaces.web.limits import RateLimited, RateLimiter
from qa.surfaces.web.line import DONE, STOP, Asked, Line, reading
from qa.surfaces.web.render import Turn

log = logging.getLogger("qa.app")

# Turns a chat keeps (and shows) in its session, whatever the client sends: with questions cut
# to max_question_chars, this bounds each session's state and the page sent back every turn.
MAX_TURNS = 20
# Seconds an answer's event waits between looks at whether its chat was emptied.
WAKE_S = 1.0
# A question's reply: its answer, or why it has none.
Reply = qa.Answer | str


class Serving:
    """The events that answer a chat's line of questions; ``ChatApp`` gives the engine and the page."""

    limiter: RateLimiter

    @property
    def engine(self) -> qa.QA:
        """The engine."""
        raise NotImplementedError

    def fresh(self) -> qa.QA:
        """The engine, after indexing articles dropped into (or removed from) the folder."""
        raise NotImplementedError

    def shown(self, line: Line) -> str:
        """The chat as it stands."""
        raise NotImplementedError

    def serve(self, line: Line, request: gr.Request | None = None) -> Iterator[tuple[Any, Any]]:
        """Answer the chat's waiting questions one at a time, in the order asked, each shown as it
        goes; nothing when another event answers them already (it takes the new ones too)."""
        run = line.start() if isinstance(line, Line) else None
        if run is None:
            yield gr.skip(), gr.skip()
            return
        try:
            while (asked := line.next(run)) is not None:
                yield from self._serve(line, run, asked, request)
        finally:
            line.release(run)  # the page went away mid-answer too: a later question is served anew
        if run == line.run:
            yield self.shown(line), gr.update(visible=False)

    def _serve(self, line: Line, run: int, asked: Asked,
               request: gr.Request | None) -> Iterator[tuple[Any, Any]]:
        """One question: its reply as it comes (or as ready when the user stops waiting), then its turn."""
        inbox = line.inbox
        assert inbox is not None
        history = [(q, a) for q, a in line.turns if isinstance(a, qa.Answer)]
        reading(lambda: self._replies(asked, history, request), inbox, line.give_up)
        yield self.shown(line), gr.update(visible=True)
        last: qa.Answer | None = None
        reply: Reply | None = None
        while reply is None and run == line.run:
            try:
                kind, item = inbox.get(timeout=WAKE_S)
            except queue.Empty:
                continue  # to look again whether the chat was emptied
            if kind == STOP:
                reply = self._stopped(asked, history, request)
            elif kind == DONE:
                reply = self._ended(last, item, request)
            elif kind == "answer":
                last = item
                if asked.use_llm or item.provisional:  # the final answer joins the turns below
                    line.draft = item
                    yield self.shown(line), gr.skip()
            else:  # a question was added, or the chat emptied
                yield self.shown(line), gr.skip()
        if reply is not None and line.finish(run, asked.question, reply, MAX_TURNS):
            yield self.shown(line), gr.skip()

    def _ended(self, last: qa.Answer | None, error: BaseException | None,
               request: gr.Request | None) -> Reply:
        """The reply once the answering ended: its last answer, or what went wrong, in words."""
        if error is None and last is not None:
            return last
        if isinstance(error, qa.QAError | RateLimited):
            log.info("question refused for %s: %s", who(request), str(error)[:200])
            return str(error)
        log.error("question failed for %s: %s", who(request), one_line(error or ValueError("no answer")))
        return FAILED

    def _stopped(self, asked: Asked, history: Sequence[Turn], request: gr.Request | None) -> Reply:
        """The reply to a question the user stopped waiting for: its cited sentences, found without the
        language model, and no short answer."""
        log.info("%s stopped waiting for an answer", who(request))
        try:
            answer = self.engine.answer(asked.question, history=history, user=who(request), quick=True,
                                        **dates(asked))
        except qa.QAError as exc:
            return str(exc)
        except Exception as exc:  # a bug: one line in the log, the generic message on the page
            log.error("question failed for %s: %s", who(request), one_line(exc))
            return FAILED
        if not answer.answered:  # a refusal is whole without the language model
            return answer
        return replace(answer, short=None, short_span=None, notice=say("stopped"), notice_code="stopped")

    def stop(self, line: Line) -> None:
        """Stop waiting for the answer being read: it ends with what is ready, and the next one begins."""
        if isinstance(line, Line):
            line.tell(STOP)

    def _replies(self, asked: Asked, history: Sequence[Turn],
                 request: gr.Request | None) -> Iterator[qa.Answer]:
        """The provisional answers while the reader reads (or the model writes), then the answer."""
        self.limiter.check(who(request))
        engine = self.fresh()
        if asked.use_llm:
            yield from engine.stream_llm(asked.question, history=history, **dates(asked))
        else:
            yield from engine.stream(asked.question, history=history, user=who(request), **dates(asked))


def dates(asked: Asked) -> dict[str, Any]:
    """The dates a question was asked with, as the engine takes them."""
    return {"since": asked.since[:10].strip() or None, "until": asked.until[:10].strip() or None}
