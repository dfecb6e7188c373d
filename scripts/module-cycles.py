#!/usr/bin/env python3
"""Lists import cycles among a crate's modules, read from its `use` lines, and
checks that no module uses a layer above it.

    python3 scripts/module-cycles.py runtime/src [--above LAYER ...] [--allow a,b ...]
    python3 scripts/module-cycles.py --self-test

Each file is a module. An edge A -> B means A names B: a `crate::` or
`super::` path in A's `use` lines or code (or a path through the crate's own
name, where `lib.rs` has `extern crate self as NAME;`), or a path through one
of A's own child modules (`child::item`). A path to an item the crate root
re-exports (`crate::Stream`) names the module the item comes from. `mod`
declarations and `pub use` / `pub(crate) use` re-exports are not edges: a
module that only declares and re-exports its children is a facade.

Exits 1 when a cycle is found that is not allowed with `--allow` (pairs of
module paths that ARCHITECTURE.md justifies, e.g. `stream,stream::event`), or
when a module outside a layer named with `--above` (a module path, e.g.
`workflow`: the module and its children) uses a module of that layer.
"""
import re
import sys
from pathlib import Path


def module_of(root: Path, path: Path) -> tuple:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def resolve(modules: dict, start: tuple, segments: list) -> tuple:
    """The longest existing module named by `segments` from `start`."""
    for n in range(len(segments), 0, -1):
        candidate = start + tuple(segments[:n])
        if candidate in modules:
            return candidate
    # An item of `start` itself (`super::Stream`).
    return start if start in modules else None


def crate_alias(modules: dict):
    """The name `lib.rs` gives the crate itself (`extern crate self as NAME;`), if any."""
    lib = modules.get(())
    found = re.search(r"^\s*extern\s+crate\s+self\s+as\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", lib.read_text(), re.M) if lib else None
    return found.group(1) if found else None


def root_reexports(modules: dict) -> dict:
    """The items `lib.rs` re-exports from its modules: exported name -> module."""
    lib = modules.get(())
    out = {}
    if lib is None:
        return out
    text = re.sub(r"//[^\n]*", "", lib.read_text())
    for tree in re.findall(r"\bpub\s+use\s+([^;]+);", text):
        tree = re.sub(r"\s+", "", tree)
        prefix, _, group = tree.partition("{")
        names = group.rstrip("}").split(",") if group else [prefix.rsplit("::", 1)[-1]]
        path = [p for p in prefix.split("::") if p]
        if not group:
            path = path[:-1]
        module = resolve(modules, (), path) if path else None
        if not module:
            continue
        for name in filter(None, names):
            # `a::b as c` exports `c`, from module `module::a` where that exists.
            original, _, alias = name.partition("as")
            inner = [p for p in original.split("::") if p]
            source = resolve(modules, module, inner[:-1]) if len(inner) > 1 else module
            out[alias or inner[-1]] = source or module
    return out


