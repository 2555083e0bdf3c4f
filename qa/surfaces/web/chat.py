"""The chat's events: asking (streamed), uploading, the /ask API, loading the page, a new chat.

``ChatApp`` holds what the events share (the engine, made on first use, and the rate limit);
``qa/surfaces/web/page.py`` lays the page out and wires each event to its method."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import gradio as gr

import qa
from qa.articles.uploads import MAX_UPLOAD_BYTES, may_upload, safe_name
from qa.errors import FAILED, BadInput, one_line
from qa.surfaces.web.guard.clients import who
from qa.surfaces.web.limits import RateLimited, RateLimiter
from qa.surfaces.web.line import LOCK, MAX_WAITING, Asked, Line
from qa.surfaces.web.page import page
from qa.surfaces.web.render import account_html, articles_html, chat_html, status_html
from qa.surfaces.web.serving import Serving

log = logging.getLogger("qa.app")

# Earlier questions an /ask call may pass: each is answered again to follow the conversation.
MAX_HISTORY = 10
# What taking a question gives the page: the conversation, the text taken, the Stop button.
Taken = tuple[Any, Any, Any]


class ChatApp(Serving):
    """The chat's events over one engine, created on first use (not on import)."""

    def __init__(self, engine: qa.QA | None = None) -> None:
        self._engine = engine
        self.config = engine.config if engine is not None else qa.Config.from_env()
        self.limiter = RateLimiter(self.config.serving.rate)

    @property
    def engine(self) -> qa.QA:
        """The engine, made from the QA_* settings on first use."""
        if self._engine is None:
            self._engine = qa.QA(qa.Config.from_env())
        return self._engine

    def fresh(self) -> qa.QA:
        """The engine, after indexing articles dropped into (or removed from) the folder."""
        engine = self.engine
        try:
            if (report := engine.refresh()) is not None:
                log.info("articles folder changed: %d added, %d changed, %d removed", len(report.added),
                         len(report.changed), len(report.removed))
        except qa.QAError as exc:  # answer from the index as it was; the folder is retried once it changes
            log.warning("the articles folder changed but could not be indexed: %s", exc)
        return engine

    def respond(self, question: str, line: Line, use_llm: bool = False, since: str = "", until: str = "",
                request: gr.Request | None = None) -> Taken:
        """Take the question into the chat's line at once, shown with its place in line; ``serve``
        answers it in turn. Returns the chat, the text taken (the page then empties the box if it still
        holds it, not what was typed since) and the Stop button; a full line takes nothing."""
        # Whatever a raw API call sends: text cut to its limits.
        sent = _text(question)
        question = sent[:self.config.retrieval.max_question_chars]
        if not isinstance(line, Line) or not question.strip():
            return gr.skip(), gr.skip(), gr.skip()
        if not line.add(Asked(question, use_llm is True, _text(since), _text(until))):
            log.info("question not taken for %s: %d questions wait already", who(request), MAX_WAITING)
            gr.Warning(f"{MAX_WAITING} questions are waiting already: ask this one once they are answered.")
            return gr.skip(), gr.skip(), gr.skip()
        return self.shown(line), sent, gr.update(visible=True)

    def example(self, question: str, line: Line, use_llm: bool = False, since: str = "", until: str = "",
                request: gr.Request | None = None) -> tuple[Any, Any]:
        """An example asked: taken into the line like a typed question, the box left as it is."""
        chat, _, stop = self.respond(question, line, use_llm, since, until, request)
        return chat, stop

    def shown(self, line: Line) -> str:
        """The chat as it stands: its turns, the question answered and its reply so far, those waiting."""
        with LOCK:
            turns, current, draft = list(line.turns), line.current, line.draft
            waiting, seconds = [a.question for a in line.waiting], line.seconds() if current else 0
        # The first question waits for no other one: it is shown as being answered, as it is at once.
        pending = current.question if current else (waiting.pop(0) if waiting else None)
        return chat_html(self.engine, turns, pending=pending, draft=draft, waiting=waiting, seconds=seconds)

    def upload(self, file: str | None, request: gr.Request | None = None,
               progress: gr.Progress = gr.Progress()) -> tuple[str, str]:  # noqa: B008 - Gradio's way
        """Add an uploaded article; every problem becomes a one-line message, never a traceback."""
        user = request.username if request is not None else None
        if not may_upload(self.config, user):
            log.warning("upload refused: %s may not upload", who(request))
            raise gr.Error("Uploads are off for you: the server allows them with QA_UPLOADS=1, "
                           "or for the users in QA_UPLOADERS.", print_exception=False)
        if not file:
            return status_html("No file received.", False), articles_html(self.engine)
        path = Path(file)
        try:
            return self._add(path, request, progress)
        finally:
            path.unlink(missing_ok=True)  # read (or refused): Gradio's copy is not kept

    def _add(self, path: Path, request: gr.Request | None, progress: gr.Progress) -> tuple[str, str]:
        name, engine = path.name, self.engine
        try:
            # Check the size before reading so a huge file is never loaded into memory.
            size = path.stat().st_size
            if size > MAX_UPLOAD_BYTES:
                raise qa.ArticleError(f"{name}: {size:,} bytes is over the 1 MB limit")
            report = engine.add_article(name, path.read_bytes(),
                                        lambda done, message: progress(done, desc=message))
        except qa.QAError as exc:
            log.warning("upload of %r by %s refused: %s", name[:100], who(request), exc)
            return status_html(f"Not added: {exc}", False), articles_html(engine)
        except OSError as exc:
            return status_html(f"Not added: {name}: the upload could not be read ({exc.strerror}); "
                               "upload it again", False), articles_html(engine)
        added = safe_name(name)
        new = [engine.index.articles[s] for s in report.added] or [engine.index.articles[added]]
        what = new[0].title if len(new) == 1 else f"{len(new)} articles"
        log.info("upload of %s (%d bytes, %d articles) by %s: added", added, size, len(new), who(request))
        return status_html(f"Added {added} ({what}); you can ask about it now.", True), articles_html(engine)

    def ask_api(self, question: str, history: list[str] | None = None,
                request: gr.Request | None = None) -> dict:
        """Answer a question (after the previous questions in history) as Answer.to_dict() JSON."""
        try:
            self.limiter.check(who(request))
            if not isinstance(question, str):
                raise BadInput("question must be text")
            if history is not None and not (isinstance(history, list)
                                            and all(isinstance(h, str) for h in history)):
                raise BadInput("history must be a list of the earlier questions, as text")
            engine, most = self.fresh(), self.config.retrieval.max_question_chars
            turns: list[tuple[str, qa.Answer]] = []
            earlier = (history or [])[-MAX_HISTORY:]
            for n, previous in enumerate(earlier, 1):
                # Only the last turn is read by the language model: a follow-up leans on it alone.
                turns.append((previous[:most], engine.answer(previous[:most], history=turns,
                                                             user=who(request), quick=n < len(earlier))))
            return engine.answer(question[:most], history=turns, user=who(request)).to_dict()
        except (qa.QAError, RateLimited) as exc:
            # A refusal is the client's to fix: one line in the log (rate limits log their own), no traceback.
            if not isinstance(exc, RateLimited):
                log.info("/ask refused for %s: %s", who(request), str(exc)[:200])
            raise gr.Error(str(exc), print_exception=False) from exc
        except Exception as exc:  # a bug: one line in the log, the generic message to the client
            log.error("/ask failed for %s: %s", who(request), one_line(exc))
            raise gr.Error(FAILED, print_exception=False) from None

    def on_load(self, request: gr.Request | None = None) -> tuple[str, dict, str]:
        """The article list, the upload control for those who may upload, who is signed in."""
        user = request.username if request is not None else None
        uploads = gr.update(visible=may_upload(self.config, user))
        return articles_html(self.fresh()), uploads, account_html(user)

    def new_chat(self, line: Line) -> tuple[str, Any]:
        """An empty conversation; the question box keeps what is typed in it."""
        if isinstance(line, Line):
            line.clear()
        return chat_html(self.engine, []), gr.update(visible=False)


def build_demo(engine: qa.QA | None = None) -> gr.Blocks:
    """The chat page over an engine (made from the settings on first use when none is given)."""
    return page(ChatApp(engine))


def _text(value: object) -> str:
    """A text input as sent by any client: text as it is, anything else empty."""
    return value if isinstance(value, str) else ""
