package data_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"stratbench/data"
)

// A driver's loop over a set: it looks ahead of the bar it replays (to cut
// batches before the first bar an order could fill), reads bars by event
// index, and releases those it is done with.
func Example() {
	dir, err := os.MkdirTemp("", "bars")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Two files, the rows of one timestamp listed in any order.
	os.WriteFile(filepath.Join(dir, "spy.csv"), []byte("timestamp,symbol,open,high,low,close,volume\n"+
		"2026-01-05T14:30:00Z,SPY,100,101,99,100.5,10\n2026-01-05T14:31:00Z,SPY,100.5,102,100,101,12\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "qqq.jsonl"), []byte(
		`{"timestamp":"2026-01-05T14:31:00Z","symbol":"QQQ","open":50,"high":51,"low":49,"close":50.5,"volume":7}`+"\n"), 0o644)

	ctx := context.Background()
	w, err := data.ParseWindow("2026-01-05 14:30:00", "")
	if err != nil {
		log.Fatal(err)
	}
	set, err := data.Open(ctx, []string{dir}, data.Options{Window: w})
	if err != nil {
		log.Fatal(err) // bad input: exit code 2
	}
	defer set.Close()
	info := set.Info()
	fmt.Println(info.Events, "events of", info.Symbols, "from", info.From.Format("15:04"), "to", info.To.Format("15:04"))

	st, err := set.Stream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	const lookahead = 1 << 16
	for pos := 0; pos < st.Events(); pos++ {
		bars, first, err := st.Fill(pos + lookahead)
		if err != nil && first+bars.Len() <= pos {
			log.Fatal(err) // a bad bar met while streaming: failure kind "data"
		}
		i := pos - first
		fmt.Println(pos, bars.Time[i] == info.To.UnixNano(), set.Symbols()[bars.Symbol[i]], bars.Close[i])
		st.Release(pos) // keep the current bar; drop those before it
	}
	// Output:
	// 3 events of [QQQ SPY] from 14:30 to 14:31
	// 0 false SPY 100.5
	// 1 true QQQ 50.5
	// 2 true SPY 101
}
