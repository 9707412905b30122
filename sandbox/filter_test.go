//go:build linux && amd64

package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as a filter sees it.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// bytes lays d out for the x/net/bpf VM. The VM loads 32-bit words
// big-endian while the kernel hands filters native (little-endian) words,
// so every word is written big-endian at its little-endian offset: a
// 64-bit argument's low word first.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], d.nr)
	binary.BigEndian.PutUint32(b[4:], d.arch)
	for i, a := range d.args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[20+8*i:], uint32(a>>32))
	}
	return b
}

// evaluate runs the stacked programs as the kernel does: every filter runs,
// and the action with the highest precedence (the lowest as a signed
// number) wins; on a tie the most recently installed filter's value wins.
func evaluate(t *testing.T, progs [][]bpf.Instruction, d seccompData) uint32 {
	t.Helper()
	ret := uint32(unix.SECCOMP_RET_ALLOW)
	for i := len(progs) - 1; i >= 0; i-- {
		vm, err := bpf.NewVM(progs[i])
		if err != nil {
			t.Fatalf("program %d: %v", i, err)
		}
		out, err := vm.Run(d.bytes())
		if err != nil {
			t.Fatalf("program %d: run: %v", i, err)
		}
		cur := uint32(out)
		if int32(cur&unix.SECCOMP_RET_ACTION_FULL) < int32(ret&unix.SECCOMP_RET_ACTION_FULL) {
			ret = cur
		}
	}
	return ret
}

const (
	retKill   = uint32(unix.SECCOMP_RET_KILL_PROCESS)
	retAllow  = uint32(unix.SECCOMP_RET_ALLOW)
	retEPERM  = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
	retENOSYS = uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
)

func retName(r uint32) string {
	switch r {
	case retKill:
		return "KILL_PROCESS"
	case retAllow:
		return "ALLOW"
	case retEPERM:
		return "ERRNO(EPERM)"
	case retENOSYS:
		return "ERRNO(ENOSYS)"
	}
	return fmt.Sprintf("%#x", r)
}

func TestFilterVerdicts(t *testing.T) {
	progs, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	const (
		archI386    = unix.AUDIT_ARCH_I386
		archX86_64  = unix.AUDIT_ARCH_X86_64
		archAArch64 = unix.AUDIT_ARCH_AARCH64
	)
	nr := func(name string) uint32 {
		n, ok := arch.X86_64.SyscallNames[name]
		if !ok {
			t.Fatalf("no x86-64 system call %q", name)
		}
		return uint32(n)
	}
	cases := []struct {
		name string
		data seccompData
		want uint32
	}{
		// i386 through int 0x80: go-seccomp-bpf alone would allow these.
		{"i386 socketcall", seccompData{nr: 102, arch: archI386}, retKill},
		{"i386 socket", seccompData{nr: 359, arch: archI386}, retKill},
		{"i386 fork", seccompData{nr: 2, arch: archI386}, retKill},
		{"i386 read", seccompData{nr: 3, arch: archI386}, retKill},
		{"aarch64 arch value", seccompData{nr: 198, arch: archAArch64}, retKill},
		// x32 shares the x86-64 audit arch and sets bit 30 of the number.
		{"x32 socket", seccompData{nr: x32SyscallBit | 41, arch: archX86_64}, retKill},
		{"x32 fork", seccompData{nr: x32SyscallBit | 57, arch: archX86_64}, retKill},
		{"x32 read", seccompData{nr: x32SyscallBit, arch: archX86_64}, retKill},
		// Numbers above the reviewed table.
		{"first unreviewed number", seccompData{nr: highestReviewedSyscall + 1, arch: archX86_64}, retENOSYS},
		{"number 1000", seccompData{nr: 1000, arch: archX86_64}, retENOSYS},
		{"highest non-x32 number", seccompData{nr: x32SyscallBit - 1, arch: archX86_64}, retENOSYS},
		{"highest reviewed number (open_tree_attr, denied)", seccompData{nr: highestReviewedSyscall, arch: archX86_64}, retEPERM},
		// The deny-list.
		{"socket", seccompData{nr: nr("socket"), arch: archX86_64}, retEPERM},
		{"clone", seccompData{nr: nr("clone"), arch: archX86_64}, retEPERM},
		{"clone3", seccompData{nr: nr("clone3"), arch: archX86_64}, retENOSYS},
		{"prlimit64 on itself", seccompData{nr: nr("prlimit64"), arch: archX86_64}, retAllow},
		{"prlimit64 on another pid", seccompData{nr: nr("prlimit64"), arch: archX86_64, args: [6]uint64{1234}}, retEPERM},
		{"prlimit64 on pid 0 with high bits", seccompData{nr: nr("prlimit64"), arch: archX86_64, args: [6]uint64{1 << 32}}, retEPERM},
		// What Python needs.
		{"read", seccompData{nr: nr("read"), arch: archX86_64}, retAllow},
		{"execve", seccompData{nr: nr("execve"), arch: archX86_64}, retAllow},
		{"getpid", seccompData{nr: nr("getpid"), arch: archX86_64}, retAllow},
		{"exit_group", seccompData{nr: nr("exit_group"), arch: archX86_64}, retAllow},
	}
	for _, c := range cases {
		if got := evaluate(t, progs, c.data); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, retName(got), retName(c.want))
		}
	}

	// Why the arch filter exists: the deny-list alone sends a foreign
	// architecture to its default action.
	deny := progs[len(progs)-1:]
	got := evaluate(t, deny, seccompData{nr: 359, arch: archI386})
	t.Logf("deny-list alone, i386 socket: %s", retName(got))
}

