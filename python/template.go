package python

import (
	"errors"
	"strconv"
	"strings"
)

// ErrSandboxStartsCold says that a sandboxed worker has no warm template:
// the sandbox's seccomp filter refuses fork (and a run's first process
// must execute stratbench's run init, which the exec filter refuses too),
// so every sandboxed run starts cold, an interpreter of its own under the
// sandbox launcher, with supervisor.Host.Start. The bridge refuses the
// template mode under the sandbox for the same reason.
var ErrSandboxStartsCold = errors.New("a sandboxed worker starts cold: the sandbox forbids the fork a warm start needs")

// WarmStart says whether a worker's runs may be forked from a warm
// template (supervisor.Template): nil, or ErrSandboxStartsCold for a
// sandboxed worker.
func WarmStart(sandboxed bool) error {
	if sandboxed {
		return ErrSandboxStartsCold
	}
	return nil
}

// TemplateArgs returns the interpreter's arguments that run the bridge at
// bridgePath (source or bytecode, as BridgeArgs) as a warm template for
// strategy, with its fork socket at socketFD (supervisor.TemplateSocketFD). The template imports the
// third-party modules the strategy's leading imports name, never a module
// of the strategy's folder, and forks runs of that strategy only.
func TemplateArgs(bridgePath, strategy string, socketFD int) []string {
	return []string{"-B", bridgePath, "--template", strconv.Itoa(socketFD), "--fds", fdList(), strategy}
}

// RunArgs returns the arguments of a run of strategy forked from a
// template (supervisor.RunSpec.Args): the bridge's command line after its
// path, as BridgeArgs gives it to a cold start. A run gets the worker's
// descriptors (ExtraFiles) exactly as a cold start does.
func RunArgs(strategy string) []string {
	return []string{"--fds", fdList(), strategy}
}

func fdList() string {
	fds := []int{FDRequests, FDAnswers, FDState, FDCommands, FDDebugIn, FDDebugOut}
	out := make([]string, len(fds))
	for i, fd := range fds {
		out[i] = strconv.Itoa(fd)
	}
	return strings.Join(out, ",")
}