def split_top(text: str) -> list:
    """`a, b::{c, d}, e` split at its top-level commas."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def use_paths(tree: str, prefix: list = None) -> list:
    """The paths a use tree names, each a list of segments:
    `crate::{a, b::{c, d as e}, self}` gives crate::a, crate::b::c,
    crate::b::d and crate."""
    out = []
    for part in split_top(tree):
        part = re.sub(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*$", "", part)
        if "{" in part:
            head = [p.strip() for p in part[: part.index("{")].split("::") if p.strip()]
            out += use_paths(part[part.index("{") + 1 : part.rindex("}")], (prefix or []) + head)
        else:
            segments = [p.strip() for p in part.split("::") if p.strip()]
            if segments in (["self"], ["*"]):
                segments = []
            out.append((prefix or []) + segments)
    return out


def inline_modules_as_self(text: str) -> str:
    """`text` with the paths inside inline modules (`mod tests { ... }`)
    written from the file's module: there `super::` is the file's module
    (`self::`), and `super::super::` its parent (`super::`)."""
    out, at = [], 0
    for m in re.finditer(r"(?<![A-Za-z0-9_])mod\s+[A-Za-z_][A-Za-z0-9_]*\s*\{", text):
        if m.start() < at:
            continue  # nested in a block already rewritten
        depth, end = 0, len(text)
        for i in range(m.end() - 1, len(text)):
            depth += (text[i] == "{") - (text[i] == "}")
            if depth == 0:
                end = i + 1
                break
        body = re.sub(
            r"(?<![A-Za-z0-9_:])((?:super::)+)",
            lambda s: "super::" * (s.group(1).count("super") - 1) or "self::",
            text[m.end() : end],
        )
        out += [text[at : m.end()], body]
        at = end
    out.append(text[at:])
    return "".join(out)


def edges(root: Path, modules: dict) -> dict:
    graph = {m: set() for m in modules}
    alias = crate_alias(modules)
    heads = "crate|super(?:::super)*" + (f"|{alias}" if alias else "")
    path_re = re.compile(r"(?<![A-Za-z0-9_:])(" + heads + r")::((?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)")
    exported = root_reexports(modules)
    for module, path in modules.items():
        text = path.read_text()
        # Names a module re-exports from its children: using them is using the child.
        reexported = {}
        for child, names in re.findall(r"pub(?:\([a-z]+\))?\s+use\s+([a-z_][a-z0-9_]*)::\{?([^;}]*)\}?;", text):
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", names):
                if name not in ("self", "as"):
                    reexported[name] = child
        children = [c for c in re.findall(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", text, re.M)
                    if module + (c,) in modules]
        is_dir_module = path.name in ("mod.rs", "lib.rs")
        # The module `super::` names, and the one `self::` names.
        parent = module if is_dir_module else module[:-1]

        def add(head: str, segments: list):
            """An edge for the path `head::segments`."""
            if head in ("crate", alias):
                base = ()
            elif head.startswith("super"):
                ups = head.count("super")
                # `super` of a `mod.rs` module is its parent; of `a/b.rs`, `a`.
                base = module if is_dir_module else module[:-1]
                base = base[: len(base) - ups] if is_dir_module else base[: len(base) - (ups - 1)]
            elif head == "self":
                base = module
            elif head in children:
                graph[module].add(module + (head,))
                return
            else:
                return  # another crate, or a local item
            if not segments:
                return
            target = resolve(modules, base, segments)
            if target == () and segments[0] in exported:
                # An item the crate root re-exports: its module.
                target = exported[segments[0]]
            if target is not None and target != module and target != ():
                graph[module].add(target)

        text = re.sub(r"//[^\n]*", "", text)
        text = inline_modules_as_self(text)
        # Re-exports, also those over several lines, are a facade's, not uses.
        text = re.sub(r"\bpub(?:\([a-z]+\))?\s+use\s+[^;]*;", "", text)
        # `use` statements, also over several lines and with nested groups.
        for tree in re.findall(r"(?<![A-Za-z0-9_])use\s+([^;]+);", text):
            for segments in use_paths(tree):
                ups = 0
                while ups < len(segments) and segments[ups] == "super":
                    ups += 1
                if ups:
                    add("::".join(segments[:ups]), segments[ups:])
                elif segments:
                    add(segments[0], segments[1:])
        text = re.sub(r"(?<![A-Za-z0-9_])use\s+[^;]+;", "", text)
        for line in text.splitlines():
            stripped = line.strip()
            for child in children:
                if re.search(r"(?<![A-Za-z0-9_:])" + child + r"::", line):
                    graph[module].add(module + (child,))
            if not stripped.startswith(("mod ", "pub mod", "pub(crate) mod")):
                for name, child in reexported.items():
                    if module + (child,) in modules and re.search(r"(?<![A-Za-z0-9_:])" + name + r"\b", line):
                        graph[module].add(module + (child,))
            for m in path_re.finditer(line):
                add(m.group(1), m.group(2).split("::"))
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

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
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def options(args: list, flag: str) -> list:
    """The values after each `flag`, up to the next option."""
    values = []
    for i, arg in enumerate(args):
        if arg == flag:
            for value in args[i + 1:]:
                if value.startswith("--"):
                    break
                values.append(value)
    return values


def layer_violations(graph: dict, layer: tuple) -> list:
    """Edges into `layer` (a module and its children) from modules outside it."""
    inside = lambda m: m[: len(layer)] == layer
    return sorted((a, b) for a in graph for b in graph[a] if inside(b) and not inside(a))


def self_test():
    """Checks the checker on small crates written to a temporary directory:
    each way of naming a layer from below it is found, and a clean crate
    (the layer using the core; a test module's `super::*`) passes."""
    import tempfile

    core = {
        "lib.rs": "extern crate self as demo;\nmod core_part;\nmod layer;\npub use core_part::Thing;\npub use layer::{Above, helper};\n",
        "core_part.rs": "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        "layer/mod.rs": "mod inner;\npub use inner::{helper, Above};\npub fn again() {\n    inner::helper()\n}\n",
        "layer/inner.rs": "use demo::{\n    Thing,\n};\npub struct Above(Thing);\npub fn helper() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    }
    uses = [
        "use crate::layer::Above;",
        "use crate::Above;",
        "use demo::helper;",
        "use super::{layer::{self}};",
        "use crate::{\n    Thing,\n    Above,\n};",
        "fn f() { crate::helper() }",
    ]
    failures = []
    for use in [None] + uses:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for file, text in core.items():
                (root / file).parent.mkdir(parents=True, exist_ok=True)
                extra = f"{use}\n" if use and file == "core_part.rs" else ""
                (root / file).write_text(extra + text)
            modules = {module_of(root, f): f for f in sorted(root.rglob("*.rs"))}
            graph = edges(root, modules)
            found = layer_violations(graph, ("layer",))
            # A use from below makes a cycle too (the layer uses the core).
            if bool(found) != bool(use) or (not use and cycles(graph)):
                failures.append(f"{use!r}: violations {found}, cycles {cycles(graph)}")
    for failure in failures:
        print(f"self-test failed: {failure}")
    print(f"self-test: {len(uses)} uses of a layer from below and a clean crate, {len(failures)} misjudged")
    sys.exit(1 if failures else 0)


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
    root = Path(args[0])
    allowed = set()
    for pair in options(args, "--allow"):
        a, b = pair.split(",")
        allowed.add(frozenset((a, b)))
    layers = [tuple(layer.split("::")) for layer in options(args, "--above")]
    files = sorted(root.rglob("*.rs"))
    modules = {module_of(root, f): f for f in files}
    graph = edges(root, modules)
    name = lambda m: "::".join(m) or "crate"
    found = cycles(graph)
    bad = []
    for component in found:
        names = [name(m) for m in component]
        pairs = {frozenset((name(a), name(b))) for a in component for b in graph[a] if b in component}
        if pairs and pairs <= allowed:
            print(f"allowed cycle: {' <-> '.join(names)}")
        else:
            bad.append(names)
            print(f"cycle: {' -> '.join(names)}")
            for a in component:
                inside = sorted(name(b) for b in graph[a] if b in component)
                print(f"    {name(a)} uses {', '.join(inside)}")
    upward = []
    for layer in layers:
        if layer not in modules:
            print(f"--above {name(layer)}: no such module under {root}")
            sys.exit(2)
        for a, b in layer_violations(graph, layer):
            upward.append((a, b))
            print(f"layer {name(layer)}: {name(a)} (outside it) uses {name(b)}")
    print(
        f"{len(modules)} modules, {sum(len(e) for e in graph.values())} edges, {len(bad)} cycle(s)"
        + "".join(f"; layer {name(layer)}: used by no module below it" for layer in layers if not upward)
        + (f"; {len(upward)} use(s) of a layer from below it" if upward else "")
    )
    sys.exit(1 if bad or upward else 0)


if __name__ == "__main__":
    main()
