"""The problem statement: markdown written from the specs, never from the removed code.

It says what to implement and where (module, function, signature), how it behaves (the
functional, interface and error-handling specs), shows examples taken from the tests, and lists
the constraints. A last pass drops any line that would quote a removed line of code verbatim.
"""

from __future__ import annotations

from workers.synthesis.examples import Example
from workers.synthesis.functions import FunctionInfo
from workers.synthesis.proposals import SpecProposal

# Removed lines this short ("return x", "else:") are too common to count as giving code away.
_MIN_LEAK_CHARS = 12
_MAX_EXAMPLES = 6


def task_title(functions: list[FunctionInfo]) -> str:
    names = [f"`{f.qualname}`" for f in functions]
    joined = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    modules = sorted({f.module for f in functions})
    where = modules[0] if len(modules) == 1 else f"{len(modules)} modules"
    return f"Implement {joined} in {where}"


def problem_statement(
    *,
    functions: list[FunctionInfo],
    specs: list[SpecProposal],
    examples: dict[str, list[Example]],
    relations: list[tuple[str, str]],  # (caller qualname, callee qualname) inside the cluster
    removed_lines: list[str],
) -> str:
    out: list[str] = [f"# {task_title(functions)}", ""]
    count = len(functions)
    out.append(
        f"The {count} functions below have lost their implementations: each body now raises "
        "`NotImplementedError`. Implement them so that every requirement in this statement "
        "holds. They are meant to work together"
        + (": " + "; ".join(f"`{a}` uses `{b}`" for a, b in relations) + "." if relations else ".")
    )
    out.append("")
    out.append("## Functions to implement")
    out.append("")
    for info in functions:
        out.append(f"### `{info.qualname}` in `{info.path}` (module `{info.module}`)")
        out.append("")
        out.append("```python")
        for decorator in info.decorators:
            out.append(f"@{decorator}")
        out.append(info.signature + ":")
        out.append("```")
        out.append("")
        if info.docstring:
            out.append("Its docstring (kept in the code) says:")
            out.append("")
            out.extend("> " + line if line.strip() else ">" for line in info.docstring.splitlines())
        else:
            out.append("It has no docstring; the requirements and examples below describe it.")
        out.append("")
    out.append("## Requirements")
    out.append("")
    for spec in specs:
        tested = "" if spec.verified_by else " *(not covered by the hidden tests)*"
        out.append(f"- **{spec.key}** ({spec.kind}): {spec.statement}{tested}")
    out.append("")
    shown = _examples_to_show(functions, examples, removed_lines)
    if shown:
        out.append("## Examples")
        out.append("")
        out.append("Taken from the tests that will check your work:")
        out.append("")
        for info, example in shown:
            through = f" (through `{example.via}`)" if example.via else ""
            out.append(f"`{info.qualname}`{through}:")
            out.append("")
            out.append("```python")
            out.extend(example.code.splitlines())
            out.append("```")
            out.append("")
    out.append("## Constraints")
    out.append("")
    out.append(
        "- Keep the signatures, decorators and docstrings as they are; write the bodies "
        "(private helpers may be added)."
    )
    out.append("- Do not change the existing tests; hidden tests will be added to check the work.")
    compatibility = [s for s in specs if s.kind == "compatibility"]
    for spec in compatibility:
        out.append(f"- {spec.statement} ({spec.key})")
    out.append("- Use only the standard library and the project's existing dependencies.")
    out.append("")
    return scrub_removed_code("\n".join(out), removed_lines)


def scrub_removed_code(text: str, removed_lines: list[str]) -> str:
    """Drop any line that quotes a removed line of code (the guard behind every source)."""
    needles = {line.strip() for line in removed_lines if len(line.strip()) >= _MIN_LEAK_CHARS}
    kept = [line for line in text.split("\n") if not any(n in line for n in needles)]
    return "\n".join(kept)


def leaks(text: str, removed_lines: list[str]) -> list[str]:
    needles = {line.strip() for line in removed_lines if len(line.strip()) >= _MIN_LEAK_CHARS}
    return sorted(n for n in needles if n in text)


def _examples_to_show(
    functions: list[FunctionInfo], examples: dict[str, list[Example]], removed_lines: list[str]
) -> list[tuple[FunctionInfo, Example]]:
    chosen: list[tuple[FunctionInfo, Example]] = []
    seen: set[str] = set()
    # Examples that call the function itself first, then those that reach it through a caller.
    for through_caller in (False, True):
        for info in functions:
            for example in examples.get(info.id, []):
                if bool(example.via) != through_caller or example.code in seen:
                    continue
                if leaks(example.code, removed_lines):
                    continue
                seen.add(example.code)
                chosen.append((info, example))
    return chosen[:_MAX_EXAMPLES]
