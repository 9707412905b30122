// Package ray holds the end-to-end tests of the stratbench binary's sweeps
// on a real local Ray cluster (internal/raytest starts it and stops it):
// results equal to local ones, stops and resumes, lost templates and
// nodes, tampered packages, token authentication. They are a package of
// their own, apart from e2e, so that go test ./... runs them beside the
// other end-to-end tests where there are cores for both (see "Testing" in
// docs/ARCHITECTURE.md). Under -short they skip.
package ray
