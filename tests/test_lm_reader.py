"""The language-model reader with a fake runtime: what it reads, what is shown, what falls back."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
from pathlib import Path

import pytest
from fake_runtime import FakeRuntime
from reading import fell_back

from qa import QA, Config
from qa.errors import ModelProblem
from qa.llm import model_file
from qa.llm.base import RuntimeFailed
from qa.llm.runtimes import LazyRuntime
from qa.readers.lm.locate import clean, locate


def _engine(config: Config, fake_embedder: object, runtime: object) -> QA:
    return QA(config.replace(reader="lm"), embedder=fake_embedder, runtime=runtime)  # type: ignore[arg-type]


def _exact(engine: QA, passage) -> None:
    assert engine.index.articles[passage.source].text[passage.start:passage.end] == passage.text


def test_the_models_phrase_is_shown_with_exact_offsets_in_the_sentence_cited_first(
        tiny_config: Config, fake_embedder: object) -> None:
    runtime = FakeRuntime("40,000")
    engine = _engine(tiny_config, fake_embedder, runtime)
    answer = engine.answer("How many cars cross the bridge every day?")
    assert answer.answered and answer.reader == "lm" and answer.model == "fake-lm"
    assert answer.short == "40,000" and answer.short_span is not None
    _exact(engine, answer.short_span)
    lead = answer.citations[0]
    assert lead.start <= answer.short_span.start < answer.short_span.end <= lead.end
    assert "read_ms" in answer.timings and answer.confidence > 0.5
    # The model read passages that hold the sentence, after the fixed instruction: paragraphs a
    # blank line apart, unnumbered (it answered "how many…?" with a passage's number).
    messages = runtime.requests[0]["messages"]
    assert messages[0]["role"] == "system" and "not in the articles" in messages[0]["content"]
    passages = messages[1]["content"].split("Question:")[0].removeprefix("Passages:").strip().split("\n\n")
    assert len(passages) > 1 and any("About 40,000 cars" in p for p in passages)
    assert not any(re.match(r"\[\d+\]", p) or "\n" in p for p in passages)
    assert messages[1]["content"].rstrip().endswith("How many cars cross the bridge every day?")


def test_a_phrase_in_no_article_is_never_shown(tiny_config: Config, fake_embedder: object,
                                               caplog: pytest.LogCaptureFixture) -> None:
    engine = _engine(tiny_config, fake_embedder, FakeRuntime("Real Madrid"))
    with caplog.at_level(logging.INFO, logger="qa"):
        answer = engine.answer("How many cars cross the bridge every day?")
    # Not shown, and no refusal either: the cited sentences stand, and the notice says why there
    # is no short answer; the model read it, and the answer says so.
    assert answer.answered and answer.reader == "lm" and answer.model == "fake-lm" and answer.citations
    assert answer.short is None and answer.notice_code == "no_phrase"
    assert "Real Madrid" not in json.dumps(answer.to_dict())
    assert "'Real Madrid' is in no sentence it read" in caplog.text


def test_the_model_declining_refuses_with_its_notice(tiny_config: Config, fake_embedder: object) -> None:
    engine = _engine(tiny_config, fake_embedder, FakeRuntime("not in the articles", p=0.8))
    answer = engine.answer("How many cars cross the bridge every day?")
    assert not answer.answered and answer.notice_code == "no_answer" and answer.reader == "lm"
    assert answer.no_answer >= 0.5 and answer.passages


def test_a_decline_on_what_someone_said_is_answered_by_the_sentences(tiny_config: Config,
                                                                     fake_embedder: object) -> None:
    engine = _engine(tiny_config, fake_embedder, FakeRuntime("not in the articles", p=0.8))
    answer = engine.answer("What did Mayor Jane Porter say about the library?")
    # What a sentence says has no short phrase: the model declining it refuses nothing.
    assert answer.answered and answer.short is None and answer.notice_code != "no_answer"
    assert "Jane Porter said the library" in answer.citations[0].text


def test_stream_cites_the_sentences_before_the_short_answer(tiny_config: Config,
                                                            fake_embedder: object) -> None:
    engine = _engine(tiny_config, fake_embedder, FakeRuntime("40,000"))
    first, last = list(engine.stream("How many cars cross the bridge every day?"))
    assert first.provisional and first.answered and first.citations and first.short is None
    assert not last.provisional and last.short == "40,000"


def test_a_missing_model_gives_one_line_and_the_span_reader(tiny_config: Config, fake_embedder: object,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(model_file, "_part_file", lambda part: None)  # no part installed
    engine = QA(tiny_config.replace(reader="lm", cache_dir=tmp_path / "cache"), embedder=fake_embedder)
    engine.build()
    with caplog.at_level(logging.WARNING, logger="qa"):
        answer = engine.answer("How many cars cross the bridge every day?")
        again = engine.answer("How many cars cross the bridge every day?")
    assert answer.answered and answer.short and "40,000" in answer.short
    assert "make setup" in fell_back(answer) and answer.notice_code == "model_missing"
    assert again.notice == answer.notice
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "not installed" in warnings[0].getMessage()  # said once, not per question
    assert "Traceback" not in caplog.text


def test_a_runtime_failure_answers_with_the_span_reader(tiny_config: Config, fake_embedder: object,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    engine = _engine(tiny_config, fake_embedder, FakeRuntime(fail=RuntimeFailed("the context is full")))
    with caplog.at_level(logging.WARNING, logger="qa"):
        answer = engine.answer("How many cars cross the bridge every day?")
    assert answer.answered and fell_back(answer) and answer.notice_code == "model_failed"
    assert "the context is full" in caplog.text and "the context is full" not in answer.notice


def test_a_follow_up_is_read_with_the_earlier_turn(tiny_config: Config, fake_embedder: object) -> None:
    runtime = FakeRuntime(lambda m: "Jane Porter" if "library" in m[1]["content"] else "not in the articles")
    engine = _engine(tiny_config, fake_embedder, runtime)
    first = engine.answer("Who said the library would hold 80,000 books?")
    assert first.short == "Jane Porter"
    engine.answer("What will she build?", history=[(first.question, first)])
    prompt = runtime.requests[-1]["messages"][1]["content"]
    assert "Earlier question: Who said the library would hold 80,000 books?" in prompt
    assert "Its answer: Jane Porter" in prompt
    engine.answer("What will she build?")
    assert "Earlier question" not in runtime.requests[-1]["messages"][1]["content"]


def test_multiple_choice_reads_the_letter_probabilities(tiny_config: Config, fake_embedder: object) -> None:
    runtime = FakeRuntime()
    engine = _engine(tiny_config, fake_embedder, runtime)
    choice = engine.choose("How many cars cross the bridge?", ["40,000", "12 million", "None of the above"])
    probs = choice.probabilities
    assert choice.best == 0 and abs(sum(probs) - 1) < 1e-3 and choice.read
    assert any("About 40,000 cars" in p.text for p in choice.read)
    request = runtime.requests[-1]
    assert request["grammar"] == 'root ::= "A" | "B" | "C"' and request["max_tokens"] == 1
    assert 'choose "None of the above"' in request["messages"][1]["content"]
    # The passages come before the question in both readings: the second reuses the first's cache.
    engine.answer("How many cars cross the bridge?")
    mc, short = (r["messages"] for r in runtime.requests[-2:])
    assert mc[0] == short[0]
    shared = mc[1]["content"].split("Question:")[0]
    assert short[1]["content"].startswith(shared) and "About 40,000 cars" in shared


@pytest.mark.parametrize(("phrase", "found"), [
    ("1500", "1,500"), ("Answer: Zalmay Khalilzad.", "Zalmay Khalilzad"), ("the US envoy", "The U.S. envoy"),
    ('"a step"', "a step"), ("US", "U.S."), ("[2] Reuters", "Reuters"), ("ally", None), ("Real Madrid", None),
    # A small number written the other way is the article's ("2" is its "two"), never part of another.
    ("2 phases", "two phases"), ("5-year", "five-year"), ("five officials", "5 officials"), ("15", None),
    ("1", None),
])
def test_locate_finds_the_phrase_word_for_word(phrase: str, found: str | None) -> None:
    sentences = ["In the first phase, 1,500 Taliban prisoners will be freed, Reuters said.",
                 "The U.S. envoy Zalmay Khalilzad welcomed it — “a step” for allies.",
                 "The release comes in two phases over a five-year term, 5 officials said."]
    at = locate(phrase, sentences)
    assert (sentences[at[0]][at[1]:at[2]] if at else None) == found


def test_a_question_asking_for_a_date_reads_no_date_headings(tmp_path: Path, fake_embedder: object) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "drawdown.md").write_text("---\ndate: 2020-03-11\n---\n# Drawdown\n\nThe American drawdown "
                                       "began on Monday with 400 troops leaving two bases.\n", "utf-8")
    runtime = FakeRuntime("Monday")
    engine = _engine(Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", min_evidence=0.0),
                     fake_embedder,
                     runtime)
    # The heading is the only "11 Mar 2020" the model sees, and it copies it for "on which day…?".
    engine.answer("How many troops left in the American drawdown?")
    engine.answer("On which day did the American drawdown begin?")
    counted, dated = (r["messages"][1]["content"] for r in runtime.requests[-2:])
    assert "Passages:\n(11 Mar 2020) The American drawdown" in counted
    assert "Passages:\nThe American drawdown" in dated and "2020" not in dated


def test_clean_keeps_only_the_phrase() -> None:
    assert clean("  Suhail Shaheen.\nHe is the spokesman.") == "Suhail Shaheen"
    assert clean("The answer is: 100") == "100"


def _fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corrupt: int | None = None) -> bytes:
    """Two installed fake part packages, and a spec that pins them (one corrupted, if asked)."""
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 500]
    parts = []
    for n, data in enumerate(chunks, 1):
        package = tmp_path / "site" / f"qa_fake_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(data if n != corrupt else data[:-1] + b"x")
        parts.append(model_file.Part(f"qa-fake-part{n}", f"qa_fake_part{n}", f"data/part{n:02d}.bin",
                                     len(data), hashlib.sha256(data).hexdigest()))
    whole = b"".join(chunks)
    spec = model_file.ModelSpec("fake", "Fake", "MIT", "1", len(whole), hashlib.sha256(whole).hexdigest(),
                                tuple(parts))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(model_file, "spec", lambda: spec)
    for n in (1, 2):
        sys.modules.pop(f"qa_fake_part{n}", None)
    return whole


def test_parts_are_joined_once_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _fake_parts(tmp_path, monkeypatch)
    path = model_file.model_path(tmp_path / "cache")
    assert path.read_bytes() == whole and path.parent == tmp_path / "cache" / "models"
    monkeypatch.setattr(model_file, "_part_file", lambda part: pytest.fail("joined again"))
    assert model_file.model_path(tmp_path / "cache") == path  # stamped: not hashed or joined again


def test_a_part_with_a_wrong_hash_gives_one_line_and_writes_nothing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_parts(tmp_path, monkeypatch, corrupt=2)
    with pytest.raises(ModelProblem, match=r"part qa-fake-part2 .* has the wrong sha256: reinstall") as err:
        model_file.model_path(tmp_path / "cache")
    assert "\n" not in str(err.value)
    assert not list((tmp_path / "cache" / "models").iterdir())  # no half file under any name


def test_a_truncated_model_file_gives_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _fake_parts(tmp_path, monkeypatch)
    path = model_file.model_path(tmp_path / "cache")
    path.write_bytes(whole[:300])
    with pytest.raises(ModelProblem, match=r"truncated or damaged \(300 of 1,504 bytes\): run .*reader"):
        model_file.model_path(tmp_path / "cache")
    path.write_bytes(whole[:-1] + b"z")  # the right size, the wrong bytes
    with pytest.raises(ModelProblem, match="corrupt"):
        model_file.model_path(tmp_path / "cache")


def test_a_custom_model_must_be_a_gguf_file(tmp_path: Path) -> None:
    with pytest.raises(ModelProblem, match="no such file"):
        model_file.model_path(tmp_path, str(tmp_path / "none.gguf"))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelProblem, match="not a GGUF model file"):
        model_file.model_path(tmp_path, str(tmp_path / "notes.txt"))


def test_a_lazy_runtime_loads_once_and_remembers_a_problem() -> None:
    calls = []

    def load() -> FakeRuntime:
        calls.append(1)
        raise ModelProblem("not installed")

    lazy = LazyRuntime(load)
    for _ in range(3):
        with pytest.raises(ModelProblem):
            lazy.complete([])
    assert len(calls) == 1


def test_the_reader_setting_is_checked() -> None:
    with pytest.raises(ValueError, match="QA_READER='llm' is not one of lm, spans"):
        Config.of(reader="llm")


def test_a_slow_model_past_the_read_timeout_gives_the_span_answer_with_a_notice(
        tiny_config: Config, fake_embedder: object) -> None:
    runtime = FakeRuntime("40,000", delay=600.0)
    engine = QA(tiny_config.replace(reader="lm", read_timeout=0.3), embedder=fake_embedder, runtime=runtime)
    answer = engine.answer("How many cars cross the bridge every day?")
    assert answer.answered and answer.short and "40,000" in answer.short
    assert "0.3 s" in fell_back(answer) and answer.notice_code == "model_slow"
    # Given up at the timeout, not after the model: it was asked once and its 600 s are far off.
    assert len(runtime.requests) == 1 and answer.timings["read_ms"] < runtime.delay * 1000 / 10


def test_questions_at_once_are_all_read_and_exact(tiny_config: Config, fake_embedder: object) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def reply(messages: list) -> str:
        return "40,000" if "cars" in messages[1]["content"].split("Question:")[-1] else "Jane Porter"

    runtime = FakeRuntime(reply, delay=0.05)
    engine = QA(tiny_config.replace(reader="lm", reader_slots=3), embedder=fake_embedder, runtime=runtime)
    questions = ["How many cars cross the bridge every day?",
                 "Who said the library would hold 80,000 books?"] * 4
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda q: engine.answer(q, user=q[:3]), questions))
    for question, answer in zip(questions, answers, strict=True):
        assert answer.reader == "lm" and answer.short == ("40,000" if "cars" in question else "Jane Porter")
        _exact(engine, answer.short_span)


def test_a_waiting_question_says_where_it_is_in_line(tiny_config: Config, fake_embedder: object) -> None:
    import threading

    runtime = FakeRuntime("40,000", hold=threading.Semaphore(0))
    engine = QA(tiny_config.replace(reader="lm"), embedder=fake_embedder, runtime=runtime)
    engine.build()
    busy = threading.Thread(target=engine.answer, args=("How many cars cross the bridge?",),
                            kwargs={"user": "a"})
    busy.start()
    assert runtime.reading.wait(60), "the first question never reached the model"
    waiting = engine.stream("How many cars cross the bridge every day?", user="b")
    steps = [next(waiting)]  # while the model still reads the first question, held
    runtime.hold.release()  # the first is read; this one's turn comes, and it is held in turn
    while not (steps[-1].provisional and steps[-1].ahead == 0):
        steps.append(next(waiting))
    runtime.hold.release()
    steps += list(waiting)
    busy.join(60)
    assert steps[0].provisional and steps[0].ahead == 1  # one question is read before this one
    assert any(s.provisional and s.ahead == 0 for s in steps[1:-1]) and steps[-1].short == "40,000"


def test_a_line_too_long_for_the_read_timeout_answers_at_once_with_the_span_reader(
        tiny_config: Config, fake_embedder: object) -> None:
    from concurrent.futures import ThreadPoolExecutor

    runtime = FakeRuntime("40,000", delay=0.4)
    engine = QA(tiny_config.replace(reader="lm", reader_slots=1, read_timeout=2.0), embedder=fake_embedder,
                runtime=runtime)
    question = "How many cars cross the bridge every day?"
    for _ in range(3):  # the line learns the pace: about 0.4 s a reading
        assert engine.answer(question).reader == "lm"
    with ThreadPoolExecutor(10) as pool:  # one read, nine waiting: the last four cannot be read in 2 s
        answers = list(pool.map(lambda u: engine.answer(question, user=f"u{u}"), range(10)))
    busy = [a for a in answers if a.notice_code == "model_busy"]
    assert all(a.answered and a.short and "40,000" in a.short for a in answers)
    read = [a for a in answers if a.reader == "lm"]
    assert len(busy) >= 3 and len(read) >= 3
    for answer in busy:
        fell_back(answer)
    # Given up when first asked, not after waiting the 2 s out: the busy ones never reached the model.
    assert len(runtime.requests) <= 3 + len(answers) - len(busy)


def _ferry_engine(tmp_path: Path, fake_embedder: object, runtime: FakeRuntime, **texts: str) -> QA:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name, text in texts.items():
        (seeds / f"{name}.txt").write_text(text)
    config = Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", chunk_size=200, chunk_overlap=40,
                    min_evidence=0.1, reader="lm")
    return QA(config, embedder=fake_embedder, runtime=runtime)  # type: ignore[arg-type]


def test_the_short_answer_leads_though_other_sentences_were_shown_while_reading(tmp_path: Path,
                                                                               fake_embedder: object) -> None:
    engine = _ferry_engine(tmp_path, fake_embedder, FakeRuntime("412"),
                           a="Ferry News\n\nThe Tollby ferry crossed the bay with many passengers.\n",
                           b="Ferry Count\n\nAbout 412 passengers rode the Tollby ferry.\n")
    first, *_, last = engine.stream("How many passengers did the Tollby ferry carry across the bay?")
    assert first.provisional and len(first.citations) == 2  # two sentences [1] and [2] while reading
    assert "412" not in first.citations[0].text
    # The answer is the sentence that holds it, cited alone: not the one without it, first.
    assert last.short == "412" and last.text.startswith("About 412 passengers")
    assert [c.text for c in last.citations] == ["About 412 passengers rode the Tollby ferry."]
    assert last.short_span is not None and last.short_span.source == last.citations[0].source
    _exact(engine, last.short_span)


def test_a_why_question_read_by_the_model_leads_with_the_reason_and_says_why_no_short_answer(
        tmp_path: Path, fake_embedder: object) -> None:
    engine = _ferry_engine(tmp_path, fake_embedder, FakeRuntime("the storm closed the harbour", p=0.3),
                           a="Ferry News\n\nThe Tollby ferry stopped on Sunday.\nOfficials said the storm "
                             "closed the harbour, so the ferry stopped.\n")
    answer = engine.answer("Why did the Tollby ferry stop on Sunday?")
    assert answer.answered and answer.reader == "lm" and answer.short is None
    assert "the storm closed the harbour" in answer.citations[0].text  # the reason leads
    assert answer.notice_code == "by_sentences"


def test_an_unsure_phrase_is_hidden_and_the_notice_says_so(tmp_path: Path, fake_embedder: object) -> None:
    engine = _ferry_engine(tmp_path, fake_embedder, FakeRuntime("412", p=0.3),
                           b="Ferry Count\n\nAbout 412 passengers rode the Tollby ferry.\n")
    # This fake's doubt is all on declining: a decline threshold it stays under keeps it reading.
    engine = QA(engine.config.replace(reader_decline=0.95), embedder=fake_embedder, runtime=engine.runtime)
    answer = engine.answer("How many passengers rode the Tollby ferry?")
    assert answer.answered and answer.short is None and answer.reader == "lm"
    assert answer.notice_code == "unsure"


def test_a_sentence_two_articles_print_alike_is_cited_once(tmp_path: Path, fake_embedder: object) -> None:
    same = "About 412 passengers rode the Tollby ferry on Sunday.\n"
    engine = _ferry_engine(tmp_path, fake_embedder, FakeRuntime("not in the articles"),
                           a=f"Wire Copy\n\n{same}", b=f"Ferry Count\n\n{same}")
    engine = QA(engine.config.replace(reader="spans"), embedder=fake_embedder)
    answer = engine.answer("What happened on the Tollby ferry on Sunday?")
    texts = [" ".join(c.text.split()) for c in answer.citations]
    assert texts and len(texts) == len(set(texts))


LEFT_TURN = {
    "vote.md": "---\ndate: 2022-06-17\n---\n# Colombia votes\n\nGustavo Petro will become Colombia's first "
               "leftist president after winning the country's presidential election on Sunday.\n",
    "region.md": "---\ndate: 2022-06-20\n---\n# A leftist wave\n\nChile, Peru and Honduras elected leftist "
                 "presidents in 2021, and a leftist leads the presidential polls in Brazil.\n",
}
RELEASES = {
    "march.md": "---\ndate: 2020-03-11\n---\n# Releases begin\n\nKandahar officials release 100 Zarghun "
                "prisoners a day, the governor said.\n",
    "april.md": "---\ndate: 2020-04-20\n---\n# Releases speed up\n\nKandahar officials release 300 Zarghun "
                "prisoners a day, the governor said.\n",
}


def _over_articles(tmp_path: Path, fake_embedder: object, articles: dict[str, str], phrase: str) -> QA:
    """An engine reading these articles (file name: text) whose fake model always writes phrase."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for name, text in articles.items():
        (seeds / name).write_text(text, "utf-8")
    return _engine(Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", min_evidence=0.0), fake_embedder,
                   FakeRuntime(phrase))


