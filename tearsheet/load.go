package tearsheet

// Reading what a report is drawn from. This file is the seam between the
// reports and where stratbench keeps things: the job store (its reports,
// logs and folders) and the record files' names, places and formats. A
// move of the records out of artifacts/, or of the report types out of
// engine, changes this file and records.go, not the pages.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"stratbench/internal/nofollow"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/job"
	"stratbench/metrics"
	"stratbench/sweep"
)

// The record files by the names notes give them; job.OpenRecordIn knows
// where a job keeps them and how.
const (
	equityRecord = "equity.csv"
	tradesRecord = "trades.csv"
	ordersRecord = "orders.csv"
)

// Images embedded in a job's page: each at most maxImageBytes, all
// together at most maxImagesBytes; a larger one is linked.
const (
	maxImageBytes  = 2 << 20
	maxImagesBytes = 8 << 20
)

// openIn opens the regular file at the slash-separated path rel under dir,
// each folder on the way entered without following a link (nofollow).
func openIn(dir *nofollow.Dir, rel ...string) (*os.File, error) {
	parts := strings.Split(path.Join(rel...), "/")
	d := dir
	for _, p := range parts[:len(parts)-1] {
		sub, err := d.Sub(p)
		if d != dir {
			d.Close()
		}
		if err != nil {
			return nil, err
		}
		d = sub
	}
	if d != dir {
		defer d.Close()
	}
	return d.Open(parts[len(parts)-1])
}

// LoadJob reads job id of store: its report and what its folder holds. A
// record that cannot be read is a note on the page, not an error.
func LoadJob(ctx context.Context, store *job.Store, id string) (*Job, error) {
	dir, err := store.OpenJob(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	rep, err := job.ReadReport(dir, id)
	if err != nil {
		return nil, err
	}
	j := &Job{Report: rep}
	start := 0.0
	if rep.Metrics != nil {
		start = rep.Metrics.StartEquity
	} else {
		start = rep.Market.Cash
	}
	note := func(what string, err error) {
		if !errors.Is(err, os.ErrNotExist) {
			j.Notes = append(j.Notes, fmt.Sprintf("%s: %v", what, err))
		}
	}
	if f, err := store.OpenRecord(id, job.RecordEquity); err != nil {
		note(equityRecord, err)
	} else {
		j.Equity, err = ReadEquity(f, start)
		f.Close()
		if err != nil {
			note(equityRecord, err)
		}
	}
	if f, err := store.OpenRecord(id, job.RecordTrades); err != nil {
		note(tradesRecord, err)
	} else {
		j.Trades, err = ReadTrades(f)
		f.Close()
		if err != nil {
			note(tradesRecord, err)
		}
	}
	if f, err := store.OpenRecord(id, job.RecordOrders); err != nil {
		note(ordersRecord, err)
	} else {
		j.Fills, err = ReadFills(f)
		f.Close()
		if err != nil {
			note(ordersRecord, err)
		}
	}
	if j.MonteCarlo, err = store.LoadMonteCarlo(id); err != nil {
		note(job.MonteCarloFileName, err)
	}
	if err := loadLogs(ctx, store, id, j); err != nil {
		note("logs", err)
	}
	if err := loadArtifacts(dir, j); err != nil {
		note("artifacts", err)
	}
	return j, ctx.Err()
}

// loadLogs keeps the last maxLogLines lines of the job's log.
func loadLogs(ctx context.Context, store *job.Store, id string, j *Job) error {
	ring := make([]LogLine, 0, maxLogLines)
	next := 0
	err := store.Logs(ctx, id, nil, func(l job.LogLine) error {
		j.LogLines++
		line := LogLine{Time: l.Time, Stream: l.Stream, Line: l.Line}
		if len(line.Line) > 4096 {
			line.Line = line.Line[:4096] + " …"
		}
		if len(ring) < maxLogLines {
			ring = append(ring, line)
			return nil
		}
		ring[next] = line
		next = (next + 1) % maxLogLines
		return nil
	})
	j.Logs = append(ring[next:], ring[:next]...)
	return err
}

// loadArtifacts lists the records folder, then the artifacts folder, and
// embeds the artifacts' images. A job folder without a records folder is
// an older version's, which moved its records among the artifacts: there
// the files of the records' names are the records.
func loadArtifacts(dir *nofollow.Dir, j *Job) error {
	records, err := job.ListRecords(dir.Path())
	if err != nil {
		return err
	}
	for _, f := range records.Files {
		path := filepath.Join(records.Dir, f.Name)
		j.Artifacts = append(j.Artifacts, Artifact{Name: job.RecordsDir + "/" + f.Name, Bytes: f.Bytes, Record: true,
			Href: template.URL((&url.URL{Scheme: "file", Path: path}).String())})
	}
	_, statErr := os.Lstat(records.Dir)
	legacy := errors.Is(statErr, os.ErrNotExist)
	list, err := job.ListArtifacts(dir.Path())
	if err != nil {
		return err
	}
	j.ArtifactsUnlisted = list.Unlisted
	budget := int64(maxImagesBytes)
	for _, f := range list.Files {
		path := list.Path(f)
		a := Artifact{Name: f.Name, Bytes: f.Bytes, Href: template.URL((&url.URL{Scheme: "file", Path: path}).String())}
		switch f.Name {
		case equityRecord, tradesRecord, ordersRecord:
			a.Record = legacy
		}
		if mime := imageType(f.Name); mime != "" && !a.Record {
			switch {
			case f.Bytes > maxImageBytes:
				a.Note = "too large to embed"
			case f.Bytes > budget:
				a.Note = "not embedded: the report's images are at their cap"
			default:
				a.Image, a.Note = embedImage(dir, "artifacts/"+f.Name, mime)
				budget -= int64(len(a.Image))
			}
		}
		j.Artifacts = append(j.Artifacts, a)
	}
	return nil
}

// imageType is the MIME type of an image the page shows, by its name.
func imageType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".svg":
		return "image/svg+xml"
	}
	return ""
}

