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
	"path/filepath"
	"strings"
	"syscall"

	"stratbench/internal/termtext"
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

// openRegular opens path without following a link or blocking on a FIFO,
// and refuses what is not a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// LoadJob reads job id of store: its report and what its folder holds. A
// record that cannot be read is a note on the page, not an error.
func LoadJob(ctx context.Context, store *job.Store, id string) (*Job, error) {
	rep, err := store.Load(id)
	if err != nil {
		return nil, err
	}
	dir := store.JobDir(id)
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
func loadArtifacts(dir string, j *Job) error {
	records, err := job.ListRecords(dir)
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
	list, err := job.ListArtifacts(dir)
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
				a.Image, a.Note = embedImage(path, mime)
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

// embedImage reads an image into a data: URI, when its content is the
// image its name says (an <img> never runs a script, an SVG's included).
func embedImage(path, mime string) (uri template.URL, note string) {
	f, err := openRegular(path)
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
	read := 0
	for _, r := range doc.Runs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if r.Status != sweep.RunFailed || read >= maxMessagesRead {
			continue
		}
		read++
		if rep, err := jobs.Load(r.JobID); err == nil && rep.Failure != nil {
			s.Messages[r.JobID] = termtext.Line(cut(rep.Failure.Message, maxMessage))
		}
	}
	curve := func(jobID string) (metrics.Curve, bool) {
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

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}
