#!/usr/bin/env python3
"""Lists Rust functions longer than a limit (default 70 lines), from `fn` to
its closing brace, in non-test code: files named tests.rs or under a
tests/ folder and everything after a `#[cfg(test)]` line are skipped.

    scripts/long-fns.py [--limit N] [DIR...]     (default: core/src host-native/src wasm/src)

A rough brace count (strings and comments are stripped first), enough to
track the number over time; docs/architecture.md records it.
"""
import re, sys, pathlib

def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]

def long_fns(path, limit):
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            break
        m = re.match(r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)", lines[i])
        if m:
            depth, start, j, opened = 0, i, i, False
            while j < len(lines):
                s = strip(lines[j])
                if not opened and ";" in s and "{" not in s:
                    break  # a declaration without a body
                depth += s.count("{") - s.count("}")
                opened = opened or "{" in s
                if opened and depth <= 0:
                    n = j - start + 1
                    if n > limit:
                        out.append((n, f"{path}:{start + 1}", m.group(6)))
                    break
                j += 1
        i += 1
    return out

args = sys.argv[1:]
limit = 70
if args[:1] == ["--limit"]:
    limit, args = int(args[1]), args[2:]
dirs = args or ["core/src", "host-native/src", "wasm/src"]
found = []
for d in dirs:
    for p in sorted(pathlib.Path(d).rglob("*.rs")):
        if p.name == "tests.rs" or "tests" in p.parts[:-1]:
            continue
        found += long_fns(p, limit)
for n, where, name in sorted(found, reverse=True):
    print(f"{n:5} {where} {name}")
print(f"{len(found)} functions over {limit} lines")
