// Package browsertest loads pages in a real headless Chromium, with the
// network off, for the tests of the HTML reports: it drives the browser
// over the DevTools protocol on a pipe (--remote-debugging-pipe), counts
// the requests a page makes, collects its console errors, evaluates
// expressions and takes screenshots.
package browsertest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// requiredEnv makes a missing Chromium a failure instead of a skip, as a
// missing test environment is (internal/testenv).
const requiredEnv = "STRATBENCH_TEST_VENV_REQUIRED"

// Path finds Chromium: $STRATBENCH_CHROMIUM, then chromium or
// chromium-browser on PATH. Without one the test is skipped, or fails
// under STRATBENCH_TEST_VENV_REQUIRED=1.
func Path(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STRATBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	why := "no chromium on PATH (apt-get install chromium)"
	if os.Getenv(requiredEnv) != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// Browser is a headless Chromium started for one test.
type Browser struct {
	cmd  *exec.Cmd
	w    *os.File // the browser reads commands here
	r    *os.File // and writes answers and events here
	mu   sync.Mutex
	next int
	wait map[int]chan message
	subs []func(message)
	done chan struct{}
	err  error
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start starts Chromium in a network namespace of its own (nothing but a
// loopback that is down: no request can leave), headless, with a fresh
// profile; t's cleanup stops it.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := Path(t)
	profile := t.TempDir()
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--user-data-dir="+profile,
		"--remote-debugging-pipe", "about:blank")
	cmd.Env = append(os.Environ(), "HOME="+profile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
	} else {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{inR, outW} // fds 3 and 4
	stderr, err := os.Create(profile + "/stderr.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	inR.Close()
	outW.Close()
	stderr.Close()
	b := &Browser{cmd: cmd, w: inW, r: outR, wait: map[int]chan message{}, done: make(chan struct{})}
	go b.read()
	t.Cleanup(func() {
		b.w.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		b.r.Close()
	})
	return b
}

// read dispatches the browser's messages until its pipe closes.
func (b *Browser) read() {
	defer close(b.done)
	br := bufio.NewReaderSize(b.r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.err = fmt.Errorf("the browser's pipe: %w", err)
			for _, ch := range b.wait {
				close(ch)
			}
			b.wait = map[int]chan message{}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.wait[m.ID]; ok {
				delete(b.wait, m.ID)
				ch <- m
			}
		}
		subs := b.subs
		b.mu.Unlock()
		if m.Method != "" {
			for _, f := range subs {
				f(m)
			}
		}
	}
}

// call sends a command (in session, "" for the browser) and returns its
// result.
func (b *Browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return b.err
	}
	b.next++
	id := b.next
	ch := make(chan message, 1)
	b.wait[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(raw, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser went away", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Page is one tab, with what it has logged and requested so far.
type Page struct {
	b       *Browser
	session string
	mu      sync.Mutex
	errors  []string
	reqs    []string
	loaded  chan struct{}
	once    sync.Once
}

// NewPage opens a tab of width × height CSS pixels.
func (b *Browser) NewPage(ctx context.Context, width, height int) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: att.SessionID, loaded: make(chan struct{})}
	b.mu.Lock()
	b.subs = append(b.subs, p.event)
	b.mu.Unlock()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		if err := b.call(ctx, p.session, m, nil, nil); err != nil {
			return nil, err
		}
	}
	err := b.call(ctx, p.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return p, err
}

// event records the page's console errors, exceptions and requests.
func (p *Page) event(m message) {
	if m.SessionID != p.session {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		json.Unmarshal(m.Params, &e)
		if e.Type == "error" || e.Type == "assert" || e.Type == "warning" {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, fmt.Sprint(a.Value, a.Description))
			}
			p.errors = append(p.errors, "console."+e.Type+": "+strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		var e struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(m.Params, &e)
		p.errors = append(p.errors, "exception: "+e.Details.Text+" "+e.Details.Exception.Description)
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Level, Source, Text, URL string
			} `json:"entry"`
		}
		json.Unmarshal(m.Params, &e)
		if e.Entry.Level == "error" || e.Entry.Level == "warning" {
			p.errors = append(p.errors, "log "+e.Entry.Source+" "+e.Entry.Level+": "+e.Entry.Text+" "+e.Entry.URL)
		}
	case "Network.requestWillBeSent":
		var e struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		json.Unmarshal(m.Params, &e)
		p.reqs = append(p.reqs, e.Request.URL)
	case "Page.loadEventFired":
		p.once.Do(func() { close(p.loaded) })
	}
}

// Load navigates to url and waits until the page's load event, then until
// the page's expression ready is true (evaluated as a promise in the page:
// it may wait for an event there). It returns how long that took.
func (p *Page) Load(ctx context.Context, url, ready string) (time.Duration, error) {
	start := time.Now()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return 0, err
	}
	if nav.ErrorText != "" {
		return 0, fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	select {
	case <-p.loaded:
	case <-ctx.Done():
		return 0, fmt.Errorf("load %s: %w", url, ctx.Err())
	}
	if ready != "" {
		if _, err := p.Eval(ctx, ready); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// Eval evaluates expr in the page (awaiting a promise) and returns its
// value as JSON.
func (p *Page) Eval(ctx context.Context, expr string) (json.RawMessage, error) {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.b.call(ctx, p.session, "Runtime.evaluate",
		map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if err != nil {
		return nil, err
	}
	if res.Exception != nil {
		return nil, fmt.Errorf("evaluate %q: %s %s", expr, res.Exception.Text, res.Exception.Exception.Description)
	}
	return res.Result.Value, nil
}

// Errors are the console errors and warnings, exceptions and log errors
// of the page so far.
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Requests are the URLs the page requested so far, the page's own
// included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// Screenshot writes a PNG of the whole page (up to maxHeight pixels) to
// path.
func (p *Page) Screenshot(ctx context.Context, path string, maxHeight int) error {
	var metrics struct {
		Content struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"cssContentSize"`
	}
	if err := p.b.call(ctx, p.session, "Page.getLayoutMetrics", nil, &metrics); err != nil {
		return err
	}
	h := min(metrics.Content.Height, float64(maxHeight))
	var shot struct {
		Data string `json:"data"`
	}
	err := p.b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": metrics.Content.Width, "height": h, "scale": 1}}, &shot)
	if err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return err
	}
	if len(png) == 0 {
		return errors.New("an empty screenshot")
	}
	return os.WriteFile(path, png, 0o644)
}