def test_a_shown_short_answer_keeps_the_lead_against_a_newer_sentence_on_something_else(
        tmp_path: Path, fake_embedder: object) -> None:
    engine = _over_articles(tmp_path, fake_embedder, LEFT_TURN, "Colombia")
    answer = engine.answer("Which country elected its first leftist president?")
    # The newer article names countries too, but says nothing of this election: it does not lead.
    assert answer.short == "Colombia", answer.text
    assert answer.citations[0].source == "vote.md" and answer.text.startswith("Gustavo Petro will become")
    assert "most recent" not in answer.text


def test_a_newer_article_that_updates_the_models_answer_leads(tmp_path: Path, fake_embedder: object) -> None:
    engine = _over_articles(tmp_path, fake_embedder, RELEASES, "100")
    answer = engine.answer("How many Zarghun prisoners do Kandahar officials release a day?")
    assert answer.short == "300" and answer.citations[0].source == "april.md"
    assert answer.text.startswith("20 Apr 2020 (most recent): Kandahar officials release 300")
    assert "11 Mar 2020: Kandahar officials release 100" in answer.text
    _exact(engine, answer.short_span)


def test_part_of_a_persons_name_is_shown_as_the_whole_name(tmp_path: Path, fake_embedder: object) -> None:
    hart = ("# Hart Trophy\n\nMaple Leafs forward Auston Matthews won the Hart "
            "Trophy after the first 60-goal season in ten years.\n")
    engine = _over_articles(tmp_path, fake_embedder, {"hockey.md": hart}, "Matthews")
    seeds = engine.config.seeds_dir
    answer = engine.answer("Which player won the Hart Trophy?")
    assert answer.short == "Auston Matthews"
    _exact(engine, answer.short_span)
    # The tagger's name may take the possessive along; the shown name does not.
    (seeds / "hockey.md").write_text("# Hart Trophy\n\nThe Hart Trophy is Auston Matthews’s, after the first "
                                     "60-goal season in ten years.\n", "utf-8")
    engine.build()
    assert engine.answer("Which player won the Hart Trophy?").short == "Auston Matthews"
    # The small tagger calls "bar al-Qaeda" a person: a lower-case word is no part of a name.
    (seeds / "hockey.md").write_text("# Deal\n\nAs part of the agreement, the Taliban must continue its "
                                     "reduction in violence, and bar al-Qaeda or any other extremist groups "
                                     "from operating in areas under their control.\n", "utf-8")
    engine = _engine(engine.config, fake_embedder, FakeRuntime("al-Qaeda"))
    engine.build()
    assert engine.answer("Which network must the Taliban keep out of their areas?").short == "al-Qaeda"


@pytest.mark.parametrize("reply", ["a", "A"])
def test_a_phrase_of_function_words_alone_is_no_answer(tmp_path: Path, fake_embedder: object,
                                                      reply: str) -> None:
    # A quiz page among the search results: its first option is "A.", and "a" is in every sentence.
    quiz = ("# Quiz\n\nWhich wildly popular show was recently green lit for a new "
            "season?\n\nA. Squid Game\n\nB. Stranger Things\n")
    engine = _over_articles(tmp_path, fake_embedder, {"quiz.md": quiz}, reply)
    answer = engine.answer("Which wildly popular show was recently green lit for a new season?")
    assert answer.short is None and answer.short_span is None
