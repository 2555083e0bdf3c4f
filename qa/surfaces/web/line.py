"""One chat's line of questions: those answered, the one being answered, and those waiting their turn.

A question asked while another is answered waits in its chat's ``Line`` and is answered after it,
in the order asked. The page's events share the line (a ``gr.State`` holds it, never copied):
``ChatApp.respond`` adds a question, ``ChatApp.serve`` answers the questions in turn, ``ChatApp.stop``
ends the wait for the one being answered, ``ChatApp.new_chat`` empties it."""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import qa
from qa.readers.queued import GIVE_UP
from qa.surfaces.web.render import Turn

# Questions a chat may hold waiting at once: a question past them stays in the box, to be asked later.
MAX_WAITING = 10
# The line's changes are few and quick: one lock for every chat.
LOCK = threading.Lock()
# What an answer's inbox receives besides answers: the answer is whole, the user stopped waiting, or
# the chat changed (a question was added or the chat emptied) and is shown again.
DONE, STOP, CHANGED = "done", "stop", "changed"


@dataclass(frozen=True)
class Asked:
    """A question as asked, with the settings it was asked with."""

    question: str
    use_llm: bool = False
    since: str = ""
    until: str = ""


@dataclass
class Line:
    """One chat's questions; every change is made under ``LOCK``."""

    turns: list[Turn] = field(default_factory=list)
    waiting: list[Asked] = field(default_factory=list)
    current: Asked | None = None
    draft: qa.Answer | None = None  # what the current question's reply shows so far
    began: float = 0.0  # when the current question's answering began (time.monotonic)
    serving: bool = False  # an event is answering this chat's questions
    run: int = 0  # a new chat's: an answer begun before it is dropped
    inbox: queue.Queue | None = None  # the current question's answers and the page's requests
    give_up: threading.Event | None = None  # set when nobody waits for the current answer any more

    def add(self, asked: Asked) -> bool:
        """Queue a question; False when the line is full."""
        with LOCK:
            if len(self.waiting) >= MAX_WAITING:
                return False
            self.waiting.append(asked)
            inbox = self.inbox
        if inbox is not None:
            inbox.put((CHANGED, None))  # shown at once, even while an answer is being read
        return True

    def start(self) -> int | None:
        """This event's run when it may answer the waiting questions; None when another one does."""
        with LOCK:
            if self.serving or not self.waiting:
                return None
            self.serving = True
            return self.run

    def next(self, run: int) -> Asked | None:
        """The next waiting question, now the current one; None when none waits (or the chat is new)."""
        with LOCK:
            if run != self.run:
                return None
            self.current, self.draft = (self.waiting.pop(0) if self.waiting else None), None
            self.serving = self.current is not None
            self.began, self.inbox = time.monotonic(), (queue.Queue() if self.current else None)
            self.give_up = threading.Event() if self.current else None
            return self.current

    def finish(self, run: int, question: str, reply: qa.Answer | str, keep: int) -> bool:
        """The current question's reply joins the turns (the last ``keep`` kept); False if the chat is new."""
        with LOCK:
            if run != self.run:
                return False
            self.turns = [*self.turns, (question, reply)][-keep:]
            self.current, self.draft, self.inbox = None, None, None
            return True

    def release(self, run: int) -> None:
        """The event answering this chat's questions has ended: another may begin."""
        with LOCK:
            if run == self.run and self.serving:  # it ended mid-answer: that question is dropped
                self.serving, self.current, self.draft, self.inbox = False, None, None, None

    def tell(self, what: str) -> bool:
        """Tell the answer under way (STOP, CHANGED); False when none is."""
        with LOCK:
            inbox, give_up = self.inbox, self.give_up
        if give_up is not None and what == STOP:
            give_up.set()  # the language model stops reading it: the next question need not wait
        if inbox is not None:
            inbox.put((what, None))
        return inbox is not None

    def clear(self) -> None:
        """An empty chat; an answer under way is dropped."""
        with LOCK:
            inbox, give_up = self.inbox, self.give_up
            self.turns, self.waiting, self.current, self.draft = [], [], None, None
            self.serving, self.inbox, self.run = False, None, self.run + 1
        if give_up is not None:
            give_up.set()
        if inbox is not None:
            inbox.put((CHANGED, None))

    def seconds(self) -> int:
        """Whole seconds since the current question's answering began."""
        return int(time.monotonic() - self.began)


def new_line() -> Line:
    """An empty line, for a page that loads (a function: Gradio takes a dataclass for its fields)."""
    return Line()


def reading(replies: Callable[[], Iterator[qa.Answer]], inbox: queue.Queue,
            give_up: threading.Event | None = None) -> None:
    """Read replies() in a thread of its own, each answer put in inbox, then DONE (or the error):
    the event that waits on inbox can stop waiting for it at once, and once give_up is set the
    language model stops reading it."""
    context = contextvars.copy_context()  # the request's client address, for the log
    context.run(GIVE_UP.set, give_up)

    def read() -> None:
        try:
            for reply in replies():
                inbox.put(("answer", reply))
            inbox.put((DONE, None))
        except Exception as exc:  # the waiting event words it
            inbox.put((DONE, exc))

    threading.Thread(target=context.run, args=(read,), daemon=True, name="qa-answer").start()
