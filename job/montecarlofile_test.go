package job

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadMonteCarlo: none is nil; a kept result reads back, a figure that
// is not finite as null and then NaN; a file whose fan does not hold
// together, or a link, is refused naming the file.
func TestLoadMonteCarlo(t *testing.T) {
	store, id := recordJob(t, "artifacts", nil)
	if mc, err := store.LoadMonteCarlo(id); mc != nil || err != nil {
		t.Fatalf("none: %v, %v", mc, err)
	}
	path := filepath.Join(store.JobDir(id), MonteCarloFileName)
	mc := MonteCarlo{JobID: id, Method: "trades", Runs: 10, StartEquity: 1000, Sharpe: Percentiles{P5: Figure(math.Inf(1))},
		Fan: MonteCarloFan{Steps: []int{0, 5}, P5: []Figure{1, 1}, P25: []Figure{1, 1}, P50: []Figure{1, 1.1}, P75: []Figure{1, 1.2}, P95: []Figure{1, 1.3}}}
	b, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"sharpe":{"p5":null,`) {
		t.Fatalf("an infinite figure: %s", b)
	}
	os.WriteFile(path, b, 0o644)
	got, err := store.LoadMonteCarlo(id)
	if err != nil || got.Runs != 10 || !math.IsNaN(float64(got.Sharpe.P5)) || got.Fan.P95[1] != 1.3 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	mc.Fan.P95 = mc.Fan.P95[:1]
	b, _ = json.Marshal(mc)
	os.WriteFile(path, b, 0o644)
	if _, err := store.LoadMonteCarlo(id); err == nil || !strings.Contains(err.Error(), MonteCarloFileName) {
		t.Fatalf("a fan cut short: %v", err)
	}
	os.Remove(path)
	other := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(other, []byte("{}"), 0o644)
	os.Symlink(other, path)
	if _, err := store.LoadMonteCarlo(id); err == nil {
		t.Fatal("a link was followed")
	}
}
