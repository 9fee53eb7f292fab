#!/usr/bin/env python3
"""Split a long text into chunks at natural boundaries.

Usage: chunk_text.py INPUT --out DIR [--max-chars N] [--overlap N]

Boundaries, in order of preference: Markdown headings, blank-line
paragraphs, sentence ends, whitespace; a chunk is cut mid-word only when a
single word is longer than --max-chars. Writes DIR/chunk-001.txt, ... and
DIR/manifest.json:
  {"source": ..., "total_chars": N, "max_chars": N,
   "chunks": [{"index": 1, "file": "chunk-001.txt", "start": 0, "end": 11873,
               "chars": 11873, "heading": "## Results"}]}
Offsets index the original text, so [start, end) slices reproduce the chunk.
Standard library only.
"""
import argparse
import json
import os
import re
import sys

HEADING_RE = re.compile(r"^#{1,6}\s+.+$", re.MULTILINE)


def boundaries(text):
    """Candidate cut offsets with a strength: 3 heading, 2 paragraph, 1 sentence, 0 whitespace."""
    cuts = {}
    for m in HEADING_RE.finditer(text):
        cuts[m.start()] = 3
    for m in re.finditer(r"\n\s*\n", text):
        cuts.setdefault(m.end(), 2)
    for m in re.finditer(r"[.!?。！？][\"')\]]?\s+", text):
        cuts.setdefault(m.end(), 1)
    for m in re.finditer(r"\s+", text):
        cuts.setdefault(m.end(), 0)
    return cuts


def split(text, max_chars, overlap=0):
    """Return [(start, end)] covering the text; each span is at most max_chars long."""
    if max_chars < 100:
        raise ValueError("--max-chars must be at least 100")
    cuts = boundaries(text)
    ordered = sorted(cuts)
    spans, start, n = [], 0, len(text)
    while start < n:
        limit = start + max_chars
        if limit >= n:
            spans.append((start, n))
            break
        # Best boundary in the second half of the window: strongest first, then latest.
        floor = start + max_chars // 2
        best = None
        for pos in ordered:
            if pos <= floor:
                continue
            if pos > limit:
                break
            if best is None or (cuts[pos], pos) >= (cuts[best], best):
                best = pos
        end = best if best is not None else limit
        spans.append((start, end))
        start = max(end - overlap, start + 1) if overlap else end
    return spans


def nearest_heading(text, offset):
    heading = None
    for m in HEADING_RE.finditer(text):
        if m.start() > offset:
            break
        heading = m.group(0).strip()
    return heading


def main(argv):
    p = argparse.ArgumentParser(description="Split a long text into chunks at natural boundaries.")
    p.add_argument("input")
    p.add_argument("--out", required=True)
    p.add_argument("--max-chars", type=int, default=12000)
    p.add_argument("--overlap", type=int, default=0)
    args = p.parse_args(argv)
    with open(args.input, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        spans = split(text, args.max_chars, args.overlap)
    except ValueError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    chunks = []
    for i, (s, e) in enumerate(spans, 1):
        name = "chunk-%03d.txt" % i
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text[s:e])
        chunks.append({"index": i, "file": name, "start": s, "end": e, "chars": e - s, "heading": nearest_heading(text, s)})
    manifest = {"source": os.path.abspath(args.input), "total_chars": len(text), "max_chars": args.max_chars, "chunks": chunks}
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
    print("%d chars -> %d chunk(s) of <= %d chars in %s" % (len(text), len(chunks), args.max_chars, args.out))
    for c in chunks:
        print("  %s  [%d, %d)  %s" % (c["file"], c["start"], c["end"], c["heading"] or ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
