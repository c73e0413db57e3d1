"""The Markdown that ``summary.md`` is written in, as HTML: headings, pipe tables, lists, paragraphs,
``code``, *emphasis* and **strong** text, backslash escapes and entities.  Nothing else (no raw HTML,
links or images): data in the summary is already inert text (``workflow.text.md``), and this keeps it so.
"""

from __future__ import annotations

import html
import re

_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")


def _inline(text: str) -> str:
    """Inline Markdown of one line as HTML (everything else escaped)."""
    out, i = [], 0
    # protect escapes and code spans first
    pieces: list[tuple[str, str]] = []  # (kind, text)
    buf = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and not text[i + 1].isalnum():
            buf.append(("lit", text[i + 1]))
            i += 2
        elif ch == "`":
            end = text.find("`", i + 1)
            if end == -1:
                buf.append(("lit", ch))
                i += 1
            else:
                buf.append(("code", text[i + 1: end]))
                i = end + 1
        elif ch == "&" and _ENTITY.match(text, i):
            m = _ENTITY.match(text, i)
            buf.append(("lit", html.unescape(m.group(0))))
            i = m.end()
        else:
            buf.append(("md", ch))
            i += 1
    # merge runs of the same kind
    for kind, chars in buf:
        if pieces and pieces[-1][0] == kind and kind != "code":
            pieces[-1] = (kind, pieces[-1][1] + chars)
        else:
            pieces.append((kind, chars))
    for kind, chars in pieces:
        if kind == "code":
            out.append(f"<code>{html.escape(html.unescape(chars)).replace('*', '&#42;')}</code>")
        elif kind == "lit":  # an escaped "*" must not start emphasis below
            out.append(html.escape(chars).replace("*", "&#42;"))
        else:
            s = html.escape(chars)
            s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
            s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", s)
            out.append(s)
    html_text = "".join(out)
    # emphasis that spans escaped or code pieces
    return re.sub(r"(?<![\w*])\*(?!\s)([^*<>]+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", html_text)


def _cells(line: str) -> list[str]:
    """The cells of a pipe-table row (``\\|`` stays inside a cell)."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*", line))


def to_html(markdown: str, *, heading_offset: int = 0) -> str:
    """HTML of ``markdown`` (the subset ``summary.md`` uses); headings shifted down by ``heading_offset``."""
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = re.match(r"(#{1,6})\s+(.*)", line)
        if heading:
            level = min(len(heading.group(1)) + heading_offset, 6)
            out.append(f"<h{level}>{_inline(heading.group(2).strip())}</h{level}>")
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            head = _cells(line)
            i += 2
            body = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            thead = "" if not any(head) else "<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + \
                "</tr></thead>"
            rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body)
            out.append(f'<div class="scroll"><table>{thead}<tbody>{rows}</tbody></table></div>')
            continue
        if re.match(r"\s*[-*]\s+", line):
            items = []
            while i < len(lines) and re.match(r"\s*[-*]\s+", lines[i]):
                items.append(re.sub(r"^\s*[-*]\s+", "", lines[i]))
                i += 1
            out.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
            continue
        para = []
        while i < len(lines) and lines[i].strip() and not re.match(r"(#{1,6})\s|\s*[-*]\s+|\s*\|", lines[i]):
            para.append(lines[i].strip())
            i += 1
        if not para:  # a lone table-looking line without a rule
            para.append(lines[i].strip())
            i += 1
        out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def sections(markdown: str) -> list[tuple[str, str]]:
    """``markdown`` cut at its ``## `` headings: (title, body) pairs; the text before the first has title ""."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in markdown.splitlines():
        m = re.match(r"##\s+(.*)", line)
        if m:
            out.append((m.group(1).strip(), []))
        else:
            out[-1][1].append(line)
    return [(title, "\n".join(body)) for title, body in out if title or any(s.strip() for s in body)]


__all__ = ["sections", "to_html"]
