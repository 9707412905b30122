package main

import (
	"os"
	"strings"
	"testing"

	"stratbench/internal/browsertest"
)

// TestAttack3Probe loads each report named in $ATTACK3_REPORTS (comma
// separated) in headless Chromium and reports console errors, requests,
// and whether an injected script ran. A probe for the attack session, not
// a test of the suite: it skips without the variable.
func TestAttack3Probe(t *testing.T) {
	list := os.Getenv("ATTACK3_REPORTS")
	if list == "" {
		t.Skip("ATTACK3_REPORTS not set")
	}
	b := browsertest.Start(t)
	for _, path := range strings.Split(list, ",") {
		p := openReport(t, b, path, nil, "")
		t.Logf("%s: title=%q pwned=%q drawn=%q", path,
			evalString(t, p, `document.title`),
			evalString(t, p, `String(window.__pwned)`),
			evalString(t, p, `String(document.body.dataset.drawn)`))
	}
}