// embedImage reads the image at rel in the job folder dir (opened as
// openIn opens it) into a data: URI, when its content is the image its
// name says (an <img> never runs a script, an SVG's included).
func embedImage(dir *nofollow.Dir, rel, mime string) (uri template.URL, note string) {
	f, err := openIn(dir, rel)
	if err != nil {
		return "", "cannot be read"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err != nil || len(b) > maxImageBytes {
		return "", "cannot be read"
	}
	sniffed := http.DetectContentType(b)
	ok := sniffed == mime
	if mime == "image/svg+xml" {
		ok = strings.HasPrefix(sniffed, "text/xml") || strings.HasPrefix(sniffed, "text/plain")
	}
	if !ok {
		return "", "not the image its name says"
	}
	return template.URL("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)), ""
}

// LoadSweep reads sweep id of sweeps, and from the jobs of its runs what
// its page shows: the failed runs' messages, the best runs' equity curves,
// and a walk-forward's test windows.
func LoadSweep(ctx context.Context, sweeps *sweep.Store, jobs *job.Store, id string) (*Sweep, error) {
	doc, err := sweeps.Load(id)
	if err != nil {
		return nil, err
	}
	s := &Sweep{Doc: doc, Messages: map[string]string{}}
	s.Notes = append(s.Notes, badJobIDs(doc)...)
	read := 0
	for _, r := range doc.Runs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if r.Status != sweep.RunFailed || read >= maxMessagesRead || !job.IsJobID(r.JobID) {
			continue
		}
		read++
		if rep, err := jobs.Load(r.JobID); err == nil && rep.Failure != nil {
			s.Messages[r.JobID] = cutRunes(termtext.Line(rep.Failure.Message), maxMessage)
		}
	}
	// The job ids come from sweep.json, which names no path: an id that
	// is not a job id was counted above and is never opened (OpenJob
	// refuses it too), and a job folder is entered from the jobs folder
	// without following a link.
	curve := func(jobID string) (metrics.Curve, bool) {
		if !job.IsJobID(jobID) {
			return metrics.Curve{}, false
		}
		f, err := jobs.OpenRecord(jobID, job.RecordEquity)
		if err != nil {
			return metrics.Curve{}, false
		}
		defer f.Close()
		e, err := ReadEquity(f, 0)
		if err != nil || e.Curve.Len() == 0 {
			return metrics.Curve{}, false
		}
		return e.Curve, true
	}
	if wf := doc.WalkForward; wf != nil {
		for i, fold := range wf.Folds {
			if fold.JobID == nil || fold.OutOfSample == nil || string(fold.OutOfSample) == "null" {
				continue
			}
			if c, ok := curve(*fold.JobID); ok {
				s.Folds = append(s.Folds, FoldCurve{Fold: i, Curve: c})
			}
		}
		return s, nil
	}
	for _, r := range doc.Runs {
		if len(s.Best) == maxBestCurves {
			break
		}
		if r.Status != sweep.RunPassed {
			continue
		}
		if c, ok := curve(r.JobID); ok {
			s.Best = append(s.Best, RunCurve{Index: r.Index, Params: r.Params.String(), Curve: c})
		}
	}
	return s, nil
}

// badJobIDs says which job ids of the sweep's document (its runs' and a
// walk-forward's folds') are not job ids, so that their jobs are not read:
// one note, with the first of them quoted.
func badJobIDs(doc *sweep.Document) []string {
	n, first := 0, ""
	bad := func(what, id string) {
		if !job.IsJobID(id) {
			if n == 0 {
				first = what + "'s job id " + termtext.Quoted(id, 64)
			}
			n++
		}
	}
	for _, r := range doc.Runs {
		bad(fmt.Sprintf("run %d", r.Index), r.JobID)
	}
	if wf := doc.WalkForward; wf != nil {
		for i, f := range wf.Folds {
			if f.JobID != nil {
				bad(fmt.Sprintf("fold %d", i), *f.JobID)
			}
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s job ids in %s are not job ids (the first: %s): their jobs were not read (the file was edited, or is not this version's)",
		units.Count(n), sweep.DocumentFile, first)}
}

// cutRunes cuts s at n runes, marking the cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + " …"
		}
		i++
	}
	return s
}
