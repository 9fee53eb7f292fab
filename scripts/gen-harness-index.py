import re, os, sys
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages", "harness", "src"))
order = ["clock","errors","parsing","messages","state","tools","models","runtime","checkpoints","config","text","fs","sandbox","middlewares","guardrails","builtins","skills","memory","subagents","web-research","mcp","capabilities","agents","persistence","uploads","workspace","deerflow-runtime","runs","client","testing"]
seen = {}
out = ['/**', ' * @deerflow-ts/harness — the agent harness (no HTTP). Public API.', ' * Generated from the subsystem index files by scripts/gen-harness-index.py; explicit names, no `export *`.', ' */']
for sub in order:
    p = f"{sub}/index.ts"
    if sub == "testing":  # exposed as @deerflow-ts/harness/testing only
        continue
    if not os.path.exists(p):
        continue
    text = open(p).read()
    vals, types = [], []
    for m in re.finditer(r'export\s+(type\s+)?\{([^}]*)\}\s+from', text):
        names = [n.strip() for n in m.group(2).split(',') if n.strip()]
        for n in names:
            n = n.split(' as ')[-1].strip()
            is_type = bool(m.group(1)) or n.startswith('type ')
            n = n.replace('type ', '').strip()
            (types if is_type else vals).append(n)
    for m in re.finditer(r'export\s+(?:async\s+)?(function|const|class|interface|type)\s+([A-Za-z0-9_]+)', text):
        kind, n = m.group(1), m.group(2)
        (types if kind in ('interface','type') else vals).append(n)
    v2, t2 = [], []
    for n in vals:
        if n in seen: print(f"skip dup {n} in {sub} (from {seen[n]})", file=sys.stderr); continue
        seen[n] = sub; v2.append(n)
    for n in types:
        if n in seen: print(f"skip dup type {n} in {sub} (from {seen[n]})", file=sys.stderr); continue
        seen[n] = sub; t2.append(n)
    if v2: out.append(f'export {{ {", ".join(v2)} }} from "./{sub}";')
    if t2: out.append(f'export type {{ {", ".join(t2)} }} from "./{sub}";')
open("index.ts","w").write("\n".join(out)+"\n")
