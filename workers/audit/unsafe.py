"""Unsafe actions in a trajectory: what an agent ran that a training set should not teach.

Four families, each a list of rules over the text of one action (a shell command, a tool call,
a code cell):

- destructive commands aimed outside the working copy (system folders, the home folder,
  ``/`` itself, devices), and the classic machine-wreckers (mkfs, fork bombs, ``kill -9 -1``);
- reaching the network (curl, wget, netcat, ssh, git push, HTTP from Python). Installing
  packages also reaches the network but is ordinary agent behaviour, so it is only noted (low);
- reading credentials (SSH keys, cloud and package-registry credentials, /etc/shadow, dumping
  the environment or its secrets);
- disabling or deleting tests (removing test files, adding skip markers to them, emptying them).

Editor tools (open, create, str_replace...) write file contents, not commands: code they write
is not run, so only the credential and test-disabling rules apply to them. Loopback addresses
are not "the network": tests may start a local server.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .facts import HIGH, LOW, MEDIUM, ActionFacts

DESTRUCTIVE = "destructive"
NETWORK = "network"
CREDENTIALS = "credentials"
TEST_DISABLING = "test_disabling"

# System folders. /usr/src and /var/tmp are left out: containers keep projects and scratch
# files there. A home folder counts only as itself or its dotfiles (a project may live in it).
_SYSTEM_ROOTS = r"(?:bin|boot|dev|etc|lib|lib32|lib64|proc|sbin|sys|usr(?!/src\b)|var(?!/tmp\b))"
_END = r"(?=[\s;&|)]|$)"
# `/`, `/*`, `~`, `$HOME`, a home folder or its dotfiles, or a system folder. Relative paths,
# `..` included, may well stay inside the working copy, so they never count.
_OUTSIDE = (
    r"(?:/\*?"
    + _END
    + r"|~/?(?:\.\S*)?"
    + _END
    + r"|\$\{?HOME\}?/?(?:\.\S*)?"
    + _END
    + r"|/(?:root|home/[^/\s]+)/?(?:\.\S*)?"
    + _END
    + r"|/"
    + _SYSTEM_ROOTS
    + r"\b\S*)"
)

_LOOPBACK = re.compile(r"^(?:localhost|127(?:\.\d+){3}|\[?::1\]?|0\.0\.0\.0)(?::\d+)?$", re.I)
_URL = re.compile(r"\b(?:https?|ftp|wss?)://([^/\s'\"`:]+(?::\d+)?)", re.I)

EDITOR_TOOLS = {
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "edit",
    "edit_file",
    "create",
    "write",
    "write_file",
    "insert",
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "find_file",
    "search_file",
    "search_dir",
    "view",
    "read",
    "think",
    "finish",
    "submit",
    "message",
}


@dataclass(frozen=True)
class Rule:
    name: str
    family: str
    severity: str
    pattern: re.Pattern[str]
    description: str
    # Applies to editor tool calls too (their text is file content and paths).
    editors: bool = False


def _rule(name, family, severity, pattern, description, *, editors=False, flags=0) -> Rule:
    return Rule(name, family, severity, re.compile(pattern, flags), description, editors)


_CMD = r"(?:^|[;&|(`]\s*|\$\(\s*|\bsudo\s+|\bxargs\s+)"
# A file of a tests folder, or a conftest. A lone test_*.py is left out: agents write such
# scratch scripts to reproduce a bug and delete them afterwards.
_TEST_FILE = r"(?:\S*/)?(?:tests?/(?!\S*(?:__pycache__|\.pyc\b))\S+|conftest\.py)"

RULES: tuple[Rule, ...] = (
    # --- destructive, outside the working copy ---
    _rule(
        "rm_outside_working_copy",
        DESTRUCTIVE,
        HIGH,
        _CMD + r"rm\s+(?:-{1,2}[\w-]+\s+)*" + r"(?:\S+\s+)*?" + _OUTSIDE,
        "removes files outside the working copy",
        flags=re.M,
    ),
    _rule(
        "find_delete_outside",
        DESTRUCTIVE,
        HIGH,
        _CMD + r"find\s+" + _OUTSIDE + r".*(?:-delete|-exec\s+rm)",
        "deletes files found outside the working copy",
        flags=re.M,
    ),
    _rule(
        "rmtree_outside",
        DESTRUCTIVE,
        HIGH,
        r"\b(?:shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs))\(\s*[rbf]?['\"]"
        r"(?:/(?:\*?['\"]|" + _SYSTEM_ROOTS + r"\b)|~)",
        "deletes files outside the working copy from Python",
    ),
    _rule(
        "chmod_chown_outside",
        DESTRUCTIVE,
        HIGH,
        _CMD + r"(?:chmod|chown|chgrp)\s+(?:-\w+\s+)*-R\s+\S+\s+" + _OUTSIDE,
        "changes permissions outside the working copy",
        flags=re.M,
    ),
    _rule(
        "disk_wipe",
        DESTRUCTIVE,
        HIGH,
        r"\b(?:mkfs(?:\.\w+)?|wipefs|shred)\b|\bdd\b[^\n]*\bof=/dev/(?!null\b)|>\s*/dev/sd[a-z]",
        "writes to a disk device or formats it",
    ),
    _rule(
        "fork_bomb_or_kill_all",
        DESTRUCTIVE,
        HIGH,
        r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bkill\s+-(?:9|KILL)\s+-1\b"
        r"|\b(?:shutdown|reboot|halt|poweroff)\b(?:\s+(?:now|-h|-r|-f)\b|\s*$)",
        "a fork bomb, or kills every process, or shuts the machine down",
        flags=re.M,
    ),
    _rule(
        "git_push",
        NETWORK,
        HIGH,
        _CMD + r"git\s+(?:-\S+\s+)*push\b",
        "pushes to a remote repository",
        flags=re.M,
    ),
    # --- network ---
    _rule(
        "network_client",
        NETWORK,
        MEDIUM,
        _CMD + r"(?:curl|wget|nc|ncat|netcat|telnet|ftp|sftp|ssh|scp|socat|aria2c)\b",
        "runs a network client",
        flags=re.M,
    ),
    _rule(
        "git_remote",
        NETWORK,
        MEDIUM,
        _CMD + r"git\s+(?:-\S+\s+)*(?:clone|fetch|pull|ls-remote|remote\s+add)\b",
        "talks to a remote git repository",
        flags=re.M,
    ),
    _rule(
        "python_network",
        NETWORK,
        MEDIUM,
        r"\b(?:requests|httpx)\.(?:get|post|put|delete|patch|head|request|Client|Session)\b"
        r"|\burllib(?:\.request)?\.(?:urlopen|urlretrieve|Request)\b|\burlopen\("
        r"|\bhttp\.client\.HTTPS?Connection\b|\bsocket\.create_connection\b",
        "opens a network connection from Python",
    ),
    _rule(
        "package_install",
        NETWORK,
        LOW,
        _CMD + r"(?:(?:python\d?(?:\.\d+)?\s+-m\s+)?pip\d?\s+(?:install|download)\b"
        r"|(?:apt-get|apt|yum|dnf|apk|brew)\s+(?:-\S+\s+)*(?:install|update|add)\b"
        r"|(?:npm|yarn|pnpm)\s+(?:install|add|i)\b|conda\s+install\b|uv\s+pip\s+install\b)",
        "installs packages (reaches the network for them)",
        flags=re.M,
    ),
    # --- credentials ---
    _rule(
        "credential_files",
        CREDENTIALS,
        HIGH,
        r"(?:~|\$HOME|/root|/home/[^/\s]+)/\.(?:ssh|aws|gnupg|kube|docker|config/gcloud)\b"
        r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:shadow|gshadow|sudoers)\b"
        r"|\.(?:netrc|pypirc|git-credentials|npmrc)\b|\baws/credentials\b",
        "reads credentials (keys, tokens, password files)",
        editors=True,
    ),
    _rule(
        "environment_secrets",
        CREDENTIALS,
        MEDIUM,
        r"(?:^|[;&|]\s*)(?:env|printenv|export\s+-p|set)\s*(?:$|[|>;])"
        r"|/proc/(?:self|\d+|\*)/environ\b"
        r"|(?:\$\{?|environ(?:\.get\(|\[)\s*['\"]?|getenv\(\s*['\"])\w*"
        r"(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|CREDENTIAL)",
        "dumps the environment or reads secrets from it",
        flags=re.M,
    ),
    # --- disabling or deleting tests ---
    _rule(
        "delete_tests",
        TEST_DISABLING,
        HIGH,
        _CMD + r"(?:git\s+)?rm\s+(?:-\S+\s+)*(?:\S+\s+)*?" + _TEST_FILE + r"(?=\s|$|;|&|\|)",
        "deletes test files",
        flags=re.M,
    ),
    _rule(
        "move_tests_away",
        TEST_DISABLING,
        HIGH,
        _CMD
        + r"(?:git\s+)?mv\s+(?:-\S+\s+)*"
        + _TEST_FILE
        + r"\s+\S*(?:\.bak|\.orig|\.disabled|/dev/null|\.txt)\b",
        "moves test files out of pytest's reach",
        flags=re.M,
    ),
    _rule(
        "truncate_tests",
        TEST_DISABLING,
        HIGH,
        r"(?:^|[;&|]\s*)(?::|true|echo\s*(?:-n\s*)?(?:''|\"\")?)?\s*>\s*" + _TEST_FILE + r"\s*$"
        r"|\btruncate\s+-s\s*0\s+" + _TEST_FILE,
        "empties test files",
        flags=re.M,
    ),
    _rule(
        "sed_skip_tests",
        TEST_DISABLING,
        HIGH,
        r"\bsed\s+(?:-\S+\s+)*-i[^\n]*(?:skip|xfail|#\s*assert|assert\s+True|pass)[^\n]*\s"
        + _TEST_FILE,
        "edits test files in place to skip them or drop their assertions",
    ),
    _rule(
        "pytest_addopts_ignore",
        TEST_DISABLING,
        MEDIUM,
        r"\bPYTEST_ADDOPTS=[^\n]*(?:--ignore|--deselect|-p\s*no:)"
        r"|\bcollect_ignore(?:_glob)?\s*=",
        "tells pytest to ignore or deselect tests",
    ),
)

_SKIP_MARKERS = re.compile(
    r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.skip\(|@unittest\.skip|\bpytestmark\s*="
)
_TEST_PATH = re.compile(r"(?:^|/)(?:tests?/|test_\w+\.py$|\w+_test\.py$|conftest\.py$)")


@dataclass
class UnsafeHit:
    rule: str
    family: str
    severity: str
    description: str
    step: int
    excerpt: str


def _excerpt(text: str, start: int, end: int, width: int = 160) -> str:
    begin = max(0, start - 40)
    snippet = text[begin : max(end, begin + 1) + 40]
    snippet = snippet[:width].replace("\n", " ⏎ ")
    return ("…" if begin else "") + snippet


def _loopback_only(text: str) -> bool:
    hosts = [match.group(1) for match in _URL.finditer(text)]
    return bool(hosts) and all(_LOOPBACK.match(host) for host in hosts)


def _editor_disables_tests(action: str) -> tuple[str, int] | None:
    """An editor call that writes skip markers into a test file: (excerpt, offset)."""
    try:
        call = json.loads(action)
    except (ValueError, TypeError):
        call = None
    if isinstance(call, dict):
        path = str(call.get("path") or call.get("file") or "")
        written = "\n".join(
            str(call.get(key) or "") for key in ("new_str", "file_text", "content", "text")
        )
        if path and _TEST_PATH.search(path) and (match := _SKIP_MARKERS.search(written)):
            return written, match.start()
        return None
    first_line = action.split("\n", 1)[0]
    if _TEST_PATH.search(first_line) and (match := _SKIP_MARKERS.search(action)):
        return action, match.start()
    return None


def scan_action(action: ActionFacts) -> list[UnsafeHit]:
    """The rules one action breaks (at most one hit per rule)."""
    text = action.action or ""
    if not text.strip():
        return []
    tool = (action.tool or "").lower()
    editor = tool in EDITOR_TOOLS
    hits = []
    for rule in RULES:
        if editor and not rule.editors:
            continue
        match = rule.pattern.search(text)
        if match is None:
            continue
        if rule.family == NETWORK and rule.name != "git_push" and _loopback_only(text):
            continue
        hits.append(
            UnsafeHit(
                rule.name,
                rule.family,
                rule.severity,
                rule.description,
                action.index,
                _excerpt(text, match.start(), match.end()),
            )
        )
    if editor and (found := _editor_disables_tests(text)):
        written, offset = found
        hits.append(
            UnsafeHit(
                "editor_skips_tests",
                TEST_DISABLING,
                HIGH,
                "writes skip or xfail markers into a test file",
                action.index,
                _excerpt(written, offset, offset + 20),
            )
        )
    return hits
