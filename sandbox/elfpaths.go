package sandbox

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Interpreter returns the resolved path of exe's ELF interpreter (the dynamic
// loader, e.g. /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2), or "" for a
// statically linked executable. A file that is not ELF, such as a pyenv shim
// script, is an error: the sandbox must execute the real binary.
func Interpreter(exe string) (string, error) {
	f, err := openELF(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(prog.Open(), 4096))
		if err != nil {
			return "", fmt.Errorf("read ELF interpreter of %s: %w", exe, err)
		}
		interp := string(bytes.TrimRight(raw, "\x00"))
		if !filepath.IsAbs(interp) {
			return "", fmt.Errorf("ELF interpreter %q of %s is not an absolute path", interp, exe)
		}
		real, err := filepath.EvalSymlinks(interp)
		if err != nil {
			return "", fmt.Errorf("ELF interpreter of %s: %w", exe, err)
		}
		return real, nil
	}
	return "", nil
}

func openELF(exe string) (*elf.File, error) {
	f, err := elf.Open(exe)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s is not an ELF executable (a script or shim?): %w", exe, err)
		}
		return nil, fmt.Errorf("open executable: %w", err)
	}
	return f, nil
}

// SystemReadDirs returns the system folders, present on this machine, that a
// dynamically linked program reads at start-up or for common library calls:
// the shared-library folders, locales and time zones. /usr/lib and /lib are
// listed only where they hold the C library themselves (e.g. Arch Linux);
// elsewhere the multiarch or lib64 folders are narrower.
func SystemReadDirs() []string {
	var dirs []string
	add := func(path string) {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() && !slices.Contains(dirs, real) {
			dirs = append(dirs, real)
		}
	}
	for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"} {
		add(d)
	}
	for _, d := range []string{"/usr/lib", "/lib"} {
		if _, err := os.Stat(filepath.Join(d, "libc.so.6")); err == nil {
			add(d)
		}
	}
	for _, d := range []string{"/usr/lib/locale", "/usr/share/locale", "/usr/share/zoneinfo"} {
		add(d)
	}
	return dirs
}

// systemReadFiles returns the single system files, present on this machine,
// that a dynamically linked program reads: the loader's cache and the local
// time zone.
func systemReadFiles() []string {
	var files []string
	for _, f := range []string{"/etc/ld.so.cache", "/etc/localtime"} {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() && !slices.Contains(files, real) {
			files = append(files, real)
		}
	}
	return files
}

// runPathLibraries returns the shared libraries that exe needs and finds on
// its own DT_RUNPATH or DT_RPATH ($ORIGIN expanded), and theirs in turn,
// resolved. An interpreter built with a shared library next to it (pyenv's
// libpython) needs these; libraries from the system folders are not listed.
func runPathLibraries(exe string) ([]string, error) {
	var libs []string
	queue := []string{exe}
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		needed, dirs, err := dynamicDeps(file)
		if err != nil {
			return nil, err
		}
		for _, name := range needed {
			for _, dir := range dirs {
				real, err := filepath.EvalSymlinks(filepath.Join(dir, name))
				if err != nil {
					continue
				}
				if !slices.Contains(libs, real) {
					libs = append(libs, real)
					queue = append(queue, real)
				}
				break
			}
		}
	}
	return libs, nil
}

// dynamicDeps returns the DT_NEEDED names of an ELF file and the folders of
// its run path.
func dynamicDeps(file string) (needed, dirs []string, err error) {
	f, err := openELF(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if f.Section(".dynamic") == nil {
		return nil, nil, nil
	}
	needed, err = f.DynString(elf.DT_NEEDED)
	if err != nil {
		return nil, nil, fmt.Errorf("read DT_NEEDED of %s: %w", file, err)
	}
	paths, err := f.DynString(elf.DT_RUNPATH)
	if err == nil && len(paths) == 0 {
		paths, err = f.DynString(elf.DT_RPATH)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read run path of %s: %w", file, err)
	}
	origin := filepath.Dir(file)
	for _, list := range paths {
		for _, dir := range strings.Split(list, ":") {
			dir = strings.ReplaceAll(strings.ReplaceAll(dir, "${ORIGIN}", origin), "$ORIGIN", origin)
			if filepath.IsAbs(dir) {
				dirs = append(dirs, dir)
			}
		}
	}
	return needed, dirs, nil
}

// InterpreterPolicy returns a policy that lets the ELF executable exe start
// and read its own files in readDirs (for an interpreter, the folders of its
// standard library and installed packages). Folders of readDirs that do not
// exist are left out. The policy executes exe and its loader only, reads
// the system folders and files and exe's run-path libraries, writes
// /dev/null, has an empty environment and keeps stdio. The caller adds its
// own folders (the script's, the artifacts folder, a private temporary
// folder), environment and descriptors.
func InterpreterPolicy(exe string, readDirs []string) (Policy, error) {
	if !filepath.IsAbs(exe) {
		return Policy{}, fmt.Errorf("interpreter %q is not an absolute path", exe)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return Policy{}, fmt.Errorf("interpreter: %w", err)
	}
	loader, err := Interpreter(real)
	if err != nil {
		return Policy{}, err
	}
	libs, err := runPathLibraries(real)
	if err != nil {
		return Policy{}, err
	}
	p := Policy{
		ExecFiles:         []string{real},
		ReadFiles:         append(systemReadFiles(), libs...),
		WriteFiles:        []string{os.DevNull},
		AddressSpaceBytes: DefaultAddressSpaceBytes,
		OpenFiles:         DefaultOpenFiles,
		KeepFDs:           3,
	}
	if loader != "" {
		p.ExecFiles = append(p.ExecFiles, loader)
	}
	for _, d := range readDirs {
		if !filepath.IsAbs(d) {
			return Policy{}, fmt.Errorf("interpreter folder %q is not an absolute path", d)
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			p.ReadDirs = append(p.ReadDirs, d)
		}
	}
	p.ReadDirs = append(p.ReadDirs, SystemReadDirs()...)
	return p, nil
}
