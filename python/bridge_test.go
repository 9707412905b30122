package python

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"stratbench/contract"
)

// worker is a bridge process started without the supervisor, to test the
// protocol on its own.
type worker struct {
	t        *testing.T
	cmd      *exec.Cmd
	in       *os.File
	out      *Reader
	state    *StatePage
	commands *os.File // the host's end of the command pipe
	// The host's ends of the debugger's pipes, when it was started with
	// a hello (startDebugWorker); nil otherwise.
	debugIn  *os.File
	debugOut *Reader
}

func startWorker(t *testing.T, strategy string) *worker {
	t.Helper()
	return startWorkerOf(t, strategy, false)
}

// startWorkerOf is startWorker that runs the bridge's bytecode
// (CompileBridge) when compiled is true, else its source.
func startWorkerOf(t *testing.T, strategy string, compiled bool) *worker {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	return startWorkerWith(t, py, strategy, compiled)
}

// startWorkerWith is startWorkerOf with the interpreter at py.
func startWorkerWith(t *testing.T, py, strategy string, compiled bool) *worker {
	t.Helper()
	return startBridge(t, py, strategy, compiled, nil)
}

// startDebugWorker starts the bridge on strategy with the debugger's hello
// (AppendDebugHello) written first, as the workbench's jobs are.
func startDebugWorker(t *testing.T, strategy string, breaks []DebugBreak) *worker {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	hello, err := AppendDebugHello(nil, breaks)
	if err != nil {
		t.Fatal(err)
	}
	return startBridge(t, py, strategy, false, hello)
}

// startBridge starts the bridge; with hello nil the debugger's pipes lead
// nowhere (both host ends closed), as in --ci.
func startBridge(t *testing.T, py, strategy string, compiled bool, hello []byte) *worker {
	t.Helper()
	bridge, err := InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if compiled {
		if bridge, err = CompileBridge(context.Background(), bridge, py, bytecodeTagOf(t, py)); err != nil {
			t.Fatal(err)
		}
	}
	toR, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	state, err := NewStatePage()
	if err != nil {
		t.Fatal(err)
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dbgInR, dbgInW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dbgOutR, dbgOutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if hello == nil {
		dbgInW.Close()
		dbgOutR.Close()
	} else if _, err := dbgInW.Write(hello); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, BridgeArgs(bridge, strategy)...)
	cmd.ExtraFiles = ExtraFiles(toR, fromW, state.File(), cmdW, dbgInR, dbgOutW)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toR.Close()
	fromW.Close()
	cmdW.Close()
	dbgInR.Close()
	dbgOutW.Close()
	w := &worker{t: t, cmd: cmd, in: toW, out: NewReader(fromR, 8<<20), state: state, commands: cmdR}
	if hello != nil {
		w.debugIn, w.debugOut = dbgInW, NewReader(dbgOutR, MaxDebugMessage)
	}
	t.Cleanup(func() {
		toW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		fromR.Close()
		cmdR.Close()
		state.Close()
		if hello != nil {
			dbgInW.Close()
			dbgOutR.Close()
		}
	})
	return w
}

