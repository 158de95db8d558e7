#!/usr/bin/env python3
"""The command table of `rampart` (Sources/rampart/CommandTable.swift) against the README and itself.

    Scripts/check-cli.py PATH-TO-RAMPART [README.md]

Checks that the README's CLI section (the first ```sh block under "## Command-line tool") lists
exactly the command lines `rampart help --synopses` prints, that every command of
`rampart help --commands` answers `--help` with its usage on standard output and exit 0, that every
group answers `--help` the same way and, without a command, prints its help on standard error with
exit 2, and that an unknown command is bad usage (exit 2) naming it. Exits 1 on any mismatch.
"""
import subprocess
import sys


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def readme_lines(path):
    text = open(path, encoding="utf-8").read()
    start = text.index("## Command-line tool")
    block = text.index("```sh", start)
    end = text.index("```", block + 5)
    return [line for line in text[block + 5:end].splitlines() if line.startswith("rampart ")]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    readme = sys.argv[2] if len(sys.argv) > 2 else "README.md"
    failures = []
    rc, out, _ = run(binary, "help", "--synopses")
    synopses = out.splitlines()
    if rc != 0 or not synopses:
        failures.append(f"rampart help --synopses: exit {rc}")
    documented = readme_lines(readme)
    for line in synopses:
        if line not in documented:
            failures.append(f"README's CLI section lacks: {line}")
    for line in documented:
        if line not in synopses:
            failures.append(f"README's CLI section lists a line the command table does not have: {line}")
    rc, out, _ = run(binary, "help", "--commands")
    commands = [c.split() for c in out.splitlines()]
    groups = set()
    for words in commands:
        for k in range(1, len(words)):
            groups.add(tuple(words[:k]))
        rc, out, err = run(binary, *words, "--help")
        if rc != 0 or not out.startswith("usage: ") or err:
            failures.append(f"rampart {' '.join(words)} --help: exit {rc}, stdout {out[:60]!r}, stderr {err[:60]!r}")
    for g in sorted(groups) + [()]:
        rc, out, err = run(binary, *g, "--help")
        if rc != 0 or not out.startswith("usage: "):
            failures.append(f"rampart {' '.join(g)} --help: exit {rc}")
        rc, out, err = run(binary, *g)
        if rc != 2 or out or not err.startswith("usage: "):
            failures.append(f"rampart {' '.join(g)} without a command: exit {rc}, stdout {out[:40]!r}")
        rc, out, err = run(binary, *g, "no-such-command")
        if rc != 2 or "no-such-command" not in err:
            failures.append(f"rampart {' '.join(g)} no-such-command: exit {rc}, stderr {err[:80]!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"check-cli: {len(commands)} commands, {len(groups) + 1} groups, {len(synopses)} command lines; "
          + ("all checks passed" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
