package e2e

// End-to-end tests of what the second walkthrough found after the run
// (issue 37): comparing runs, where --ci's output went, a mistyped
// strategy in the workbench, what a sibling's save re-runs, bare dates in
// --to, the small ones and annualised figures from short windows. Its
// refusals are scripts in testdata/script: --ci without a strategy
// (ci_without_a_strategy_is_bad_usage), --python naming no interpreter
// (python_that_is_no_interpreter), the view's flags with --ci
// (ci_refuses_the_views_flags).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"stratbench/contract"
	"stratbench/internal/e2etest"
	"stratbench/job"
)

// TestBareDateToIsTheEndOfThatDay: --from 2026-01-05 --to 2026-01-05 runs
// that whole day of the bundled minute bars (it ran the two bars at
// midnight); a time in --to is still that instant; the sweep's
// walk-forward windows stay half-open within the window.
func TestBareDateToIsTheEndOfThatDay(t *testing.T) {
	e := newEnv(t)
	strat := e2etest.Strategy("noop.py")
	for _, tc := range []struct {
		to     string
		events int
		last   string
	}{
		{"2026-01-05", 2 * 24 * 60, "2026-01-05T23:59:00Z"},
		{"2026-01-05 00:01:00", 4, "2026-01-05T00:01:00Z"},
	} {
		r := e.Run("--ci", "--output", "json", strat, "--from", "2026-01-05", "--to", tc.to)
		if r.Code != 0 {
			t.Fatalf("--to %s: exit %d\n%s", tc.to, r.Code, r.Stderr)
		}
		rep := e2etest.DecodeReport(t, r.Stdout)
		if rep.Data.Events != tc.events || rep.Data.To != tc.last {
			t.Errorf("--to %s: %d events to %s, want %d to %s", tc.to, rep.Data.Events, rep.Data.To, tc.events, tc.last)
		}
	}
	// Two whole days, a fold of one day's training and one day's test:
	// the test window is the second day, half-open.
	r := e.Run("sweep", e2etest.SweepStrategy, "--ci", "--output", "json", "--grid", "fast=5", "--walk-forward", "train=1d,test=1d",
		"--from", "2026-01-05", "--to", "2026-01-06")
	if r.Code != 0 {
		t.Fatalf("walk-forward: exit %d\n%s", r.Code, r.Stderr)
	}
	doc := e2etest.DecodeSweep(t, r.Stdout)
	var tests []string
	if wf := doc.WalkForward; wf != nil {
		for _, f := range wf.Folds {
			tests = append(tests, f.Test.String())
		}
	}
	if want := "[2026-01-06T00:00:00Z, 2026-01-07T00:00:00Z)"; len(tests) != 1 || tests[0] != want {
		t.Errorf("walk-forward test windows %q, want one, %s", tests, want)
	}
}

