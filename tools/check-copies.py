#!/usr/bin/env python3
"""check-copies.py: find code written twice in rxray's C, C++ and CUDA sources.

Usage:
    tools/check-copies.py [ROOT] [--min-lines N] [--seed S] [--gap G]
                          [--shape] [--allow FILE] [--include-tests]
                          [--exclude DIR] [--list-files]
    tools/check-copies.py --self-test     (ctest copies_check_fails)

What it reads
    The files under ROOT (default: the tree this script lives in) ending in
    .c .h .cu .cuh .cc .cpp .cxx .hpp: the files git tracks plus the untracked
    ones git does not ignore when ROOT is a git checkout, else every such file
    below ROOT. Left out:
      build*/    build trees (generated code, copies of the sources);
      tests/     test programs repeat set-up and assertions on purpose, one
      fuzz/      self-contained program a case, and a test's oracle is kept
                 apart from the code it checks (--include-tests reads both);
      .git/ and any folder named with --exclude.
    bench/, examples/ and tools/ are read: their helpers are real code that
    can be folded.

How it compares
    Each line is normalised: comments are removed (strings are kept, and a
    "//" inside one is not a comment), whitespace is dropped except one space
    between two word characters, and the line is skipped when nothing is
    left, when it is only braces, parentheses, ';' and ',', or when it is an
    #include. What remains of a file is a list of normalised lines, each
    remembering its line number.
    A copy is at least N (--min-lines, default 6) normalised lines shared
    by two places: in two files, or in one file with the two places not
    overlapping. It is built from exact runs of at least S (--seed, default
    3) consecutive lines that are the same text in both places, chained in
    order when at most G (--gap, default 2) lines on each side lie between
    two runs, so that one changed or inserted line does not hide a copy
    (--gap 0: exact runs only). N counts the shared lines only. A window of
    S lines that stands in more than 8 places is a pattern (a table's rows,
    a teardown ladder), not a copy to fold, and starts nothing.
    --shape also maps identifiers to I, numbers to 0, strings to "" and
    characters to '' (C keywords stay), so a copy that renamed its variables
    matches too. It finds far more boilerplate; use it to look, not in CI.

Output
    One line a copy, pairs of files sorted by name:
        a.c:10-24 ~ b.c:40-54 (12 lines)
    (the line ranges are the first and last line of the run in each file; the
    count is of normalised lines), then "allowed" lines for the pairs in the
    allow-list, then a summary.

Allow-list (--allow, default tools/copies.allowed next to this script)
    One pair of files a line, relative to ROOT, then a "# why" comment, which
    is required:
        path/a.c path/b.c   # why these two may repeat each other
    Keyed by file pair, not by line numbers, so that edits elsewhere do not
    break it. The same path twice allows copies inside one file. Lines that
    are blank or start with "#" are ignored.

Exit status
    0  no copy outside the allow-list;
    1  a copy was found that the allow-list does not name, or an allow-list
       entry names a pair that no longer repeats itself (delete the line:
       the list stays as short as the tree allows);
    2  bad usage or an unreadable/ill-formed allow-list.

--self-test builds small trees in a temporary folder and checks that the
script fails on a copied function (naming both files), passes without one,
honours and polices the allow-list, and that the committed allow-list names
none of the pairs issue 45 folded.

Python 3 standard library only; runs in about a second on this tree.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

EXTS = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp", ".cxx", ".hpp")
SKIP_DIRS_DEFAULT = ("tests", "fuzz")
MAX_PLACES = 8  # a window in more places than this is a pattern, not a copy

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof
static struct switch typedef union unsigned void volatile while _Bool
_Static_assert _Atomic _Thread_local _Noreturn _Alignas _Alignof bool true
false NULL nullptr class template typename namespace public private protected
new delete this operator virtual __global__ __device__ __host__ __shared__
""".split())

TOKEN_RE = re.compile(
    r'"(?:\\.|[^"\\])*"'          # string
    r"|'(?:\\.|[^'\\])*'"         # character
    r"|[A-Za-z_][A-Za-z_0-9]*"    # identifier or keyword
    r"|\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*"  # number
    r"|\S")                        # any other character
