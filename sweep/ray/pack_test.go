package ray

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// amd64Binary is a small file that passes for a linux/amd64 executable
// (an ELF header), so that packaging tests do not compress megabytes.
func amd64Binary(t *testing.T) string {
	t.Helper()
	return fakeELF(t, elf.ELFCLASS64, elf.EM_X86_64, elf.ELFOSABI_NONE, elf.ET_EXEC)
}

// selfBinary is a real linux/amd64 ELF executable: the test binary, which
// runs on the nodes as a helper.
func selfBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// strategyFolder makes a strategy folder with what a real one holds,
// caches and version control included.
func strategyFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mystrategy")
	writeFile(t, filepath.Join(dir, "strategy.py"), "def on_data(ctx, bars):\n    pass\n", 0o644)
	writeFile(t, filepath.Join(dir, "helpers", "signals.py"), "FAST = 10\n", 0o644)
	writeFile(t, filepath.Join(dir, "tools", "prep.sh"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n", 0o644)
	writeFile(t, filepath.Join(dir, "__pycache__", "strategy.cpython-311.pyc"), "\x00", 0o644)
	writeFile(t, filepath.Join(dir, "helpers", "old.pyc"), "\x00", 0o644)
	writeFile(t, filepath.Join(dir, ".venv", "bin", "python"), "#!", 0o755)
	return dir
}

func dataFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bars.csv")
	writeFile(t, p, "time,symbol,open,high,low,close,volume\n2026-01-05T00:00:00Z,BTC,1,2,0.5,1.5,10\n", 0o644)
	return p
}

func readZip(t *testing.T, path string) (names []string, files map[string]*zip.File) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	files = map[string]*zip.File{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		files[f.Name] = f
	}
	return names, files
}

