// This file is long because it is one mapping: a job's report, records
// and logs into the view the job page's template reads (the header, the
// metric groups, the monthly heatmap, the price and trade series, the
// hooks and limits). Each piece is a small pure function; split, they
// would be read against a template and types in another file anyway.

package tearsheet

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"stratbench/contract"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
	"stratbench/metrics"
)

// Job is what a job's report is drawn from: its report and what its
// folder holds (LoadJob reads them). Everything but the report may be
// missing; the page says what is.
type Job struct {
	Report *job.Report
	Equity *Equity
	Trades *Trades
	Fills  *Fills
	// Logs are the last lines of the log, LogLines how many it has.
	Logs     []LogLine
	LogLines int
	// Artifacts are the files of the artifacts folder.
	Artifacts         []Artifact
	ArtifactsUnlisted int
	// MonteCarlo is the job's latest `stratbench montecarlo`, nil if none.
	MonteCarlo *job.MonteCarlo
	// Notes say what could not be read.
	Notes []string
}

// LogLine is a line of the job's log.
type LogLine struct {
	Time   time.Time
	Stream string
	Line   string
}

// Artifact is a file of the job's artifacts folder, as the page shows it.
type Artifact struct {
	Name   string // as the folder names it (slash-separated)
	Bytes  int64
	Href   template.URL // a file: URL of it (built here, not from the strategy)
	Image  template.URL // a data: URI of an image small enough to embed (its type checked)
	Note   string       // why an image is not shown
	Record bool         // one of stratbench's records (equity.csv, …)
}

// metricRow is a row of the metrics table.
type metricRow struct {
	Label, Value string
	Basis        string // "periods", "trades" or "run"
	Key          string // the report's key, or "" for a figure computed here
	Title        string // how it is computed, for the tooltip
}

type metricGroup struct {
	Name string
	Rows []metricRow
}

type hookRow struct {
	Hook                        string
	Count, Failures             string
	Total, P50, P95, Max, Limit string
	Share                       float64 // max / limit, for the meter
}

type limitRow struct {
	What, Peak, Limit string
	Share             float64
}

type monthCell struct {
	Text  string
	Class string
	Title string
}

type monthRow struct {
	Label string
	Cells []monthCell
	Total string
}

type heatTable struct {
	Title   string
	Columns []string
	Rows    []monthRow
}

// jobView is the job's part of the page.
type jobView struct {
	ID, Status   string
	Outcome      string
	Header       [][2]string
	Failure      *contract.Failure
	Params       string
	Metrics      []metricGroup
	Annual       string
	Heat         *heatTable
	Hooks        []hookRow
	Limits       []limitRow
	Artifacts    []Artifact
	Unlisted     int
	Logs         []LogLine
	LogNote      string
	Metadata     string
	Notes        []string
	Prices       []string // symbols with a price chart
	TradesNote   string
	HasEquity    bool
	HasTrades    bool
	HasRolling   bool
	HasHistogram bool
	MonteCarlo   *mcView
}

// jobData is the job's data for the page's script: the charts' series and
// the trade list.
type jobData struct {
	Equity   *xy         `json:"equity,omitempty"`
	Drawdown *xy         `json:"drawdown,omitempty"`
	Rolling  *xy         `json:"rolling,omitempty"`
	Window   string      `json:"window,omitempty"`
	Hist     *histData   `json:"hist,omitempty"`
	Prices   []priceData `json:"prices,omitempty"`
	Trades   *tradeData  `json:"trades,omitempty"`
	Fan      *fanData    `json:"fan,omitempty"`
}

// xy is a chart's series over shared times (seconds).
type xy struct {
	T      secs     `json:"t"`
	Y      []nums   `json:"y"`
	Labels []string `json:"labels"`
}

type histData struct {
	Edges  nums  `json:"edges"`
	Counts []int `json:"counts"`
}

