"""A chat's line of questions, in-process with the fake embedder: questions asked while one is answered
wait their turn and are answered in order, Stop ends the wait with the cited sentences ready, a new
chat drops what was under way, and only the question taken leaves the box."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from chatting import events

import qa
from qa.notices import say
from qa.surfaces.web import chat
from qa.surfaces.web.line import MAX_WAITING, Line
from qa.surfaces.web.page import EMPTIED

CARS = "How many cars cross the bridge every day?"
OTHERS = ["What did the council approve?", "What is the storm warning about?"]


class Gate:
    """The engine's answers held back until opened: the first question's reply stays on its way."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open, self.reached = threading.Event(), threading.Event()
        stream = qa.QA.stream

        def held(engine: qa.QA, question: str, *args: object, **kwargs: object) -> Iterator[qa.Answer]:
            self.reached.set()
            assert self.open.wait(30), "the gate was never opened"
            yield from stream(engine, question, *args, **kwargs)

        monkeypatch.setattr(qa.QA, "stream", held)


class Serving:
    """serve() run as Gradio runs it, in a thread of its own: the chat's HTML at each step."""

    def __init__(self, demo: object, line: Line) -> None:
        self.pages: list[str] = []
        self.thread = threading.Thread(target=lambda: self.pages.extend(
            html for html, _ in events(demo)["serve"](line) if isinstance(html, str)))
        self.thread.start()

    def done(self) -> list[str]:
        self.thread.join(30)
        assert not self.thread.is_alive(), "serve() never ended"
        return self.pages


def test_questions_asked_while_one_is_answered_wait_and_are_answered_in_order(
        fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    gate, demo, line = Gate(monkeypatch), chat.build_demo(fake_qa), Line()
    fns = events(demo)
    fns["respond"](CARS, line)
    serving = Serving(demo, line)
    assert gate.reached.wait(30)  # the first question is being answered
    taken = [fns["respond"](question, line) for question in OTHERS]
    # Each shown at once with its place in line (the page then empties the box of the text taken).
    assert [text for _, text, _ in taken] == OTHERS
    assert "Waiting: 2nd in line" in taken[0][0] and "Waiting: 3rd in line" not in taken[0][0]
    assert "Waiting: 2nd in line" in taken[1][0] and "Waiting: 3rd in line" in taken[1][0]
    assert 'class="qa-clock"' in taken[1][0]  # the reply on its way says how long it has taken
    # Another answering event (the second question's) leaves them to the one under way.
    assert [html for html, _ in fns["serve"](line)] == [{"__type__": "update"}]
    gate.open.set()
    pages = serving.done()
    assert [q for q, _ in line.turns] == [CARS, *OTHERS]
    assert all(isinstance(a, qa.Answer) for _, a in line.turns)
    assert "Waiting" not in pages[-1] and pages[-1].count('class="qa-q"') == 3
    assert line.waiting == [] and line.current is None and not line.serving


def test_stop_gives_the_sentences_found_and_the_next_question_is_answered(
        fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    gate, demo, line = Gate(monkeypatch), chat.build_demo(fake_qa), Line()
    fns = events(demo)
    fns["respond"](CARS, line)
    serving = Serving(demo, line)
    assert gate.reached.wait(30)
    fns["respond"](OTHERS[0], line)
    fns["stop"](line)  # while the first reply is still on its way
    while line.turns == [] and serving.thread.is_alive():
        serving.thread.join(0.05)
    stopped = line.turns[0][1]
    assert isinstance(stopped, qa.Answer) and stopped.notice_code == "stopped"
    assert stopped.notice == say("stopped") and stopped.short is None and stopped.short_span is None
    assert stopped.answered and any("40,000" in c.text for c in stopped.citations)
    gate.open.set()
    pages = serving.done()
    assert [q for q, _ in line.turns] == [CARS, OTHERS[0]]
    assert line.turns[1][1].notice_code != "stopped"  # the one behind it waited for its whole answer
    assert say("stopped") in pages[-1] and "Short answer" not in pages[-1].split(OTHERS[0])[0]


def test_a_new_chat_drops_the_answer_under_way(fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    gate, demo, line = Gate(monkeypatch), chat.build_demo(fake_qa), Line()
    fns = events(demo)
    fns["respond"](CARS, line)
    serving = Serving(demo, line)
    assert gate.reached.wait(30)
    fns["respond"](OTHERS[0], line)
    html, _ = fns["new_chat"](line)
    assert "qa-empty" in html
    gate.open.set()
    serving.done()
    assert line.turns == [] and line.waiting == [] and line.current is None


def test_a_full_line_leaves_the_question_in_the_box(fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    import gradio as gr

    warned: list[str] = []
    monkeypatch.setattr(gr, "Warning", warned.append)
    fns, line = events(chat.build_demo(fake_qa)), Line()
    for n in range(MAX_WAITING):
        assert fns["respond"](f"Question {n}?", line)[1] == f"Question {n}?"
    assert fns["respond"]("One too many?", line) == (gr.skip(),) * 3
    assert [a.question for a in line.waiting] == [f"Question {n}?" for n in range(MAX_WAITING)]
    assert warned and "ask this one once they are answered" in warned[0]


def test_only_taking_a_question_writes_to_the_box(fake_qa: qa.QA) -> None:
    """The answering never empties the box the user may be typing the next question in: the page
    empties it, once the question is taken, only while it still holds the text taken."""
    demo = chat.build_demo(fake_qa)
    box = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "qa-question")
    writers = [fn for fn in demo.fns.values() if box in fn.outputs]
    assert [(fn.fn, fn.js) for fn in writers] == [(None, EMPTIED)] * 2  # after Ask, after Enter
    assert all(fn.trigger_mode == "multiple" for fn in demo.fns.values() if fn.name in {"respond", "serve"})


def test_stop_frees_the_language_model_for_the_next_question(tiny_config: qa.Config, fake_embedder) -> None:
    """The stopped question's reading ends: the question behind it is read without waiting for it."""
    from fake_runtime import FakeRuntime

    hold = threading.Semaphore(0)  # each reading waits for a release, or until it is given up
    runtime = FakeRuntime("40,000", hold=hold)
    engine = qa.QA(tiny_config.replace(reader="lm", read_timeout=120), embedder=fake_embedder,
                   runtime=runtime)
    demo, line = chat.build_demo(engine), Line()
    fns = events(demo)
    fns["respond"](CARS, line)
    serving = Serving(demo, line)
    assert runtime.reading.wait(30)  # the model reads the first question, held there
    fns["respond"]("How many cars crossed the bridge last year?", line)
    read = len(runtime.requests)
    fns["stop"](line)
    for _ in range(100):  # the second question's reading begins: the first one's has ended
        if len(runtime.requests) > read:
            break
        serving.thread.join(0.1)
    assert len(runtime.requests) > read, "the stopped question still held the language model"
    hold.release()
    serving.done()
    assert line.turns[0][1].notice_code == "stopped" and line.turns[1][1].notice_code != "stopped"