// writeStrategy writes a strategy file of source into a new folder and
// returns its path.
func writeStrategy(t *testing.T, name, source string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCISaysWhereItsOutputWent: the --ci text report ends with the job's
// folder and its artifacts (paths and sizes), and the JSON report has
// "artifacts", as status has them; --ci said neither.
func TestCISaysWhereItsOutputWent(t *testing.T) {
	e := newEnv(t)
	strat := writeStrategy(t, "notes.py", `
def on_data(ctx, history):
    pass

def on_finish(ctx):
    with open(ctx.artifact_path("note.txt"), "w") as f:
        f.write("hello")
`)
	r := e.Run("--ci", strat, "--to", "2026-01-05 01:00:00")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	id := strings.Fields(strings.SplitN(r.Stdout, "\n", 2)[0])[3]
	dir := filepath.Join(e.Home, "jobs", id)
	for _, want := range []string{"\njob folder   " + dir + "\n", "\nartifacts    " + filepath.Join(dir, "artifacts") + "\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the text report does not say %q:\n%s", want, r.Stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ +note\.txt +5 bytes$`).MatchString(r.Stdout) {
		t.Errorf("the text report does not list note.txt and its size:\n%s", r.Stdout)
	}
	r = e.Run("--ci", "--output", "json", strat, "--to", "2026-01-05 01:00:00")
	var rep struct {
		JobID     string         `json:"job_id"`
		Artifacts *job.Artifacts `json:"artifacts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.Artifacts == nil {
		t.Fatalf("the JSON report has no artifacts (%v):\n%s", err, r.Stdout)
	}
	found := false
	for _, f := range rep.Artifacts.Files {
		found = found || f.Name == "note.txt" && f.Bytes == 5
	}
	if want := filepath.Join(e.Home, "jobs", rep.JobID, "artifacts"); rep.Artifacts.Dir != want || !found {
		t.Errorf("artifacts %+v, want note.txt (5 bytes) in %s", rep.Artifacts, want)
	}
}

// rsiStrategy has four params, the one that changes last by name.
const rsiStrategy = `
MANIFEST = {"params": {"alloc": 0.4, "lower": 30, "period": 14, "upper": 70}}

def on_data(ctx, history):
    pass
`

// TestComparingRuns: jobs lists every job's params, those that differ
// between the listed jobs first, and names two strategy.py by their
// folders; status A --diff B has one row per changed param, whole, and
// --output json. The jobs list showed no params and two identical
// "strategy.py"; --diff cut the params row at 32 columns a side and had
// no JSON.
func TestComparingRuns(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	var paths []string
	for _, folder := range []string{"momentum", "meanrev"} {
		if err := os.Mkdir(filepath.Join(root, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, folder, "strategy.py")
		if err := os.WriteFile(path, []byte(rsiStrategy), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	var ids []string
	for _, run := range []struct {
		path, upper string
	}{{paths[0], "70"}, {paths[0], "75"}, {paths[1], "70"}} {
		r := e.Run("--ci", "--output", "json", run.path, "--to", "2026-01-05 00:10:00", "--param", "upper="+run.upper)
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		ids = append(ids, e2etest.DecodeReport(t, r.Stdout).JobID)
	}
	jobs := e.Run("jobs")
	lines := strings.Split(strings.TrimSpace(jobs.Stdout), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "PARAMS") {
		t.Fatalf("jobs:\n%s", jobs.Stdout)
	}
	for i, want := range []string{"meanrev/strategy.py", "momentum/strategy.py", "momentum/strategy.py"} {
		row := lines[i+1]
		if !strings.Contains(row, want) {
			t.Errorf("jobs row %d does not name %s:\n%s", i+1, want, jobs.Stdout)
		}
		upper := []string{"upper=70 alloc=0.4 lower=30 period=14", "upper=75 alloc=0.4", "upper=70 alloc=0.4"}[i]
		if !strings.Contains(row, upper) {
			t.Errorf("jobs row %d does not show %q first:\n%s", i+1, upper, jobs.Stdout)
		}
	}

	diff := e.Run("status", ids[0], "--diff", ids[1])
	if diff.Code != 0 || !regexp.MustCompile(`(?m)^≠ param upper +70 +75$`).MatchString(diff.Stdout) {
		t.Errorf("status --diff: exit %d, no whole row for the changed param:\n%s", diff.Code, diff.Stdout)
	}
	if strings.Contains(diff.Stdout, "…") || regexp.MustCompile(`(?m)^≠ param (alloc|lower|period)`).MatchString(diff.Stdout) {
		t.Errorf("status --diff cuts a value or marks an unchanged param:\n%s", diff.Stdout)
	}
	r := e.Run("status", ids[0], "--diff", ids[1], "--output", "json")
	var doc struct {
		A, B       string
		SameInputs bool `json:"same_inputs"`
		Rows       []struct {
			Field string
			Kind  string
			A, B  any
			Same  bool
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("status --diff --output json: exit %d, %v\n%s", r.Code, err, r.Stdout)
	}
	changed := map[string]bool{}
	for _, row := range doc.Rows {
		if !row.Same {
			changed[row.Field] = true
		}
		if row.Field == "params.upper" && (row.Kind != "param" || row.A != 70.0 || row.B != 75.0 || row.Same) {
			t.Errorf("params.upper row %+v", row)
		}
	}
	if doc.A != ids[0] || doc.B != ids[1] || doc.SameInputs || !changed["params.upper"] || !changed["fingerprint"] ||
		changed["params.alloc"] || changed["data.source"] {
		t.Errorf("diff JSON: a %s b %s, same inputs %v, changed %v", doc.A, doc.B, doc.SameInputs, changed)
	}
}

// TestTimeoutLogIsClean: after a timeout the job's log (what the log pane
// shows, live and stored) has no "Fatal Python error: Aborted" and no
// bridge frames: the stack is the failure's traceback, and the log says
// so once. The log began with faulthandler's raw dump.
func TestTimeoutLogIsClean(t *testing.T) {
	e := newEnv(t)
	r := e.Run("--ci", "--output", "json", e2etest.Strategy("infinite_loop.py"), "--to", "2026-01-05 00:10:00")
	rep := e2etest.DecodeReport(t, r.Stdout)
	if r.Code != 1 || rep.Failure == nil || rep.Failure.Kind != contract.KindTimeout || !strings.Contains(rep.Failure.Traceback, "infinite_loop.py") {
		t.Fatalf("exit %d, failure %+v", r.Code, rep.Failure)
	}
	logs := e.Run("logs", rep.JobID)
	if logs.Code != 0 || strings.Contains(logs.Stdout, "Fatal Python error") || strings.Contains(logs.Stdout, "bridge") ||
		strings.Contains(logs.Stdout, "Current thread") || !strings.Contains(logs.Stdout, "system the worker's stack at the timeout is in the failure's traceback") {
		t.Errorf("the log after a timeout:\n%s", logs.Stdout)
	}
	if !strings.Contains(logs.Stdout, "looping forever") {
		t.Errorf("the strategy's own output is gone from the log:\n%s", logs.Stdout)
	}
}

// dailyBars writes n days of daily bars of one symbol, from 2025-01-01, to
// a CSV file and returns its path.
func dailyBars(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,symbol,open,high,low,close,volume\n")
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	price := 100.0
	for i := range n {
		price *= 1 + 0.01*float64((i*7)%5-2)
		fmt.Fprintf(&b, "%s,AAA,%.4f,%.4f,%.4f,%.4f,1000\n", day.AddDate(0, 0, i).Format(time.RFC3339), price, price*1.01, price*0.99, price)
	}
	path := filepath.Join(t.TempDir(), "daily.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAnnualisedFiguresSayTheirSpan: the bundled example's Sharpe and
// CAGR (a week of minute bars annualised) are marked ~ with the span they
// come from, in --ci's text, status, a sweep's summary and runs, sweeps
// and the HTML report; a year of daily bars carries no mark but says its
// span. The report's metrics have span_s. They showed Sharpe 19.76 and
// CAGR 26,445 % as they are.
func TestAnnualisedFiguresSayTheirSpan(t *testing.T) {
	e := newEnv(t)
	example := filepath.Join("python", "example", "strategy.py")
	r := e.Run("--ci", example)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	const note = "annualised   ~ sharpe, cagr, calmar, sortino and volatility extrapolate 6d 23h of data to a year: under 90 days, too short for them to mean much"
	marked := regexp.MustCompile(`(?m)^(sharpe|cagr|calmar|sortino|volatility) +[0-9.,-]+( %)? ~$`)
	for name, text := range map[string]string{"--ci": r.Stdout, "status": e.Run("status", "latest").Stdout} {
		if n := len(marked.FindAllString(text, -1)); n != 5 || !strings.Contains(text, note) ||
			!strings.Contains(text, "sharpe 19.76 (over 6d 23h: too short to annualise)") {
			t.Errorf("%s: %d annualised figures marked, want 5, with the note:\n%s", name, n, text)
		}
	}
	rep := e2etest.DecodeReport(t, e.Run("status", "latest", "--output", "json").Stdout)
	if rep.Metrics == nil || rep.Metrics.SpanS != 604740 {
		t.Errorf("span_s %v, want 604740 (6d 23h 59m)", rep.Metrics)
	}
	report := e.Run("report", "latest")
	if html, err := os.ReadFile(strings.TrimSpace(report.Stdout)); err != nil || !strings.Contains(string(html), "That span is under 90 days: too short for an annualised figure to mean much") {
		t.Errorf("the HTML report does not say the span is too short (%v)", err)
	}

	// A year of daily bars: no mark, the span said.
	long := e.Run("--ci", example, "--data", dailyBars(t, 400), "--param", "fast=3", "--param", "slow=5")
	if long.Code != 0 || marked.MatchString(long.Stdout) || strings.Contains(long.Stdout, " ~") ||
		!regexp.MustCompile(`annualised   sharpe, cagr, calmar, sortino and volatility extrapolate \S+( \S+)? of data to a year\n`).MatchString(long.Stdout) {
		t.Errorf("a year of data: exit %d\n%s", long.Code, long.Stdout)
	}

	// A sweep ranked by Sharpe over the bundled week: its objective and
	// each run's value say so.
	sw := e.Run("sweep", example, "--ci", "--grid", "fast=5,10")
	if sw.Code != 0 || !strings.Contains(sw.Stdout, "objective sharpe (maximised), annualised from 6d 23h of data: under 90 days, too short to mean much (values marked ~)") ||
		len(regexp.MustCompile(`(?m) sharpe [0-9.-]+ ~ `).FindAllString(sw.Stdout, -1)) < 2 {
		t.Errorf("sweep: exit %d\n%s", sw.Code, sw.Stdout)
	}
	if list := e.Run("sweeps"); !regexp.MustCompile(`sharpe [0-9.-]+ ~\n`).MatchString(list.Stdout) {
		t.Errorf("sweeps does not mark the best value:\n%s", list.Stdout)
	}
}

// terminal is a pseudo-terminal a command runs on, at 120×40, and what it
// wrote there, without escape sequences.
type terminal struct {
	t      *testing.T
	master *os.File
	tty    *os.File
	mu     sync.Mutex
	out    strings.Builder
	wrote  chan struct{} // a token after each write
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	tty, master := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, master: master, tty: tty, wrote: make(chan struct{}, 1)}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				term.mu.Lock()
				term.out.WriteString(ansi.Strip(string(buf[:n])))
				term.mu.Unlock()
				select {
				case term.wrote <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return // EIO once the terminal side is closed everywhere
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
		<-drained
	})
	return term
}

// start starts cmd on the terminal, its controlling terminal.
func (term *terminal) start(e *env, cmd *exec.Cmd) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.tty, term.tty, term.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	e.Launch(cmd)
}

// text is what the terminal showed so far.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until the terminal has shown text, at each write; a
// minute without it fails the test.
func (term *terminal) waitFor(text string) {
	term.t.Helper()
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for !strings.Contains(term.text(), text) {
		select {
		case <-term.wrote:
		case <-guard.C:
			term.t.Fatalf("the terminal did not show %q:\n%s", text, term.text())
		}
	}
}

// send types s on the terminal.
func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := term.master.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// TestWorkbenchOnAMistypedStrategy: `stratbench rsii.py` in a folder with
// rsi.py says there is no such file and asks: quit is exit 2 naming
// rsi.py; the default opens rsi.py and runs it; c waits for rsii.py and
// runs it once it is written. It opened on rsii.py and waited for it.
func TestWorkbenchOnAMistypedStrategy(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rsi.py"), []byte(rsiStrategy), 0o644); err != nil {
		t.Fatal(err)
	}
	const question = "No strategy rsii.py here. Open rsi.py instead [o], create rsii.py and wait for its first save [c], or quit [q]?"
	run := func(answer string) (*terminal, *exec.Cmd) {
		term := newTerminal(t)
		cmd := e.Command("rsii.py", "--to", "2026-01-05 01:00:00")
		cmd.Dir = dir
		term.start(e, cmd)
		term.waitFor(question)
		term.send(answer)
		return term, cmd
	}

	term, cmd := run("q\r")
	code := e.ExitCode(cmd.Wait())
	// The process has ended; what it wrote last may still be on its way
	// through the terminal to the reader.
	term.waitFor("strategy rsii.py: no such file; did you mean rsi.py?")
	if code != 2 {
		t.Errorf("quit: exit %d\n%s", code, term.text())
	}

	term, cmd = run("\r")
	term.waitFor("PASSED")
	term.send("q")
	if code := e.ExitCode(cmd.Wait()); code != 0 || !strings.Contains(term.text(), "rsi.py") {
		t.Errorf("open rsi.py: exit %d\n%s", code, term.text())
	}
	rep := e2etest.DecodeReport(t, e.Run("status", "latest", "--output", "json").Stdout)
	if rep.Strategy.Path != filepath.Join(dir, "rsi.py") || rep.Status != job.StatusPassed {
		t.Errorf("the run of the default answer: %s %s", rep.Strategy.Path, rep.Status)
	}

	term, cmd = run("c\r")
	term.waitFor("waiting for rsii.py")
	if err := os.WriteFile(filepath.Join(dir, "rsii.py"), []byte(rsiStrategy), 0o644); err != nil {
		t.Fatal(err)
	}
	term.waitFor("PASSED")
	term.send("q")
	if code := e.ExitCode(cmd.Wait()); code != 0 {
		t.Errorf("create: exit %d\n%s", code, term.text())
	}
	if rep := e2etest.DecodeReport(t, e.Run("status", "latest", "--output", "json").Stdout); rep.Strategy.Path != filepath.Join(dir, "rsii.py") {
		t.Errorf("the run after c: %s", rep.Strategy.Path)
	}
}
