#!/usr/bin/env bash
# The Debian packages the sandbox and the browser tests need, installed when missing (as root,
# where apt-get exists). `make demo` and `make test` call it; elsewhere it says what is missing.
#   bubblewrap: the sandbox's jail; gcc: the sandbox compiles its launcher once;
#   git: repositories; chromium: the browser tests (make test only, with --browser);
#   python3-dev: Python.h of /usr/bin/python3, whose jailed builds compile extension modules.
set -euo pipefail
wanted=()
command -v bwrap >/dev/null || wanted+=(bubblewrap)
command -v cc >/dev/null || wanted+=(gcc libc6-dev)
command -v git >/dev/null || wanted+=(git)
if [ "${1:-}" = "--browser" ]; then
  command -v chromium >/dev/null || wanted+=(chromium)
fi
python3 -c 'import ensurepip' 2>/dev/null || wanted+=(python3-venv)
/usr/bin/python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
  wanted+=(python3-dev)
[ ${#wanted[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing system packages: ${wanted[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${wanted[@]}" >/dev/null
else
  echo "missing system packages (install them, e.g. apt-get install ${wanted[*]}): ${wanted[*]}" >&2
fi
