#!/usr/bin/env python3
"""check-prefixes.py BUILD SRC [--nm NM] -- every export carries its room's prefix
(ctest layout_prefixes).

Reads the objects CMake built under BUILD (<dir>/CMakeFiles/<target>.dir/
**.o; with the Makefile generator, those the target's link.txt names, so
objects of moved or deleted sources do not count, and one it names but
that is missing means "not built") for the rooms of SRC/docs/design.md's
prefix table (see check-layout.py), and runs nm on them. Every strong
defined global (nm types T D B R G S C, plus u and i) must start with the
room's prefix. Demangled C++ names (nvcc objects) are cut at "(".
Not checked: weak symbols (W V: NVTX's inline API, C++ inline members),
ASan's __odr_asan.* markers, tests/, bench/, fuzz/. Allowed exceptions:
rx_engine_<folder> in engines/<folder>, main in tools/, InitializeInjection
and InitializeInjectionNvtx2 in cupti/ (names CUDA looks up). nvcc's own
registration symbols are local without -rdc, so they need no exception.
Limits: reads what was built (a component not configured is not checked;
run `cmake --build` first); LTO objects would need nm --plugin.

Prints `<source>: <symbol> (<type>) lacks <prefix>` per offence; exit 1 if
any, 2 on bad usage or when nothing is built, 0 when clean. NM defaults to
$NM, then nm. check-circles.py imports objects(), nm_table() and build_src_nm().
"""
import os
import runpy
import re
import subprocess
import sys
import types

SKIP = ("tests", "bench", "fuzz")
STRONG = set("TDBRGSCui")


def load_layout():
    """The sibling script check-layout.py, as a module (its name has a hyphen)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return types.SimpleNamespace(**runpy.run_path(os.path.join(here, "check-layout.py")))


def objects(build, src):
    """[(object path, source relative to SRC, target's folder relative to BUILD)].

    Raises SystemExit(2) when an object a target's link line names is missing
    or when no object is found at all."""
    out, missing = [], []
    for d, dirs, files in os.walk(build):
        room = os.path.relpath(d, build)
        dirs[:] = sorted(x for x in dirs if x != "CMakeFiles" and not (d == build and x in SKIP))
        cm = os.path.join(d, "CMakeFiles")
        if room == "." or not os.path.isdir(cm):
            continue
        for t in sorted(os.listdir(cm)):
            tdir = os.path.join(cm, t)
            if not t.endswith(".dir") or not os.path.isdir(tdir):
                continue
            listed = None
            link = os.path.join(tdir, "link.txt")
            if os.path.exists(link):
                with open(link) as f:
                    words = f.read().split()
                for w in [w for w in words if w.startswith("@") and os.path.exists(os.path.join(d, w[1:]))]:
                    with open(os.path.join(d, w[1:])) as f:  # a response file of objects
                        words += f.read().split()
                listed = {os.path.normpath(os.path.join(d, w)) for w in words
                          if w.endswith(".o") and w.startswith("CMakeFiles/" + t + "/")}
                missing += sorted(o for o in listed if not os.path.exists(o))
            for od, _, ofiles in os.walk(tdir):
                for f in sorted(ofiles):
                    o = os.path.normpath(os.path.join(od, f))
                    if not f.endswith(".o") or (listed is not None and o not in listed):
                        continue
                    rel = os.path.relpath(o, tdir)[:-2].replace("__/", "../")
                    s = os.path.normpath(os.path.join(room, rel))
                    if os.path.exists(os.path.join(src, s)) or os.path.exists(os.path.join(build, s)):
                        out.append((o, s, room))
    if missing:
        print(f"not built: {len(missing)} objects the link lines name, e.g. {missing[0]}: "
              f"run cmake --build {build} first",
              file=sys.stderr)
        raise SystemExit(2)
    stale = [s for o, s, _ in out if os.path.exists(os.path.join(src, s))
             and os.path.getmtime(os.path.join(src, s)) > os.path.getmtime(o)]
    if stale:
        print(f"warning: {len(stale)} objects older than their sources ({stale[0]}...): "
              f"this reads the last build", file=sys.stderr)
    if not out:
        print(f"no objects under {build}: run cmake --build {build} first", file=sys.stderr)
        raise SystemExit(2)
    return out


def nm_table(objs, nm):
    """{object: [(name, type)]} for defined and undefined globals; C++ names demangled."""
    table = {o: [] for o in objs}
    for i in range(0, len(objs), 200):
        r = subprocess.run([nm, "-A", "-P", "-g"] + objs[i:i + 200], capture_output=True, text=True)
        if r.returncode:
            print(f"{nm}: {r.stderr.strip()}", file=sys.stderr)
            raise SystemExit(2)
        for line in r.stdout.splitlines():
            f, _, rest = line.partition(": ")
            parts = rest.split()
            if len(parts) >= 2 and f in table:
                table[f].append((parts[0], parts[1]))
    mangled = sorted({n for v in table.values() for n, _ in v if n.startswith("_Z")})
    if mangled:
        filt = re.sub(r"nm$", "c++filt", nm) if os.path.exists(re.sub(r"nm$", "c++filt", nm)) else "c++filt"
        r = subprocess.run([filt], input="\n".join(mangled) + "\n", capture_output=True, text=True)
        plain = dict(zip(mangled, r.stdout.splitlines())) if r.returncode == 0 else {}
        for o, v in table.items():
            table[o] = [(plain.get(n, n).split("(")[0], t) for n, t in v]
    return table


def allowed(name, room):
    return (name.startswith("__odr_asan")
            or (room == "tools" and name == "main")
            or (room == "cupti" and name in ("InitializeInjection", "InitializeInjectionNvtx2"))
            or (room.startswith("engines/") and name == "rx_engine_" + room.split("/", 1)[1]))


def build_src_nm(argv):
    """BUILD SRC [--nm NM] of argv (NM: $NM, then nm), or None after the
    usage line. check-circles.py takes the same arguments."""
    args = list(argv[1:])
    nm = os.environ.get("NM") or "nm"
    if "--nm" in args:
        i = args.index("--nm")
        nm = args[i + 1] if i + 1 < len(args) else ""
        del args[i:i + 2]
    if len(args) != 2 or not nm or not all(os.path.isdir(a) for a in args):
        print(f"usage: {os.path.basename(argv[0])} BUILD SRC [--nm NM]", file=sys.stderr)
        return None
    return args[0], args[1], nm


def main(argv):
    got = build_src_nm(argv)
    if not got:
        return 2
    build, src, nm = got
    layout = load_layout()
    table = layout.rooms(src)
    objs = objects(build, src)
    syms = nm_table([o for o, _, _ in objs], nm)
    bad, checked = [], 0
    for o, source, folder in objs:
        room = layout.room_of(folder, table)
        if room is None:
            bad.append(f"{source}: built in {folder}, which has no row in docs/design.md's prefix table")
            continue
        prefix = table[room][1]
        for name, t in syms[o]:
            if t not in STRONG:
                continue
            checked += 1
            if not name.startswith(prefix) and not allowed(name, room):
                bad.append(f"{source}: {name} ({t}) lacks {prefix}")
    for line in sorted(set(bad)):
        print(line)
    print(f"check-prefixes: {len(objs)} objects, {checked} strong symbols, {len(set(bad))} offences",
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
