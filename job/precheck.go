package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"stratbench/contract"
	"stratbench/internal/atomicfile"
	"stratbench/internal/nofollow"
)

// Precheck records a passed precheck: a sandboxed backtest over a short
// window. It is keyed by the strategy's content, the exact --param arguments
// and the stratbench version; a change to any of them needs a new precheck.
type Precheck struct {
	Key            string    `json:"key"`
	StrategySHA256 string    `json:"strategy_sha256"`
	Params         []string  `json:"params"`
	Version        string    `json:"version"`
	Strategy       string    `json:"strategy"`
	JobID          string    `json:"job_id"`
	PassedAt       time.Time `json:"passed_at"`
	Data           string    `json:"data"`
	From           string    `json:"from"`
	To             string    `json:"to"`
	Events         int       `json:"events"`
}

// PrecheckKey returns the key of a precheck of the strategy whose content
// has the SHA-256 strategySHA (hex, as the report's strategy.sha256 and
// SourceSHA256 write it) with params (the --param arguments exactly as
// given, in order) under version.
func PrecheckKey(strategySHA string, params []string, version string) string {
	h := sha256.New()
	fmt.Fprintf(h, "stratbench precheck v1\nstrategy %s\nversion %s\nparams %d\n%s", strategySHA, version, len(params), strings.Join(params, "\x00"))
	return hex.EncodeToString(h.Sum(nil))
}

// SourceSHA256 returns the hex SHA-256 of a strategy's content, as the
// report's strategy.sha256 carries it.
func SourceSHA256(source []byte) string {
	sum := sha256.Sum256(source)
	return hex.EncodeToString(sum[:])
}

func (s *Store) precheckPath(key string) string {
	return filepath.Join(s.home, "prechecks", key+".json")
}

// maxPrecheckFile bounds what is read of a precheck record (a few hundred
// bytes).
const maxPrecheckFile = 1 << 20

// LoadPrecheck returns the recorded pass for key, or nil when there is none.
// The record is read without following a link (the prechecks folder's
// included) and only when it is a regular file: a link, a FIFO or a file
// too large to be a record is no pass, and the script is checked again.
func (s *Store) LoadPrecheck(key string) (*Precheck, error) {
	dir, err := nofollow.Open(filepath.Join(s.home, "prechecks"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read precheck: %w", err)
	}
	defer dir.Close()
	data, err := dir.ReadFile(key+".json", maxPrecheckFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, nofollow.ErrSymlink) || errors.Is(err, nofollow.ErrNotRegular) ||
		errors.Is(err, nofollow.ErrTooLarge) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read precheck: %w", err)
	}
	var p Precheck
	if err := json.Unmarshal(data, &p); err != nil || p.Key != key {
		// A damaged record is no pass: the script gets checked again.
		return nil, nil
	}
	return &p, nil
}

// SavePrecheck records a pass.
func (s *Store) SavePrecheck(p *Precheck) error {
	if err := os.MkdirAll(filepath.Join(s.home, "prechecks"), 0o755); err != nil {
		return fmt.Errorf("save precheck: %w", err)
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("save precheck: %w", err)
	}
	return atomicfile.WriteFile(s.precheckPath(p.Key), append(data, '\n'), 0o644, atomicfile.Durable)
}

// PrecheckStatus is the verdict of a precheck.
type PrecheckStatus string

// Precheck statuses.
const (
	PrecheckPassed  PrecheckStatus = "passed"
	PrecheckAlready PrecheckStatus = "already_checked"
	PrecheckFailed  PrecheckStatus = "failed"
	PrecheckStopped PrecheckStatus = "stopped"
)

// PrecheckResult is the outcome of a precheck: its status, the record of
// the pass (a new one, or the earlier one it found), and the run's report.
type PrecheckResult struct {
	Status PrecheckStatus `json:"status"`
	Record *Precheck      `json:"record"`
	Report *Report        `json:"report"`
}

// RecordPrecheck turns the report of a precheck run into its result, and
// records a pass. The pass is keyed by the content that run read (the
// report's strategy.sha256, not a later read of the file), params and
// version.
func (s *Store) RecordPrecheck(params []string, version string, data contract.DataInfo, rep *Report) (PrecheckResult, error) {
	res := PrecheckResult{Status: PrecheckFailed, Report: rep}
	key := PrecheckKey(rep.Strategy.SHA256, params, version)
	switch rep.Status {
	case StatusStopped:
		res.Status = PrecheckStopped
	case StatusPassed:
		res.Status = PrecheckPassed
		res.Record = &Precheck{Key: key, StrategySHA256: rep.Strategy.SHA256, Params: append([]string{}, params...),
			Version: version, Strategy: rep.Strategy.Path, JobID: rep.JobID, PassedAt: time.Now().UTC(),
			Data: data.Source, From: data.From, To: data.To, Events: data.Events}
		if err := s.SavePrecheck(res.Record); err != nil {
			return res, err
		}
	}
	return res, nil
}
