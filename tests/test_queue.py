"""The fair queue for the language model: slots, turns across users, places in the queue, deadlines."""

from __future__ import annotations

import threading

import pytest

from qa.llm.queue import FairQueue, QueueTooLong, TimedOut, current_stop


class Gate:
    """Work that records its start and waits until the test lets it finish."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def work(self, name: str):
        self.release[name] = threading.Event()

        def run() -> str:
            give_up = current_stop()  # what a runtime called inside the job consults
            assert give_up is not None
            with self.lock:
                self.started.append(name)
            while not self.release[name].wait(0.01):
                if give_up():  # a reading told to stop raises, as the language-model runtime stops
                    raise TimedOut(f"{name} stopped")
            return name
        return run


def wait(queue: FairQueue, ticket):
    """Block until the job is done and return its result."""
    while not queue.poll(ticket, 0.25):
        pass
    return queue.result(ticket)


def test_questions_are_read_in_turn_across_users() -> None:
    gate, queue = Gate(), FairQueue(slots=1)
    first = queue.submit("alice", gate.work("a1"), timeout=30)
    rest = [queue.submit(user, gate.work(name), timeout=30)
            for user, name in (("alice", "a2"), ("alice", "a3"), ("bob", "b1"))]
    a2, a3, b1 = rest
    assert [queue.ahead(t) for t in (first, a2, b1, a3)] == [0, 1, 2, 3]  # a1 is being read
    for name, ticket in (("a1", first), ("a2", a2), ("b1", b1), ("a3", a3)):
        gate.release[name].set()
        assert wait(queue, ticket) == name
    assert gate.started == ["a1", "a2", "b1", "a3"]  # bob's one question came before alice's third


def test_several_slots_read_at_once() -> None:
    gate, queue = Gate(), FairQueue(slots=3)
    tickets = [queue.submit(f"u{i}", gate.work(f"q{i}"), timeout=30) for i in range(4)]
    started = threading.Event()
    for _ in range(200):
        if len(gate.started) == 3:
            started.set()
            break
        threading.Event().wait(0.01)
    assert started.is_set() and queue.ahead(tickets[3]) == 3 and "q3" not in gate.started
    for i, ticket in enumerate(tickets):
        gate.release[f"q{i}"].set()
        assert wait(queue, ticket) == f"q{i}"


def test_a_question_past_its_deadline_is_never_read_and_a_reading_is_told_to_stop() -> None:
    now = [0.0]
    gate, queue = Gate(), FairQueue(slots=1, clock=lambda: now[0])
    running = queue.submit("alice", gate.work("long"), timeout=5)
    queued = queue.submit("bob", gate.work("late"), timeout=5)
    now[0] = 6.0
    with pytest.raises(TimedOut):
        wait(queue, queued)
    with pytest.raises(TimedOut):
        wait(queue, running)  # the work sees give_up() and stops
    assert "late" not in gate.started


def test_a_question_the_queue_cannot_reach_in_time_is_given_up_at_once() -> None:
    now = [0.0]
    gate, queue = Gate(), FairQueue(slots=1, clock=lambda: now[0])
    for i in range(3):  # three readings of 5 s set the pace
        ticket = queue.submit("pace", gate.work(f"p{i}"), timeout=30)
        assert queue.expected_wait(ticket) is None  # being read, or no pace yet
        now[0] += 5
        gate.release[f"p{i}"].set()
        assert wait(queue, ticket) == f"p{i}"
    running = queue.submit("alice", gate.work("running"), timeout=30)
    waiting = [queue.submit(f"u{i}", gate.work(f"w{i}"), timeout=12) for i in range(4)]
    assert [queue.expected_wait(t) for t in waiting] == [5, 10, 15, 20]
    assert queue.poll(waiting[1], 0) is False  # 10 s of reading ahead of a 12 s deadline: it waits
    with pytest.raises(QueueTooLong, match="3 questions are ahead in line, about 15 s") as refused:
        queue.poll(waiting[2], 0)
    assert refused.value.ahead == 3 and isinstance(refused.value, TimedOut)
    assert queue.ahead(waiting[3]) == 3  # the given-up question left the queue
    with pytest.raises(QueueTooLong):
        queue.poll(waiting[3], 0)
    for name, ticket in (("running", running), ("w0", waiting[0]), ("w1", waiting[1])):
        gate.release[name].set()
        assert wait(queue, ticket) == name
    assert "w2" not in gate.started and "w3" not in gate.started


def test_without_a_pace_a_long_queue_still_waits() -> None:
    now = [0.0]
    gate, queue = Gate(), FairQueue(slots=1, clock=lambda: now[0])
    tickets = [queue.submit(f"u{i}", gate.work(f"q{i}"), timeout=1) for i in range(20)]
    assert queue.expected_wait(tickets[-1]) is None and queue.poll(tickets[-1], 0) is False
    for i, ticket in enumerate(tickets):
        gate.release[f"q{i}"].set()
        assert wait(queue, ticket) == f"q{i}"


EXITS_MID_READING = """
import sys, time
from pathlib import Path
from qa.llm.queue import FairQueue

def reading() -> None:  # a prompt's batch that llama.cpp does not stop mid-way, longer than 30 s
    time.sleep(32)
    Path(sys.argv[1]).write_text("stopped")

ticket = FairQueue().submit("someone", reading, 600)
while not ticket.started:
    time.sleep(0.01)
"""


def test_a_process_exits_only_once_its_reading_under_way_stops(tmp_path) -> None:
    # A reading thread still inside llama.cpp when the interpreter exits crashes the process (exit
    # -11 after `qa ask --llm` gave up on its reply): the exit waits for the reading to stop.
    import subprocess
    import sys

    marker = tmp_path / "stopped"
    done = subprocess.run([sys.executable, "-c", EXITS_MID_READING, str(marker)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and marker.read_text() == "stopped", done.stderr[-2000:]
