package tearsheet

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"stratbench/internal/units"
)

//go:embed assets/page.html assets/report.css assets/report.js assets/uPlot.iife.min.js assets/uPlot.min.css
var assets embed.FS

// Kind is what a page reports on.
type Kind string

// Kinds of report.
const (
	KindJob         Kind = "job"
	KindSweep       Kind = "sweep"
	KindWalkForward Kind = "walkforward"
)

// page is what the template renders.
type page struct {
	Title, Version, Written string
	Kind                    Kind
	CSP                     string
	CSS                     template.CSS
	Scripts                 []template.JS
	Data                    template.JS
	Job                     *jobView
	Sweep                   *sweepView
}

// pageAssets are the page's inline style and scripts, and the
// Content-Security-Policy that allows exactly them: no request of any
// kind (default-src 'none'), scripts and styles only by their hashes (so
// that markup that got in could run nothing), images only from data: URIs.
type pageAssets struct {
	css     template.CSS
	scripts []template.JS
	csp     string
	tmpl    *template.Template
}

func loadAssets() (*pageAssets, error) {
	read := func(name string) (string, error) {
		b, err := assets.ReadFile("assets/" + name)
		return string(b), err
	}
	var a pageAssets
	uplot, err1 := read("uPlot.iife.min.js")
	app, err2 := read("report.js")
	ucss, err3 := read("uPlot.min.css")
	css, err4 := read("report.css")
	html, err5 := read("page.html")
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return nil, err
		}
	}
	a.css = template.CSS(ucss + "\n" + css)
	a.scripts = []template.JS{template.JS(uplot), template.JS(app)}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	a.csp = fmt.Sprintf("default-src 'none'; script-src %s %s; style-src %s; img-src data:; base-uri 'none'; form-action 'none'",
		hash(uplot), hash(app), hash(string(a.css)))
	var err error
	a.tmpl, err = template.New("page").Funcs(template.FuncMap{"bytes": units.Bytes}).Parse(html)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// Options are what a report says of itself.
type Options struct {
	// Version is the stratbench version writing the report.
	Version string
	// Now is when it is written (zero: the time now).
	Now time.Time
}

func (o Options) written() string {
	t := o.Now
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// WriteJob writes the HTML report of a job to w.
func WriteJob(w io.Writer, j *Job, o Options) error {
	v, d := j.view(o.Version)
	title := "job " + j.Report.JobID
	if name := baseName(j.Report.Strategy.Path); name != "" {
		title += " · " + name
	}
	return render(w, &page{Title: title, Kind: KindJob, Job: v}, map[string]any{"kind": KindJob, "job": d}, o)
}

// WriteSweep writes the HTML report of a sweep or a walk-forward to w.
func WriteSweep(w io.Writer, s *Sweep, o Options) error {
	v, d := s.view(o.Version)
	kind, noun := KindSweep, "sweep "
	if s.Doc.WalkForward != nil {
		kind, noun = KindWalkForward, "walk-forward "
	}
	title := noun + s.Doc.SweepID
	if name := baseName(s.Doc.Strategy.Path); name != "" {
		title += " · " + name
	}
	return render(w, &page{Title: title, Kind: kind, Sweep: v}, map[string]any{"kind": kind, "sweep": d}, o)
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func render(w io.Writer, p *page, data any, o Options) error {
	a, err := loadAssets()
	if err != nil {
		return fmt.Errorf("report assets: %w", err)
	}
	// encoding/json escapes <, > and & (and U+2028, U+2029) in strings,
	// so no text from the strategy can end the script element.
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("report data: %w", err)
	}
	if bytes.Contains(b, []byte("</")) {
		return fmt.Errorf("report data: unescaped markup")
	}
	p.Version, p.Written = o.Version, o.written()
	p.CSP, p.CSS, p.Scripts, p.Data = a.csp, a.css, a.scripts, template.JS(b)
	var buf bytes.Buffer
	if err := a.tmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}