type priceData struct {
	Symbol string `json:"symbol"`
	T      secs   `json:"t"`
	Close  nums   `json:"close"`
	// The fills of the symbol: times, prices, 1 buy / 0 sell.
	FillT   secs  `json:"fill_t"`
	FillP   nums  `json:"fill_p"`
	FillBuy []int `json:"fill_buy"`
}

// tradeData is the trade list: one row per trade, columns as Columns.
type tradeData struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Total   int      `json:"total"`
}

// What a job's page holds is bounded whatever the job, so that the report
// of a 1,000,000-bar job stays under 5 MB (docs/report.md; the sizes are
// TestJobReportSizeBound's):
//
//   - the trade list: the first and the last maxTradesListed/2 trades
//     (a trade's row is about 150 bytes: 300 KB); the metrics cover every
//     trade read, and trades.csv in the job folder has them all;
//   - the price charts: maxPriceBuckets stretches shared by the symbols
//     (each keeps at most 4 points: 32,000 points, about 20 bytes each),
//     at most displayBuckets a symbol;
//   - the log: its last maxLogLines lines, at most maxLogBytes of them (a
//     character may take 5 bytes in the page: '"' is &#34;);
//   - the failure's message and traceback, and what on_finish returned:
//     maxTextShown bytes each.
const (
	maxTradesListed = 2_000
	maxPriceBuckets = 8_000
	maxLogLines     = 200
	maxLogBytes     = 64 << 10
	maxTextShown    = 64 << 10
)

func (j *Job) view(version string) (*jobView, *jobData) {
	rep := j.Report
	v := &jobView{ID: rep.JobID, Status: string(rep.Status), Notes: j.Notes, Failure: cleanFailure(rep.Failure)}
	v.Outcome = outcome(rep)
	v.Header = header(rep, version)
	d := &jobData{}
	var curve metrics.Curve
	if j.Equity != nil && j.Equity.Curve.Len() > 0 {
		curve = j.Equity.Curve
		if j.Equity.Note != "" {
			v.Notes = append(v.Notes, j.Equity.Note)
		}
	}
	ppy := 0.0
	if rep.Metrics != nil {
		ppy = rep.Metrics.PeriodsPerYear
	}
	if ppy == 0 {
		ppy = curve.PeriodsPerYear()
	}
	per := metrics.PeriodStats(curve, ppy)
	var trades []metrics.Trade
	if j.Trades != nil {
		trades = j.Trades.Trades
		if j.Trades.Note != "" {
			v.Notes = append(v.Notes, j.Trades.Note)
		}
	}
	ts := metrics.TradeStats(trades)
	v.Metrics = metricTable(rep.Metrics, per, ts)
	v.Annual = annualisation(rep.Metrics, curve, ppy)
	if curve.Len() >= 2 {
		v.HasEquity = true
		d.Equity, d.Drawdown = equitySeries(j.Equity, rep)
		r := curve.Returns()
		w := metrics.RollingWindow(len(r), ppy)
		if len(r) >= 10 {
			roll := metrics.RollingSharpe(r, w, ppy)
			idx := pick(len(roll), displayBuckets, roll)
			d.Rolling = &xy{T: takeT(curve.Times[1:], idx), Y: []nums{takeF(roll, idx)}, Labels: []string{"rolling Sharpe"}}
			d.Window = fmt.Sprintf("%s periods (about %s)", units.Count(w), units.Duration(time.Duration(float64(w)/ppy*metrics.SecondsPerYear*1e9)))
			v.HasRolling = true
		}
		edges, counts := metrics.Histogram(r, 60)
		if len(edges) > 0 {
			d.Hist = &histData{Edges: edges, Counts: counts}
			v.HasHistogram = true
		}
		v.Heat = heatmap(curve)
	}
	if j.Equity != nil {
		d.Prices = prices(j.Equity.Prices, j.Fills)
		for _, p := range d.Prices {
			v.Prices = append(v.Prices, p.Symbol)
		}
	}
	if j.Fills != nil && j.Fills.Note != "" {
		v.Notes = append(v.Notes, j.Fills.Note)
	}
	if len(trades) > 0 {
		v.HasTrades = true
		d.Trades = tradeList(trades)
		if len(trades) > maxTradesListed {
			v.TradesNote = fmt.Sprintf("The first and the last %s of %s trades are listed (trades.csv in the job folder has them all); the metrics cover them all.",
				units.Count(maxTradesListed/2), units.Count(len(trades)))
		}
	}
	v.MonteCarlo, d.Fan = monteCarlo(j.MonteCarlo)
	v.Hooks, v.Limits = hooksAndLimits(rep)
	v.Artifacts, v.Unlisted = j.Artifacts, j.ArtifactsUnlisted
	logs, size := j.Logs, 0
	for i := len(logs) - 1; i >= 0; i-- {
		if size += len(logs[i].Line); size > maxLogBytes {
			logs = logs[i+1:]
			break
		}
	}
	v.Logs = make([]LogLine, len(logs))
	for i, l := range logs {
		v.Logs[i] = LogLine{Time: l.Time, Stream: l.Stream, Line: termtext.Line(l.Line)}
	}
	if j.LogLines > len(logs) {
		v.LogNote = fmt.Sprintf("the last %s of %s lines", units.Count(len(logs)), units.Count(j.LogLines))
	}
	if len(rep.Metadata) > 0 && string(rep.Metadata) != "null" {
		v.Metadata = cutText(termtext.Text(indentJSON(rep.Metadata)), "job.json has it whole")
	}
	return v, d
}

