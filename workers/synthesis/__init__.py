"""Task synthesis: turn a repository snapshot into tasks made of interdependent specifications.

`synthesize_procedural` needs no model (see procedural.py); the llm engine returns the same
proposal types. Both are plain Python: no Django, no project apps.
"""

from workers.synthesis.procedural import ProceduralSettings, synthesize_procedural
from workers.synthesis.proposals import (
    DependencyProposal,
    Difficulty,
    ReferencePart,
    Rejection,
    SpecProposal,
    SynthesisOutcome,
    TaskProposal,
)

__all__ = [
    "DependencyProposal",
    "Difficulty",
    "ProceduralSettings",
    "ReferencePart",
    "Rejection",
    "SpecProposal",
    "SynthesisOutcome",
    "TaskProposal",
    "synthesize_procedural",
]
