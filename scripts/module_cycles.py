#!/usr/bin/env python3
"""File-level import cycles inside Rust crates.

Usage: scripts/module_cycles.py [CRATE_DIR ...]   (default: every workspace member with a src/)

For each crate, every .rs file under src/ is a node named by its module path (lib.rs and
main.rs are the root; a/mod.rs and a.rs are `a`; a/b.rs is `a::b`). An edge A -> B means file A
names something in file B: a `use` item or an inline path starting `crate::`, `super::`,
`self::`, or (in a `use` item) a child module of A's module. A path is resolved to the longest
module prefix that is a file; when the next segment is a name that module re-exports
(`pub use x::Name`), the edge goes to the file that defines it instead (followed up to 8 times).
Comments and string literals are ignored; `mod x;` declarations are not edges; `super::` inside
an inline `mod tests { ... }` means the file itself (no edge).

Prints, per crate, every strongly connected component of more than one file with one concrete
cycle through it, and exits 1 when any crate has a cycle (0 otherwise).
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_code(text):
    """Text with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'r(#*)"', text[i:i + 10]) if c == "r" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def module_of(rel):
    """Module path (tuple) of a file path relative to src/."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main") and (parts[-1] == "mod" or len(parts) == 1):
        parts = parts[:-1]
    return tuple(parts)


def expand_use_tree(tree, prefix=()):
    """`a::{b, c::{d, e}}` -> [('a','b'), ('a','c','d'), ...] (aliases and globs dropped)."""
    tree = tree.strip()
    paths = []
    depth, start, i = 0, 0, 0
    # split at top-level `::{`
    m = None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                m = i
                break
            depth += 1
    if m is None:
        head = re.sub(r"\s+as\s+\w+$", "", tree)
        segs = tuple(s for s in head.split("::") if s and s != "*")
        return [prefix + segs] if segs or prefix else []
    head = tree[:m].rstrip(":").strip()
    segs = tuple(s for s in head.split("::") if s)
    body = tree[m + 1:tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if p == "self":
            paths.append(prefix + segs)
        else:
            paths.extend(expand_use_tree(p, prefix + segs))
    return paths


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path -> rel file
        for root, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    rel = os.path.relpath(os.path.join(root, name), src)
                    mod = module_of(rel)
                    # lib.rs wins over main.rs for the root
                    if mod in self.files and rel == "main.rs":
                        self.files[("<bin>",)] = rel
                        continue
                    self.files[mod] = rel
        self.code = {}
        self.reexports = {}  # module -> {name: full path}
        for mod, rel in self.files.items():
            with open(os.path.join(src, rel), encoding="utf-8") as f:
                self.code[mod] = strip_code(f.read())
        for mod, code in self.code.items():
            ex = {}
            for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", code):
                for path in expand_use_tree(m.group(1)):
                    full = self.absolute(mod, path, in_use=True)
                    if full:
                        alias = re.search(r"\bas\s+(\w+)", m.group(1))
                        ex[path[-1]] = full
            self.reexports[mod] = ex

    def base(self, mod):
        return () if mod == ("<bin>",) else mod

    def absolute(self, mod, path, in_use, inline_depth=0):
        here = self.base(mod)
        if inline_depth:
            # inside `mod tests {}`: `super` is the file's own module
            if path and path[0] == "super":
                path = ("self",) + path[1:]
        if not path:
            return None
        if path[0] == "crate":
            return path[1:]
        if path[0] in ("self", "super"):
            cur = list(here)
            while path and path[0] in ("self", "super"):
                if path[0] == "super":
                    if not cur:
                        return None
                    cur.pop()
                path = path[1:]
            return tuple(cur) + path
        if in_use and (here + (path[0],)) in self.files:
            return here + path
        if in_use and not here and (path[0],) in self.files:
            return path
        return None

    def resolve(self, full, hops=0):
        """The file a full module path names (longest module prefix), following re-exports."""
        for k in range(len(full), -1, -1):
            if full[:k] in self.files:
                mod = full[:k]
                rest = full[k:]
                if rest and hops < 8 and rest[0] in self.reexports.get(mod, {}):
                    target = self.reexports[mod][rest[0]] + rest[1:]
                    if target != full:
                        return self.resolve(target, hops + 1)
                return mod
        return None

    def edges(self):
        graph = {m: set() for m in self.files}
        for mod, code in self.code.items():
            targets = set()
            # use items (with inline-module depth, to tell `mod tests { use super::* }`)
            depth_at = inline_depths(code)
            for m in re.finditer(r"\buse\s+([^;]+);", code):
                d = depth_at(m.start())
                for path in expand_use_tree(m.group(1)):
                    full = self.absolute(mod, path, in_use=True, inline_depth=d)
                    if full is not None:
                        targets.add(self.resolve(full))
            for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::" + IDENT + r")+)", code):
                d = depth_at(m.start())
                full = self.absolute(mod, tuple(m.group(1).split("::")), in_use=False, inline_depth=d)
                if full is not None:
                    targets.add(self.resolve(full))
            targets.discard(None)
            targets.discard(mod)
            graph[mod] = targets
        return graph


def inline_depths(code):
    """A function: offset -> how many inline `mod x { ... }` blocks enclose it."""
    spans = []
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", code):
        i, depth = m.end(), 1
        while i < len(code) and depth:
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
            i += 1
        spans.append((m.end(), i))
    return lambda off: sum(1 for a, b in spans if a <= off < b)


def sccs(graph):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
            out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def a_cycle(graph, comp):
    """One shortest cycle through the first file of the component."""
    comp = set(comp)
    start = sorted(comp)[0]
    prev, frontier, seen = {}, [start], {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start]


def workspace_crates(root):
    text = open(os.path.join(root, "Cargo.toml"), encoding="utf-8").read()
    block = re.search(r"members\s*=\s*\[(.*?)\]", text, re.S)
    names = re.findall(r'"([^"]+)"', block.group(1)) if block else []
    return [os.path.join(root, n) for n in names if os.path.isdir(os.path.join(root, n, "src"))]


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = argv or workspace_crates(root)
    found = False
    for d in dirs:
        crate = Crate(os.path.join(d, "src"))
        graph = crate.edges()
        comps = sccs(graph)
        name = os.path.relpath(os.path.abspath(d), root)
        files = lambda mods: [crate.files[m] for m in mods]
        if not comps:
            print(f"{name}: no cycles ({len(graph)} files)")
            continue
        found = True
        print(f"{name}: {len(comps)} cycle group(s) ({len(graph)} files)")
        for comp in sorted(comps, key=lambda c: sorted(c)):
            print(f"  group of {len(comp)}: {', '.join(sorted(files(comp)))}")
            print(f"    e.g. {' -> '.join(files(a_cycle(graph, comp)))}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
