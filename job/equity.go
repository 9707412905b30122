package job

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"stratbench/internal/nofollow"
)

// Equity returns job id's equity curve, read from its equity record
// (OpenRecordIn: the backtest's record of the equity after every event),
// reduced to at most points values: the last value of each of points equal
// stretches of events, so that the curve keeps its end. It reads the
// record twice (to count, then to pick) and never holds more than points
// values, whatever its size. A job without the record has no curve: nil, nil.
func (s *Store) Equity(id string, points int) ([]float64, error) {
	dir, err := s.openJob(id)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	n := 0
	if err := readEquityRecord(dir, func(float64) { n++ }); err != nil || n == 0 || points <= 0 {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]float64, 0, min(n, points))
	i := 0
	err = readEquityRecord(dir, func(v float64) {
		// Value i ends stretch k when it is the last index below (k+1)·n/points.
		k := len(out)
		if k < points && i == max((k+1)*n/points, 1)-1 || points >= n {
			out = append(out, v)
		}
		i++
	})
	return out, err
}

// readEquityRecord calls fn for every equity value of the equity record of
// the job folder dir.
func readEquityRecord(dir *nofollow.Dir, fn func(float64)) error {
	f, err := OpenRecordIn(dir, RecordEquity)
	if err != nil {
		return fmt.Errorf("open equity curve: %w", err)
	}
	defer f.Close()
	if err := scanEquityCSV(f, fn); err != nil {
		return fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return nil
}

// parseEquityCSV returns every equity value of an equity.csv.
func parseEquityCSV(r io.Reader) ([]float64, error) {
	var vals []float64
	if err := scanEquityCSV(r, func(v float64) { vals = append(vals, v) }); err != nil {
		return nil, err
	}
	return vals, nil
}

// scanEquityCSV reads the equity column of an equity.csv: a header naming
// at least the "equity" column (the backtest writes event,time,equity,cash,symbol,close),
// then one row per point, and calls fn for each value. The notice of a file
// cut at its cap is a comment line.
func scanEquityCSV(r io.Reader, fn func(float64)) error {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return errors.New("empty file: no header")
	}
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	col := -1
	for i, name := range header {
		if strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")) == "equity" {
			col = i
			break
		}
	}
	if col < 0 {
		return fmt.Errorf("header %q has no equity column", strings.Join(header, ","))
	}
	for row := 1; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		line, _ := cr.FieldPos(0)
		if col >= len(rec) {
			return fmt.Errorf("line %d: no equity field", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[col]), 64)
		if err != nil {
			return fmt.Errorf("line %d field equity: %w", line, err)
		}
		fn(v)
	}
}
