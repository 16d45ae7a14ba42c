#!/usr/bin/env bash
# The long schemathesis run: every check (`--checks all`) over every operation of the API's own
# OpenAPI schema, against a running server, with at least FUZZ_EXAMPLES cases per operation
# (default 300: over 10,000 cases in all). CI runs the short version in process
# (tests/curation/api/test_schemathesis.py); this one is for before a release, or after a
# change to the API.
#
#   SPECLOOM_URL=http://127.0.0.1:8000 SPECLOOM_TOKEN=sl_... scripts/fuzz_api.sh
#
# SPECLOOM_TOKEN: a curator's token with the read, write and release scopes (make one at
# /tokens/). Start the server with SPECLOOM_API_FAILED_AUTH_LIMIT=1000000000: the auth checks
# send thousands of invalid tokens from this one address, which the failed-token limit would
# otherwise answer with 429 rather than the 401 the checks look for. Run it against a database
# you can throw away: it creates tasks, releases, trajectories and jobs.
# The summary (cases, failures) is printed at the end and kept with the JUnit report in
# FUZZ_REPORT_DIR (default var/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

url="${SPECLOOM_URL:?set SPECLOOM_URL, e.g. http://127.0.0.1:8000}"
token="${SPECLOOM_TOKEN:?set SPECLOOM_TOKEN to a curator token with read, write and release}"
examples="${FUZZ_EXAMPLES:-300}"
report_dir="${FUZZ_REPORT_DIR:-var/fuzz}"
st="${ST:-$(command -v st || echo .venv/bin/st)}"
mkdir -p "$report_dir"

# The schema needs a role like every endpoint: fetch it with the token, then test from the file.
curl -fsS -H "Authorization: Bearer $token" -H "Accept: application/json" \
  "$url/api/schema/" -o "$report_dir/schema.json"

set +e
"$st" --config-file schemathesis.toml run "$report_dir/schema.json" \
  --url "$url" \
  --header "Authorization: Bearer $token" \
  --max-examples "$examples" \
  --phases examples,coverage,fuzzing,stateful \
  --seed "${FUZZ_SEED:-20261203}" \
  --workers "${FUZZ_WORKERS:-2}" \
  --request-timeout 60 \
  --generation-database none \
  --report junit,ndjson \
  --report-dir "$report_dir" \
  --no-color 2>&1 | tee "$report_dir/output.txt"
status=${PIPESTATUS[0]}
set -e
echo "schemathesis exited with $status; output and reports in $report_dir"
exit "$status"
