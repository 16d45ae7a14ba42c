"""A pre-started pytest interpreter, run in a run's jail before the run is known (warm.py).

PYTEST_DONT_REWRITE. Standalone (copied into the run's support folder and run by the
environment's interpreter): importing pytest is most of a small run's start, so it is done while
the worker still prepares the working copy (`warm_start.py READY_FD`: it writes a line to that
pipe once pytest is imported). Then it waits for one line on standard input, the
run's working folder and pytest's arguments as JSON, and becomes `python -m pytest ARGS` started
in that folder: same sys.path, standard input from /dev/null, fresh import caches.

When the working copy would shadow a module imported here (a repository that holds its own
`pytest`, `pluggy`...), `python -m pytest` would have imported the repository's copy: it exits
with SHADOWED_EXIT and says which, and the worker runs the tests cold instead.
"""

import importlib
import importlib.machinery
import json
import os
import runpy
import sys
import sysconfig

import pytest  # noqa: F401 - imported for its time, used by the run

SHADOWED_EXIT = 86
SHADOWED_MARKER = "specloom-warm-start-shadowed:"


def shadowed_module() -> str | None:
    """The first module imported so far that the current sys.path would now find elsewhere."""
    # Not "platstdlib": in a virtual environment that is the environment's lib/ folder, which
    # holds site-packages.
    standard = os.path.join(sysconfig.get_paths()["stdlib"], "")
    for name, module in sorted(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if "." in name or name == "__main__" or not origin or origin.startswith(standard):
            continue
        spec = importlib.machinery.PathFinder.find_spec(name, sys.path)
        if spec is None or spec.origin != origin:
            return name
    return None


def main() -> None:
    # The worker gives the working copy to the jail's user only once this says it is ready, so
    # nothing above was imported from a working copy half made.
    ready = int(sys.argv[1])
    os.write(ready, b"ready\n")
    os.close(ready)
    line = sys.stdin.buffer.readline()
    if not line:
        raise SystemExit(0)  # discarded unused
    order = json.loads(line)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.chdir(order["cwd"])
    # `python -m` puts the current folder first; a script's own folder would be there instead.
    sys.path[0] = os.getcwd()
    # Folders that did not exist (or were empty) at start are remembered as such.
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    shadowed = shadowed_module()
    if shadowed is not None:
        sys.stderr.write(f"{SHADOWED_MARKER} {shadowed}\n")
        raise SystemExit(SHADOWED_EXIT)
    # What `python -m pytest` runs, as it runs it (run_module sets argv[0] and __main__).
    sys.argv = ["-m", *order["args"]]
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
