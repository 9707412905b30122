package job

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"stratbench/internal/nofollow"
)

// gz returns text as gzip members of at most chunk bytes each, as the
// engine writes a record.
func gz(text string, chunk int) []byte {
	var b bytes.Buffer
	for i := 0; i < len(text); i += chunk {
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text[i:min(i+chunk, len(text))]))
		zw.Close()
	}
	return b.Bytes()
}

func readRecord(t *testing.T, jobDir string, rec Record) (string, error) {
	t.Helper()
	dir, err := nofollow.Open(jobDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	f, err := OpenRecordIn(dir, rec)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// TestOpenRecordLayouts: the record of each layout a job folder may have
// is read as its CSV text; a strategy's file in artifacts/ is a record only
// in a folder without records/ (an older version's).
func TestOpenRecordLayouts(t *testing.T) {
	const text = "event,time,equity\n0,2026-01-05T00:00:00Z,100\n1,2026-01-05T00:01:00Z,101\n"
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"compressed", map[string][]byte{"records/equity.csv.gz": gz(text, 20), "artifacts/equity.csv": []byte("mine\n")}, text},
		{"plain in records", map[string][]byte{"records/equity.csv": []byte(text), "artifacts/equity.csv": []byte("mine\n")}, text},
		{"plain in artifacts", map[string][]byte{"artifacts/equity.csv": []byte(text)}, text},
		{"empty compressed", map[string][]byte{"records/equity.csv.gz": nil}, ""},
		{"none in records", map[string][]byte{"records/x": nil, "artifacts/equity.csv": []byte("mine\n")}, "ERR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "artifacts"), 0o755)
			for name, b := range tc.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), b, 0o644)
			}
			got, err := readRecord(t, dir, RecordEquity)
			if tc.want == "ERR" {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%q, %v; want not found", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestOpenRecordHostile: a record that is a link, a FIFO, not gzip, cut
// within a member, or a gzip bomb past MaxRecordText is an error naming
// the file, never followed, waited on or read without end.
func TestOpenRecordHostile(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, RecordsDir)
	os.MkdirAll(rec, 0o755)
	target := filepath.Join(t.TempDir(), "secret.csv.gz")
	os.WriteFile(target, gz("secret\n", 100), 0o644)
	os.Symlink(target, filepath.Join(rec, "equity.csv.gz"))
	if got, err := readRecord(t, dir, RecordEquity); !errors.Is(err, nofollow.ErrSymlink) {
		t.Errorf("a link: %q, %v", got, err)
	}
	if err := syscall.Mkfifo(filepath.Join(rec, "trades.csv.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := readRecord(t, dir, RecordTrades); !errors.Is(err, nofollow.ErrNotRegular) {
		t.Errorf("a FIFO: %q, %v", got, err)
	}
	whole := gz(strings.Repeat("1,2,3\n", 1000), 1<<20)
	os.WriteFile(filepath.Join(rec, "orders.csv.gz"), whole[:len(whole)-20], 0o644)
	if _, err := readRecord(t, dir, RecordOrders); err == nil || !strings.Contains(err.Error(), "orders.csv.gz: it ends within a compressed block") {
		t.Errorf("a cut member: %v", err)
	}
	os.WriteFile(filepath.Join(rec, "orders.csv.gz"), []byte("plain,text\n"), 0o644)
	if _, err := readRecord(t, dir, RecordOrders); err == nil || !strings.Contains(err.Error(), "orders.csv.gz") {
		t.Errorf("not gzip: %v", err)
	}
	// A bomb: a few hundred KiB that decompress past MaxRecordText.
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range MaxRecordText/len(zeros) + 2 {
		zw.Write(zeros)
	}
	zw.Close()
	os.WriteFile(filepath.Join(rec, "orders.csv.gz"), bomb.Bytes(), 0o644)
	if _, err := readRecord(t, dir, RecordOrders); !errors.Is(err, ErrRecordTooLarge) {
		t.Errorf("a bomb of %d bytes: %v", bomb.Len(), err)
	}
}

// FuzzOpenRecord: whatever a records file holds, reading it ends, within
// MaxRecordText, without a panic; the equity scan over it too.
func FuzzOpenRecord(f *testing.F) {
	f.Add(gz("event,time,equity\n0,t,1\n", 8))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte("equity\n1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, RecordsDir), 0o755)
		os.WriteFile(filepath.Join(dir, RecordsDir, RecordEquity.FileName()), b, 0o644)
		d, err := nofollow.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		n := 0
		readEquityRecord(d, func(float64) { n++ })
		text, _ := readRecord(t, dir, RecordEquity)
		if len(text) > MaxRecordText {
			t.Fatalf("%d bytes read", len(text))
		}
	})
}
