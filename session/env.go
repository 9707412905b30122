package session

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The policies a command reads from the environment (docs/commands.md):
// each refusal names its variable.

// SandboxRequired reads STRATBENCH_PYTHON_SANDBOX: "required" forces the
// sandbox, whatever the command line says; any other non-empty value is
// refused rather than silently running unsandboxed.
func SandboxRequired() (bool, error) {
	switch v := os.Getenv("STRATBENCH_PYTHON_SANDBOX"); strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return false, nil
	case "required":
		return true, nil
	default:
		return false, fmt.Errorf("STRATBENCH_PYTHON_SANDBOX=%q: the only value is \"required\"", v)
	}
}

// DataBudget reads STRATBENCH_DATA_BUDGET: the MiB of decoded bars data
// may take to be decoded once and replayed from memory (more streams from
// the files on every run); -1 when 0 streams everything. Unset, 0: the
// data package's default (64 MiB).
func DataBudget() (int64, error) {
	v := strings.TrimSpace(os.Getenv("STRATBENCH_DATA_BUDGET"))
	if v == "" {
		return 0, nil
	}
	mib, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mib < 0 || mib > 1<<30 {
		return 0, fmt.Errorf("STRATBENCH_DATA_BUDGET=%q: want a whole number of MiB, 0 to stream everything", v)
	}
	if mib == 0 {
		return -1, nil
	}
	return mib << 20, nil
}

// SpillBudget reads STRATBENCH_SPILL_BUDGET: the MiB that data too large
// for the memory of its streams may take spilled to $TMPDIR. Unset, 0:
// the data package's default (16 GiB).
func SpillBudget() (int64, error) {
	v := strings.TrimSpace(os.Getenv("STRATBENCH_SPILL_BUDGET"))
	if v == "" {
		return 0, nil
	}
	mib, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mib < 1 || mib > 1<<30 {
		return 0, fmt.Errorf("STRATBENCH_SPILL_BUDGET=%q: want a whole number of MiB, 1 or more", v)
	}
	return mib << 20, nil
}

// Budgets reads the data's two budgets: DataBudget, then SpillBudget.
func Budgets() (data, spill int64, err error) {
	if data, err = DataBudget(); err != nil {
		return 0, 0, err
	}
	spill, err = SpillBudget()
	return data, spill, err
}
