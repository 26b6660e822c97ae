#!/usr/bin/env python3
"""checks_fail.py TOOLS CC NM -- the layout checks can fail (ctest layout_checks_fail).

Builds tiny trees in a temporary folder, with objects compiled on the fly by
CC, and runs tools/check-layout.py, check-prefixes.py and check-circles.py
on each: a clean tree must give 0; an upward include, a folder with no row,
an unprefixed export and a circle of three files must each give 1; a build
with nothing built must give 2. Prints one line per case; exit 1 if any
case gives another status.
"""
import os
import subprocess
import sys
import tempfile

TOOLS, CC, NM = sys.argv[1:4] if len(sys.argv) == 4 else (None, None, None)

DESIGN = """# fixture
| floor | layer | library | prefix | examples |
|---|---|---|---|---|
| 0 | low | `low/` (lo) | `lo_` | `lo_x` |
| 1 | high | `high/` (hi) | `hi_` | `hi_y` |
"""


def write(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def tree(top, files):
    """A source tree (the rooms low/ and high/ plus files) and its empty build dir, under top."""
    src, build = os.path.join(top, "src"), os.path.join(top, "build")
    base = {"docs/design.md": DESIGN, "low/CMakeLists.txt": "", "high/CMakeLists.txt": "",
            "low/include/rxray/low.h": "int lo_x(void);\n", "high/include/rxray/high.h": "int hi_y(void);\n"}
    base.update(files)
    for rel, text in base.items():
        write(src, rel, text)
    os.makedirs(build)
    return src, build


def compile_all(src, build, sources, linked=True):
    """Compile each low/ or high/ source into BUILD/<room>/CMakeFiles/<room>.dir/<name>.o,
    with a link.txt naming them, as CMake's Makefile generator lays it out."""
    by_room = {}
    for rel in sources:
        room, name = rel.split("/", 1)
        obj = os.path.join(build, room, "CMakeFiles", room + ".dir", name + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run([CC, "-c", "-o", obj, os.path.join(src, rel), "-I" + os.path.join(src, "low", "include"),
                        "-I" + os.path.join(src, "high", "include")],
                       check=True)
        by_room.setdefault(room, []).append(f"CMakeFiles/{room}.dir/{name}.o")
    if linked:
        for room, objs in by_room.items():
            write(build, f"{room}/CMakeFiles/{room}.dir/link.txt", "/usr/bin/ar qc lib.a " + " ".join(objs) + "\n")


def run(script, *args):
    nm = [] if script == "check-layout.py" else ["--nm", NM]
    r = subprocess.run([sys.executable, os.path.join(TOOLS, script), *args, *nm],
                       capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


CIRCLE = {"low/x.c": "int lo_y(void);\nint lo_x(void) { return lo_y(); }\n",
          "low/y.c": "int lo_z(void);\nint lo_y(void) { return lo_z(); }\n",
          "low/z.c": "int lo_x(void);\nint lo_z(void) { return lo_x(); }\n"}
PAIR = dict(CIRCLE, **{"low/z.c": "int lo_z(void) { return 3; }\n",
                       "low/y.c": "int lo_z(void);\nint lo_x(void);\nint lo_y(void) { return lo_z() + lo_x(); }\n"})
CLEAN = {"low/a.c": '#include "rxray/low.h"\nint lo_x(void) { return 1; }\n',
         "high/b.c": '#include "rxray/low.h"\n#include "rxray/high.h"\nint hi_y(void) { return lo_x(); }\n'}


def cases():
    """(name, script, files, compiled sources or None, expected status, text the output must hold)"""
    return [
        ("clean tree, includes", "check-layout.py", CLEAN, None, 0, ""),
        ("upward include", "check-layout.py",
         dict(CLEAN, **{"low/a.c": '#include "rxray/high.h"\nint lo_x(void) { return 1; }\n'}), None, 1,
         "low/a.c:1: low (floor 0) includes rxray/high.h of high (floor 1)"),
        ("include of an equal floor", "check-layout.py",
         dict(CLEAN, **{"docs/design.md": DESIGN.replace("| 1 | high", "| 0 | high")}), None, 1, "high/b.c:1:"),
        ("folder with no row", "check-layout.py", dict(CLEAN, **{"mid/CMakeLists.txt": ""}), None, 1,
         "folder mid has no row"),
        ("clean objects, prefixes", "check-prefixes.py", CLEAN, list(CLEAN), 0, ""),
        ("unprefixed export", "check-prefixes.py", dict(CLEAN, **{"low/c.c": "int helper(void) { return 2; }\n"}),
         list(CLEAN) + ["low/c.c"], 1, "low/c.c: helper (T) lacks lo_"),
        ("nothing built", "check-prefixes.py", CLEAN, [], 2, "run cmake --build"),
        ("object on a link line missing", "check-prefixes.py", CLEAN, ["low/a.c", "MISSING"], 2, "not built"),
        ("two files calling each other", "check-circles.py", PAIR, list(PAIR), 0, "allowed pair"),
        ("circle of three files", "check-circles.py", CIRCLE, list(CIRCLE), 1,
         "low: circle of 3 files (x.c y.c z.c): x.c -> y.c: lo_y; y.c -> z.c: lo_z; z.c -> x.c: lo_x"),
    ]


def main():
    if TOOLS is None:
        print("usage: checks_fail.py TOOLS CC NM", file=sys.stderr)
        return 2
    failed = 0
    for i, (name, script, files, sources, want, text) in enumerate(cases()):
        with tempfile.TemporaryDirectory(prefix="rxray-layout-") as top:
            failed += not case(os.path.join(top, str(i)), name, script, files, sources, want, text)
    return 1 if failed else 0


def case(top, name, script, files, sources, want, text):
    """Run one case; True when it gave the status and output wanted."""
    src, build = tree(top, files)
    args = [src]
    if sources is not None:
        compile_all(src, build, [s for s in sources if s != "MISSING"])
        if "MISSING" in sources:
            write(build, "low/CMakeFiles/low.dir/link.txt",
                  "ar qc lib.a CMakeFiles/low.dir/a.c.o CMakeFiles/low.dir/gone.c.o\n")
        args = [build, src]
    rc, out = run(script, *args)
    ok = rc == want and text in out
    print(f"{'ok  ' if ok else 'FAIL'} {script} {name}: exit {rc} (want {want})"
          + ("" if ok else f"; output: {out!r}; wanted text {text!r}"))
    return ok


if __name__ == "__main__":
    sys.exit(main())
