"""The Gradio chat: a page to ask, upload and browse articles, and an /ask API, built by build_demo()."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr

import qa
from qa.articles.uploads import MAX_UPLOAD_BYTES, may_upload, safe_name
from qa.errors import FAILED, BadInput, one_line
from qa.surfaces.auth import sign_in
from qa.surfaces.guard import Guard, forwarded_headers_off
from qa.surfaces.guard import who as _client
from qa.surfaces.limits import RateLimited, RateLimiter
from qa.surfaces.render import CSS, SCROLL_JS, Turn, account_html, articles_html, chat_html, status_html

log = logging.getLogger("qa.app")
# Gradio refuses bigger files before they reach us (and before they fill its temp folder);
# between this and MAX_UPLOAD_BYTES our own one-line message says what the limit is.
GRADIO_MAX_FILE = "2mb"
# Gradio deletes the files uploaded to it once they are this many seconds old (checked as often).
UPLOAD_CACHE_S = 600

# Answers (chat turns and /ask calls) handled at once; each waits its turn for the language model.
ANSWERS_AT_ONCE = 64
# Earlier questions an /ask call may pass: each is answered again to follow the conversation.
MAX_HISTORY = 10
# Turns a chat keeps (and shows) in its session, whatever the client sends: with questions cut
# to max_question_chars, this bounds each session's state and the page sent back every turn.
MAX_TURNS = 20

EXAMPLES = [
    "How many Taliban prisoners will be released each day?",
    "Who is the Taliban's spokesman?",
    "How many prisoners did Ashraf Ghani approve for release?",
]


def build_demo(engine: qa.QA | None = None) -> gr.Blocks:
    """The chat interface; the engine (and its model) is created on first use, not on import."""
    holder: list[qa.QA] = [engine] if engine is not None else []
    config = engine.config if engine is not None else qa.Config.from_env()
    llm_url = config.generation.llm_url
    limiter = RateLimiter(config.serving.rate)

    def get() -> qa.QA:
        if not holder:
            holder.append(qa.QA(qa.Config.from_env()))
        return holder[0]

    def fresh() -> qa.QA:
        """The engine, after indexing articles dropped into (or removed from) the folder."""
        engine = get()
        try:
            if (report := engine.refresh()) is not None:
                log.info("articles folder changed: %d added, %d changed, %d removed", len(report.added),
                         len(report.changed), len(report.removed))
        except qa.QAError as exc:  # answer from the index as it was; the folder is retried once it changes
            log.warning("the articles folder changed but could not be indexed: %s", exc)
        return engine

    def respond(question: str, turns: list[Turn], use_llm: bool = False, since: str = "", until: str = "",
                request: gr.Request | None = None) -> Iterator[tuple[str, str, list[Turn]]]:
        """Show the question with a pending reply at once, then the answer (streamed with the LLM)."""
        # Whatever a raw API call sends: text cut to its limits, at most MAX_TURNS turns kept.
        question = _text(question)[:config.retrieval.max_question_chars]
        since, until, use_llm = _text(since)[:10], _text(until)[:10], use_llm is True
        turns = list(turns or [])[-(MAX_TURNS - 1):]
        if not question.strip():
            yield chat_html(get(), turns), question, turns
            return
        yield chat_html(get(), turns, pending=question), "", turns
        history = [(q, a) for q, a in turns if isinstance(a, qa.Answer)]
        try:
            limiter.check(_client(request))
            fresh()
            dates: dict[str, Any] = {"since": since.strip() or None, "until": until.strip() or None}
            if use_llm:
                reply: qa.Answer | str = ""
                for reply in get().stream_llm(question, history=history, **dates):
                    yield chat_html(get(), turns, pending=question, draft=reply), "", turns
            else:
                # The cited sentences show at once; the reader's short answer follows.
                for reply in get().stream(question, history=history, user=_client(request), **dates):
                    if reply.provisional:
                        yield chat_html(get(), turns, pending=question, draft=reply), "", turns
        except (qa.QAError, RateLimited) as exc:
            reply = str(exc)
            log.info("question refused for %s: %s", _client(request), reply[:200])
        except Exception as exc:  # a bug: one line in the log, the generic message on the page
            log.error("question failed for %s: %s", _client(request), one_line(exc))
            reply = FAILED
        turns.append((question, reply))
        yield chat_html(get(), turns), "", turns

    def upload(file: str | None, request: gr.Request | None = None,
               progress: gr.Progress = gr.Progress()) -> tuple[str, str]:  # noqa: B008 - Gradio's way
        """Add an uploaded article; every problem becomes a one-line message, never a traceback."""
        user = request.username if request is not None else None
        if not may_upload(config, user):
            log.warning("upload refused: %s may not upload", _client(request))
            raise gr.Error("Uploads are off for you: the server allows them with QA_UPLOADS=1, "
                           "or for the users in QA_UPLOADERS.", print_exception=False)
        if not file:
            return status_html("No file received.", False), articles_html(get())
        path = Path(file)
        try:
            return _add(path, request, progress)
        finally:
            path.unlink(missing_ok=True)  # read (or refused): Gradio's copy is not kept

    def _add(path: Path, request: gr.Request | None, progress: gr.Progress) -> tuple[str, str]:
        name = path.name
        try:
            # Check the size before reading so a huge file is never loaded into memory.
            size = path.stat().st_size
            if size > MAX_UPLOAD_BYTES:
                raise qa.ArticleError(f"{name}: {size:,} bytes is over the 1 MB limit")
            report = get().add_article(name, path.read_bytes(),
                                       lambda done, message: progress(done, desc=message))
        except qa.QAError as exc:
            log.warning("upload of %r by %s refused: %s", name[:100], _client(request), exc)
            return status_html(f"Not added: {exc}", False), articles_html(get())
        except OSError as exc:
            return status_html(f"Not added: {name}: the upload could not be read ({exc.strerror}); "
                           "upload it again", False), articles_html(get())
        added = safe_name(name)
        new = [get().index.articles[s] for s in report.added] or [get().index.articles[added]]
        what = new[0].title if len(new) == 1 else f"{len(new)} articles"
        log.info("upload of %s (%d bytes, %d articles) by %s: added", added, size, len(new), _client(request))
        return status_html(f"Added {added} ({what}); you can ask about it now.", True), articles_html(get())

    def ask_api(question: str, history: list[str] | None = None,
                request: gr.Request | None = None) -> dict:
        """Answer a question (after the previous questions in history) as Answer.to_dict() JSON."""
        try:
            limiter.check(_client(request))
            if not isinstance(question, str):
                raise BadInput("question must be text")
            if history is not None and not (isinstance(history, list)
                                            and all(isinstance(h, str) for h in history)):
                raise BadInput("history must be a list of the earlier questions, as text")
            fresh()
            turns: list[tuple[str, qa.Answer]] = []
            earlier = (history or [])[-MAX_HISTORY:]
            for n, previous in enumerate(earlier, 1):
                previous = previous[:config.retrieval.max_question_chars]
                # Only the last turn is read by the language model: a follow-up leans on it alone.
                turns.append((previous, get().answer(previous, history=turns, user=_client(request),
                                                     quick=n < len(earlier))))
            return get().answer(question[:config.retrieval.max_question_chars], history=turns,
                                user=_client(request)).to_dict()
        except (qa.QAError, RateLimited) as exc:
            # A refusal is the client's to fix: one line in the log (rate limits log their own), no traceback.
            if not isinstance(exc, RateLimited):
                log.info("/ask refused for %s: %s", _client(request), str(exc)[:200])
            raise gr.Error(str(exc), print_exception=False) from exc
        except Exception as exc:  # a bug: one line in the log, the generic message to the client
            log.error("/ask failed for %s: %s", _client(request), one_line(exc))
            raise gr.Error(FAILED, print_exception=False) from None

    def on_load(request: gr.Request | None = None) -> tuple[str, dict, str]:
        """The article list, the upload control for those who may upload, who is signed in."""
        user = request.username if request is not None else None
        return articles_html(fresh()), gr.update(visible=may_upload(config, user)), account_html(user)

    with gr.Blocks(title="Ask the news", delete_cache=(UPLOAD_CACHE_S, UPLOAD_CACHE_S)) as demo:
        account = gr.HTML("", elem_id="qa-account", css_template=CSS)
        gr.Markdown("## Ask the news articles\nEvery answer cites the article sentences it comes from; "
                    "if the articles don't cover a question, it says so.")
        turns = gr.State([])
        with gr.Row():
            with gr.Column(scale=3):
                chat = gr.HTML(chat_html(None, []), elem_id="qa-chat", css_template=CSS,
                               js_on_load=SCROLL_JS, min_height=300)
                with gr.Row():
                    question = gr.Textbox(placeholder="Ask a question about the articles…", show_label=False,
                                          scale=5, elem_id="qa-question", max_length=2000)
                    ask_btn = gr.Button("Ask", variant="primary", scale=1, elem_id="qa-ask")
                with gr.Row():
                    since = gr.Textbox(label="Articles dated from (YYYY-MM-DD)", placeholder="any date",
                                       elem_id="qa-since", max_length=10, scale=1)
                    until = gr.Textbox(label="to (YYYY-MM-DD)", placeholder="any date", elem_id="qa-until",
                                       max_length=10, scale=1)
                writer = f"the model at {llm_url}" if llm_url else "the reader's language model"
                use_llm = gr.Checkbox(False, label=f"Write the answer with {writer}; every sentence is "
                                      "verified against its citations", elem_id="qa-llm",
                                      visible=bool(llm_url) or config.reading.uses_model)
                with gr.Row():
                    examples = [gr.Button(q, size="sm", elem_classes="qa-example") for q in EXAMPLES]
                    new_chat = gr.Button("New chat", size="sm", elem_id="qa-new-chat")
            with gr.Column(scale=2):
                articles = gr.HTML("<div>Loading the articles…</div>", elem_id="qa-articles",
                                   css_template=CSS)
                # Hidden until on_load knows whether this user may upload.
                with gr.Column(visible=False) as upload_box:
                    gr.Markdown("**Add an article** — text, Markdown, a saved web page, PDF, Word file "
                                "or RSS/Atom feed; it is searchable at once.")
                    upload_btn = gr.UploadButton("Upload an article file (up to 1 MB)",
                                                 elem_id="qa-upload", type="filepath")
                    status = gr.HTML("", elem_id="qa-status", css_template=CSS)

        private: dict[str, Any] = {"api_visibility": "private"}
        # Answers run side by side (Gradio's default is one at a time): they wait for the language
        # model in the engine's line, which takes users in turn, not in Gradio's queue.
        together: dict[str, Any] = {"concurrency_limit": ANSWERS_AT_ONCE, "concurrency_id": "answers"}
        asking: dict[str, Any] = {"fn": respond, "inputs": [question, turns, use_llm, since, until],
                                     "outputs": [chat, question, turns], **private, **together}
        ask_btn.click(**asking)
        question.submit(**asking)
        for button, text in zip(examples, EXAMPLES, strict=True):
            button.click(_constant(text), outputs=question, **private).then(**asking)
        new_chat.click(lambda: (chat_html(get(), []), "", []), outputs=[chat, question, turns], **private)
        # Public so scripts can add articles (gradio_client, handle_file); upload() checks rights.
        upload_btn.upload(upload, inputs=upload_btn, outputs=[status, articles], api_name="upload")
        demo.load(on_load, outputs=[articles, upload_box, account], **private)
        gr.api(ask_api, api_name="ask", **together)
    return demo


def launch(demo: gr.Blocks, config: qa.Config, host: str, port: int, **kwargs: Any) -> None:
    """Serve demo with the sign-in (throttled), limits and upload settings of config."""
    from starlette.middleware import Middleware

    with forwarded_headers_off():
        demo.launch(server_name=host, server_port=port, auth=sign_in(config),  # type: ignore[arg-type]  # awaited
                    max_file_size=GRADIO_MAX_FILE, state_session_capacity=config.serving.sessions, quiet=True,
                    theme=theme(), app_kwargs={"middleware": [Middleware(Guard, config=config)]}, **kwargs)


def theme() -> gr.themes.Base:
    """Gradio's default look, with its font's full regular and bold faces: the semibold face it
    ships holds 55 glyphs (A, B, some Cyrillic), so bold text showed other letters in another font."""
    font = gr.themes.LocalFont("Source Sans Pro", weights=(400, 700))
    return gr.themes.Default(font=[font, "ui-sans-serif", "system-ui", "sans-serif"])


def _text(value: object) -> str:
    """A text input as sent by any client: text as it is, anything else empty."""
    return value if isinstance(value, str) else ""


def _constant(value: str) -> Callable[[], str]:
    """A handler returning value (avoids the late-binding lambda-in-a-loop trap)."""
    return lambda: value
