"""Which project functions call which, resolved statically as far as names allow.

Python is dynamic, so resolution is best effort: bare names and imports resolve exactly,
`self.x()` resolves through the class and its bases, `obj.x()` resolves exactly when the
function says what `obj` is (an annotated parameter, `obj = Cls(...)`, a literal, an attribute
the class assigns), and not at all when that type is not the project's (`sorted(...)`, a list:
its `.sort()` is never the project's `X.sort`). Only on an object of unknown type does a call
resolve by method name, when few methods carry that name; such edges are marked inexact, so that
clustering asks coverage to confirm them and no declared spec edge is ever made of them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from workers.synthesis.functions import CallRef, FunctionInfo, FunctionTable

# An attribute call on an unknown object is only trusted when the name is this rare.
_MAX_NAME_MATCHES = 3


@dataclass(frozen=True)
class CallEdge:
    caller: str  # function id
    callee: str  # function id
    exact: bool  # False when resolved by method name alone


class CallGraph:
    def __init__(self, edges: list[CallEdge]) -> None:
        self.edges = sorted(set(edges), key=lambda e: (e.caller, e.callee))
        self.callees: dict[str, set[str]] = defaultdict(set)
        self.callers: dict[str, set[str]] = defaultdict(set)
        for edge in self.edges:
            self.callees[edge.caller].add(edge.callee)
            self.callers[edge.callee].add(edge.caller)
        self._exact = {(e.caller, e.callee) for e in self.edges if e.exact}

    def is_exact(self, caller: str, callee: str) -> bool:
        return (caller, callee) in self._exact


def build_call_graph(table: FunctionTable) -> CallGraph:
    resolver = _Resolver(table)
    edges: list[CallEdge] = []
    for caller_id in sorted(table.functions):
        caller = table.functions[caller_id]
        for ref in caller.calls:
            for callee_id, exact in resolver.resolve(caller, ref):
                if callee_id != caller_id:
                    edges.append(CallEdge(caller_id, callee_id, exact))
    return CallGraph(edges)


class _Resolver:
    def __init__(self, table: FunctionTable) -> None:
        self.table = table
        self.by_dotted: dict[str, str] = {}
        self.methods_by_name: dict[str, list[str]] = defaultdict(list)
        self.module_paths: dict[str, str] = {m.name: p for p, m in table.modules.items()}
        self.classes: set[str] = {f"{mod}.{qual}" for mod, qual in table.class_bases}
        for fid in sorted(table.functions):
            info = table.functions[fid]
            if info.nested:
                continue
            self.by_dotted[info.dotted] = fid
            if info.class_name:
                self.methods_by_name[info.name].append(fid)

    def resolve(self, caller: FunctionInfo, ref: CallRef) -> list[tuple[str, bool]]:
        if ref.receiver_type:
            return self._typed(caller.module, ref.receiver_type, ref.name)
        if ref.receiver.startswith("self.") and caller.class_name:
            attribute = ref.receiver[len("self.") :]
            where, kind = self._attribute_type(caller.module, caller.class_name, attribute)
            if kind:
                return self._typed(where, kind, ref.name)
        if ref.receiver == "":
            target = self._resolve_name(caller.module, ref.name)
            return [(t, True) for t in self._callable_targets(target)]
        if ref.receiver in ("self", "cls") and caller.class_name:
            found = self._method_in_hierarchy(caller.module, caller.class_name, ref.name)
            return [(found, True)] if found else self._by_name(ref.name)
        if ref.receiver == "super" and caller.class_name:
            for base_module, base in self._bases(caller.module, caller.class_name):
                found = self._method_in_hierarchy(base_module, base, ref.name)
                if found:
                    return [(found, True)]
            return []
        receiver = self._resolve_name(caller.module, ref.receiver)
        if receiver in self.module_paths:  # module.function(...), perhaps re-exported there
            target = self._resolve_name(receiver, ref.name)
            return [(t, True) for t in self._callable_targets(target)]
        if receiver in self.classes:  # Class.method(...)
            module, _, qual = self._split_class(receiver)
            found = self._method_in_hierarchy(module, qual, ref.name)
            return [(found, True)] if found else []
        return self._by_name(ref.name)

    def _typed(self, module: str, kind: str, name: str) -> list[tuple[str, bool]]:
        """A method called on an object of a known type: the project's class, or nothing."""
        if kind.startswith("builtins.") or kind == "None":
            return []
        dotted = self._resolve_name(module, kind)
        if dotted not in self.classes:
            return []
        class_module, _, qual = self._split_class(dotted)
        found = self._method_in_hierarchy(class_module, qual, name)
        return [(found, True)] if found else []

    def _attribute_type(
        self, module: str, qual: str, attribute: str, depth: int = 0
    ) -> tuple[str, str]:
        """(module whose names the type is written in, type) of `self.attribute`."""
        kind = self.table.attribute_types.get((module, qual), {}).get(attribute, "")
        if kind or depth > 5:
            return module, kind
        for base_module, base in self._bases(module, qual):
            found = self._attribute_type(base_module, base, attribute, depth + 1)
            if found[1]:
                return found
        return module, ""

    def _resolve_name(self, module: str, name: str, depth: int = 0) -> str:
        """Dotted target of a name used in `module`, following imports and re-exports."""
        head, _, tail = name.partition(".")
        path = self.module_paths.get(module)
        imports = self.table.modules[path].imports if path else {}
        base = imports.get(head, f"{module}.{head}")
        dotted = f"{base}.{tail}" if tail else base
        if depth < 3 and dotted not in self.by_dotted and dotted not in self.classes:
            parent, _, leaf = dotted.rpartition(".")
            if parent in self.module_paths and parent != module and leaf:
                return self._resolve_name(parent, leaf, depth + 1)
        return dotted

    def _callable_targets(self, dotted: str) -> list[str]:
        if dotted in self.by_dotted:
            return [self.by_dotted[dotted]]
        if dotted in self.classes:  # constructing a class runs its initialisers
            module, _, qual = self._split_class(dotted)
            found = [
                self._method_in_hierarchy(module, qual, name)
                for name in ("__init__", "__post_init__", "__new__")
            ]
            return [f for f in found if f]
        return []

    def _split_class(self, dotted: str) -> tuple[str, str, str]:
        for module in sorted(self.module_paths, key=len, reverse=True):
            if dotted.startswith(module + "."):
                return module, "", dotted[len(module) + 1 :]
        return "", "", dotted

    def _bases(self, module: str, qual: str) -> list[tuple[str, str]]:
        found = []
        for base in self.table.class_bases.get((module, qual), []):
            dotted = self._resolve_name(module, base)
            if dotted in self.classes:
                base_module, _, base_qual = self._split_class(dotted)
                found.append((base_module, base_qual))
        return found

    def _method_in_hierarchy(self, module: str, qual: str, name: str, depth: int = 0) -> str:
        fid = self.by_dotted.get(f"{module}.{qual}.{name}")
        if fid or depth > 5:
            return fid or ""
        for base_module, base in self._bases(module, qual):
            found = self._method_in_hierarchy(base_module, base, name, depth + 1)
            if found:
                return found
        return ""

    def _by_name(self, name: str) -> list[tuple[str, bool]]:
        matches = self.methods_by_name.get(name, [])
        if 0 < len(matches) <= _MAX_NAME_MATCHES:
            return [(m, False) for m in matches]
        return []
