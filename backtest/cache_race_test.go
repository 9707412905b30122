package backtest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The cache is used from several goroutines at once (the data loads while
// the interpreter is probed, and watch mode re-runs): run with -race.
func TestCacheConcurrentLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bars.csv")
	if err := os.WriteFile(path, []byte(oneSymbolCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCache(1 << 20)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if d, err := c.Load(path); err != nil || d.Info().Events != 5 {
					t.Errorf("load: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
