import pytest

from marktext import parse_blocks

GUIDE = """\
# Getting started

Install the *toolkit* and read the [guide](https://example.org/guide).

## Install

```sh
pip install marktext
```

## Usage & tips

- parse with `parse_blocks`
- render with **render**

> Note: output is escaped.

## Install

| Option | Default |
|:-------|--------:|
| width  | 72      |
"""


@pytest.fixture
def guide():
    return GUIDE


@pytest.fixture
def guide_blocks(guide):
    return parse_blocks(guide)


@pytest.fixture
def lorem():
    return (
        "Markup languages keep prose readable. Renderers turn them into HTML! "
        "Do slugs matter? They do, e.g. for anchors."
    )
