"""Every notice an answer can carry (qa/notices.py) speaks the reader's language, and each is shown as
written: on the chat page, in `qa ask`'s output, and in `qa ask --json` (its code for programs, its
words for people)."""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

import qa
from qa.notices import NOTICES, Notice, say
from qa.surfaces import cli
from qa.surfaces.console import print_answer
from qa.surfaces.web.render import answer_html

# Words of the product's insides that no notice may use: how it reads and scores, not what happened.
INSIDE = [r"phrase", r"\bread\b", r"calibrat", r"threshold", r"\bspans?\b", r"evidence", r"score",
          r"confiden", r"token", r"retriev", r"embedd", r"prompt", r"fallback", r"\bllm\b", r"ranker"]
# The blanks a notice may have, filled as the answer path fills them.
BLANKS = {"names": "Iran", "what": "a number of prisoners", "seconds": 30}
QUESTION = "How many cars cross the bridge every day?"


def answer_with(notice: Notice, cited: qa.Passage) -> qa.Answer:
    """An answer carrying the notice: a refusal for a refusal's, else an answer citing one sentence."""
    if notice.refusal:
        return qa.Answer(QUESTION, qa.NOT_COVERED, False, passages=(cited,),
                         notice=say(notice.code, **BLANKS),
                         notice_code=notice.code)
    return qa.Answer(QUESTION, f"{cited.text} [1]", True, (cited,), passages=(cited,),
                     notice=say(notice.code, **BLANKS), notice_code=notice.code)


@pytest.fixture
def cited(fake_qa: qa.QA) -> qa.Passage:
    """A sentence of the tiny articles, as an answer cites it."""
    article = next(a for a in fake_qa.index.articles.values() if "40,000" in a.text)
    start = article.text.index("About 40,000")
    end = article.text.index(".", start) + 1
    return qa.Passage(article.source, article.title, article.text[start:end], start, end, 1.0)


def shown_text(page: str) -> str:
    """The text a browser shows of HTML: tags gone, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.mark.parametrize("code", sorted(NOTICES))
def test_each_notice_speaks_to_the_reader(code: str) -> None:
    words = say(code, **BLANKS)
    assert "{" not in words and words.strip() == words and words[-1] in ".!?`"
    found = [w for w in INSIDE if re.search(w, words, re.IGNORECASE)]
    assert not found, f"{code}: {words!r} names the product's insides ({found})"


@pytest.mark.parametrize("code", sorted(NOTICES))
def test_each_notice_is_shown_on_the_page(code: str, fake_qa: qa.QA, cited: qa.Passage) -> None:
    page = answer_html(fake_qa, answer_with(NOTICES[code], cited))
    assert say(code, **BLANKS) in shown_text(page)


@pytest.mark.parametrize("code", sorted(NOTICES))
def test_each_notice_is_shown_in_the_terminal(code: str, cited: qa.Passage,
                                              capsys: pytest.CaptureFixture) -> None:
    print_answer(answer_with(NOTICES[code], cited))
    assert say(code, **BLANKS) in capsys.readouterr().out


class Answering:
    """An engine that answers every question with one answer."""

    def __init__(self, answer: qa.Answer) -> None:
        self.reply = answer

    def answer(self, question: str, *args: object, **kwargs: object) -> qa.Answer:
        return self.reply


@pytest.mark.parametrize("code", sorted(NOTICES))
def test_each_notice_reaches_qa_ask_and_its_json(code: str, cited: qa.Passage,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    answer = answer_with(NOTICES[code], cited)
    monkeypatch.setattr(cli, "_engine", lambda ctx: Answering(answer))
    shown = CliRunner().invoke(cli.main, ["ask", QUESTION])
    assert shown.exit_code == 0 and say(code, **BLANKS) in shown.output, shown.output
    printed = CliRunner().invoke(cli.main, ["ask", QUESTION, "--json"])
    data = json.loads(printed.output)
    assert (data["notice_code"], data["notice"]) == (code, say(code, **BLANKS))
