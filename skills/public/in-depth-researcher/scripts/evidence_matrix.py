#!/usr/bin/env python3
"""Coverage report of a research evidence matrix.

Usage: evidence_matrix.py EVIDENCE.json [--min-domains N] [--json]

EVIDENCE.json:
  {"questions": [{"id": "q1", "question": "..."}],
   "evidence": [{"question_id": "q1", "claim": "...", "source_url": "https://...",
                 "source_title": "...", "stance": "supports|contradicts|context", "date": "YYYY-MM-DD"}]}

Prints, per sub-question: claims, independent source domains, contradictions,
and the gaps to research next (fewer than --min-domains independent domains
(default 2), contradictions, no evidence at all). Also flags evidence pointing
at unknown question ids, missing URLs and unknown stances.
Exit code: 0 when there is no gap, 1 when gaps remain, 2 on bad input.
Standard library only.
"""
import json
import sys
from urllib.parse import urlparse

STANCES = {"supports", "contradicts", "context"}


def domain(url):
    host = (urlparse(url).hostname or "").lower()
    parts = host.split(".")
    # Subdomains of one organisation are not independent sources.
    if len(parts) > 2 and len(parts[-1]) == 2 and parts[-2] in {"co", "com", "org", "gov", "ac", "edu", "net"}:
        return ".".join(parts[-3:])
    return ".".join(parts[-2:]) if len(parts) >= 2 else host


def analyse(doc, min_domains=2):
    questions = doc.get("questions") or []
    evidence = doc.get("evidence") or []
    ids = [q.get("id") for q in questions]
    issues = []
    rows = []
    for q in questions:
        items = [e for e in evidence if e.get("question_id") == q.get("id")]
        domains = sorted({domain(e.get("source_url", "")) for e in items if e.get("source_url")})
        contra = [e for e in items if e.get("stance") == "contradicts"]
        gaps = []
        if not items:
            gaps.append("no evidence yet")
        elif len(domains) < min_domains:
            gaps.append("only %d independent domain(s)" % len(domains))
        if contra:
            gaps.append("%d contradicting claim(s) to resolve" % len(contra))
        rows.append({"id": q.get("id"), "question": q.get("question", ""), "claims": len(items), "domains": domains, "contradictions": len(contra), "gaps": gaps})
    for i, e in enumerate(evidence):
        if e.get("question_id") not in ids:
            issues.append("evidence #%d refers to unknown question id %r" % (i + 1, e.get("question_id")))
        if not str(e.get("source_url", "")).startswith(("http://", "https://")):
            issues.append("evidence #%d has no http(s) source_url" % (i + 1))
        if e.get("stance") not in STANCES:
            issues.append("evidence #%d has stance %r (expected supports, contradicts or context)" % (i + 1, e.get("stance")))
    return {"rows": rows, "issues": issues, "gaps": sum(1 for r in rows if r["gaps"])}


def render(result):
    out = ["| id | claims | domains | contradictions | sub-question |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        out.append("| %s | %d | %d | %d | %s |" % (r["id"], r["claims"], len(r["domains"]), r["contradictions"], r["question"]))
    gaps = [r for r in result["rows"] if r["gaps"]]
    out.append("")
    if gaps:
        out.append("Gaps to research next:")
        for r in gaps:
            out.append("- %s (%s): %s" % (r["id"], r["question"], "; ".join(r["gaps"])))
    else:
        out.append("No gaps: every sub-question has enough independent evidence.")
    if result["issues"]:
        out.append("")
        out.append("Matrix problems:")
        out.extend("- " + i for i in result["issues"])
    return "\n".join(out)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    min_domains = 2
    if "--min-domains" in argv:
        idx = argv.index("--min-domains")
        min_domains = int(argv[idx + 1])
        args = [a for a in args if a != argv[idx + 1]]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("error: cannot read %s: %s" % (args[0], e), file=sys.stderr)
        return 2
    result = analyse(doc, min_domains)
    print(json.dumps(result, indent=2) if "--json" in argv else render(result))
    return 1 if result["gaps"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