func content(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPackageLayout(t *testing.T) {
	bin := amd64Binary(t)
	strategy := strategyFolder(t)
	data := dataFile(t)
	pkg, err := BuildPackage(context.Background(), PackageSpec{Binary: bin, Strategy: strategy, Data: []string{data}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(pkg.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if hex.EncodeToString(sum[:]) != pkg.SHA256 || int64(len(raw)) != pkg.Size {
		t.Fatalf("package %+v: its SHA256 or size is not that of its file", pkg)
	}
	if want := PackageURI("gcs://_ray_pkg_" + pkg.SHA256 + ".zip"); pkg.URI != want || filepath.Base(pkg.Path) != strings.TrimPrefix(string(want), "gcs://") {
		t.Fatalf("URI %s, path %s: want %s", pkg.URI, pkg.Path, want)
	}

	names, files := readZip(t, pkg.Path)
	want := []string{"data/bars.csv", "stratbench", "strategy/helpers/signals.py", "strategy/strategy.py", "strategy/tools/prep.sh", PackageManifest}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("entries %q, want %q (sorted, caches and version control left out, the manifest last)", names, want)
	}
	for name, wantMode := range map[string]os.FileMode{"stratbench": 0o755, "strategy/tools/prep.sh": 0o755, "strategy/strategy.py": 0o644, PackageManifest: 0o644} {
		if got := files[name].Mode().Perm(); got != wantMode {
			t.Errorf("%s: mode %v, want %v", name, got, wantMode)
		}
		if !files[name].Modified.Equal(packageTime) {
			t.Errorf("%s: modified %v, want the fixed %v", name, files[name].Modified, packageTime)
		}
	}
	self, _ := os.ReadFile(bin)
	if !bytes.Equal(content(t, files["stratbench"]), self) {
		t.Error("the packaged binary differs from the binary")
	}

	var man Manifest
	if err := json.Unmarshal(content(t, files[PackageManifest]), &man); err != nil {
		t.Fatal(err)
	}
	if man.Format != PackageFormat || man.Binary != "stratbench" || man.Strategy != "strategy" || strings.Join(man.Data, ",") != "data/bars.csv" {
		t.Errorf("manifest %+v", man)
	}
	if len(man.Files) != len(want)-1 {
		t.Fatalf("manifest lists %d files, want %d", len(man.Files), len(want)-1)
	}
	for _, e := range man.Files {
		b := content(t, files[e.Path])
		s := sha256.Sum256(b)
		if e.SHA256 != hex.EncodeToString(s[:]) || e.Size != int64(len(b)) || e.Exec != (files[e.Path].Mode().Perm() == 0o755) {
			t.Errorf("manifest entry %+v does not match the file", e)
		}
	}
	if !sort.SliceIsSorted(man.Files, func(i, j int) bool { return man.Files[i].Path < man.Files[j].Path }) {
		t.Error("manifest files not sorted")
	}
}

// TestPackageDeterministic: the same inputs give the same bytes, whatever
// the files' times or the folder written to; any change of content gives
// another package.
func TestPackageDeterministic(t *testing.T) {
	ctx := context.Background()
	bin := amd64Binary(t)
	strategy := strategyFolder(t)
	data := dataFile(t)
	spec := PackageSpec{Binary: bin, Strategy: strategy, Data: []string{data}}
	a, err := BuildPackage(ctx, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	for _, p := range []string{filepath.Join(strategy, "strategy.py"), data} {
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	}
	b, err := BuildPackage(ctx, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if a.URI != b.URI || a.Size != b.Size {
		t.Fatalf("same inputs, other times: %s (%d bytes) then %s (%d bytes)", a.URI, a.Size, b.URI, b.Size)
	}
	writeFile(t, filepath.Join(strategy, "strategy.py"), "def on_data(ctx, bars):\n    return\n", 0o644)
	c, err := BuildPackage(ctx, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if c.URI == a.URI {
		t.Fatal("a changed strategy gave the same package")
	}
	if err := os.Chmod(filepath.Join(strategy, "strategy.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := BuildPackage(ctx, spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if d.URI == c.URI {
		t.Fatal("a file made executable gave the same package")
	}
}

func TestPackageDataFolderAndNodeData(t *testing.T) {
	bars := filepath.Join(t.TempDir(), "bars")
	writeFile(t, filepath.Join(bars, "2026", "jan.csv"), "a\n", 0o644)
	writeFile(t, filepath.Join(bars, "2026", "feb.parquet"), "b\n", 0o644)
	pkg, err := BuildPackage(context.Background(), PackageSpec{
		Binary: amd64Binary(t), Strategy: strategyFolder(t),
		Data: []string{bars}, NodeData: []string{"/mnt/shared/ticks"},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	names, _ := readZip(t, pkg.Path)
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "data/bars/2026/feb.parquet data/bars/2026/jan.csv") {
		t.Errorf("entries %q: want the data folder under data/bars/", names)
	}
	if strings.Join(pkg.Manifest.Data, ",") != "data/bars" || strings.Join(pkg.Manifest.NodeData, ",") != "/mnt/shared/ticks" {
		t.Errorf("manifest data %q, node data %q", pkg.Manifest.Data, pkg.Manifest.NodeData)
	}
	_, err = BuildPackage(context.Background(), PackageSpec{Binary: amd64Binary(t), Strategy: strategyFolder(t), NodeData: []string{"relative/ticks"}}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("relative node data: %v", err)
	}
}

func TestPackageRefusals(t *testing.T) {
	ctx := context.Background()
	bin := amd64Binary(t)
	for _, tc := range []struct {
		name  string
		setup func(strategy string) PackageSpec
		says  string
	}{
		{"symlink to a folder", func(s string) PackageSpec {
			if err := os.Symlink(t.TempDir(), filepath.Join(s, "lib")); err != nil {
				t.Fatal(err)
			}
			return PackageSpec{Binary: bin, Strategy: s}
		}, "lib is a symlink to a folder"},
		{"dangling symlink", func(s string) PackageSpec {
			if err := os.Symlink("/nonexistent/x", filepath.Join(s, "gone.py")); err != nil {
				t.Fatal(err)
			}
			return PackageSpec{Binary: bin, Strategy: s}
		}, "gone.py is a dangling symlink"},
		{"fifo", func(s string) PackageSpec {
			if err := syscall.Mkfifo(filepath.Join(s, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			return PackageSpec{Binary: bin, Strategy: s}
		}, "pipe is a special file"},
		{"backslash", func(s string) PackageSpec {
			writeFile(t, filepath.Join(s, `win\path.py`), "", 0o644)
			return PackageSpec{Binary: bin, Strategy: s}
		}, "a backslash in the name"},
		{"two data with one name", func(s string) PackageSpec {
			a, b := filepath.Join(t.TempDir(), "bars.csv"), filepath.Join(t.TempDir(), "bars.csv")
			writeFile(t, a, "a", 0o644)
			writeFile(t, b, "b", 0o644)
			return PackageSpec{Binary: bin, Strategy: s, Data: []string{a, b}}
		}, `the same name "bars.csv"`},
		{"missing data", func(s string) PackageSpec {
			return PackageSpec{Binary: bin, Strategy: s, Data: []string{"/nonexistent/bars.csv"}}
		}, "/nonexistent/bars.csv"},
		{"strategy is a file", func(s string) PackageSpec {
			return PackageSpec{Binary: bin, Strategy: filepath.Join(s, "strategy.py")}
		}, "is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := BuildPackage(ctx, tc.setup(strategyFolder(t)), out)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("BuildPackage = %v, want an error saying %q", err, tc.says)
			}
			if left, _ := os.ReadDir(out); len(left) != 0 {
				t.Errorf("files left in the package folder: %v", left)
			}
		})
	}
}

// TestPackageSymlinkedFile: a symlink to a file is packaged as the file.
func TestPackageSymlinkedFile(t *testing.T) {
	s := strategyFolder(t)
	target := filepath.Join(t.TempDir(), "shared.py")
	writeFile(t, target, "SHARED = 1\n", 0o644)
	if err := os.Symlink(target, filepath.Join(s, "shared.py")); err != nil {
		t.Fatal(err)
	}
	pkg, err := BuildPackage(context.Background(), PackageSpec{Binary: amd64Binary(t), Strategy: s}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, files := readZip(t, pkg.Path)
	f := files["strategy/shared.py"]
	if f == nil || string(content(t, f)) != "SHARED = 1\n" || f.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("strategy/shared.py: %v", f)
	}
}

// TestPackageTooLarge: over the limit, the build stops with the sizes that
// explain it, and leaves nothing behind. (A small limit here; the real one
// below.)
func TestPackageTooLarge(t *testing.T) {
	const limit = 1 << 20
	big := randomFile(t, "ticks.bin", limit+(1<<20))
	out := t.TempDir()
	_, err := buildPackage(context.Background(), PackageSpec{Binary: amd64Binary(t), Strategy: strategyFolder(t), Data: []string{big}}, out, limit)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("buildPackage = %v, want a TooLargeError", err)
	}
	if tl.DataBytes != limit+(1<<20) || len(tl.Largest) == 0 || tl.Largest[0].Path != "data/ticks.bin" || tl.Size <= limit {
		t.Errorf("TooLargeError %+v", tl)
	}
	for _, want := range []string{"over the 1.0 MiB Ray accepts in one upload", "the data is 2.0 MiB", "data/ticks.bin 2.0 MiB", "a path every node can read"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("files left in the package folder: %v", left)
	}
}

// TestPackageOverRayLimit: the same at Ray's limit.
func TestPackageOverRayLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and compresses 101 MiB")
	}
	big := randomFile(t, "ticks.bin", MaxPackageBytes+(1<<20))
	_, err := BuildPackage(context.Background(), PackageSpec{Binary: amd64Binary(t), Strategy: strategyFolder(t), Data: []string{big}}, t.TempDir())
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size <= MaxPackageBytes || !strings.Contains(err.Error(), "over the 100.0 MiB Ray accepts in one upload; the data is 101.0 MiB") {
		t.Fatalf("BuildPackage = %v, want a TooLargeError at 100 MiB", err)
	}
}

// randomFile writes size random bytes, which do not compress: a zip grows
// as they do.
func randomFile(t *testing.T, name string, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeELF writes the 64-byte header of an ELF file, enough for debug/elf.
func fakeELF(t *testing.T, class elf.Class, machine elf.Machine, osabi elf.OSABI, typ elf.Type) string {
	t.Helper()
	h := elf.Header64{
		Type: uint16(typ), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT),
		Ehsize: 64, Phentsize: 56, Shentsize: 64,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(class)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h.Ident[elf.EI_OSABI] = byte(osabi)
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "stratbench")
	writeFile(t, p, b.String(), 0o755)
	return p
}

func TestCheckExecutable(t *testing.T) {
	exe, err := CheckExecutable(selfBinary(t))
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	t.Logf("the test binary's interpreter: %q", exe.Interpreter)
	if _, err := CheckExecutable(fakeELF(t, elf.ELFCLASS64, elf.EM_X86_64, elf.ELFOSABI_NONE, elf.ET_DYN)); err != nil {
		t.Errorf("a linux/amd64 PIE: %v", err)
	}
	script := filepath.Join(t.TempDir(), "stratbench")
	writeFile(t, script, "#!/bin/sh\necho hi\n", 0o755)
	for _, tc := range []struct {
		path, says string
	}{
		{script, "not an ELF file (a macOS or Windows build?)"},
		{fakeELF(t, elf.ELFCLASS64, elf.EM_AARCH64, elf.ELFOSABI_NONE, elf.ET_EXEC), "an ELF for arm64"},
		{fakeELF(t, elf.ELFCLASS64, elf.EM_X86_64, elf.ELFOSABI_FREEBSD, elf.ET_EXEC), "an ELF for ELFOSABI_FREEBSD"},
		{fakeELF(t, elf.ELFCLASS64, elf.EM_X86_64, elf.ELFOSABI_NONE, elf.ET_REL), "not an executable"},
	} {
		_, err := CheckExecutable(tc.path)
		var ee *ExecutableError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "GOOS=linux GOARCH=amd64") {
			t.Errorf("CheckExecutable: %v, want an ExecutableError saying %q", err, tc.says)
		}
	}
	if _, err := BuildPackage(context.Background(), PackageSpec{Binary: script, Strategy: strategyFolder(t)}, t.TempDir()); err == nil {
		t.Error("BuildPackage packaged a shell script as stratbench's binary")
	}
}