// TestFilterCoversTable checks every system call of the reviewed table:
// the named ones are denied and all others allowed.
func TestFilterCoversTable(t *testing.T) {
	progs, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]bool{}
	for _, group := range deniedSyscalls() {
		for _, name := range group {
			if denied[name] {
				t.Errorf("%s is listed twice", name)
			}
			denied[name] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(arch.X86_64.SyscallNumbers)) {
		name := arch.X86_64.SyscallNumbers[n]
		want := retAllow
		switch {
		case name == "clone3":
			want = retENOSYS
		case denied[name]:
			want = retEPERM
		}
		if got := evaluate(t, progs, seccompData{nr: uint32(n), arch: unix.AUDIT_ARCH_X86_64}); got != want {
			t.Errorf("%s (%d): %s, want %s", name, n, retName(got), retName(want))
		}
	}
}

// TestHighestReviewedSyscall fails when go-seccomp-bpf's table grows: the
// new system calls must be reviewed for the deny-list before the ENOSYS
// boundary moves.
func TestHighestReviewedSyscall(t *testing.T) {
	highest := slices.Max(slices.Collect(maps.Keys(arch.X86_64.SyscallNumbers)))
	if highest != highestReviewedSyscall {
		t.Errorf("go-seccomp-bpf's x86-64 table ends at %d (%s), the deny-list was reviewed up to %d",
			highest, arch.X86_64.SyscallNumbers[highest], highestReviewedSyscall)
	}
}

// TestExecFilterVerdicts checks the exec filter alone and stacked on the
// launcher's filters, as the worker runs under both.
func TestExecFilterVerdicts(t *testing.T) {
	launcher, err := filterPrograms()
	if err != nil {
		t.Fatal(err)
	}
	alone := [][]bpf.Instruction{execFilter()}
	stacked := append(launcher, execFilter())
	nr := func(name string) uint32 { return uint32(arch.X86_64.SyscallNames[name]) }
	x86 := func(n uint32) seccompData { return seccompData{nr: n, arch: unix.AUDIT_ARCH_X86_64} }
	cases := []struct {
		name           string
		data           seccompData
		alone, stacked uint32
	}{
		{"execve", x86(nr("execve")), retEPERM, retEPERM},
		{"execveat", x86(nr("execveat")), retEPERM, retEPERM},
		{"execve with argument bits", seccompData{nr: nr("execve"), arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{1 << 40, 2, 3}}, retEPERM, retEPERM},
		{"x32 execve", x86(x32SyscallBit | 520), retKill, retKill},
		{"x32 execveat", x86(x32SyscallBit | 545), retKill, retKill},
		{"i386 execve", seccompData{nr: 11, arch: unix.AUDIT_ARCH_I386}, retKill, retKill},
		{"read", x86(nr("read")), retAllow, retAllow},
		{"mmap", x86(nr("mmap")), retAllow, retAllow},
		{"exit_group", x86(nr("exit_group")), retAllow, retAllow},
		// The launcher's verdicts still hold under the stack.
		{"socket", x86(nr("socket")), retAllow, retEPERM},
		{"memfd_create", x86(nr("memfd_create")), retAllow, retEPERM},
		{"clone3", x86(nr("clone3")), retAllow, retENOSYS},
		{"first unreviewed number", x86(highestReviewedSyscall + 1), retAllow, retENOSYS},
	}
	for _, c := range cases {
		if got := evaluate(t, alone, c.data); got != c.alone {
			t.Errorf("%s, exec filter alone: %s, want %s", c.name, retName(got), retName(c.alone))
		}
		if got := evaluate(t, stacked, c.data); got != c.stacked {
			t.Errorf("%s, stacked: %s, want %s", c.name, retName(got), retName(c.stacked))
		}
	}
}

// TestExecFilterValue decodes ExecFilterEnv's value as the worker does and
// checks that it is the assembled exec filter.
func TestExecFilterValue(t *testing.T) {
	value, err := execFilterValue()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(value)
	if err != nil {
		t.Fatalf("value %q is not hexadecimal: %v", value, err)
	}
	if len(raw)%8 != 0 {
		t.Fatalf("%d bytes, not a whole number of 8-byte records", len(raw))
	}
	var got []bpf.RawInstruction
	for rec := range slices.Chunk(raw, 8) {
		got = append(got, bpf.RawInstruction{
			Op: binary.LittleEndian.Uint16(rec[0:]), Jt: rec[2], Jf: rec[3], K: binary.LittleEndian.Uint32(rec[4:]),
		})
	}
	want, err := bpf.Assemble(execFilter())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("decoded program\n%v\nwant\n%v", got, want)
	}
}