// pipedCommands reads n command frames from the command pipe, where the
// worker wrote them before its yield.
func (w *worker) pipedCommands(n int) []CommandMsg {
	w.t.Helper()
	w.commands.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := NewReader(w.commands, 1<<16)
	cmds := make([]CommandMsg, 0, n)
	for len(cmds) < n {
		f, err := r.Next()
		if err != nil || f.Type != TypeCommand {
			w.t.Fatalf("command pipe, after %d of %d commands: frame %q, %v", len(cmds), n, f.Type, err)
		}
		c, err := DecodeCommand(f.Payload)
		if err != nil {
			w.t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return cmds
}

func (w *worker) send(frame []byte) {
	w.t.Helper()
	if _, err := w.in.Write(frame); err != nil {
		w.t.Fatal(err)
	}
}

func (w *worker) next(want byte) []byte {
	w.t.Helper()
	f, err := w.out.Next()
	if err != nil {
		w.t.Fatal(err)
	}
	if f.Type != want {
		w.t.Fatalf("frame %q, want %q: %s", f.Type, want, f.Payload)
	}
	return f.Payload
}

// yield reads frames up to the next yield and returns it with the commands
// of the pipe and those sent inline, in that order.
func (w *worker) yield() (*YieldMsg, []CommandMsg) {
	w.t.Helper()
	var inline []CommandMsg
	for {
		f, err := w.out.Next()
		if err != nil {
			w.t.Fatal(err)
		}
		switch f.Type {
		case TypeCommand:
			c, err := DecodeCommand(f.Payload)
			if err != nil {
				w.t.Fatal(err)
			}
			inline = append(inline, c)
		case TypeYield:
			y, err := DecodeYield(f.Payload)
			if err != nil {
				w.t.Fatal(err)
			}
			return y, append(w.pipedCommands(y.Commands-len(inline)), inline...)
		default:
			w.t.Fatalf("frame %q, want a command or a yield: %s", f.Type, f.Payload)
		}
	}
}

func TestBridgeServesHooks(t *testing.T) {
	path, _ := filepath.Abs("testdata/probe_strategy.py")
	w := startWorker(t, path)

	m, err := DecodeManifest(w.next(TypeManifest))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Hooks, []contract.Hook{contract.HookOnData, contract.HookOnExecution, contract.HookOnFinish}) || m.History != 4 {
		t.Fatalf("manifest %+v", m)
	}
	wantDefaults := map[string]any{"n": int64(3), "ratio": 0.5, "flag": true, "tag": "x"}
	if !reflect.DeepEqual(m.ParamDefaults, wantDefaults) {
		t.Fatalf("params %#v", m.ParamDefaults)
	}

	art := t.TempDir()
	frame, err := AppendJSON(nil, TypeInit, InitMsg{Params: map[string]any{"n": 5}, Symbols: []string{"A", "B"}, Cash: 1000, Artifacts: art,
		BudgetMS: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	w.next(TypeReady)

	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC).UnixNano()
	minute := int64(time.Minute)
	bars := Columns{
		Time:   []int64{t0, t0, t0 + minute, t0 + minute, t0 + 2*minute, t0 + 2*minute},
		Symbol: []int32{0, 1, 0, 1, 0, 1},
		Open:   []float64{1, 10, 2, 11, 3, 12},
		High:   []float64{1.5, 10.5, 2.5, 11.5, 3.5, 12.5},
		Low:    []float64{0.5, 9.5, 1.5, 10.5, 2.5, 11.5},
		Close:  []float64{1.25, 10.25, 2.25, 11.25, 3.25, 12.25},
		Volume: []float64{100, 200, 300, 400, 500, 600},
	}
	frame, err = AppendBatch(nil, 1, 0, nil, bars, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	y, cmds := w.yield()
	// The third on_data call issued two orders: the worker stops there.
	if y.Through != 3 || y.Stopped || len(y.Durations) != 3 || y.Commands != 2 {
		t.Fatalf("yield %+v", y)
	}
	limit := 10.25
	wantCmds := []CommandMsg{{Op: OpBuy, ID: 1, Symbol: "A", Qty: 2, Call: 3}, {Op: OpSell, ID: 2, Symbol: "B", Qty: 1.5, Limit: &limit, Call: 3}}
	if !reflect.DeepEqual(cmds, wantCmds) {
		t.Fatalf("commands %+v", cmds)
	}
	if c := w.state.Clock(); c != 6 {
		t.Fatalf("clock %d after call 3, want 6", c)
	}

	// The next batch delivers an execution first (call 4), then resumes the
	// three bars the worker holds without sending them again.
	execs := []ExecRecord{{OrderID: 1, Symbol: 0, Side: SideBuy, Qty: 2, Price: 2, Status: StatusFilled,
		Time: t0 + minute, Event: 3, Cash: 996, Position: 2}}
	frame, err = AppendBatch(nil, 4, 3, execs, Columns{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.send(frame)
	y, cmds = w.yield()
	// Call 4 is on_execution, calls 5 and 6 are on_data; call 6 cancels.
	if y.Through != 6 || len(y.Durations) != 3 || y.Commands != 1 || len(cmds) != 1 || cmds[0].Op != OpCancel || cmds[0].ID != 7 {
		t.Fatalf("yield %+v, commands %+v", y, cmds)
	}
	frame, _ = AppendBatch(nil, 7, 1, nil, Columns{}, 2)
	w.send(frame)
	if y, cmds = w.yield(); y.Through != 7 || y.Commands != 0 || len(cmds) != 0 {
		t.Fatalf("yield %+v, commands %+v", y, cmds)
	}

	frame, _ = AppendJSON(nil, TypeFinish, FinishMsg{Call: 8})
	w.send(frame)
	fin, err := DecodeFinished(w.next(TypeFinished))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Seen       [][]any        `json:"seen"`
		Executions [][]any        `json:"executions"`
		Params     map[string]any `json:"params"`
		Equity     float64        `json:"equity"`
		Artifact   string         `json:"artifact"`
	}
	if err := json.Unmarshal(fin.Metadata, &got); err != nil {
		t.Fatal(err)
	}
	wantSeen := `[["A","2026-01-02T03:04:00+00:00",1,[1.25],1,1000,0],` +
		`["B","2026-01-02T03:04:00+00:00",1,[10.25],10,1000,0],` +
		`["A","2026-01-02T03:05:00+00:00",2,[1.25,2.25],1,1000,0],` +
		`["B","2026-01-02T03:05:00+00:00",2,[10.25,11.25],10,996,0],` +
		`["A","2026-01-02T03:06:00+00:00",3,[1.25,2.25,3.25],1,996,2],` +
		`["B","2026-01-02T03:06:00+00:00",3,[10.25,11.25,12.25],10,996,0]]`
	if b, _ := json.Marshal(got.Seen); string(b) != wantSeen {
		t.Fatalf("seen\n%s\nwant\n%s", b, wantSeen)
	}
	if b, _ := json.Marshal(got.Executions); string(b) != `[[1,"filled","",996,2,"2026-01-02T03:05:00+00:00"]]` {
		t.Fatalf("executions %s", b)
	}
	if got.Params["n"] != 5.0 || got.Equity != 996+2*3.25 || got.Artifact != filepath.Join(art, "x.csv") {
		t.Fatalf("finish %+v", got)
	}
	w.send(AppendQuit(nil))
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("worker exit: %v", err)
	}
}

// TestCommandsOverflowInline: a call that issues more commands than the
// command pipe holds sends the rest on the answers pipe; the host gets every
// command once, in the order issued.
func TestCommandsOverflowInline(t *testing.T) {
	path, _ := filepath.Abs("testdata/many_orders.py")
	w := startWorker(t, path)
	if _, err := DecodeManifest(w.next(TypeManifest)); err != nil {
		t.Fatal(err)
	}
	frame, _ := AppendJSON(nil, TypeInit, InitMsg{Params: map[string]any{}, Symbols: []string{"A"}, Cash: 1000, Artifacts: t.TempDir(), BudgetMS: 60_000})
	w.send(frame)
	w.next(TypeReady)
	bars := Columns{Time: []int64{1e18}, Symbol: []int32{0}, Open: []float64{1}, High: []float64{1}, Low: []float64{1}, Close: []float64{1}, Volume: []float64{1}}
	frame, _ = AppendBatch(nil, 1, 0, nil, bars, 1)
	w.send(frame)
	y, cmds := w.yield()
	if y.Through != 1 || y.Commands != 40_000 || len(cmds) != 40_000 {
		t.Fatalf("yield %+v with %d commands", y, len(cmds))
	}
	for i, c := range cmds {
		if c.ID != int64(i+1) {
			t.Fatalf("command %d has id %d: out of order", i, c.ID)
		}
	}
}

func TestBridgeReportsStartupErrors(t *testing.T) {
	bothWays(t, testBridgeReportsStartupErrors)
}

// bothWays runs test with the bridge's source and with its bytecode.
func bothWays(t *testing.T, test func(t *testing.T, compiled bool)) {
	for _, compiled := range []bool{false, true} {
		name := "source"
		if compiled {
			name = "bytecode"
		}
		t.Run(name, func(t *testing.T) { test(t, compiled) })
	}
}

func testBridgeReportsStartupErrors(t *testing.T, compiled bool) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"syntax":  "def on_data(ctx, history)\n    pass\n",
		"no_hook": "x = 1\n",
		"both":    "def on_data(ctx, history):\n    pass\ndef on_bars(ctx, bars):\n    pass\n",
	} {
		path := filepath.Join(dir, name+".py")
		os.WriteFile(path, []byte(src), 0o644)
		w := startWorkerOf(t, path, compiled)
		e, err := DecodeError(w.next(TypeError))
		if err != nil {
			t.Fatal(err)
		}
		if e.Hook != "startup" || e.Call != 0 {
			t.Fatalf("%s: %+v", name, e)
		}
		switch name {
		case "syntax":
			last := e.Frames[len(e.Frames)-1]
			if e.Type != "SyntaxError" || !last.User || last.Line != 1 || last.Source != "def on_data(ctx, history)" {
				t.Fatalf("syntax error: %+v", e)
			}
		case "no_hook":
			if e.Type != "AttributeError" || !bytes.Contains([]byte(e.Message), []byte("no_hook.py defines no on_data")) {
				t.Fatalf("missing hook: %+v", e)
			}
		case "both":
			if e.Type != "TypeError" || !bytes.Contains([]byte(e.Message), []byte("both.py defines both on_data and on_bars")) {
				t.Fatalf("both hooks: %+v", e)
			}
		}
	}
}

// Frames of installed code inside the strategy's folder (a project's .venv)
// are not the strategy's own.
// With the bytecode too: its code names the source, which the bridge's own
// frames are told apart by.
func TestBridgeMarksOnlyTheStrategysFrames(t *testing.T) {
	bothWays(t, testBridgeMarksOnlyTheStrategysFrames)
}

func testBridgeMarksOnlyTheStrategysFrames(t *testing.T, compiled bool) {
	dir := t.TempDir()
	lib := filepath.Join(dir, ".venv", "lib", "python3", "site-packages")
	os.MkdirAll(lib, 0o755)
	os.WriteFile(filepath.Join(lib, "fakelib.py"), []byte("def boom():\n    raise RuntimeError('boom')\n"), 0o644)
	strategy := filepath.Join(dir, "strategy.py")
	os.WriteFile(strategy, []byte("import os, sys\nsys.path.insert(0, "+
		"os.path.join(os.path.dirname(__file__), '.venv', 'lib', 'python3', 'site-packages'))\n"+
		"import fakelib\nfakelib.boom()\ndef on_data(ctx, history):\n    pass\n"), 0o644)
	w := startWorkerOf(t, strategy, compiled)
	e, err := DecodeError(w.next(TypeError))
	if err != nil {
		t.Fatal(err)
	}
	var user, library []string
	for _, f := range e.Frames {
		if f.User {
			user = append(user, filepath.Base(f.File))
		} else {
			library = append(library, filepath.Base(f.File))
		}
	}
	if len(user) != 1 || user[0] != "strategy.py" || len(library) != 1 || library[0] != "fakelib.py" {
		t.Fatalf("user frames %v, other frames %v", user, library)
	}
}

// A strategy whose folder lies inside a site-packages (shipped as a
// package) is the user's code all the same: its frames and those of the
// modules beside it are the strategy's.
func TestBridgeMarksThePackagedStrategysFrames(t *testing.T) {
	bothWays(t, testBridgeMarksThePackagedStrategysFrames)
}

func testBridgeMarksThePackagedStrategysFrames(t *testing.T, compiled bool) {
	folder := filepath.Join(t.TempDir(), "lib", "python3", "site-packages", "mystrats")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "helper.py"), []byte("def boom():\n    raise RuntimeError('boom')\n"), 0o644)
	strategy := filepath.Join(folder, "strategy.py")
	os.WriteFile(strategy, []byte("import helper\nhelper.boom()\ndef on_data(ctx, history):\n    pass\n"), 0o644)
	w := startWorkerOf(t, strategy, compiled)
	e, err := DecodeError(w.next(TypeError))
	if err != nil {
		t.Fatal(err)
	}
	var user []string
	for _, f := range e.Frames {
		if f.User {
			user = append(user, filepath.Base(f.File))
		}
	}
	if !slices.Equal(user, []string{"strategy.py", "helper.py"}) {
		t.Fatalf("user frames %v, want strategy.py and helper.py (frames %+v)", user, e.Frames)
	}
}