PUNCT_ONLY_RE = re.compile(r"^[{}();,]*$")
INCLUDE_RE = re.compile(r"^#\s*include\b")


def strip_comments(text):
    """Return text with C and C++ comments replaced by spaces; newlines stay
    so that line numbers do not move. Strings and characters are kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if c == "\n" else " " for c in text[i:j]))
            i = j
        elif ch == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" ")
            i = j
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def normalise(line, shape):
    """One source line (comments already gone) as a comparable string, or
    None when the line does not count."""
    s = line.strip()
    if not s or INCLUDE_RE.match(s):
        return None
    toks = TOKEN_RE.findall(s)
    if shape:
        mapped = []
        for t in toks:
            c = t[0]
            if c == '"':
                mapped.append('""')
            elif c == "'":
                mapped.append("''")
            elif c.isalpha() or c == "_":
                mapped.append(t if t in C_KEYWORDS else "I")
            elif c.isdigit() or (c == "." and len(t) > 1):
                mapped.append("0")
            else:
                mapped.append(t)
        toks = mapped
    parts = []
    prev_word = False
    for t in toks:
        word = t[0].isalnum() or t[0] == "_"
        if word and prev_word:
            parts.append(" ")
        parts.append(t)
        prev_word = word or t[-1].isalnum() or t[-1] == "_"
    s = "".join(parts)
    if PUNCT_ONLY_RE.match(s):
        return None
    return s


def list_files(root, include_tests, excludes):
    """Paths relative to root, sorted."""
    names = None
    if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
        try:
            res = subprocess.run(
                ["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                 "--exclude-standard"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
            names = [p for p in res.stdout.decode("utf-8", "replace").split("\0") if p]
        except (OSError, subprocess.CalledProcessError):
            names = None
    if names is None:
        names = []
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x != ".git")
            rel = os.path.relpath(d, root)
            for f in files:
                names.append(f if rel == "." else os.path.join(rel, f).replace(os.sep, "/"))
    skip = list(excludes)
    if not include_tests:
        skip += SKIP_DIRS_DEFAULT
    out = []
    for p in set(names):
        if not p.endswith(EXTS):
            continue
        top = p.split("/", 1)[0]
        if top.startswith("build") or top == ".git":
            continue
        if any(p == s or p.startswith(s.rstrip("/") + "/") for s in skip):
            continue
        full = os.path.join(root, p)
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        out.append(p)
    return sorted(out)


def read_file(root, rel, shape):
    """[(normalised line, line number)] for one file."""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            raw = f.read()
    except OSError as e:
        print("check-copies: %s: %s" % (rel, e.strerror), file=sys.stderr)
        return []
    if b"\0" in raw:
        return []
    text = strip_comments(raw.decode("utf-8", "replace"))
    lines = []
    for no, line in enumerate(text.split("\n"), 1):
        s = normalise(line, shape)
        if s is not None:
            lines.append((s, no))
    return lines


def exact_runs(files, n):
    """Maximal runs of at least n normalised lines that are the same text in
    two places. files: {path: [(text, lineno)]}. Returns a list of
    (pathA, firstA, pathB, firstB, count) with indices into files[path],
    pathA <= pathB, and in one file firstA + count <= firstB."""
    index = defaultdict(list)  # window text -> [(path, i)]
    for path, lines in files.items():
        texts = [t for t, _ in lines]
        for i in range(len(texts) - n + 1):
            index["\n".join(texts[i:i + n])].append((path, i))
    # Window pairs, keyed by (pathA, pathB, offset) so runs along one
    # diagonal can be joined.
    diag = defaultdict(set)
    for places in index.values():
        if len(places) < 2 or len(places) > MAX_PLACES:
            continue
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                (pa, ia), (pb, ib) = places[x], places[y]
                if (pa, ia) > (pb, ib):
                    (pa, ia), (pb, ib) = (pb, ib), (pa, ia)
                if pa == pb and ib - ia < n:
                    continue  # overlapping: a repeated line, not a copy
                diag[(pa, pb, ib - ia)].add(ia)
    runs = []
    for (pa, pb, off), starts in diag.items():
        starts = sorted(starts)
        k = 0
        while k < len(starts):
            first = last = starts[k]
            while k + 1 < len(starts) and starts[k + 1] <= last + 1:
                k += 1
                last = starts[k]
            k += 1
            count = last + n - first
            if pa == pb:
                count = min(count, off)  # keep the two places apart
            if count >= n:
                runs.append((pa, first, pb, first + off, count))
    return runs


def find_copies(files, n, seed, gap):
    """Copies of at least n shared lines: exact runs of at least `seed`
    lines chained along the two files when what lies between two of them is
    at most `gap` normalised lines on each side (one changed or inserted
    line does not hide a copy). Returns a sorted list of
    (pathA, firstlineA, lastlineA, pathB, firstlineB, lastlineB, shared)."""
    by_pair = defaultdict(list)
    for pa, ia, pb, ib, cnt in exact_runs(files, min(seed, n)):
        by_pair[(pa, pb)].append((ia, ib, cnt))
    out = []
    for (pa, pb), seeds in by_pair.items():
        seeds.sort()
        chains = []  # [a_first, b_first, a_last, b_last, shared]
        for ia, ib, cnt in seeds:
            for ch in chains:
                da, db = ia - ch[2] - 1, ib - ch[3] - 1
                if 0 <= da <= gap and 0 <= db <= gap and \
                        (pa != pb or ia + cnt - 1 < ch[1]):
                    ch[2], ch[3] = ia + cnt - 1, ib + cnt - 1
                    ch[4] += cnt
                    break
            else:
                chains.append([ia, ib, ia + cnt - 1, ib + cnt - 1, cnt])
        la, lb = files[pa], files[pb]
        for a0, b0, a1, b1, shared in chains:
            if shared >= n:
                out.append((pa, la[a0][1], la[a1][1], pb, lb[b0][1], lb[b1][1], shared))
    out.sort()
    return out


def read_allow(path):
    """{(a, b): why}; raises ValueError on a line without a why."""
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            body, sep, why = s.partition("#")
            fields = body.split()
            if len(fields) != 2 or not sep or not why.strip():
                raise ValueError("%s:%d: want 'fileA fileB  # why'" % (path, no))
            a, b = sorted(fields)
            allowed[(a, b)] = why.strip()
    return allowed


# Pairs issue 45 folded into one place: never to be allowed again.
FOLDED_45 = (
    ("bench/dpdk/bench_dpdk_disciplines.c", "bench/sim_fidelity/bench_sim_fidelity.c"),
    ("bench/dpdk/bench_dpdk_disciplines.c", "bench/gpu/bench_gpudirect.c"),
    ("bench/gpu/bench_gpudirect.c", "bench/sim_fidelity/bench_sim_fidelity.c"),
    ("engines/core/options.c", "sweeps/place.c"),
    ("common/util.c", "engines/core/options.c"),
    ("common/util.c", "sweeps/place.c"),
    ("engines/gpu/gpu.cu", "probes/probe.c"),
    ("common/util.c", "engines/gpu/gpu.cu"),
    ("tools/cmd_ceiling.c", "tools/cmd_whatif.c"),
    ("tools/cmd_ceiling.c", "tools/cmd_diff.c"),
    ("tools/cmd_ceiling.c", "tools/cmd_report.c"),
    ("tools/cmd_diff.c", "tools/cmd_whatif.c"),
    ("tools/cmd_diff.c", "tools/cmd_report.c"),
    ("tools/cmd_report.c", "tools/cmd_whatif.c"),
)

SELF_FN = """\
/* sum of the squares of the even entries */
static long even_squares(const int *v, size_t n)
{
	long s = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] % 2)
			continue;
		long x = v[i];
		s += x * x;
	}
	if (s < 0)
		s = -s;
	return s;
}
"""


def self_test(here):
    """Exercise the script on made-up trees; 0 when every case holds."""
    import tempfile
    me = os.path.abspath(__file__)
    fails = []

    def run(root, *extra):
        res = subprocess.run([sys.executable, me, root] + list(extra),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
        return res.returncode, res.stdout

    def check(what, cond, out):
        print("%s: %s" % ("ok" if cond else "FAILED", what))
        if not cond:
            fails.append(what)
            print("  output was:\n" + "".join("  | " + l + "\n" for l in out.splitlines()))

    def write(root, rel, text):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    other = "static int one(void)\n{\n\treturn 1;\n}\n"
    with tempfile.TemporaryDirectory() as t:
        # 1. A 10-line function copied into two files (re-indented, other
        #    comments): exit 1, both files named.
        a = os.path.join(t, "copy")
        write(a, "src/a.c", "#include <stddef.h>\n" + SELF_FN + other)
        write(a, "lib/b.c", "#include <stdio.h>\n\nint unrelated;\n\n" +
              SELF_FN.replace("\t", "    ").replace("/* sum", "// sum") +
              "/* tail */\n")
        rc, out = run(a, "--allow", "none")
        check("a copied function fails the check (exit %d)" % rc, rc == 1, out)
        check("both files are named on one line",
              any("lib/b.c:" in l and "src/a.c:" in l and " ~ " in l
                  for l in out.splitlines()), out)
        # 2. The same with one line changed in the middle: still a copy.
        write(a, "lib/b.c", SELF_FN.replace("long x = v[i];", "long x = 2 * v[i];"))
        rc, out = run(a, "--allow", "none")
        check("a copy with one line changed still fails (exit %d)" % rc, rc == 1, out)
        rc, out = run(a, "--allow", "none", "--gap", "0")
        check("... and passes with --gap 0 (exit %d)" % rc, rc == 0, out)
        # 3. The allow-list: a listed pair passes; one without a why is an
        #    error; a listed pair that no longer repeats fails.
        allow = os.path.join(t, "copies.allowed")
        write(t, "copies.allowed", "lib/b.c src/a.c  # the self-test's copy\n")
        rc, out = run(a, "--allow", allow)
        check("an allowed pair passes (exit %d)" % rc, rc == 0 and "allowed: " in out, out)
        write(t, "copies.allowed", "lib/b.c src/a.c\n")
        rc, out = run(a, "--allow", allow)
        check("an allow-list line without a why is refused (exit %d)" % rc, rc == 2, out)
        # 4. No copy: exit 0; a stale allow-list entry then fails.
        b = os.path.join(t, "clean")
        write(b, "src/a.c", SELF_FN)
        write(b, "lib/b.c", other + "int twice(int x)\n{\n\treturn 2 * x;\n}\n")
        write(b, "tests/t.c", SELF_FN)  # tests/ is not read
        rc, out = run(b, "--allow", "none")
        check("a tree without copies passes (exit %d)" % rc, rc == 0, out)
        write(t, "copies.allowed", "lib/b.c src/a.c  # stale\n")
        rc, out = run(b, "--allow", allow)
        check("a stale allow-list entry fails (exit %d)" % rc,
              rc == 1 and "stale" in out, out)
        rc, out = run(b, "--allow", "none", "--include-tests")
        check("--include-tests reads tests/ (exit %d)" % rc, rc == 1, out)
        # 5. One file, two far-apart places: a copy; a run of one repeated
        #    line is not.
        c = os.path.join(t, "one")
        write(c, "x.c", SELF_FN + other + SELF_FN.replace("even_squares", "even_sq2"))
        write(c, "y.c", "void f(int *p)\n{\n" + "\t*p += 1;\n" * 30 + "}\n")
        rc, out = run(c, "--allow", "none")
        check("a copy within one file fails, a repeated line does not (exit %d)" % rc,
              rc == 1 and "x.c:" in out and "y.c" not in out, out)
    # 6. The committed allow-list names none of the pairs issue 45 folded.
    committed = os.path.join(here, "copies.allowed")
    if os.path.isfile(committed):
        try:
            allowed = read_allow(committed)
        except ValueError as e:
            allowed = {}
            check("the committed allow-list reads: %s" % e, False, "")
        bad = [p for p in FOLDED_45 if tuple(sorted(p)) in allowed]
        check("tools/copies.allowed allows none of issue 45's pairs",
              not bad, "\n".join(" ".join(p) for p in bad))
    print("self-test: %s" % ("FAILED: %d" % len(fails) if fails else "all passed"))
    return 1 if fails else 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="Find runs of lines copied between rxray's C/C++/CUDA sources.")
    ap.add_argument("root", nargs="?", default=os.path.dirname(here),
                    help="tree to read (default: the one holding this script)")
    ap.add_argument("--min-lines", type=int, default=6, metavar="N",
                    help="normalised lines that make a copy (default 6)")
    ap.add_argument("--seed", type=int, default=3, metavar="S",
                    help="shortest exact run a copy is built from (default 3)")
    ap.add_argument("--gap", type=int, default=2, metavar="G",
                    help="lines that may differ between two runs of one copy "
                         "(default 2; 0 for exact runs only)")
    ap.add_argument("--shape", action="store_true",
                    help="also match copies that differ in names, numbers, strings")
    ap.add_argument("--allow", metavar="FILE",
                    help="allow-list (default: tools/copies.allowed in ROOT, "
                         "else next to this script; 'none' for no list)")
    ap.add_argument("--include-tests", action="store_true",
                    help="read tests/ and fuzz/ as well")
    ap.add_argument("--exclude", action="append", default=[], metavar="DIR",
                    help="leave out a folder (relative to ROOT); repeatable")
    ap.add_argument("--list-files", action="store_true",
                    help="print the files read and stop")
    ap.add_argument("--self-test", action="store_true",
                    help="check this script on made-up trees and stop")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test(here)
    if args.min_lines < 2:
        ap.error("--min-lines must be 2 or more")
    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        ap.error("%s: not a folder" % args.root)

    allow_path = args.allow
    if allow_path is None:
        allow_path = os.path.join(root, "tools", "copies.allowed")
        if not os.path.isfile(allow_path):
            allow_path = os.path.join(here, "copies.allowed")
    allowed = {}
    if allow_path != "none" and os.path.isfile(allow_path):
        try:
            allowed = read_allow(allow_path)
        except (OSError, ValueError) as e:
            print("check-copies: %s" % e, file=sys.stderr)
            return 2
    elif args.allow not in (None, "none"):
        print("check-copies: %s: no such allow-list" % args.allow, file=sys.stderr)
        return 2

    paths = list_files(root, args.include_tests, args.exclude)
    if args.list_files:
        print("\n".join(paths))
        return 0
    files = {p: read_file(root, p, args.shape) for p in paths}
    runs = find_copies(files, args.min_lines, args.seed, args.gap)

    bad, ok = [], []
    seen_pairs = set()
    for r in runs:
        line = "%s:%d-%d ~ %s:%d-%d (%d lines)" % r
        pair = (r[0], r[3])
        seen_pairs.add(pair)
        (ok if pair in allowed else bad).append(line)
    for line in bad:
        print(line)
    for line in ok:
        print("allowed: " + line)
    # An entry is stale when both its files were read, with the default
    # comparison, and they share nothing: then it must go.
    read = set(paths)
    defaults = (args.min_lines, args.seed, args.gap, args.shape) == (6, 3, 2, False)
    stale = sorted(p for p in allowed
                   if p not in seen_pairs and p[0] in read and p[1] in read)
    for a, b in stale:
        if defaults:
            print("stale allow-list entry (these no longer repeat; delete the line):"
                  " %s %s" % (a, b))
        else:
            print("note: allow-list entry unused at these settings: %s %s" % (a, b))
    if not defaults:
        stale = []
    bad_pairs = len({(r[0], r[3]) for r in runs if (r[0], r[3]) not in allowed})
    print("check-copies: %d files, %d copies in %d pairs outside the allow-list, "
          "%d allowed, min %d lines%s"
          % (len(paths), len(bad), bad_pairs, len(ok), args.min_lines,
             ", shape" if args.shape else ""))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
