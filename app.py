"""Browser chat over the news articles: cited answers, sources, follow-ups, uploads, and an API."""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path

import gradio as gr

import qa
from qa.auth import make_auth, open_warning
from qa.limits import RateLimited, RateLimiter
from qa.uploads import MAX_UPLOAD_BYTES, may_upload, safe_name

log = logging.getLogger("qa.app")
# Gradio refuses bigger files before they reach us (and before they fill its temp folder);
# between this and MAX_UPLOAD_BYTES our own one-line message says what the limit is.
GRADIO_MAX_FILE = "5mb"
# Earlier questions an /ask call may pass: each is answered again to follow the conversation.
MAX_HISTORY = 10
CONTEXT_CHARS = 220
FULL_CHARS = 20_000
EXAMPLES = [
    "How many Taliban prisoners will be released each day?",
    "Who is the Taliban's spokesman?",
    "How many prisoners did Ashraf Ghani approve for release?",
]
# A turn is (question, Answer) or (question, error message); only Answers feed follow-ups.
Turn = tuple[str, "qa.Answer | str"]

CSS = """
.qa-chat{display:flex;flex-direction:column;gap:14px;font-size:15px;line-height:1.5}
.qa-empty{color:#6b7280;padding:24px;text-align:center;border:1px dashed #d1d5db;border-radius:10px}
.qa-q{align-self:flex-end;background:#2563eb;color:#fff;padding:8px 12px;border-radius:12px;max-width:85%;
  white-space:pre-wrap;overflow-wrap:anywhere}
.qa-a{background:#f9fafb;border:1px solid #e5e7eb;border-radius:12px;padding:10px 14px;color:#111827}
.qa-a.qa-not-covered{background:#fffbeb;border:1px solid #f59e0b}
.qa-a.qa-error{background:#fef2f2;border:1px solid #ef4444;color:#991b1b}
.qa-a.qa-pending{color:#6b7280;font-style:italic}
.qa-cite{color:#2563eb;font-weight:600;font-size:.85em}
.qa-short{margin:0 0 4px}
.qa-timing{color:#9ca3af;font-size:12px;margin-top:4px}
.qa-notice{color:#92400e;font-size:13px;margin:0 0 4px}
.qa-sources{margin-top:8px;display:flex;flex-direction:column;gap:8px}
.qa-source{border-left:3px solid #93c5fd;padding:2px 0 2px 10px}
.qa-not-covered .qa-source{border-left-color:#fcd34d}
.qa-src-title{font-weight:600;font-size:14px}
.qa-file{font-family:monospace;font-weight:400;color:#6b7280;font-size:12px;margin-left:6px}
.qa-snippet{margin:2px 0;color:#374151;font-size:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.qa-article{max-height:260px;overflow:auto;white-space:pre-wrap;font-size:13px;background:#fff;
  border:1px solid #e5e7eb;padding:8px;border-radius:6px;overflow-wrap:anywhere}
.qa-chat mark{background:#fde68a;color:inherit;padding:0 1px}
.qa-chat mark .qa-span{background:#fbbf24;border-radius:2px}
.qa-chat summary{cursor:pointer;color:#2563eb;font-size:13px}
.qa-status-ok{color:#166534}.qa-status-error{color:#b91c1c;font-weight:600}
.qa-articles{width:100%;font-size:13px;border-collapse:collapse}
.qa-articles td,.qa-articles th{padding:3px 6px;border-bottom:1px solid #e5e7eb;text-align:left;
  vertical-align:top}
"""
# Opening "Read the whole article" scrolls the cited sentence into view inside its box;
# `toggle` does not bubble, so listen in the capture phase on the chat container.
SCROLL_JS = """
element.addEventListener('toggle', (e) => {
  const box = e.target.querySelector && e.target.querySelector('.qa-article');
  const mark = box && box.querySelector('mark');
  if (e.target.open && mark) box.scrollTop = mark.offsetTop - box.offsetTop - box.clientHeight / 3;
}, true);
"""


def _esc(text: str) -> str:
    """HTML-escape untrusted text; also neutralise Markdown link syntax for any Markdown renderer."""
    return escape(text, quote=True).replace("[", "&#91;").replace("]", "&#93;")


