package sweepview

import (
	"fmt"

	"stratbench/sweep"
	"stratbench/themes"
)

// robustnessText is the sweep's robustness block in the header, once the
// sweep has finished (docs/robustness.md): the plain verdict and the two
// figures it reads, "" while it runs and when the block was not computed
// (the summary and the report say why).
func robustnessText(th themes.Theme, d *sweep.Document) string {
	rb := d.Robustness
	if rb == nil {
		return ""
	}
	style := th.Warn
	switch rb.Verdict {
	case "likely real":
		style = th.OK
	case "likely overfit":
		style = th.Fail
	}
	return style.Render(rb.Verdict) + th.Muted.Render(fmt.Sprintf(" (deflated Sharpe %.2f, PBO %.2f)", rb.DeflatedSharpe, rb.PBO))
}
