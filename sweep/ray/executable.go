package ray

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
)

// ExecutableError: the file that would be sent to the cluster as
// stratbench's binary is not one the nodes can run.
type ExecutableError struct {
	Path string
	Got  string // what the file is, e.g. "an ELF for arm64", "not an ELF file"
}

func (e *ExecutableError) Error() string {
	return fmt.Sprintf("ray: %s is %s, but the cluster's nodes run Linux on x86-64: run the sweep from a linux/amd64 build of stratbench (GOOS=linux GOARCH=amd64 go build)",
		e.Path, e.Got)
}

// Executable describes a binary that passed CheckExecutable.
type Executable struct {
	Path string
	// Interpreter is the dynamic loader the binary names (PT_INTERP), empty
	// for a static binary. A dynamic binary needs a compatible C library on
	// every node.
	Interpreter string
}

// CheckExecutable says whether the file at path is an executable the
// cluster's nodes can run: a 64-bit little-endian ELF executable (or
// position-independent executable) for x86-64, with the System V or Linux
// ABI.
func CheckExecutable(path string) (Executable, error) {
	f, err := os.Open(path)
	if err != nil {
		return Executable{}, fmt.Errorf("ray: stratbench's binary: %w", err)
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Executable{}, &ExecutableError{Path: path, Got: "not an ELF file (a macOS or Windows build?)"}
		}
		return Executable{}, fmt.Errorf("ray: stratbench's binary %s: %w", path, err)
	}
	defer ef.Close()
	switch {
	case ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64:
		return Executable{}, &ExecutableError{Path: path, Got: fmt.Sprintf("an ELF for %s (%s)", machineName(ef.Machine), ef.Class)}
	case ef.Data != elf.ELFDATA2LSB:
		return Executable{}, &ExecutableError{Path: path, Got: "a big-endian ELF"}
	case ef.OSABI != elf.ELFOSABI_NONE && ef.OSABI != elf.ELFOSABI_LINUX:
		return Executable{}, &ExecutableError{Path: path, Got: fmt.Sprintf("an ELF for %s", ef.OSABI)}
	case ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN:
		return Executable{}, &ExecutableError{Path: path, Got: fmt.Sprintf("an ELF %s, not an executable", ef.Type)}
	}
	exe := Executable{Path: path}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
		if err != nil {
			return Executable{}, fmt.Errorf("ray: stratbench's binary %s: reading its interpreter: %w", path, err)
		}
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		exe.Interpreter = string(b)
	}
	return exe, nil
}

func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_386:
		return "386"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_RISCV:
		return "riscv"
	case elf.EM_PPC64:
		return "ppc64"
	case elf.EM_S390:
		return "s390x"
	}
	return m.String()
}