def _highlight(text: str, start: int, end: int, lo: int, hi: int,
               span: tuple[int, int] | None = None) -> str:
    """text[lo:hi] escaped, with text[start:end] inside <mark> and the short answer's span in bold."""
    if span is not None and start <= span[0] < span[1] <= end:
        inner = (_esc(text[start:span[0]]) + '<strong class="qa-span">' + _esc(text[span[0]:span[1]])
                 + "</strong>" + _esc(text[span[1]:end]))
    else:
        inner = _esc(text[start:end])
    return _esc(text[lo:start]) + "<mark>" + inner + "</mark>" + _esc(text[end:hi])


def _snippet(text: str, start: int, end: int, span: tuple[int, int] | None = None) -> str:
    """The cited sentence highlighted, with some context cut at word boundaries."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    if lo > 0:
        lo = text.find(" ", lo, start) + 1 or lo
    if hi < len(text):
        hi = text.rfind(" ", end, hi) if text.rfind(" ", end, hi) > 0 else hi
    body = _highlight(text, start, end, lo, hi, span)
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(text) else "")


def _source_html(engine: qa.QA, n: int | None, p: qa.Passage, mark: bool = True,
                 short: qa.Passage | None = None) -> str:
    """One source: title, file name, the passage with the sentence marked, and the whole article."""
    article = engine.index.articles.get(p.source)
    label = f"[{n}] " if n else ""
    head = (f'<div class="qa-src-title">{label}{_esc(p.title)}'
            f'<span class="qa-file">{_esc(p.source)}</span></div>')
    if article is None or article.text[p.start:p.end] != p.text:
        return f'<div class="qa-source">{head}<div class="qa-snippet">{_esc(p.text)}</div></div>'
    text = article.text
    span = (short.start, short.end) if short is not None and short.source == p.source else None
    snippet = _snippet(text, p.start, p.end, span) if mark else _esc(p.text)
    # A huge article is cut to a window around the sentence: every turn re-sends its HTML.
    lo, hi = max(0, p.start - FULL_CHARS), min(len(text), p.end + FULL_CHARS)
    full = (("…" if lo else "") + _highlight(text, p.start, p.end, lo, hi, span)
            + ("…" if hi < len(text) else ""))
    return (f'<div class="qa-source">{head}<div class="qa-snippet">{snippet}</div>'
            f'<details><summary>Read the whole article</summary><div class="qa-article">{full}</div>'
            "</details></div>")


def _ms(value: float) -> str:
    """Milliseconds, with a decimal when small so a fast step doesn't read as 0 ms."""
    return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"


def answer_html(engine: qa.QA, answer: qa.Answer) -> str:
    """The answer bubble: text with [n] markers, bold short answer, timing line and sources."""
    llm = answer.timings.get("llm_ms")
    model = f" · local model {_ms(llm)}" if llm is not None else ""
    dropped = f" · {len(answer.dropped)} generated sentence(s) dropped" if answer.dropped else ""
    timing = (f'<div class="qa-timing">retrieval {_ms(answer.timings.get("retrieve_ms", 0.0))} · '
              f'answer {_ms(answer.timings.get("answer_ms", 0.0))}{model}{dropped}</div>')
    if not answer.answered:
        closest = "".join(_source_html(engine, None, p, mark=False) for p in answer.passages[:3])
        why = _esc(answer.notice) if answer.notice else \
            "Nothing in the indexed articles answers this well enough."
        return (f'<div class="qa-a qa-not-covered"><div><b>⚠ {_esc(answer.text)}</b></div>'
                f"<div>{why} Closest passages:</div>"
                f'<div class="qa-sources">{closest}</div>{timing}</div>')
    body = _esc(answer.text)
    if answer.short and _esc(answer.short) in body:
        body = body.replace(_esc(answer.short), f"<strong>{_esc(answer.short)}</strong>", 1)
    body = re.sub(r"&#91;(\d+)&#93;", r'<span class="qa-cite">[\1]</span>', body)
    short = f'<p class="qa-short">Short answer: <strong>{_esc(answer.short)}</strong></p>' \
        if answer.short else ""
    if answer.notice:
        short = f'<p class="qa-notice">{_esc(answer.notice)}</p>{short}'
    sources = "".join(_source_html(engine, n, c, short=answer.short_span)
                      for n, c in enumerate(answer.citations, 1))
    kind = "qa-answered qa-generated" if answer.method == "llm" else "qa-answered"
    return (f'<div class="qa-a {kind}">{short}<div>{body}</div>{timing}'
            f'<div class="qa-sources"><div class="qa-src-title">Sources</div>{sources}</div></div>')


