/**
 * POSIX shell scripts the command API runs inside a sandbox for its file
 * operations (any image with `/bin/sh`, `readlink -f`, `find`, `cat`, `wc`,
 * `mkdir`, `cp`, `find` works: coreutils or busybox). Each takes the mount root it
 * is confined to as `$1` and resolves the target's real path inside the
 * sandbox: a symlink that leads out of the root is refused, as on the host.
 * The scripts run as the sandbox's own unprivileged user, so they can reach
 * nothing its commands cannot; the guard keeps the file tools to the paths
 * the agent is allowed to name.
 *
 * Exit statuses are the protocol (see {@link SCRIPT_STATUS}).
 */

/** Exit statuses of the scripts. */
export const SCRIPT_STATUS = {
  rootUnavailable: 90,
  outside: 91,
  notFound: 92,
  isDirectory: 93,
  notDirectory: 94,
  tooLarge: 95,
  failed: 96,
} as const;

const CONFINE = `
set -u
root=$(readlink -f -- "$1") || exit 90
[ -d "$root" ] || exit 90
inside() { case "$1" in "$root"|"$root"/*) return 0;; *) return 1;; esac; }
`;

/** `read ROOT PATH MAXBYTES` → the file's bytes on stdout. */
export const READ_SCRIPT = `${CONFINE}
t=$(readlink -f -- "$2") || exit 92
inside "$t" || exit 91
[ -e "$t" ] || exit 92
[ -d "$t" ] && exit 93
s=$(wc -c < "$t") || exit 96
[ "$s" -le "$3" ] || exit 95
exec cat -- "$t"
`;

/** `write ROOT PATH APPEND(0|1)` with the content on stdin; creates parent directories inside the root. */
export const WRITE_SCRIPT = `${CONFINE}
p=$2
d=\${p%/*}; [ -n "$d" ] || d=/
a=$d
while [ ! -e "$a" ] && [ ! -L "$a" ]; do a=\${a%/*}; [ -n "$a" ] || a=/; done
ra=$(readlink -f -- "$a") || exit 91
inside "$ra" || exit 91
[ -d "$ra" ] || exit 94
mkdir -p -- "$d" || exit 96
rd=$(readlink -f -- "$d") || exit 91
inside "$rd" || exit 91
t=$(readlink -f -- "$p") || exit 91
inside "$t" || exit 91
[ -d "$t" ] && exit 93
if [ "$3" = 1 ]; then exec cat >> "$t"; else exec cat > "$t"; fi
`;

/** `stat ROOT PATH` → `KIND SIZE MTIME_SECONDS` (KIND d, f or o). */
export const STAT_SCRIPT = `${CONFINE}
t=$(readlink -f -- "$2") || exit 92
inside "$t" || exit 91
[ -e "$t" ] || exit 92
if [ -d "$t" ]; then k=d; elif [ -f "$t" ]; then k=f; else k=o; fi
if command -v stat >/dev/null 2>&1; then s=$(stat -L -c '%s %Y' -- "$t") || exit 96; printf '%s %s\\n' "$k" "$s"
else printf '%s %s 0\\n' "$k" "$(wc -c < "$t")"; fi
`;

function pruneExpr(ignored: readonly string[]): string {
  return ignored.map((n) => `-name '${n.replace(/'/g, "")}'`).join(" -o ");
}

/**
 * `walk ROOT DIR MAXDEPTH` → NUL-separated entries below DIR, each `d./rel` or
 * `f./rel` (anything not a directory, symlinks included, is `f`). Ignored
 * directories are listed but not entered. MAXDEPTH 0 = unlimited.
 */
export function walkScript(ignored: readonly string[]): string {
  return `${CONFINE}
t=$(readlink -f -- "$2") || exit 92
inside "$t" || exit 91
[ -e "$t" ] || exit 92
[ -d "$t" ] || exit 94
cd -- "$t" || exit 96
if [ "$3" -gt 0 ]; then set -- -maxdepth "$3"; else set --; fi
find . -mindepth 1 "$@" \\( -type d \\( ${pruneExpr(ignored)} \\) -prune -exec printf 'd%s\\000' {} + \\) -o \\( -type d -exec printf 'd%s\\000' {} + \\) -o -exec printf 'f%s\\000' {} +
`;
}

const EMIT_FILE = `
for f do
  s=$(wc -c < "$f" 2>/dev/null) || continue
  [ "$s" -le "$MAXF" ] || continue
  tmp=/tmp/.deerflow-grep-$$
  cp -- "$f" "$tmp" 2>/dev/null || continue
  s=$(wc -c < "$tmp")
  printf '%s\\000%s\\000' "$f" "$s"
  cat -- "$tmp"
  rm -f -- "$tmp"
done
`;

/**
 * `contents ROOT PATH MAXFILEBYTES` → frames `path\0size\0<size bytes>` of every
 * regular file under PATH (or PATH itself), skipping ignored directories and
 * files above MAXFILEBYTES. Each file is snapshotted to /tmp first so a file
 * changing meanwhile cannot break the framing.
 */
export function contentsScript(ignored: readonly string[]): string {
  return `${CONFINE}
t=$(readlink -f -- "$2") || exit 92
inside "$t" || exit 91
[ -e "$t" ] || exit 92
MAXF=$3; export MAXF
if [ -f "$t" ]; then set -- "$t"; /bin/sh -c '${EMIT_FILE.replace(/'/g, "'\\''")}' sh "$@"; exit 0; fi
[ -d "$t" ] || exit 94
cd -- "$t" || exit 96
find . -mindepth 1 \\( -type d \\( ${pruneExpr(ignored)} \\) -prune \\) -o -type f -exec /bin/sh -c '${EMIT_FILE.replace(/'/g, "'\\''")}' sh {} +
exit 0
`;
}
