#!/usr/bin/env python3
"""check-circles.py BUILD SRC [--nm NM] -- no circle of more than two files
inside a folder (ctest layout_circles).

Takes the objects CMake built under BUILD for the rooms of SRC (the same
walk as check-prefixes.py: tests/, bench/ and fuzz/ are skipped) and reads
each one's global symbols with nm. File A reaches file B when A's object has
a symbol undefined that B's object, and only B's, defines (functions, data,
function-pointer tables and what header inlines call all count; a name
defined by two sources, such as NVTX's weak symbols, ties nobody). Edges
between folders are check-layout.py's business; inside each folder the
strongly connected components are found, and one of more than two files
fails. Two files that call each other are allowed and listed on stderr.

Limits: static functions are invisible (they cannot cross files anyway);
types and macros shared through a header leave no symbol, so they tie no
files; a component that is not built is not checked; LTO objects would
need nm --plugin.

Prints one line per circle: the folder, its files, then each inner edge
`a.c -> b.c: symbol, symbol`; exit 1 if any, 2 on bad usage or when nothing
is built, 0 when clean.
"""
import os
import runpy
import sys
import types
from collections import defaultdict

DEFINED = set("TDBRVWGSCuiv")


def load_prefixes():
    """The sibling script check-prefixes.py, as a module (its name has a hyphen)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return types.SimpleNamespace(**runpy.run_path(os.path.join(here, "check-prefixes.py")))


def components(nodes, edges):
    """Tarjan's strongly connected components of the graph nodes/edges."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    px = load_prefixes()
    got = px.build_src_nm(argv)
    if not got:
        return 2
    build, src, nm = got
    objs = px.objects(build, src)
    syms = px.nm_table([o for o, _, _ in objs], nm)
    definers, uses = defaultdict(set), defaultdict(set)
    for o, source, _ in objs:
        for name, t in syms[o]:
            if t == "U":
                uses[source].add(name)
            elif t in DEFINED:
                definers[name].add(source)
    edges = defaultdict(lambda: defaultdict(set))  # a -> b -> names
    for a, names in uses.items():
        for n in names:
            d = definers.get(n, ())
            if len(d) == 1:
                b = next(iter(d))
                if b != a and os.path.dirname(a) == os.path.dirname(b):
                    edges[a][b].add(n)
    folders = defaultdict(set)
    for _, source, _ in objs:
        folders[os.path.dirname(source)].add(source)
    bad = 0
    for folder in sorted(folders):
        for comp in components(folders[folder], edges):
            if len(comp) < 2:
                continue
            names = [os.path.basename(f) for f in comp]
            inner = "; ".join(f"{os.path.basename(a)} -> {os.path.basename(b)}: {', '.join(sorted(edges[a][b]))}"
                              for a in comp for b in comp if b in edges[a])
            if len(comp) > 2:
                bad += 1
                print(f"{folder}: circle of {len(comp)} files ({' '.join(names)}): {inner}")
            else:
                print(f"{folder}: allowed pair ({' '.join(names)}): {inner}", file=sys.stderr)
    print(f"check-circles: {len(objs)} objects in {len(folders)} folders, {bad} circles of more than 2 files",
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