// cleanFailure is f with its text stripped of terminal escapes and control
// characters, as every other surface shows it (they are escaped for HTML
// anyway; without this they would be invisible bytes in the page).
func cleanFailure(f *contract.Failure) *contract.Failure {
	if f == nil {
		return nil
	}
	c := *f
	c.Message = cutText(termtext.Text(f.Message), "job.json has it whole")
	c.Traceback = cutText(termtext.Text(f.Traceback), "job.json has it whole")
	c.Frames = make([]contract.Frame, len(f.Frames))
	for i, fr := range f.Frames {
		fr.File, fr.Function, fr.Source = termtext.Line(fr.File), termtext.Line(fr.Function), termtext.Line(fr.Source)
		c.Frames[i] = fr
	}
	return &c
}

// cutText cuts s at maxTextShown bytes (on a character's boundary),
// saying where the rest is.
func cutText(s, rest string) string {
	if len(s) <= maxTextShown {
		return s
	}
	i := maxTextShown
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "\n… cut at " + units.Bytes(maxTextShown) + ": " + rest
}

func outcome(rep *job.Report) string {
	switch {
	case rep.Failure != nil:
		f := rep.Failure
		s := fmt.Sprintf("failed: %s in %s", f.Kind, f.Hook)
		if f.EventIndex != nil {
			s += fmt.Sprintf(" at event %s", units.Count(*f.EventIndex))
		}
		return s
	case rep.Status == job.StatusStopped:
		return "stopped before the end of the data"
	case rep.Status == job.StatusRunning:
		return "still running: this report shows what it has written so far"
	}
	return "passed"
}

