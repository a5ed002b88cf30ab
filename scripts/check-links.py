#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown files.

Every link [text](target) whose target is not a URL (http:, https:, mailto:) must name a file or
directory inside the repository, and a `#fragment` must name a heading of the Markdown file it
points to (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens). Links in code
blocks and code spans are not links and are skipped.

Usage: python3 scripts/check-links.py [ROOT]   (ROOT: the repository, default this script's
parent directory). Prints one line per broken link and exits with 1 if there is any.
"""

import re
import sys
from pathlib import Path

SKIP_DIRS = {".git", "target", "node_modules"}
LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(root):
    for path in sorted(root.rglob("*.md")):
        if not SKIP_DIRS.intersection(path.relative_to(root).parts):
            yield path


def prose_lines(text, spans=False):
    """(line number, line) outside fenced code blocks, code spans blanked out unless `spans`."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, line if spans else re.sub(r"`+[^`]*`+", "", line)


def slug(heading):
    text = re.sub(r"`|\*|_(?=\w)|(?<=\w)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        for _, line in prose_lines(path.read_text(encoding="utf-8"), spans=True):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check(root):
    root = root.resolve()
    broken = 0
    checked = 0
    for md in markdown_files(root):
        text = md.read_text(encoding="utf-8")
        for number, line in prose_lines(text):
            for pattern in (LINK, IMAGE):
                for m in pattern.finditer(line):
                    target = m.group(1)
                    if URL.match(target):
                        continue
                    checked += 1
                    where = f"{md.relative_to(root)}:{number}"
                    path_part, _, fragment = target.partition("#")
                    dest = (md.parent / path_part).resolve() if path_part else md
                    if root != dest and root not in dest.parents:
                        print(f"{where}: {target}: outside the repository")
                        broken += 1
                    elif not dest.exists():
                        print(f"{where}: {target}: no such file")
                        broken += 1
                    elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                        print(f"{where}: {target}: no heading #{fragment} in {dest.name}")
                        broken += 1
    print(f"check-links: {checked} relative links, {broken} broken")
    return broken == 0


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    sys.exit(0 if check(root) else 1)
