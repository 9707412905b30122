// Command readbars replays bar data with package data the way a backtest
// driver does, and prints what it cost as one JSON object: the time to
// open the data (the checks and the scan before a run), the time to
// stream every bar, and the process's peak RSS. bench/data.py runs it.
//
//	readbars [-budget BYTES] [-from T] [-to T] [-lookahead N] PATH...
//
// Like stratbench, it runs with GOGC=50 unless GOGC is set.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"stratbench/data"
)

// result is what readbars prints.
type result struct {
	Bars      int64   `json:"bars"`
	Symbols   int     `json:"symbols"`
	Files     int     `json:"files"`
	Resident  bool    `json:"resident"`
	OpenS     float64 `json:"open_s"`
	StreamS   float64 `json:"stream_s"`
	DigestS   float64 `json:"digest_s"`
	TotalS    float64 `json:"total_s"`
	BarsPerS  float64 `json:"bars_per_s"`
	CPUS      float64 `json:"cpu_s"` // user and system time of the process, all goroutines
	PeakRSSKi int64   `json:"peak_rss_kib"`
	Checksum  float64 `json:"checksum"` // sum of the closes, so that nothing is optimised away
}

func main() {
	budget := flag.Int64("budget", 0, "decode budget in bytes (0: the default, negative: stream everything)")
	from := flag.String("from", "", "window start")
	to := flag.String("to", "", "window end")
	lookahead := flag.Int("lookahead", 1<<16, "bars asked for ahead of the replay")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	if err := run(flag.Args(), *budget, *from, *to, *lookahead); err != nil {
		fmt.Fprintln(os.Stderr, "readbars:", err)
		os.Exit(2)
	}
}

func run(paths []string, budget int64, from, to string, lookahead int) error {
	w, err := data.ParseWindow(from, to)
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := time.Now()
	set, err := data.Open(ctx, paths, data.Options{Window: w, Budget: budget})
	if err != nil {
		return err
	}
	defer set.Close()
	opened := time.Now()
	st, err := set.Stream(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var r result
	// A driver's loop: look ahead, take a batch, release what it replayed.
	pos, n := 0, st.Events()
	for pos < n {
		bars, first, err := st.Fill(pos + lookahead)
		if err != nil && first+bars.Len() <= pos {
			return err
		}
		end := min(first+bars.Len(), pos+4096)
		for i := pos - first; i < end-first; i++ {
			r.Checksum += bars.Close[i]
		}
		pos = end
		st.Release(pos)
	}
	streamed := time.Now()
	if _, err := set.Digest(ctx); err != nil {
		return err
	}
	done := time.Now()
	info := set.Info()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	r.Bars, r.Symbols, r.Files, r.Resident = info.Events, len(info.Symbols), info.Files, info.Resident
	r.OpenS = opened.Sub(start).Seconds()
	r.StreamS = streamed.Sub(opened).Seconds()
	r.DigestS = done.Sub(streamed).Seconds()
	r.TotalS = done.Sub(start).Seconds()
	r.BarsPerS = float64(r.Bars) / r.TotalS
	r.PeakRSSKi = ru.Maxrss
	r.CPUS = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return json.NewEncoder(os.Stdout).Encode(r)
}