def chat_html(engine: qa.QA | None, turns: list[Turn], pending: str | None = None,
              draft: qa.Answer | None = None) -> str:
    """The whole conversation as HTML built here, every piece of text escaped."""
    parts = []
    for question, reply in turns:
        parts.append(f'<div class="qa-q">{_esc(question)}</div>')
        parts.append(answer_html(engine, reply) if engine and isinstance(reply, qa.Answer)
                     else f'<div class="qa-a qa-error">{_esc(reply)}</div>')
    if pending is not None and draft is not None and engine:
        # A generated answer still streaming: only its verified sentences so far.
        parts.append(f'<div class="qa-q">{_esc(pending)}</div>{answer_html(engine, draft)}')
    elif pending is not None:
        parts.append(f'<div class="qa-q">{_esc(pending)}</div>'
                     '<div class="qa-a qa-pending">Searching the articles…</div>')
    if not parts:
        parts.append('<div class="qa-empty">Ask a question about the news articles, '
                     "or click an example below.</div>")
    return f'<div class="qa-chat">{"".join(parts)}</div>'


def articles_html(engine: qa.QA) -> str:
    """A table of the indexed articles: title, file name and number of chunks."""
    chunks = Counter(c.source for c in engine.index.chunks)
    rows = "".join(f"<tr><td>{_esc(a.title)}</td><td class='qa-file'>{_esc(a.source)}</td>"
                   f"<td>{chunks[a.source]}</td></tr>"
                   for a in sorted(engine.index.articles.values(), key=lambda a: a.source))
    return (f"<div><b>{len(engine.index.articles)} articles indexed</b></div><table class='qa-articles'>"
            f"<tr><th>Title</th><th>File</th><th>Chunks</th></tr>{rows}</table>")


def _status(message: str, ok: bool) -> str:
    return f'<div class="qa-status-{"ok" if ok else "error"}">{_esc(message)}</div>'


