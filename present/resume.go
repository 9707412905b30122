package present

import (
	"fmt"
	"stratbench/sweep"
	"strconv"
	"strings"
)

// RanAs is how a sweep ran, as far as the command that resumes it must
// repeat it.
type RanAs struct {
	CI         bool   // headless: a script that pastes the command must not get the sweep view
	Output     string // the output of a headless sweep
	Ray        bool   // on a Ray cluster: a resume runs locally without saying so
	RayAddress string // the cluster's address, when the command line gave it
	Jobs       int    // the slots asked for on Ray (0: the cluster's CPUs)
}

// ResumeCommand is the command that resumes sweep id as it ran (as): the
// plain command for nil (status, which does not know how the sweep ran).
func ResumeCommand(id string, as *RanAs) string {
	cmd := "stratbench sweep --resume " + id
	if as == nil {
		return cmd
	}
	if as.CI {
		cmd += " --ci"
		if as.Output != "text" {
			cmd += " --output " + as.Output
		}
	}
	if as.Ray {
		cmd += " --executor ray"
		if as.RayAddress != "" {
			cmd += " --ray-address " + shellWord(as.RayAddress)
		}
		if as.Jobs > 0 {
			// On Ray a resume's default is the cluster's CPUs, not the
			// sweep's recorded --jobs.
			cmd += " --jobs " + strconv.Itoa(as.Jobs)
		}
	}
	return cmd
}

// shellWord quotes s for a POSIX shell unless it is one word as it is.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SlotsNotice says, when the machine bounds a local sweep's runs at once
// (slots, on cpus CPUs) below --jobs (jobs) and the runs left (left), how
// many run at once; "" otherwise.
func SlotsNotice(jobs int, left int64, slots, cpus int) string {
	if asked := min(int64(jobs), left); int64(slots) < asked {
		return fmt.Sprintf("--jobs %d: this machine runs at most %d runs at once (%d a CPU, %s); the sweep runs on %d slots",
			jobs, slots, sweep.LocalSlotsPerCPU, Counted(cpus, "CPU", "CPUs"), slots)
	}
	return ""
}

// CutNote says that a walk-forward's last fold's test window is cut short
// by the end of the data window.
func CutNote(last sweep.Fold) string {
	return fmt.Sprintf("walk-forward: fold %d's test window %s is cut to %s by the end of the data window "+
		"(--to is inclusive: a bare date is that day's midnight); its out-of-sample metrics count as any fold's",
		last.Index, last.Test, last.Test.Duration())
}

// UnreadableHint says what sweep id, whose sweep.json cannot be read, is,
// and what to do with it.
func UnreadableHint(id string) string {
	return fmt.Sprintf("it was cut short or edited by hand, and the sweep can be neither shown nor resumed "+
		"(its results are in %s beside it): start a new sweep; `stratbench prune --sweep %s` removes this one",
		sweep.ResultsFile, id)
}