func header(rep *job.Report, version string) [][2]string {
	h := [][2]string{
		{"strategy", rep.Strategy.Path},
		{"sha256", rep.Strategy.SHA256},
		{"params", paramsText(rep.Strategy.Params)},
		{"data", rep.Data.Source},
		{"window", fmt.Sprintf("%s → %s (%s events)", rep.Data.From, rep.Data.To, units.Count(rep.Data.Events))},
		{"symbols", strings.Join(rep.Data.Symbols, ", ")},
		{"market", fmt.Sprintf("cash %s · fees %s bps · slippage %s bps · short selling %s",
			units.Money(rep.Market.Cash), units.Number(rep.Market.FeeBps), units.Number(rep.Market.SlippageBps), yesNo(rep.Market.AllowShort))},
		{"interpreter", strings.TrimSpace(rep.Python.Executable + " " + rep.Python.Version)},
		{"sandbox", yesNo(rep.Python.Sandbox)},
		{"fingerprint", rep.Fingerprint},
		{"orders hash", rep.OrdersHash},
		{"started", rep.StartedAt.UTC().Format(time.RFC3339)},
	}
	if rep.Data.Window != "" && rep.Data.Window != "-..-" {
		h[4][1] += " · asked " + rep.Data.Window
	}
	if rep.FinishedAt != nil {
		h = append(h, [2]string{"took", units.Millis(float64(rep.DurationMS))})
	}
	if rep.Sweep != nil {
		s := fmt.Sprintf("%s, run %d", rep.Sweep.ID, rep.Sweep.Index)
		if rep.Sweep.Fold != nil {
			s += fmt.Sprintf(", fold %d %s", *rep.Sweep.Fold, rep.Sweep.Phase)
		}
		h = append(h, [2]string{"sweep", s})
	}
	ran := rep.Version
	if ran == "" {
		ran = "unknown (an older version)"
	}
	h = append(h, [2]string{"stratbench", ran + " (this report: " + version + ")"})
	return h
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// paramsText is params as k=v, by name, values as JSON.
func paramsText(p map[string]any) string {
	if len(p) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + jsonText(p[k])
	}
	return strings.Join(parts, " ")
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // text for the template, which escapes it
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonText is v as JSON text for people: <, > and & as they are (the
// template escapes what it shows).
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// basis of the report's metrics: computed from the periods of the equity
// curve, from the closed trades, or counted over the run.
var reportBasis = map[string]string{
	"total_return": "periods", "cagr": "periods", "volatility": "periods", "sharpe": "periods", "sortino": "periods",
	"calmar": "periods", "max_drawdown": "periods", "max_drawdown_duration_s": "periods", "exposure": "periods",
	"buy_and_hold_return": "periods", "periods_per_year": "periods", "bar_interval_s": "periods",
	"trades": "trades", "win_rate": "trades", "profit_factor": "trades", "expectancy": "trades",
}

var reportLabel = map[string]string{
	"start_equity": "start equity", "final_equity": "final equity", "final_cash": "final cash", "positions": "positions held",
	"total_return": "total return", "cagr": "CAGR", "volatility": "volatility (annualised)", "sharpe": "Sharpe",
	"sortino": "Sortino", "calmar": "Calmar", "max_drawdown": "max drawdown",
	"max_drawdown_duration_s": "longest time under water", "fills": "fills", "rejections": "rejections",
	"cancels": "cancels", "open_orders": "open orders at the end", "trades": "trades (closed)", "win_rate": "win rate",
	"profit_factor": "profit factor", "expectancy": "expectancy (mean P&L per trade)", "fees": "fees",
	"exposure": "exposure", "buy_and_hold_return": "buy and hold return", "warmup_bars": "warm-up bars",
	"events": "events", "bar_interval_s": "bar interval", "periods_per_year": "periods per year",
}

// groupOf orders the report's keys into the table's groups.
var groupOf = map[string]int{
	"total_return": 0, "cagr": 0, "volatility": 0, "sharpe": 0, "sortino": 0, "calmar": 0, "max_drawdown": 0,
	"max_drawdown_duration_s": 0, "exposure": 0, "buy_and_hold_return": 0,
	"trades": 1, "win_rate": 1, "profit_factor": 1, "expectancy": 1,
}

// metricTable is every metric of the report (from the report) and the
// tearsheet's own (from the records), in three groups.
func metricTable(m *contract.Metrics, p metrics.Periods, t metrics.Trades) []metricGroup {
	groups := []metricGroup{{Name: "Returns and risk"}, {Name: "Trades"}, {Name: "The run"}}
	if m == nil {
		groups[2].Rows = append(groups[2].Rows, metricRow{Label: "metrics", Value: "none: the run ended before its first event, or is still running", Basis: "run"})
	} else {
		for _, mt := range m.List() {
			g, ok := groupOf[mt.Key]
			if !ok {
				g = 2
			}
			basis := reportBasis[mt.Key]
			if basis == "" {
				basis = "run"
			}
			label := reportLabel[mt.Key]
			if label == "" {
				label = mt.Key
			}
			value := mt.Text()
			if mark := words.AnnualMark(m, mt); mark != "" {
				value += " " + mark // annualised from a short span: the note above says so
			}
			groups[g].Rows = append(groups[g].Rows, metricRow{Label: label, Value: value, Basis: basis, Key: mt.Key})
		}
	}
	pct, num := fmtPercent, fmtNumber
	groups[0].Rows = append(groups[0].Rows,
		metricRow{Label: "duration of the max drawdown", Value: fmtDuration(p.MaxDrawdownDuration, p.MaxDrawdown > 0), Basis: "periods", Title: "from the peak before the deepest drawdown until the equity was back at it (or the end)"},
		metricRow{Label: "Ulcer index", Value: num(p.Ulcer), Basis: "periods", Title: "√(Σ drawdown² / (n − 1))"},
		metricRow{Label: "skew", Value: num(p.Skew), Basis: "periods", Title: "sample skewness of the period returns"},
		metricRow{Label: "kurtosis (excess)", Value: num(p.Kurtosis), Basis: "periods", Title: "sample excess kurtosis of the period returns"},
		metricRow{Label: "VaR 95 % (one period)", Value: pct(p.VaR95), Basis: "periods", Title: "mean + std × Φ⁻¹(0.05): normal, one period"},
		metricRow{Label: "CVaR 95 % (one period)", Value: pct(p.CVaR95), Basis: "periods", Title: "the normal expected shortfall beyond the VaR"},
		metricRow{Label: "best period", Value: pct(p.Best), Basis: "periods"},
		metricRow{Label: "worst period", Value: pct(p.Worst), Basis: "periods"},
	)
	groups[1].Rows = append(groups[1].Rows,
		metricRow{Label: "trades read from trades.csv", Value: units.Count(t.Count), Basis: "trades"},
		metricRow{Label: "payoff ratio", Value: num(t.Payoff), Basis: "trades", Title: "mean winning P&L / mean losing loss"},
		metricRow{Label: "average trade", Value: pct(t.AvgReturn), Basis: "trades", Title: "mean of net P&L / entry notional"},
		metricRow{Label: "median trade", Value: pct(t.MedianReturn), Basis: "trades"},
		metricRow{Label: "best trade", Value: pct(t.Best), Basis: "trades"},
		metricRow{Label: "worst trade", Value: pct(t.Worst), Basis: "trades"},
		metricRow{Label: "average holding time", Value: fmtDuration(t.AvgHolding, t.Count > 0), Basis: "trades"},
		metricRow{Label: "SQN", Value: num(t.SQN), Basis: "trades", Title: "√n × mean P&L / std P&L"},
	)
	return groups
}

func fmtPercent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return units.Percent(f)
}

func fmtNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return units.Number(f)
}

