#!/usr/bin/env bash
# Regenerates docs/workbench.svg, the README's picture of the workbench: a
# recorded real run (testdata/workbench/passed.json) drawn by the workbench's
# own View at 120x40 in the dark theme (ui/workbench/screenshot_test.go).
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./ui/workbench -run '^TestScreenshot$' -count=1 -screenshot
