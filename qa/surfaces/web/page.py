"""The chat page's layout, and which event each of its controls runs (``qa/surfaces/web/chat.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gradio as gr

import qa
from qa.surfaces.web.line import new_line
from qa.surfaces.web.render import CSS, SCROLL_JS, chat_html

# Gradio deletes the files uploaded to it once they are this many seconds old (checked as often).
UPLOAD_CACHE_S = 600
# Answers (chat turns and /ask calls) handled at once; each waits its turn for the language model.
ANSWERS_AT_ONCE = 64
# The question box once a question is taken: empty if it still holds the text taken, else as typed.
EMPTIED = "(box, taken) => box === taken ? '' : box"
EXAMPLES = [
    "How many Taliban prisoners will be released each day?",
    "Who is the Taliban's spokesman?",
    "How many prisoners did Ashraf Ghani approve for release?",
]


class Events(Protocol):
    """What the page's controls call (qa/surfaces/web/chat.py's ChatApp)."""

    config: qa.Config

    def respond(self, *args: Any, **kwargs: Any) -> Any:
        """A question asked: taken into the chat's line at once."""

    def example(self, *args: Any, **kwargs: Any) -> Any:
        """An example asked."""

    def serve(self, *args: Any, **kwargs: Any) -> Any:
        """The questions in line answered in turn: the conversation as it goes."""

    def stop(self, *args: Any, **kwargs: Any) -> Any:
        """Stop waiting for the answer being read."""

    def upload(self, *args: Any, **kwargs: Any) -> Any:
        """A file uploaded."""

    def ask_api(self, *args: Any, **kwargs: Any) -> Any:
        """An /ask call."""

    def on_load(self, *args: Any, **kwargs: Any) -> Any:
        """The page loaded."""

    def new_chat(self, *args: Any, **kwargs: Any) -> Any:
        """A new conversation."""


@dataclass
class Controls:
    """The page's inputs and outputs that events read and write."""

    chat: gr.HTML
    question: gr.Textbox
    ask: gr.Button
    stop: gr.Button
    taken: gr.Textbox
    since: gr.Textbox
    until: gr.Textbox
    use_llm: gr.Checkbox
    examples: list[gr.Button]
    new_chat: gr.Button
    articles: gr.HTML
    upload_box: gr.Column
    upload: gr.UploadButton
    status: gr.HTML
    account: gr.HTML
    line: gr.State


def page(events: Events) -> gr.Blocks:
    """The chat page: the conversation, the question box and dates, the articles and uploads."""
    with gr.Blocks(title="Ask the news", delete_cache=(UPLOAD_CACHE_S, UPLOAD_CACHE_S)) as demo:
        account = gr.HTML("", elem_id="qa-account", css_template=CSS)
        gr.Markdown("## Ask the news articles\nEvery answer cites the article sentences it comes from; "
                    "if the articles don't cover a question, it says so.")
        line = gr.State(new_line)  # each page's own: Gradio makes one for each session
        with gr.Row():
            with gr.Column(scale=3):
                asking = _asking(events.config)
            with gr.Column(scale=2):
                articles = gr.HTML("<div>Loading the articles…</div>", elem_id="qa-articles",
                                   css_template=CSS)
                # Hidden until on_load knows whether this user may upload.
                with gr.Column(visible=False) as upload_box:
                    gr.Markdown("**Add an article** — text, Markdown, a saved web page, PDF, Word file "
                                "or RSS/Atom feed; it is searchable at once.")
                    upload = gr.UploadButton("Upload an article file (up to 1 MB)", elem_id="qa-upload",
                                             type="filepath")
                    status = gr.HTML("", elem_id="qa-status", css_template=CSS)
        _wire(events, Controls(**asking, articles=articles, upload_box=upload_box, upload=upload,
                               status=status, account=account, line=line), demo)
    return demo


