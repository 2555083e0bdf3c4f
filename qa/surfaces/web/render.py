"""The chat page's HTML: answers with their cited sentences highlighted, sources, the article list.

Every piece of text from a question, an answer or an article is escaped here."""


from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import qa
from qa.answering.layout import VERDICTS
from qa.passage import shown_date
from qa.question.forms import KIND_NAMES
from qa.surfaces.web.cards import byline, link, source_html
from qa.surfaces.web.cards import esc as _esc

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
.qa-clock{font-variant-numeric:tabular-nums}
.qa-cite{color:#2563eb;font-weight:600;font-size:.85em}
.qa-short{margin:0 0 4px}
.qa-list{margin:4px 0;padding-left:20px}.qa-side{margin:4px 0}.qa-verdict{font-size:1.05em}
.qa-reading{margin:0 0 4px;color:#6b7280;font-style:italic}
.qa-timing{color:#9ca3af;font-size:12px;margin-top:4px}
.qa-notice{color:#92400e;font-size:13px;margin:0 0 4px}
.qa-sources{margin-top:8px;display:flex;flex-direction:column;gap:8px}
.qa-source{border-left:3px solid #93c5fd;padding:2px 0 2px 10px}
.qa-not-covered .qa-source{border-left-color:#fcd34d}
.qa-src-title{font-weight:600;font-size:14px}
.qa-file{font-family:monospace;font-weight:400;color:#6b7280;font-size:12px;margin-left:6px}
.qa-byline{color:#6b7280;font-size:12px}.qa-byline a{color:#2563eb}
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
.qa-account{text-align:right;font-size:13px;color:#374151}.qa-account a{color:#2563eb}
"""


# Opening "Read the whole article" scrolls the cited sentence into view inside its box;
# `toggle` does not bubble, so listen in the capture phase on the chat container.
# Each new state of the last turn (searching, the cited sentences while the reader reads, the
# answer) scrolls the window just enough to show its reply down to the first cited sentence,
# never past its question: the page grows below the fold, where no one sees an answer arrive.
SCROLL_JS = """
element.addEventListener('toggle', (e) => {
  const box = e.target.querySelector && e.target.querySelector('.qa-article');
  const mark = box && box.querySelector('mark');
  if (e.target.open && mark) box.scrollTop = mark.offsetTop - box.offsetTop - box.clientHeight / 3;
}, true);
let shown = '';
const follow = () => {
  const questions = element.querySelectorAll('.qa-q');
  const question = questions[questions.length - 1];
  const reply = question && question.nextElementSibling;
  if (!reply) return;
  const cited = reply.querySelector('.qa-source .qa-snippet mark') || reply.querySelector('.qa-source')
    || reply;
  const top = question.getBoundingClientRect().top - 8;
  const below = cited.getBoundingClientRect().bottom + 16 - window.innerHeight;
  // The first cited sentence in view, even if a tall reply pushes its question off the top.
  const by = below > 0 ? below : Math.min(top, 0);
  if (by) window.scrollBy({top: by});
};
new MutationObserver(() => {
  const questions = element.querySelectorAll('.qa-q');
  const reply = questions.length && questions[questions.length - 1].nextElementSibling;
  if (!reply || questions.length + reply.className === shown) return;
  shown = questions.length + reply.className;
  // Again as the new reply's styles and fonts settle; a reader scrolling meanwhile is not fought for long.
  for (const ms of [0, 100, 300, 700]) setTimeout(follow, ms);
}).observe(element, {childList: true, subtree: true});
// The time a reply has taken so far, counted on here between the server's updates (data-s: its
// seconds when sent), so that the wait is seen to go on while the language model reads.
setInterval(() => {
  for (const clock of element.querySelectorAll('.qa-clock')) {
    clock.dataset.t0 = clock.dataset.t0 || String(Date.now() - 1000 * Number(clock.dataset.s || 0));
    const shown = Math.floor((Date.now() - Number(clock.dataset.t0)) / 1000) + ' s';
    if (clock.textContent !== shown) clock.textContent = shown;
  }
}, 500);
"""


def _ms(value: float) -> str:
    """Milliseconds, with a decimal when small so a fast step doesn't read as 0 ms."""
    return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"


def clock_html(seconds: int) -> str:
    """The seconds a reply has taken so far; the page counts on from them."""
    return f'<span class="qa-clock" data-s="{int(seconds)}">{int(seconds)} s</span>'


def answer_html(engine: qa.QA, answer: qa.Answer, seconds: int | None = None) -> str:
    """The answer bubble: text with [n] markers, bold short answer, timing line and sources (and,
    given ``seconds``, a reply still on its way: how long it has taken so far)."""
    llm = answer.timings.get("llm_ms")
    model = f" · local model {_ms(llm)}" if llm is not None else ""
    read, spans = answer.timings.get("read_ms"), not answer.model
    reader = (f" · read by the language model {_ms(read)}" if not spans and read is not None
              else " · short answer by the span reader" if spans and answer.short else "")
    dropped = f" · {len(answer.dropped)} generated sentence(s) dropped" if answer.dropped else ""
    timing = (f'<div class="qa-timing">{_esc(KIND_NAMES.get(answer.kind, answer.kind))} · retrieval '
              f'{_ms(answer.timings.get("retrieve_ms", 0.0))} · answer '
              f'{_ms(answer.timings.get("answer_ms", 0.0))}{reader}{model}{dropped}</div>')
    if not answer.answered:
        why = _esc(answer.notice or "Nothing in the indexed articles answers this well enough.")
        # The closest articles by title only, folded: an off-topic question needs no passages.
        titles = list(dict.fromkeys(f"{_esc(p.title)}{byline(p)}" for p in answer.passages))[:3]
        closest = (f'<details class="qa-closest"><summary>Closest articles ({len(titles)})</summary><ul>'
                   + "".join(f"<li>{t}</li>" for t in titles) + "</ul></details>") if titles else ""
        return (f'<div class="qa-a qa-not-covered"><div><b>⚠ {_esc(answer.text)}</b></div>'
                f"<div>{why}</div>{closest}{timing}</div>")
    body = body_html(answer)
    short = f'<p class="qa-short">Short answer: <strong>{_esc(answer.short)}</strong></p>' \
        if answer.short else ""
    if answer.provisional:
        wait = (f"In line for the language model: {answer.ahead} question{'s' * (answer.ahead > 1)} "
                "ahead of yours…" if answer.ahead else "Reading the sentences for the short answer…")
        short = f'<p class="qa-reading">{wait} {clock_html(seconds or 0)}</p>'
    elif seconds is not None:  # a written answer still streaming
        short = f'<p class="qa-reading">Writing the answer… {clock_html(seconds)}</p>{short}'
    if answer.notice:
        short = f'<p class="qa-notice">{_esc(answer.notice)}</p>{short}'
    sources = "".join(source_html(engine, n, c, short=answer.short_span)
                      for n, c in enumerate(answer.citations, 1))
    kind = "qa-answered qa-generated" if answer.method == "llm" else "qa-answered"
    kind += " qa-still-reading" if answer.provisional else ""
    return (f'<div class="qa-a {kind}">{short}<div>{body}</div>{timing}'
            f'<div class="qa-sources"><div class="qa-src-title">Sources</div>{sources}</div></div>')


def _marked(text: str, short: str | None = None) -> str:
    """Escaped text, its short answer in bold and its [n] markers as citations."""
    body = _esc(text)
    if short and _esc(short) in body:
        body = body.replace(_esc(short), f"<strong>{_esc(short)}</strong>", 1)
    return re.sub(r"&#91;(\d+)&#93;", r'<span class="qa-cite">[\1]</span>', body)


def body_html(answer: qa.Answer) -> str:
    """The answer's text as the page lays it out: a yes/no verdict in bold first, a list's items as a
    list, each side of a comparison under its name; else one paragraph."""
    verdict = VERDICTS.get(answer.verdict or "", "")
    lead = f'<strong class="qa-verdict">{_esc(verdict)}</strong> ' if verdict else ""
    if not answer.parts:
        return lead + _marked(answer.text.removeprefix(verdict).strip(), answer.short)
    items = "".join(f"<li>{_marked(p.text)}</li>" for p in answer.parts if p.item)
    sides = "".join(f'<p class="qa-side"><strong>{_esc(p.label)}:</strong> {_marked(p.text)}</p>'
                    for p in answer.parts if p.label and not p.item)
    rest = "".join(f"<p>{_marked(p.text, answer.short)}</p>" for p in answer.parts
                   if not p.item and not p.label)
    return lead + (f'<ul class="qa-list">{items}</ul>' if items else "") + sides + rest


def chat_html(engine: qa.QA | None, turns: list[Turn], pending: str | None = None,
              draft: qa.Answer | None = None, waiting: Sequence[str] = (), seconds: int = 0) -> str:
    """The whole conversation as HTML built here, every piece of text escaped: the turns, the question
    being answered (``pending``, its reply so far ``draft``, ``seconds`` taken), those ``waiting``."""
    parts = []
    for question, reply in turns:
        parts.append(f'<div class="qa-q">{_esc(question)}</div>')
        parts.append(answer_html(engine, reply) if engine and isinstance(reply, qa.Answer)
                     else f'<div class="qa-a qa-error">{_esc(str(reply))}</div>')
    if pending is not None and draft is not None and engine:
        # Still being read (the cited sentences, the short answer to come), or a generated answer
        # still streaming (only its verified sentences so far).
        parts.append(f'<div class="qa-q">{_esc(pending)}</div>{answer_html(engine, draft, seconds)}')
    elif pending is not None:
        parts.append(f'<div class="qa-q">{_esc(pending)}</div><div class="qa-a qa-pending">Searching the '
                     f"articles… {clock_html(seconds)}</div>")
    # Questions asked meanwhile, each with its place in this chat's line (the one answered is 1st).
    for place, question in enumerate(waiting, 1 + (pending is not None)):
        parts.append(f'<div class="qa-q">{_esc(question)}</div>'
                     f'<div class="qa-a qa-pending qa-waiting">Waiting: {ordinal(place)} in line</div>')
    if not parts:
        parts.append('<div class="qa-empty">Ask a question about the news articles, '
                     "or click an example below.</div>")
    return f'<div class="qa-chat">{"".join(parts)}</div>'


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def articles_html(engine: qa.QA) -> str:
    """A table of the indexed articles: title (linked when it has a web address), date, file, chunks."""
    chunks = Counter(c.source for c in engine.index.chunks)
    rows = "".join(f"<tr><td>{link(a.url, a.title) or _esc(a.title)}</td>"
                   f"<td>{_esc(shown_date(a.date, a.file_date) or '')}</td>"
                   f"<td class='qa-file'>{_esc(a.source)}</td>"
                   f"<td>{chunks[a.source]}</td></tr>"
                   for a in sorted(engine.index.articles.values(), key=lambda a: a.source))
    return (f"<div><b>{len(engine.index.articles)} articles indexed</b></div><table class='qa-articles'>"
            f"<tr><th>Title</th><th>Date</th><th>File</th><th>Chunks</th></tr>{rows}</table>")


def account_html(user: str | None) -> str:
    """Who is signed in, and a link that signs this browser out; "" without sign-in."""
    if not user:
        return ""
    return (f'<div class="qa-account">Signed in as <b>{_esc(user)}</b> · '
            '<a href="logout?all_session=false">Sign out</a></div>')


def status_html(message: str, ok: bool) -> str:
    return f'<div class="qa-status-{"ok" if ok else "error"}">{_esc(message)}</div>'
