package python

import "os"

// The worker's descriptors, one definition: the host hands the files to the
// worker in this order (exec.Cmd.ExtraFiles starts at fd 3), the sandbox
// keeps exactly these, and the bridge is told the numbers on its command
// line (BridgeArgs).
const (
	FDRequests = 3 // host → worker frames
	FDAnswers  = 4 // worker → host frames
	FDState    = 5 // the shared state page (StatePage)
	FDCommands = 6 // worker → host command frames, read by the host after each answer
	// The debugger's own pipe pair (debug.go): the host's commands typed at
	// the workbench's prompt, and the debugger's prompts. Outside the
	// workbench the host writes nothing on the first and closes both ends
	// before the worker starts, and breakpoint() only writes a notice.
	FDDebugIn  = 7 // host → worker debugger frames
	FDDebugOut = 8 // worker → host debugger frames
	// FDCount is the number of descriptors a worker keeps: stdio and the
	// six above.
	FDCount = 9
)

// BridgeArgs returns the interpreter's arguments that run the bridge at
// bridgePath (its source, or its bytecode: CompileBridge) on strategy.
func BridgeArgs(bridgePath, strategy string) []string {
	return []string{"-B", bridgePath, "--fds", fdList(), strategy}
}

// ExtraFiles returns the worker's descriptors in the order exec.Cmd.ExtraFiles
// numbers them (FDRequests first).
func ExtraFiles(requests, answers, state, commands, debugIn, debugOut *os.File) []*os.File {
	return []*os.File{FDRequests - 3: requests, FDAnswers - 3: answers, FDState - 3: state, FDCommands - 3: commands,
		FDDebugIn - 3: debugIn, FDDebugOut - 3: debugOut}
}
