"""The problem statement: markdown written from the briefs and specs, never from the removed code.

For every function to implement it gives the signature, the purpose, the parameters, the return
value, the errors raised with their messages, the effects on attributes, the command-line
options and the documentation next to it; then the requirements (specs), examples taken from
sources other than the hidden tests (doctests, README and docs pages, visible tests, call
sites), and the constraints. A last pass drops any line that would quote a removed line of
code verbatim.
"""

from __future__ import annotations

import re

from workers.synthesis.briefs import BEHAVIOUR_KINDS, FunctionBrief
from workers.synthesis.documents import DocExample
from workers.synthesis.functions import FunctionInfo
from workers.synthesis.proposals import SpecProposal

# Removed lines this short ("return x", "else:") are too common to count as giving code away.
_MIN_LEAK_CHARS = 12
_EXAMPLES_PER_FUNCTION = 2
_MAX_EXAMPLES = 10


def _title_names(functions: list[FunctionInfo]) -> list[str]:
    """Names that tell the functions apart: qualified names, then module-qualified ones."""
    names = [f.qualname for f in functions]
    repeated = {n for n in names if names.count(n) > 1}
    shown = [
        f"{f.module}.{f.qualname}" if f.qualname in repeated else f.qualname for f in functions
    ]
    return list(dict.fromkeys(shown))


def task_title(functions: list[FunctionInfo]) -> str:
    names = [f"`{name}`" for name in _title_names(functions)]
    joined = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    modules = sorted({f.module for f in functions})
    where = modules[0] if len(modules) == 1 else f"{len(modules)} modules"
    return f"Implement {joined} in {where}"


def tidy_title(title: str) -> str:
    """A title without repeated names: "`A`, `A` and `B`" becomes "`A` and `B`"."""
    match = re.match(r"^(.*?)((?:`[^`]+`(?:, | and ))+`[^`]+`)(.*)$", title, flags=re.S)
    if not match:
        return title
    names = list(dict.fromkeys(re.findall(r"`[^`]+`", match.group(2))))
    joined = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return f"{match.group(1)}{joined}{match.group(3)}"


def problem_statement(
    *,
    functions: list[FunctionInfo],
    briefs: dict[str, FunctionBrief],
    specs: list[SpecProposal],
    relations: list[tuple[str, str]],  # (caller qualname, callee qualname) inside the cluster
    removed_lines: list[str],
) -> str:
    out: list[str] = [f"# {task_title(functions)}", ""]
    out.append(
        f"The {len(functions)} functions below have lost their implementations: each body now "
        "raises `NotImplementedError`. Implement them so that every requirement in this "
        "statement holds. They are meant to work together"
        + (": " + "; ".join(f"`{a}` uses `{b}`" for a, b in relations) + "." if relations else ".")
    )
    out += ["", "## Functions to implement", ""]
    options_shown: set[tuple[str, ...]] = set()
    for info in functions:
        out += _function_section(info, briefs[info.id], options_shown)
    tested = [s for s in specs if s.verified_by]
    untested = [s for s in specs if not s.verified_by]
    out += ["## Requirements", ""]
    out += [_requirement(s) for s in tested]
    out.append("")
    if untested:
        out += [
            "Also stated, *unverified* (no hidden test checks them; they do not count):",
            "",
        ]
        out += [_requirement(s) for s in untested]
        out.append("")
    out += _examples_section(functions, briefs, removed_lines)
    out += ["## Constraints", ""]
    out.append(
        "- Keep the signatures, decorators and docstrings as they are; write the bodies "
        "(private helpers may be added)."
    )
    out.append("- Do not change the existing tests; hidden tests will be added to check the work.")
    out.append("- Use only the standard library and the project's existing dependencies.")
    out.append("")
    return scrub_removed_code("\n".join(out), removed_lines)


def _requirement(spec: SpecProposal) -> str:
    """A list item; a statement's code block is indented to stay inside it."""
    first, *rest = spec.statement.split("\n")
    return "\n".join([f"- **{spec.key}** ({spec.kind}): {first}", *(f"  {ln}" for ln in rest)])