func fmtDuration(d time.Duration, ok bool) string {
	if !ok {
		return "–"
	}
	return units.Duration(d)
}

// annualisation is the sentence that says how annualised figures are made.
func annualisation(m *contract.Metrics, c metrics.Curve, ppy float64) string {
	if ppy <= 0 {
		return "Nothing is annualised: the data spans no time."
	}
	n := max(c.Len()-1, 0)
	short := ""
	if _, isShort, ok := m.AnnualSpan(); ok && isShort {
		short = fmt.Sprintf(" That span is under %s: too short for an annualised figure to mean much (a Sharpe ratio's standard error is then 2 or more); they are marked %s.",
			words.MinAnnualSpan(), words.ShortSpanMark)
	}
	if m != nil && m.Events > 0 {
		return fmt.Sprintf("Annualised figures use %s periods per year: the %s returns of the equity curve (one point per distinct timestamp) over its span of %s (%s Julian years), so gaps without bars (nights, weekends) do not inflate them. The risk-free rate is 0.%s",
			units.Number(ppy), units.Count(n), units.Duration(time.Duration(c.Years()*metrics.SecondsPerYear*1e9)), units.Number(c.Years()), short)
	}
	return fmt.Sprintf("Annualised figures use %s periods per year.%s", units.Number(ppy), short)
}

