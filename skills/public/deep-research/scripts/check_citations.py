#!/usr/bin/env python3
"""Check a Markdown research report's citations.

Usage: check_citations.py REPORT.md [--json]

Finds inline citations written as [citation:Title](URL) (plain [Title](URL)
links outside the Sources section count too), the "Sources" (or
"References") section and its links, then reports:
  - cited URLs missing from Sources          (error)
  - Sources entries never cited in the text  (warning)
  - duplicate Sources entries                (warning)
  - links that are not http(s)               (error)
  - paragraphs stating numbers without any citation (warning)
Exit code: 1 when there is an error, else 0. Standard library only.
"""
import json
import re
import sys

LINK_RE = re.compile(r"\[(citation:)?([^\]]+)\]\(([^)\s]+)\)")
SOURCES_HEADING_RE = re.compile(r"^#{1,6}\s*(sources|references|bibliography)\b", re.IGNORECASE)
HEADING_RE = re.compile(r"^#{1,6}\s")
NUMBER_RE = re.compile(r"\b\d[\d,.]*\s?(%|percent|million|billion|thousand|k\b|m\b|bn\b|usd|\$)|\$\s?\d|\b(19|20)\d{2}\b|\b\d+(\.\d+)?x\b", re.IGNORECASE)


def normalize(url):
    url = url.strip().rstrip("/")
    url = re.sub(r"^https?://(www\.)?", "", url, flags=re.IGNORECASE)
    return url.split("#")[0].lower()


def split_sections(lines):
    """Return (body_lines, sources_lines): the Sources section runs to the next heading of any level."""
    body, sources, in_sources = [], [], False
    for line in lines:
        if SOURCES_HEADING_RE.match(line.strip()):
            in_sources = True
            continue
        if in_sources and HEADING_RE.match(line.strip()):
            in_sources = False
        (sources if in_sources else body).append(line)
    return body, sources


def paragraphs(lines):
    block = []
    for line in lines:
        if line.strip() == "" or HEADING_RE.match(line.strip()):
            if block:
                yield " ".join(block)
            block = []
        else:
            block.append(line.strip())
    if block:
        yield " ".join(block)


def check(text):
    lines = text.splitlines()
    body, sources = split_sections(lines)
    problems = []

    cited = {}
    for para in paragraphs(body):
        links = LINK_RE.findall(para)
        for _, title, url in links:
            cited.setdefault(normalize(url), (title, url))
        words = len(para.split())
        if not links and words >= 12 and NUMBER_RE.search(para) and not para.startswith(("|", "```", ">")):
            problems.append({"level": "warning", "kind": "uncited_number", "message": "Numeric claim without a citation: " + para[:100]})

    listed, seen = {}, set()
    for line in sources:
        for _, title, url in LINK_RE.findall(line):
            key = normalize(url)
            if key in seen:
                problems.append({"level": "warning", "kind": "duplicate_source", "message": "Duplicate source: " + url})
            seen.add(key)
            listed.setdefault(key, (title, url))

    for key, (title, url) in sorted(list(cited.items()) + list(listed.items())):
        if not re.match(r"^https?://", url, re.IGNORECASE):
            problems.append({"level": "error", "kind": "bad_url", "message": "Not an http(s) link: " + url})

    if not sources:
        problems.append({"level": "error", "kind": "no_sources_section", "message": "No '## Sources' section found."})
    for key, (title, url) in cited.items():
        if sources and key not in listed:
            problems.append({"level": "error", "kind": "missing_from_sources", "message": "Cited but not in Sources: " + url})
    for key, (title, url) in listed.items():
        if key not in cited:
            problems.append({"level": "warning", "kind": "unused_source", "message": "Listed in Sources but never cited: " + url})

    # Deduplicate identical messages (a URL can be both cited and listed).
    unique, keys = [], set()
    for p in problems:
        k = (p["kind"], p["message"])
        if k not in keys:
            keys.add(k)
            unique.append(p)
    return {"cited": len(cited), "sources": len(listed), "problems": unique}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        result = check(f.read())
    if "--json" in argv:
        print(json.dumps(result, indent=2))
    else:
        print("%d cited URL(s), %d source(s), %d problem(s)" % (result["cited"], result["sources"], len(result["problems"])))
        for p in result["problems"]:
            print("  [%s] %s" % (p["level"], p["message"]))
        if not result["problems"]:
            print("  OK: every citation is listed and every source is used.")
    return 1 if any(p["level"] == "error" for p in result["problems"]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
