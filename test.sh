#!/usr/bin/env bash
# Installs what the tests need and runs every test:
#
#   ./test.sh            # all tests (Go's test cache kept, for speed)
#   ./test.sh -count=1   # extra arguments go to `go test` (CI passes -count=1)
#
# The Python packages of testdata/requirements-test.txt (numpy, pandas,
# pyarrow, matplotlib, plotly, ray[default]) go into .venv-test/, a virtual
# environment of the system's python3 that the tests find by themselves
# (internal/testenv). It is created once and updated when the requirements
# change.
set -euo pipefail
cd "$(dirname "$0")"
venv=.venv-test
req=testdata/requirements-test.txt
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "test.sh: installing the test packages into $venv (once)" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$want" >"$stamp"
fi
# Tests that need the environment fail, rather than skip, when it is missing.
export STRATBENCH_TEST_VENV_REQUIRED=1
# The end-to-end packages start hundreds of real workers: on a loaded
# two-core machine they take longer than go test's default 10 minutes.
go test -timeout=30m "$@" ./...
