#!/usr/bin/env python3
"""One owner per rule: the software NIC's threads and writers.

What it checks, over the C sources of engines/, tools/ and sweeps/:
  1. The --dma-writers walk: the files that name the writer count or a rule
     on it (the pattern WALK below) are at most MAX_WALK (6). Files that
     only pass a config or a placement along do not name it.
  2. No room but engines/simnic parses the software NIC's device options
     (the "nics=" and "writers=" words of `--device sim:...`).
  3. Each of the NIC's rule messages is written in exactly one file,
     engines/simnic/params.c.
Exit 0 clean, 1 with one line per offence, 2 on bad usage.
Limits: it reads text, not the call graph: a rule written with other words
is not seen. `--self-test` makes each rule fail on a made-up tree.
"""
import os
import re
import subprocess
import sys
import tempfile

WALK = re.compile(r"dma_writers|dma-writers|writers=|MAX_WRITERS|AUTO_WRITERS|MIN_RUN|"
                  r"->writers|\.writers|params_place")
MAX_WALK = 6
DEVICE_WORDS = re.compile(r'"(nics|writers)=')
OWNER = "engines/simnic/params.c"
MESSAGES = ["disagrees with the device option", "NIC threads exceed %u threads",
            "a ring of at least %u WQEs", "each NIC thread owns at least one queue"]
ROOMS = ("engines", "tools", "sweeps")


def sources(root):
    for room in ROOMS:
        for d, _, files in os.walk(os.path.join(root, room)):
            for f in sorted(files):
                if f.endswith(".c"):
                    p = os.path.join(d, f)
                    yield os.path.relpath(p, root), open(p, encoding="utf-8", errors="replace").read()


def check(root):
    bad = []
    walk = []
    said = {m: [] for m in MESSAGES}
    for rel, text in sources(root):
        if WALK.search(text):
            walk.append(rel)
        if not rel.startswith("engines/simnic/") and DEVICE_WORDS.search(text):
            bad.append(f"{rel}: parses the software NIC's device options (nics=/writers=): "
                       f"engines/simnic owns them")
        for m in MESSAGES:
            if m in text:
                said[m].append(rel)
    if len(walk) > MAX_WALK:
        bad.append(f"the --dma-writers walk crosses {len(walk)} files (at most {MAX_WALK}): "
                   + ", ".join(walk))
    for m, files in said.items():
        if files != [OWNER]:
            bad.append(f"'{m}' is written in {', '.join(files) or 'no file'}: "
                       f"its one owner is {OWNER}")
    return bad, walk


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as t:
        def put(rel, text):
            p = os.path.join(t, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        put(OWNER, "\n".join(f'"{m}"' for m in MESSAGES) + "\nint w = c->dma_writers;\n")
        for i in range(MAX_WALK - 1):
            put(f"engines/x/f{i}.c", "x = p->writers;\n")
        bad, _ = check(t)
        ok &= bad == []
        put("engines/core/place.c", 'if (!strncmp(o, "writers=", 8)) {}\n')
        bad, _ = check(t)
        ok &= any("parses the software NIC" in b for b in bad)
        ok &= any("walk crosses 7 files" in b for b in bad)
        os.remove(os.path.join(t, "engines/core/place.c"))
        put("tools/cmd_x.c", '"NIC threads exceed %u threads"\n')
        bad, _ = check(t)
        ok &= any("'NIC threads exceed %u threads' is written in" in b for b in bad)
    print("check-owners self-test:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check-owners.py SRC | --self-test", file=sys.stderr)
        return 2
    bad, walk = check(argv[1])
    for b in bad:
        print(b)
    print(f"check-owners: the --dma-writers walk: {len(walk)} files ({', '.join(walk)})",
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
