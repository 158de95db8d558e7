#!/usr/bin/env python3
"""Checks that every documentation citation in the repository resolves inside the repository.

A clone must stand alone, so this fails (exit 1, one `file:line: problem` per finding) when a file:
  * points at the documents folder of a sibling `shared` checkout;
  * is Swift or shell code that names a sibling `shared` folder (the vector files it held ship in
    Vectors/collected/);
  * cites "spec §N" (or "spec section N", "spec digest §N") without naming a file of Docs/;
  * names `Docs/<File>.md` that does not exist;
  * cites `Docs/<File>.md §N` (and any `§M` or range end `–M` that follows it on the same line)
    where <File>.md has no heading whose text starts with N; in a file that cites exactly one Docs
    file, a bare `§N` (not after the name of another document such as an RFC) counts as a citation
    of that file and is checked the same way (in a Docs file, of the file itself);
  * names a Markdown file (`name.md`, `dir/name.md`, `../x/name.md`) that is not in the repository,
    relative to the root or to the naming file (in .swift files only comments are read for this;
    URLs are skipped).
It also fails when a target of Package.swift (`.target`, `.executableTarget`, `.testTarget`) has no
row in the target table of Docs/Architecture.md (the table of its section "## 1", one row per target,
the name in backquotes in the first column), or when that table names a target Package.swift does
not define.
Headings count when their first word (after the #'s, a trailing '.' or ':' removed) is the number:
`### 1.7 Quick ack` answers §1.7, `#### 10.G6 RSA_PAD` answers §10.G6. Standard library only.
Run from anywhere: python3 Scripts/check-docs.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SELF = os.path.realpath(__file__)

# Built from pieces so that this file does not match itself.
SHARED_DOCS = re.compile("shared" + r"/" + "docs")
SHARED_SIBLING = re.compile(r"\.\./" + "shared" + r"\b|\b" + "shared" + r"/vectors\b")
SPEC_CITE = re.compile(r"\bspec(?:\s+digest)?\s*(?:§|section\s+\d)", re.IGNORECASE)
DOCS_PATH = re.compile(r"\bDocs/([A-Za-z0-9_.-]+?\.md)\b")
NUMBER = r"\d+(?:\.(?:\d+|[A-Z]\d*))*"
# One token of a citation chain: a Docs file, another document (ends the chain), or §N with an
# optional range end (§6.1–6.4, §1.6.1–§1.6.7).
TOKEN = re.compile(
    r"(?P<doc>\bDocs/[A-Za-z0-9_.-]+?\.md\b)"
    r"|(?P<other>\bRFC\b|\bspecification\b|\bFIPS\b|\bSP\s*800)"
    r"|§\s*(?P<num>" + NUMBER + r")(?:\s*[–-]\s*§?(?P<end>" + NUMBER + r"))?"
)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(\S+)")
MARKDOWN = re.compile(r"(?<![\w/.:-])((?:\.\./)*[\w.-]+(?:/[\w.-]+)*\.md)\b")
URL = re.compile(r"\w+://\S+")


def repo_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not d.startswith(".build"))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.realpath(path) == SELF:
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # binary files (fuzz corpus, ...)
            yield os.path.relpath(path, ROOT), text


_headings = {}


def headings(doc):
    """The section numbers of Docs/<doc>, or None when the file does not exist."""
    if doc not in _headings:
        path = os.path.join(ROOT, "Docs", doc)
        if not os.path.isfile(path):
            _headings[doc] = None
        else:
            numbers = set()
            in_code = False
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.lstrip().startswith("```"):
                        in_code = not in_code
                        continue
                    m = None if in_code else HEADING.match(line)
                    if m:
                        numbers.add(m.group(1).rstrip(".:"))
            _headings[doc] = numbers
    return _headings[doc]


def check_markdown_names(rel, line, lineno, problems):
    if rel.endswith(".swift"):
        cut = line.find("//")
        if cut < 0:
            return
        line = line[cut:]
    for m in MARKDOWN.finditer(URL.sub("", line)):
        name = m.group(1)
        candidates = [os.path.join(ROOT, name), os.path.join(ROOT, os.path.dirname(rel), name)]
        if not any(os.path.isfile(c) and os.path.realpath(c).startswith(ROOT + os.sep) for c in candidates):
            if name.startswith("Docs/"):
                continue  # reported by the Docs/ check
            problems.append(f"{rel}:{lineno}: names {name}, which is not in the repository")


def check_line(rel, lineno, line, problems, default_doc=None):
    if rel.endswith((".swift", ".sh")) and SHARED_SIBLING.search(line):
        problems.append(f"{rel}:{lineno}: names a sibling 'shared' folder, which a clone does not have; read Vectors/")
    line = line.replace("\\u00a7", "§")  # JSON files escape the section sign
    # Cheap filters first: vector files have lines of hundreds of kilobytes of hex.
    if ".md" not in line and "§" not in line and "docs" not in line.lower() and "spec" not in line.lower():
        return
    if ".md" in line:
        check_markdown_names(rel, line, lineno, problems)
    has_docs = DOCS_PATH.search(line) is not None
    if SHARED_DOCS.search(line):
        problems.append(f"{rel}:{lineno}: points outside the repository ('shared' docs); cite Docs/ instead")
    if SPEC_CITE.search(line) and not has_docs:
        problems.append(f"{rel}:{lineno}: cites the spec by section without a Docs/ file (write Docs/MTProto.md §N)")
    for m in DOCS_PATH.finditer(line):
        if headings(m.group(1)) is None:
            problems.append(f"{rel}:{lineno}: Docs/{m.group(1)} does not exist")
    current = default_doc  # the Docs file the §-numbers on this line refer to
    for m in TOKEN.finditer(line):
        if m.group("doc"):
            current = m.group("doc")[len("Docs/"):]
        elif m.group("other"):
            current = None
        elif current is not None:
            known = headings(current)
            for number in (m.group("num"), m.group("end")):
                if number and known is not None and number not in known:
                    problems.append(f"{rel}:{lineno}: Docs/{current} has no heading starting with '{number}'")


PACKAGE_TARGET = re.compile(r"\.(?:target|executableTarget|testTarget)\(\s*name:\s*\"([^\"]+)\"")
TABLE_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def check_target_table(problems):
    """Every target of Package.swift has a row in Docs/Architecture.md's target table (§1), and no more."""
    try:
        with open(os.path.join(ROOT, "Package.swift"), encoding="utf-8") as f:
            targets = PACKAGE_TARGET.findall(f.read())
        with open(os.path.join(ROOT, "Docs", "Architecture.md"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        problems.append(f"cannot check the target table: {e}")
        return
    if not targets:
        problems.append("Package.swift: no .target(name:) found; cannot check the target table")
        return
    rows, inside = {}, False
    for lineno, line in enumerate(lines, 1):
        if line.startswith("## "):
            inside = line.startswith("## 1 ")
        elif inside and (m := TABLE_ROW.match(line)):
            rows.setdefault(m.group(1), lineno)
    if not rows:
        problems.append("Docs/Architecture.md: no target table in section 1 (rows of the form | `Target` | ... |)")
        return
    for name in targets:
        if name not in rows:
            problems.append(f"Docs/Architecture.md: target {name} of Package.swift is missing from the target table in section 1")
    for name, lineno in rows.items():
        if name not in targets:
            problems.append(f"Docs/Architecture.md:{lineno}: the target table names {name}, which Package.swift does not define")


def main():
    problems = []
    check_target_table(problems)
    for rel, text in repo_files():
        cited = set(DOCS_PATH.findall(text))
        if rel.startswith("Docs" + os.sep) and rel.count(os.sep) == 1:
            default_doc = os.path.basename(rel)  # a Docs file's own bare §N refer to itself
        else:
            default_doc = cited.pop() if len(cited) == 1 else None
        for lineno, line in enumerate(text.splitlines(), 1):
            check_line(rel, lineno, line, problems, default_doc)
    # Each Docs file: section numbers unique.
    docs_dir = os.path.join(ROOT, "Docs")
    for name in sorted(os.listdir(docs_dir)) if os.path.isdir(docs_dir) else []:
        if not name.endswith(".md"):
            continue
        seen = {}
        in_code = False
        with open(os.path.join(docs_dir, name), encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    in_code = not in_code
                    continue
                m = None if in_code else HEADING.match(line)
                if m and re.fullmatch(NUMBER, m.group(1).rstrip(".:")):
                    n = m.group(1).rstrip(".:")
                    if n in seen:
                        problems.append(f"Docs/{name}:{lineno}: section {n} already used at line {seen[n]}")
                    seen[n] = lineno
    for p in problems:
        print(p)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)")
        return 1
    print("check-docs: every documentation citation resolves inside the repository; the target table matches Package.swift")
    return 0


if __name__ == "__main__":
    sys.exit(main())