def _asking(config: qa.Config) -> dict[str, Any]:
    """The conversation, the question box, the dates, the writing checkbox, examples and a new chat."""
    chat = gr.HTML(chat_html(None, []), elem_id="qa-chat", css_template=CSS, js_on_load=SCROLL_JS,
                   min_height=300)
    with gr.Row():
        question = gr.Textbox(placeholder="Ask a question about the articles…", show_label=False, scale=5,
                              elem_id="qa-question", max_length=2000)
        ask = gr.Button("Ask", variant="primary", scale=1, elem_id="qa-ask")
        # Shown while an answer is on its way.
        stop = gr.Button("Stop waiting", variant="stop", scale=1, elem_id="qa-stop", visible=False)
    # The text of the question last taken: the box is emptied only while it still holds that text.
    taken = gr.Textbox(visible=False, elem_id="qa-taken")
    with gr.Row():
        since = gr.Textbox(label="Articles dated from (YYYY-MM-DD)", placeholder="any date",
                           elem_id="qa-since", max_length=10, scale=1)
        until = gr.Textbox(label="to (YYYY-MM-DD)", placeholder="any date", elem_id="qa-until",
                           max_length=10, scale=1)
    llm_url = config.generation.llm_url
    writer = f"the model at {llm_url}" if llm_url else "the reader's language model"
    use_llm = gr.Checkbox(False, label=f"Write the answer with {writer}; every sentence is verified against "
                          "its citations", elem_id="qa-llm",
                          visible=bool(llm_url) or config.reading.uses_model)
    with gr.Row():
        examples = [gr.Button(q, size="sm", elem_classes="qa-example") for q in EXAMPLES]
        new_chat = gr.Button("New chat", size="sm", elem_id="qa-new-chat")
    return {"chat": chat, "question": question, "ask": ask, "stop": stop, "taken": taken, "since": since,
            "until": until, "use_llm": use_llm, "examples": examples, "new_chat": new_chat}


def _wire(events: Events, c: Controls, demo: gr.Blocks) -> None:
    """Which event each control runs."""
    private: dict[str, Any] = {"api_visibility": "private"}
    # A question is taken at once, whatever runs (trigger_mode "multiple": a question asked while
    # another is answered is never ignored), then answered in turn by ``serve``. Answers run side
    # by side (Gradio's default is one at a time): they wait for the language model in the
    # engine's line, which takes users in turn, not in Gradio's queue.
    at_once: dict[str, Any] = {"queue": False, "trigger_mode": "multiple", **private}
    answering: dict[str, Any] = {"fn": events.serve, "inputs": c.line, "outputs": [c.chat, c.stop],
                                 "concurrency_limit": ANSWERS_AT_ONCE, "concurrency_id": "answers",
                                 "trigger_mode": "multiple", **private}
    settings = [c.line, c.use_llm, c.since, c.until]
    for trigger in (c.ask.click, c.question.submit):
        taking = trigger(events.respond, inputs=[c.question, *settings],
                         outputs=[c.chat, c.taken, c.stop], **at_once)
        # In the page, not from the server: what was typed while the question was taken stays.
        taking.then(None, inputs=[c.question, c.taken], outputs=c.question, js=EMPTIED, **at_once)
        taking.then(**answering)
    for button in c.examples:  # a button's value is its text
        button.click(events.example, inputs=[button, *settings], outputs=[c.chat, c.stop],
                     **at_once).then(**answering)
    c.stop.click(events.stop, inputs=c.line, outputs=None, **at_once)
    c.new_chat.click(events.new_chat, inputs=c.line, outputs=[c.chat, c.stop], **at_once)
    # Public so scripts can add articles (gradio_client, handle_file); upload() checks rights.
    c.upload.upload(events.upload, inputs=c.upload, outputs=[c.status, c.articles], api_name="upload")
    demo.load(events.on_load, outputs=[c.articles, c.upload_box, c.account], **private)
    gr.api(events.ask_api, api_name="ask", concurrency_limit=ANSWERS_AT_ONCE, concurrency_id="answers")