// equitySeries are the equity and buy-and-hold curve, and the drawdown.
func equitySeries(e *Equity, rep *job.Report) (*xy, *xy) {
	c := e.Curve
	ys := [][]float64{c.Equity}
	labels := []string{"strategy"}
	if len(e.BuyAndHold) == c.Len() {
		ys = append(ys, e.BuyAndHold)
		labels = append(labels, "buy and hold")
	}
	idx := pick(c.Len(), displayBuckets, ys...)
	eq := &xy{T: takeT(c.Times, idx), Labels: labels}
	for _, y := range ys {
		eq.Y = append(eq.Y, takeF(y, idx))
	}
	dd := metrics.Drawdown(c)
	di := pick(len(dd), displayBuckets, dd)
	ddv := takeF(dd, di)
	for i := range ddv {
		ddv[i] *= 100
	}
	return eq, &xy{T: takeT(c.Times, di), Y: []nums{ddv}, Labels: []string{"drawdown %"}}
}

// heatmap is the monthly returns by year, or, over less than two months,
// the daily returns by month.
func heatmap(c metrics.Curve) *heatTable {
	months := metrics.Monthly(c)
	if len(months) >= 2 {
		h := &heatTable{Title: "Monthly returns", Columns: []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}}
		byYear := map[int]*monthRow{}
		var years []int
		totals := map[int]float64{}
		for _, m := range months {
			y := m.Start.Year()
			row, ok := byYear[y]
			if !ok {
				row = &monthRow{Label: fmt.Sprint(y), Cells: make([]monthCell, 12)}
				byYear[y] = row
				years = append(years, y)
				totals[y] = 1
			}
			row.Cells[m.Start.Month()-1] = cell(m.Return, m.Start.Format("January 2006"))
			totals[y] *= 1 + m.Return
		}
		for _, y := range years {
			byYear[y].Total = fmtPercent(totals[y] - 1)
			h.Rows = append(h.Rows, *byYear[y])
		}
		return h
	}
	days := metrics.Daily(c)
	if len(days) == 0 {
		return nil
	}
	h := &heatTable{Title: "Daily returns (the data spans less than two months)"}
	for d := 1; d <= 31; d++ {
		h.Columns = append(h.Columns, fmt.Sprint(d))
	}
	var row *monthRow
	total := 1.0
	for _, d := range days {
		label := d.Start.Format("Jan 2006")
		if row == nil || row.Label != label {
			if row != nil {
				row.Total = fmtPercent(total - 1)
				h.Rows = append(h.Rows, *row)
			}
			row, total = &monthRow{Label: label, Cells: make([]monthCell, 31)}, 1
		}
		row.Cells[d.Start.Day()-1] = cell(d.Return, d.Start.Format("Mon 2 January 2006"))
		total *= 1 + d.Return
	}
	row.Total = fmtPercent(total - 1)
	h.Rows = append(h.Rows, *row)
	return h
}

// cell colours a return: five shades each way, by its size.
func cell(r float64, title string) monthCell {
	class := "h0"
	if a := math.Abs(r); a > 0 && !math.IsNaN(r) {
		level := 1
		for _, step := range []float64{0.001, 0.005, 0.02, 0.05} {
			if a > step {
				level++
			}
		}
		sign := "p"
		if r < 0 {
			sign = "n"
		}
		class = fmt.Sprintf("h%s%d", sign, level)
	}
	return monthCell{Text: units.Number(r * 100), Class: class, Title: title + ": " + fmtPercent(r)}
}