func TestReaderRefusesOversizeBeforeAllocating(t *testing.T) {
	for _, n := range []uint32{0xffffff00, 9 << 20, 8<<20 + 1} {
		hdr := binary.BigEndian.AppendUint32(nil, n)
		r := NewReader(io.MultiReader(bytes.NewReader(hdr), zeros{}), 8<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := r.Next()
		runtime.ReadMemStats(&after)
		if _, ok := err.(*ProtocolError); !ok {
			t.Fatalf("length %d: %v, want a ProtocolError", n, err)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<10 {
			t.Fatalf("length %d: %d bytes allocated before refusing", n, grown)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func FuzzReader(f *testing.F) {
	good, _ := AppendJSON(nil, TypeManifest, map[string]any{"protocol": ProtocolVersion, "hooks": []string{"on_data"}, "history": 5, "params": map[string]any{"a": 1, "big": json.Number("1" + strings.Repeat("0", 30))}, "name": nil, "python": map[string]string{"executable": "p", "version": "3"}})
	f.Add(good)
	c := []byte{OpBuy, 1}
	c = binary.LittleEndian.AppendUint16(c, 1)
	c = binary.LittleEndian.AppendUint64(c, 7)
	c = binary.LittleEndian.AppendUint64(c, math.Float64bits(2))
	c = binary.LittleEndian.AppendUint64(c, math.Float64bits(10.5))
	c = binary.LittleEndian.AppendUint64(c, 2)
	c = append(c, 'A')
	y := binary.LittleEndian.AppendUint64(nil, 2)
	y = append(y, 0)
	y = binary.LittleEndian.AppendUint32(y, 1)
	y = binary.LittleEndian.AppendUint32(y, 1)
	y = binary.LittleEndian.AppendUint32(y, 0)
	y = binary.LittleEndian.AppendUint64(y, 1500)
	f.Add(append(append(appendHeader(nil, TypeCommand, len(c)), c...), append(appendHeader(nil, TypeYield, len(y)), y...)...))
	f.Add([]byte{0xff, 0xff, 0xff, 0x00})
	f.Add([]byte{0, 0, 0, 2, 'E', '{'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), 1<<16)
		for {
			fr, err := r.Next()
			if err != nil {
				return
			}
			if fr.Size() > 1<<16 {
				t.Fatalf("frame of %d bytes over the limit", fr.Size())
			}
			switch fr.Type {
			case TypeManifest:
				m, err := DecodeManifest(fr.Payload)
				if err == nil && (m.History < 1 || slices.Contains(m.Hooks, contract.HookOnData) == slices.Contains(m.Hooks, contract.HookOnBars)) {
					t.Fatalf("invalid manifest accepted: %+v", m)
				}
				var pe *ParamError
				var proto *ProtocolError
				if err != nil && !errors.As(err, &pe) && !errors.As(err, &proto) {
					t.Fatalf("manifest error of type %T: %v", err, err)
				}
			case TypeCommand:
				if c, err := DecodeCommand(fr.Payload); err == nil && c.validate() != nil {
					t.Fatalf("invalid command accepted: %+v", c)
				}
			case TypeYield:
				if y, err := DecodeYield(fr.Payload); err == nil {
					if uint64(len(y.Durations)) > y.Through {
						t.Fatalf("yield with more durations than calls accepted")
					}
				}
			case TypeError:
				DecodeError(fr.Payload)
			case TypeFinished:
				DecodeFinished(fr.Payload)
			}
		}
	})
}

// bytecodeTagOf asks the interpreter at py for its bytecode tag, as the
// engine's probe does.
func bytecodeTagOf(t *testing.T, py string) string {
	t.Helper()
	out, err := exec.Command(py, "-I", "-S", "-c",
		"import importlib.util, sys; print('%s-%s' % (sys.implementation.cache_tag, importlib.util.MAGIC_NUMBER.hex()))").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestCompileBridge: the bytecode is compiled once beside the source, named
// by the tag; a file that is not what was compiled (cut short, or its sum
// not matching) is compiled again, to the same bytes; a tag that is not a
// name, or an interpreter that does not run, is an error that leaves no
// file behind.
func TestCompileBridge(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	ctx := context.Background()
	tag := bytecodeTagOf(t, py)
	source, err := InstallBridge(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(source)
	pyc, err := CompileBridge(ctx, source, py, tag)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "stratbench_bridge."+tag+".pyc"); pyc != want {
		t.Fatalf("compiled to %s, want %s", pyc, want)
	}
	compiled, err := os.ReadFile(pyc)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(pyc)
	if err != nil {
		t.Fatal(err)
	}
	again := func(why string) {
		t.Helper()
		if got, err := CompileBridge(ctx, source, py, tag); err != nil || got != pyc {
			t.Fatalf("%s: %s, %v", why, got, err)
		}
	}
	again("again")
	if now, err := os.Stat(pyc); err != nil || !os.SameFile(first, now) || !now.ModTime().Equal(first.ModTime()) {
		t.Fatalf("an intact bytecode file was compiled again")
	}
	record, err := os.ReadFile(pyc + ".sha256")
	if err != nil || !strings.HasPrefix(string(record), hexSum(compiled)+" ") {
		t.Fatalf("record %q (%v), want the bytecode's sum first", record, err)
	}
	for why, spoil := range map[string]func(){
		"cut short":          func() { os.WriteFile(pyc, compiled[:100], 0o644) },
		"sum different":      func() { os.WriteFile(pyc+".sha256", []byte(strings.Repeat("0", 64)+string(record[64:])), 0o644) },
		"compiled otherwise": func() { os.WriteFile(pyc+".sha256", []byte(string(record[:65])+strings.Repeat("0", 64)+"\n"), 0o644) },
		"record missing":     func() { os.Remove(pyc + ".sha256") },
	} {
		spoil()
		before, err := os.Stat(pyc)
		if err != nil {
			t.Fatal(err)
		}
		again(why)
		if got, err := os.ReadFile(pyc); err != nil || !bytes.Equal(got, compiled) {
			t.Fatalf("%s: compiled again to %d bytes (%v), not the %d of the first", why, len(got), err, len(compiled))
		}
		// Compiled again: a new file took the old one's place.
		if now, err := os.Stat(pyc); err != nil || os.SameFile(before, now) {
			t.Fatalf("%s: not compiled again", why)
		}
		if got, err := os.ReadFile(pyc + ".sha256"); err != nil || !bytes.Equal(got, record) {
			t.Fatalf("%s: record %q, want %q", why, got, record)
		}
	}
	// A compile cut off (cancelled, or past its time) leaves nothing: a
	// stand-in interpreter writes where py_compile writes its temporary
	// file, beside its target, and never ends.
	slow := filepath.Join(t.TempDir(), "slow-python")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\n: > \"$7.12345\"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if got, err := CompileBridge(cut, source, slow, "slow-0"); err == nil {
		t.Errorf("a compile cut off gave %s", got)
	}
	for _, bad := range []string{"", "../x", "a/b", strings.Repeat("x", 65)} {
		if got, err := CompileBridge(ctx, source, py, bad); err == nil {
			t.Errorf("tag %q: compiled to %s", bad, got)
		}
	}
	if got, err := CompileBridge(ctx, source, filepath.Join(dir, "no-python"), "cpython-399-00000000"); err == nil {
		t.Errorf("a missing interpreter compiled to %s", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"stratbench_bridge." + tag + ".pyc", "stratbench_bridge." + tag + ".pyc.sha256", "stratbench_bridge.py"}; !slices.Equal(names, want) {
		t.Errorf("bridge folder holds %v, want %v", names, want)
	}
}
