package ui

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// equityPoints is how many points of a stored equity curve the UI keeps;
// a chart is never wider than this.
const equityPoints = 1024

// readEquityFile reads a job's artifacts/equity.csv and downsamples it to
// equityPoints. A missing file is not an error: it returns nil, nil.
func readEquityFile(path string) ([]float64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open equity curve: %w", err)
	}
	defer f.Close()
	vals, err := parseEquityCSV(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return downsample(vals, equityPoints), nil
}

// parseEquityCSV reads the equity column of an equity.csv: a header naming
// at least the "equity" column (the engine writes time,equity,cash), then
// one row per point.
func parseEquityCSV(r io.Reader) ([]float64, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#' // the notice of a file cut at its cap
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("empty file: no header")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := -1
	for i, name := range header {
		if strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")) == "equity" {
			col = i
			break
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("header %q has no equity column", strings.Join(header, ","))
	}
	var vals []float64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return vals, nil
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", len(vals)+1, err)
		}
		line, _ := cr.FieldPos(0)
		if col >= len(rec) {
			return nil, fmt.Errorf("line %d: no equity field", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[col]), 64)
		if err != nil {
			return nil, fmt.Errorf("line %d field equity: %w", line, err)
		}
		vals = append(vals, v)
	}
}
