#!/usr/bin/env python3
"""check-layout.py SRC -- no room includes a room above it (ctest layout_includes).

The rooms, their floors and prefixes come from one place: the table under
"One prefix per library" in SRC/docs/design.md (columns floor | layer |
library | prefix | ...; the library cell starts with the folder in
backticks). A room on floor F may include the public headers
(<room>/include/rxray/*.h) of rooms on floors below F only: an include of
its own floor or above fails, so two engines cannot include one another.

Checked, for every .c/.h/.cu/.cuh under a room's folder:
  - `#include "rxray/x.h"` (or <rxray/x.h>) of a room on the same floor or
    above;
  - a quoted include that does not resolve next to the file but names a
    private header of another room (reaching past the rxray/ headers);
  - a quoted `"../..."` include that leaves the room;
  - a folder with a CMakeLists.txt that has no row (a new room must be
    placed), and one basename published by two rooms (one basename per
    header), and an rxray/ header that no room publishes.
tests/, bench/, fuzz/, examples/ and build trees are not rooms and are not
checked. Limits: it reads #include lines, not what the build's include paths
would find (a -I to another room's private folder is seen only through the
"private header" rule), and not CMake's link lines.

Prints one line per offence (file:line: what), exit 1 if any, 2 on bad
usage, 0 when clean. check-prefixes.py and check-circles.py import rooms().
"""
import os
import re
import sys

NOT_ROOMS = ("tests", "bench", "fuzz", "examples", "docs")
SRC_EXT = (".c", ".h", ".cu", ".cuh")


def rooms(src):
    """{folder: (floor, prefix)} from design.md's prefix table."""
    path = os.path.join(src, "docs", "design.md")
    out, cols = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("|"):
                cols = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cols is None:
                cols = [c.lower() for c in cells]
                continue
            if not {"floor", "library", "prefix"} <= set(cols) or set("".join(cells)) <= set("-: "):
                continue
            lib = re.match(r"`([^`]+)`", cells[cols.index("library")])
            pre = re.match(r"`([^`]+)`", cells[cols.index("prefix")])
            if not lib or not pre or not cells[cols.index("floor")].isdigit():
                raise SystemExit(f"{path}: bad prefix-table row: {line.strip()}")
            out[lib.group(1).rstrip("/")] = (int(cells[cols.index("floor")]), pre.group(1))
    if not out:
        raise SystemExit(f"{path}: no table with floor, library and prefix columns")
    return out


def room_of(rel, table):
    """The deepest room whose folder holds rel (a path relative to SRC), or None."""
    best = None
    for r in table:
        if (rel == r or rel.startswith(r + "/")) and (best is None or len(r) > len(best)):
            best = r
    return best


def walk(src):
    """Yield paths relative to src, skipping hidden folders and build trees."""
    for d, dirs, files in os.walk(src):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".")
                         and not os.path.exists(os.path.join(d, x, "CMakeCache.txt")))
        for f in sorted(files):
            yield os.path.relpath(os.path.join(d, f), src)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check-layout.py SRC", file=sys.stderr)
        return 2
    src = argv[1]
    table = rooms(src)
    bad = []
    files = list(walk(src))
    headers, private = {}, {}
    for rel in files:
        top = rel.split("/")[0]
        if os.path.basename(rel) == "CMakeLists.txt" and "/" in rel and top not in NOT_ROOMS:
            d = os.path.dirname(rel)
            if d not in table:
                bad.append(f"{rel}:1: folder {d} has no row in docs/design.md's prefix table")
        room = room_of(rel, table)
        if room is None or not rel.endswith(SRC_EXT):
            continue
        m = re.fullmatch(re.escape(room) + r"/include/rxray/(.+)", rel)
        if m:
            if m.group(1) in headers:
                bad.append(f"{rel}:1: rxray/{m.group(1)} is also published by {headers[m.group(1)]}")
            headers.setdefault(m.group(1), room)
        elif rel.endswith((".h", ".cuh")):
            private.setdefault(os.path.basename(rel), []).append(room)
    inc = re.compile(r'\s*#\s*include\s*([<"])([^">]+)[">]')
    for rel in files:
        room = room_of(rel, table)
        if room is None or not rel.endswith(SRC_EXT):
            continue
        floor = table[room][0]
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for n, line in enumerate(lines, 1):
            m = inc.match(line)
            if not m:
                continue
            name, where = m.group(2), f"{rel}:{n}: {room} (floor {floor})"
            if name.startswith("rxray/"):
                owner = headers.get(name[6:])
                if owner is None:
                    bad.append(f"{where} includes {name}, which no room publishes")
                elif owner != room and table[owner][0] >= floor:
                    bad.append(f"{where} includes {name} of {owner} (floor {table[owner][0]})")
                continue
            if m.group(1) != '"':
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(rel), name))
            if os.path.exists(os.path.join(src, target)):
                if room_of(target, table) != room:
                    bad.append(f"{where} includes {name}, outside its room")
                continue
            others = set(private.get(os.path.basename(name), []))
            if others and room not in others:
                bad.append(f"{where} includes {name}, a private header of {', '.join(sorted(set(others)))}")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
