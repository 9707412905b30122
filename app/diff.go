package app

import (
	"fmt"
	"io"
	"strings"

	"stratbench/contract"
	"stratbench/internal/termtext"
	"stratbench/internal/units"
	"stratbench/internal/words"
	"stratbench/job"
)

// writeDiff writes what differs between two jobs: inputs (the parts of the
// fingerprint), status and failure, every metric, the hashes; and says
// when identical inputs traded differently.
func writeDiff(w io.Writer, a, b *job.Report) error {
	_, err := io.WriteString(w, termtext.Text(diffText(a, b)))
	return err
}

func diffText(a, b *job.Report) string {
	var out strings.Builder
	fmt.Fprintf(&out, "%-22s %-32s %-32s\n", "", a.JobID, b.JobID)
	row := func(name, x, y string) {
		mark := " "
		if x != y {
			mark = "≠"
		}
		fmt.Fprintf(&out, "%s %-20s %-32s %-32s\n", mark, name, clip(x, 32), clip(y, 32))
	}
	row("status", words.JobStatus(a.Status), words.JobStatus(b.Status))
	row("failure", failureText(a.Failure), failureText(b.Failure))
	row("strategy sha256", short(a.Strategy.SHA256), short(b.Strategy.SHA256))
	row("params", formatParams(a.Strategy.Params), formatParams(b.Strategy.Params))
	row("data", a.Data.Source, b.Data.Source)
	row("window", words.Window(a.Data.Window), words.Window(b.Data.Window))
	row("events", a.Data.From+" → "+a.Data.To, b.Data.From+" → "+b.Data.To)
	row("event count", units.Count(a.Data.Events), units.Count(b.Data.Events))
	row("cash", units.Money(a.Market.Cash), units.Money(b.Market.Cash))
	row("fee bps", units.Number(a.Market.FeeBps), units.Number(b.Market.FeeBps))
	row("slippage bps", units.Number(a.Market.SlippageBps), units.Number(b.Market.SlippageBps))
	row("short selling", onOff(a.Market.AllowShort), onOff(b.Market.AllowShort))
	row("python", a.Python.Executable+" "+a.Python.Version, b.Python.Executable+" "+b.Python.Version)
	row("stratbench", valueOr(a.Version, "-"), valueOr(b.Version, "-"))
	row("fingerprint", short(a.Fingerprint), short(b.Fingerprint))
	row("orders hash", short(a.OrdersHash), short(b.OrdersHash))
	ma, mb := metricTexts(a.Metrics), metricTexts(b.Metrics)
	var keys []string
	for _, mt := range (&contract.Metrics{}).List() {
		keys = append(keys, mt.Key)
	}
	for _, k := range keys {
		if ma != nil || mb != nil {
			row(k, valueOrDash(ma, k), valueOrDash(mb, k))
		}
	}
	diffSymbols(&out, row, a, b)
	if a.Fingerprint == b.Fingerprint && a.OrdersHash == b.OrdersHash {
		out.WriteString("\nsame inputs, same orders and fills\n")
	} else if a.Fingerprint == b.Fingerprint {
		out.WriteString("\nsame inputs, different orders or fills: the strategy is not deterministic\n")
	}
	return out.String()
}

// metricTexts returns each metric's text by key, or nil without metrics.
func metricTexts(m *contract.Metrics) map[string]string {
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for _, mt := range m.List() {
		out[mt.Key] = mt.Text()
	}
	return out
}

func valueOrDash(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "-"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func valueOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func failureText(f *contract.Failure) string {
	if f == nil {
		return "-"
	}
	return words.Where(f)
}