// prices are the symbols' price series with their fills.
func prices(ps []Price, fills *Fills) []priceData {
	bySymbol := map[string][]Fill{}
	if fills != nil {
		for _, f := range fills.Fills {
			bySymbol[f.Symbol] = append(bySymbol[f.Symbol], f)
		}
	}
	out := make([]priceData, 0, len(ps))
	buckets := displayBuckets
	if len(ps) > 0 {
		buckets = max(min(displayBuckets, maxPriceBuckets/len(ps)), 1)
	}
	for _, p := range ps {
		idx := pick(len(p.Close), buckets, p.Close)
		pd := priceData{Symbol: p.Symbol, T: takeT(p.Times, idx), Close: takeF(p.Close, idx), FillT: secs{}, FillP: nums{}, FillBuy: []int{}}
		for _, f := range bySymbol[p.Symbol] {
			pd.FillT = append(pd.FillT, seconds(f.Time))
			pd.FillP = append(pd.FillP, f.Price)
			b := 0
			if f.Buy {
				b = 1
			}
			pd.FillBuy = append(pd.FillBuy, b)
		}
		out = append(out, pd)
	}
	return out
}

// tradeList is the trade list: every trade, or the first and the last
// maxTradesListed/2 of more (numbered as in trades.csv, so the gap shows).
func tradeList(trades []metrics.Trade) *tradeData {
	d := &tradeData{Columns: []string{"#", "symbol", "side", "qty", "entry", "entry price", "exit", "exit price", "fees", "P&L", "return", "held (s)"},
		Total: len(trades)}
	listed := make([]int, 0, min(len(trades), maxTradesListed))
	for i := range trades {
		if len(trades) <= maxTradesListed || i < maxTradesListed/2 || i >= len(trades)-maxTradesListed/2 {
			listed = append(listed, i)
		}
	}
	d.Rows = make([][]any, len(listed))
	for k, i := range listed {
		t := trades[i]
		side := "long"
		if !t.Long {
			side = "short"
		}
		d.Rows[k] = []any{i + 1, t.Symbol, side, jsonNum(t.Qty), seconds(t.EntryTime), jsonNum(t.EntryPrice), seconds(t.ExitTime),
			jsonNum(t.ExitPrice), jsonNum(t.Fees), jsonNum(t.NetPnL), jsonNum(t.Return), float64(t.ExitTime-t.EntryTime) / 1e9}
	}
	return d
}

func hooksAndLimits(rep *job.Report) ([]hookRow, []limitRow) {
	l := rep.Limits
	limits := map[contract.Hook]float64{contract.HookOnData: l.OnDataS, contract.HookOnBars: l.OnDataS,
		contract.HookOnExecution: l.OnExecutionS, contract.HookOnFinish: l.OnFinishS}
	_, byTime := rep.Hooks[contract.HookOnBars]
	var rows []hookRow
	for _, h := range contract.Hooks() {
		s, ok := rep.Hooks[h]
		if !ok || h == contract.HookOnData && byTime {
			continue
		}
		lim := limits[h] * 1000
		share := 0.0
		if lim > 0 {
			share = min(s.MaxMS/lim, 1)
		}
		rows = append(rows, hookRow{Hook: string(h), Count: units.Count(s.Count), Failures: units.Count(s.Failures),
			Total: units.Millis(s.TotalMS), P50: units.Millis(s.P50MS), P95: units.Millis(s.P95MS), Max: units.Millis(s.MaxMS),
			Limit: units.Millis(lim), Share: share})
	}
	share := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return min(a/b, 1)
	}
	r := rep.Resources
	lims := []limitRow{
		{What: "memory (the whole tree)", Peak: units.Bytes(r.PeakMemoryBytes), Limit: units.Bytes(l.MemoryBytes), Share: share(float64(r.PeakMemoryBytes), float64(l.MemoryBytes))},
		{What: "processes", Peak: units.Count(r.PeakProcesses), Limit: units.Count(l.Processes), Share: share(float64(r.PeakProcesses), float64(l.Processes))},
		{What: "output (stdout + stderr)", Peak: units.Bytes(rep.Logs.Bytes), Limit: units.Bytes(l.LogBytes), Share: share(float64(rep.Logs.Bytes), float64(l.LogBytes))},
	}
	if rep.Logs.Truncated {
		lims[2].Peak += " (truncated)"
	}
	if r.TreeTracking != "" {
		lims[1].What += " · tracked by " + r.TreeTracking
	}
	return rows, lims
}