def build_demo(engine: qa.QA | None = None) -> gr.Blocks:
    """The chat interface; the engine (and its model) is created on first use, not on import."""
    holder: list[qa.QA] = [engine] if engine is not None else []
    config = engine.config if engine is not None else qa.Config.from_env()
    llm_url = config.llm_url
    limiter = RateLimiter(config.rate)

    def get() -> qa.QA:
        if not holder:
            holder.append(qa.QA(qa.Config.from_env()))
        return holder[0]

    def respond(question: str, turns: list[Turn], use_llm: bool = False,
                request: gr.Request | None = None) -> Iterator[tuple[str, str, list[Turn]]]:
        """Show the question with a pending reply at once, then the answer (streamed with the LLM)."""
        turns = list(turns or [])
        if not question.strip():
            yield chat_html(get(), turns), question, turns
            return
        yield chat_html(get(), turns, pending=question), "", turns
        history = [(q, a) for q, a in turns if isinstance(a, qa.Answer)]
        try:
            limiter.check(_client(request))
            if use_llm:
                reply: qa.Answer | str = ""
                for reply in get().stream_llm(question, history=history):
                    yield chat_html(get(), turns, pending=question, draft=reply), "", turns
            else:
                reply = get().answer(question, history=history)
        except (qa.QAError, ValueError, RateLimited) as exc:
            reply = str(exc)
        turns.append((question, reply))
        yield chat_html(get(), turns), "", turns

    def upload(file: str | None, request: gr.Request | None = None) -> tuple[str, str]:
        """Add an uploaded article; every problem becomes a one-line message, never a traceback."""
        user = request.username if request is not None else None
        if not may_upload(config, user):
            log.warning("upload refused: %s may not upload", _client(request))
            raise gr.Error("Uploads are off for you: the server allows them with QA_UPLOADS=1, "
                           "or for the users in QA_UPLOADERS.")
        if not file:
            return _status("No file received.", False), articles_html(get())
        path = Path(file)
        name = path.name
        try:
            # Check the size before reading so a huge file is never loaded into memory.
            size = path.stat().st_size
            if size > MAX_UPLOAD_BYTES:
                raise qa.ArticleError(f"{name}: {size:,} bytes is over the 1 MB limit")
            get().add_article(name, path.read_bytes())
        except qa.QAError as exc:
            log.warning("upload of %r by %s refused: %s", name[:100], _client(request), exc)
            return _status(f"Not added: {exc}", False), articles_html(get())
        except OSError as exc:
            return _status(f"Not added: {name}: the upload could not be read ({exc.strerror}); "
                           "upload it again", False), articles_html(get())
        added = safe_name(name)
        title = get().index.articles[added].title
        log.info("upload of %s (%d bytes) by %s: added", added, size, _client(request))
        return (_status(f"Added {added} ({title}); you can ask about it now.", True),
                articles_html(get()))

    def ask_api(question: str, history: list[str] | None = None,
                request: gr.Request | None = None) -> dict:
        """Answer a question (after the previous questions in history) as Answer.to_dict() JSON."""
        try:
            limiter.check(_client(request))
            if history is not None and not (isinstance(history, list)
                                            and all(isinstance(h, str) for h in history)):
                raise ValueError("history must be a list of the earlier questions, as text")
            turns: list[tuple[str, qa.Answer]] = []
            for previous in (history or [])[-MAX_HISTORY:]:
                turns.append((previous, get().answer(previous, history=turns)))
            return get().answer(question, history=turns).to_dict()
        except (qa.QAError, ValueError, RateLimited) as exc:
            raise gr.Error(str(exc)) from exc

    def on_load(request: gr.Request | None = None) -> tuple[str, dict]:
        """The article list, and the upload control for those who may upload."""
        allowed = may_upload(config, request.username if request is not None else None)
        return articles_html(get()), gr.update(visible=allowed)

    with gr.Blocks(title="Ask the news") as demo:
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
                use_llm = gr.Checkbox(False, label=f"Generate answers with the local model ({llm_url}); "
                                      "every sentence is verified against its citations",
                                      visible=bool(llm_url), elem_id="qa-llm")
                with gr.Row():
                    examples = [gr.Button(q, size="sm", elem_classes="qa-example") for q in EXAMPLES]
                    new_chat = gr.Button("New chat", size="sm", elem_id="qa-new-chat")
            with gr.Column(scale=2):
                articles = gr.HTML("<div>Loading the articles…</div>", elem_id="qa-articles",
                                   css_template=CSS)
                # Hidden until on_load knows whether this user may upload.
                with gr.Column(visible=False) as upload_box:
                    gr.Markdown("**Add an article** — a .txt or .md file; it is searchable at once.")
                    upload_btn = gr.UploadButton("Upload a .txt or .md file (up to 1 MB)",
                                                 elem_id="qa-upload", type="filepath")
                    status = gr.HTML("", elem_id="qa-status", css_template=CSS)

        private = {"api_visibility": "private"}
        asking: dict[str, object] = {"fn": respond, "inputs": [question, turns, use_llm],
                                     "outputs": [chat, question, turns], **private}
        ask_btn.click(**asking)
        question.submit(**asking)
        for button, text in zip(examples, EXAMPLES, strict=True):
            button.click(_constant(text), outputs=question, **private).then(**asking)
        new_chat.click(lambda: (chat_html(get(), []), "", []), outputs=[chat, question, turns], **private)
        # Public so scripts can add articles (gradio_client, handle_file); upload() checks rights.
        upload_btn.upload(upload, inputs=upload_btn, outputs=[status, articles], api_name="upload")
        demo.load(on_load, outputs=[articles, upload_box], **private)
        gr.api(ask_api, api_name="ask")
    return demo


def _client(request: gr.Request | None) -> str:
    """Who is asking, for rate limits and logs: the signed-in user, else the address."""
    if request is None:
        return "local"
    if request.username:
        return f"user {request.username}"
    return f"address {request.client.host}" if request.client else "unknown"


def launch(demo: gr.Blocks, config: qa.Config, host: str, port: int, **kwargs: object) -> None:
    """Serve demo with the sign-in and upload-size settings of config."""
    demo.launch(server_name=host, server_port=port, auth=make_auth(config), max_file_size=GRADIO_MAX_FILE,
                state_session_capacity=config.sessions, quiet=True, **kwargs)


def _constant(value: str) -> Callable[[], str]:
    """A handler returning value (avoids the late-binding lambda-in-a-loop trap)."""
    return lambda: value


def main() -> None:
    """Start the chat server and print its URL."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("QA_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("QA_PORT", "7860")))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own HTTP calls, one line each
    try:
        config = qa.Config.from_env()
        auth = make_auth(config)  # a bad QA_AUTH or QA_AUTH_FILE stops here, before loading anything
        engine = qa.QA(config)
        count = len(engine.index.articles)  # load the model and index before serving the first user
    except (qa.QAError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    if warning := open_warning(args.host, auth is not None, config.uploads):
        print(warning, file=sys.stderr, flush=True)
    print(f"{count} articles indexed. Chat: http://{args.host}:{args.port}/", flush=True)
    launch(build_demo(engine), config, args.host, args.port)


if __name__ == "__main__":
    main()