def _function_section(
    info: FunctionInfo, brief: FunctionBrief, options_shown: set[tuple[str, ...]]
) -> list[str]:
    out = [f"### `{info.qualname}` in `{info.path}` (module `{info.module}`)", "", "```python"]
    out += [f"@{decorator}" for decorator in info.decorators]
    out += [info.signature + ":", "```", ""]
    if info.docstring:
        out += ["Its docstring (kept in the code) says:", ""]
        out += ["> " + line if line.strip() else ">" for line in info.docstring.splitlines()]
        out.append("")
    else:
        out += [f"**Purpose** (from {brief.purpose_source}): {brief.purpose}", ""]
    params = [p for p in brief.params]
    if params:
        out.append("**Parameters**:")
        for param in params:
            details = [f"`{param.annotation}`"] if param.annotation else []
            details += [f"default `{param.default}`"] if param.default else ["required"]
            doc = brief.doc.params.get(param.name, "")
            out.append(f"- `{param.name}` ({', '.join(details)})" + (f": {doc}" if doc else ""))
        out.append("")
    out += [f"**Returns**: {_returns_text(info, brief)}", ""]
    if brief.raises:
        out.append("**Raises**:")
        for raised in brief.raises:
            when = ""
            allowed = set(info.params) | {"self", "cls"}
            if raised.condition and set(raised.condition_names) <= allowed:
                when = f" when `{raised.condition}`"
            message = f", message '{raised.message}'" if raised.message else ""
            out.append(f"- `{raised.exception}`{when}{message}")
        out.append("")
    if brief.facts.self_attributes:
        shown = [
            f"`self.{a}`"
            + (f" (from `{brief.facts.from_params[a]}`)" if a in brief.facts.from_params else "")
            for a in brief.facts.self_attributes[:8]
        ]
        out += [f"**Effects**: sets {', '.join(shown)}.", ""]
    if brief.uses:
        out += [f"**Uses**: {', '.join(f'`{u}`' for u in brief.uses[:6])}.", ""]
    options = [o for o in brief.options if o.flags not in options_shown]
    if options:
        out.append(f"**Command-line options** defined in `{info.path}`:")
        for option in options:
            options_shown.add(option.flags)
            out.append(f"- {option.describe()}")
        out.append("")
    # The paragraph the purpose was taken from is said once, as the purpose.
    related = [f"- {path}: {text}" for path, text in brief.doc_paragraphs if text != brief.purpose]
    related += [f"- the docstring of `{name}`: {text}" for name, text in brief.neighbours]
    if related:
        out += ["**Related documentation**:", *related, ""]
    return out


def _returns_text(info: FunctionInfo, brief: FunctionBrief) -> str:
    signature = info.signature
    annotation = signature.rsplit("->", 1)[1].strip() if "->" in signature else ""
    if info.name == "__init__":
        return "nothing (it initialises the object)."
    if brief.facts.is_generator:
        text = "a generator that yields its results"
    elif brief.facts.returns_value:
        text = f"a `{annotation}`" if annotation and annotation != "None" else "a value"
    else:
        text = "`None`"
    if brief.doc.returns:
        text += f": {brief.doc.returns}"
    return text if text.endswith(".") else f"{text}."


def _examples_section(
    functions: list[FunctionInfo], briefs: dict[str, FunctionBrief], removed_lines: list[str]
) -> list[str]:
    # An example that runs two of the functions is shown under each: every function's own
    # section of examples stands on its own.
    chosen: dict[str, list[DocExample]] = {}
    for info in functions:
        usable = [
            e for e in dict.fromkeys(briefs[info.id].examples) if not leaks(e.code, removed_lines)
        ]
        own = [e for e in usable if not e.via]
        # An example through a caller shows the function at work, which a call site does not:
        # it comes first where none of the function's own examples shows behaviour.
        if not any(e.kind in BEHAVIOUR_KINDS for e in own):
            own = [e for e in usable if e.via][:1] + own
        chosen[info.id] = own[:_EXAMPLES_PER_FUNCTION]
    # Every function shows its first example; further ones while the section stays short.
    budget = 6 * _MAX_EXAMPLES - sum(_example_lines(c[0]) for c in chosen.values() if c)
    shown: list[str] = []
    for info in functions:
        for rank, example in enumerate(chosen[info.id]):
            if rank:
                budget -= _example_lines(example)
                if budget < 0:
                    break
            shown += [_example_heading(info, example), ""]
            shown += ["```python", *example.code.splitlines(), "```", ""]
    missing = [info.qualname for info in functions if not chosen[info.id]]
    if not shown:
        return []
    out = [
        "## Examples",
        "",
        "From the repository's docstrings, docs and README, the tests that stay visible, and "
        "the call sites in its code; the tests that check your work are hidden.",
        "",
        *shown,
    ]
    if missing:
        out += [
            "No example outside the hidden tests was found for "
            + ", ".join(f"`{name}`" for name in missing)
            + ".",
            "",
        ]
    return out


def _example_lines(example: DocExample) -> int:
    return len(example.code.splitlines()) + 5  # heading, blank, fences, blank


def _example_heading(info: FunctionInfo, example: DocExample) -> str:
    """The line above an example; it starts with the function's name in backticks."""
    if not example.via:
        return f"`{info.qualname}` ({example.kind}, from {example.source}):"
    # Nothing outside the hidden tests calls it by name: the example shows the call that
    # reaches it, and says so.
    if not example.via_resolved:
        # Coverage saw the test run it; no resolved call says how `via` leads to it.
        return (
            f"`{info.qualname}` runs in this test, which calls `{example.via}` "
            f"({example.kind}, from {example.source}):"
        )
    return (
        f"`{info.qualname}` is reached through `{example.via}` "
        f"({example.kind}, from {example.source}):"
    )


def scrub_removed_code(text: str, removed_lines: list[str]) -> str:
    """Drop any line that quotes a removed line of code (the guard behind every source)."""
    needles = {line.strip() for line in removed_lines if len(line.strip()) >= _MIN_LEAK_CHARS}
    kept = [line for line in text.split("\n") if not any(n in line for n in needles)]
    return "\n".join(kept)


def leaks(text: str, removed_lines: list[str]) -> list[str]:
    needles = {line.strip() for line in removed_lines if len(line.strip()) >= _MIN_LEAK_CHARS}
    return sorted(n for n in needles if n in text)
