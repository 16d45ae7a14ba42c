"""The README stands alone: it links nothing outside the repository and documents every
setting the code reads from the environment (issue 15)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_it_links_nothing_outside_the_repository():
    assert "../" not in README
    for target in re.findall(r"\]\(([^)#]+)\)", README):
        if target.startswith(("http://", "https://")):
            continue
        assert (ROOT / target).exists(), target


def test_it_documents_every_environment_variable_the_code_reads():
    settings = (ROOT / "specloom" / "settings.py").read_text()
    names = set(re.findall(r'env_[a-z]+\("([A-Z_]+)"', settings))
    for command in (ROOT / "curation" / "management" / "commands").glob("*.py"):
        names |= set(re.findall(r'environ\.get\("(SPECLOOM_[A-Z_]+)"', command.read_text()))
    assert {"SPECLOOM_PORT", "SPECLOOM_LLM_BASE_URL", "SPECLOOM_DEBUG"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in README)
    assert missing == []


def test_the_architecture_page_is_in_the_repository():
    assert "(docs/architecture.md)" in README
    assert "## The pipeline" in (ROOT / "docs" / "architecture.md").read_text()
