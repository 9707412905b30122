package app

import (
	"context"
	"errors"
	"io"

	"stratbench/data"
	"stratbench/internal/termtext"
	"stratbench/present"
	"stratbench/session"
)

// DataOptions are the options of `stratbench data info` and `stratbench
// data convert` (README "Bar data").
type DataOptions struct {
	Paths     []string // the PATH arguments: files and folders, as --data takes them
	From, To  string   // the window, both ends inclusive; "" for open
	Timeframe string   // --timeframe: which of freqtrade's timeframes
	Out       string   // convert: the Parquet file to write
	Output    string   // "text" or "json"
	Streams
}

// dataOptions are the data package's options of o, or a usage error.
func (o DataOptions) dataOptions() (data.Options, error) {
	if err := checkOutput(o.Output, "text", "json"); err != nil {
		return data.Options{}, err
	}
	w, err := data.ParseWindow(o.From, o.To)
	if err != nil {
		return data.Options{}, dataError(err)
	}
	budget, spill, err := session.Budgets()
	if err != nil {
		return data.Options{}, usage(err)
	}
	return data.Options{Window: w, Budget: budget, SpillBudget: spill, Timeframe: o.Timeframe}, nil
}

// dataError maps an error of package data (or of the market's options)
// to the command's, naming the flags (runFlagNames.input).
func dataError(err error) error { return commandFlags.input(err) }

// DataInfo prints what stratbench reads of the data at o.Paths: per symbol
// its bars, first and last time, interval and gaps, formats and size; per
// file its format and layout; and the data's fingerprint.
func DataInfo(ctx context.Context, o DataOptions) error {
	opts, err := o.dataOptions()
	if err != nil {
		return err
	}
	signals := listenSignals()
	defer signals.Close()
	var sum *data.Summary
	err = signals.Setup(ctx, func(ctx context.Context) error {
		var err error
		sum, err = data.Describe(ctx, o.Paths, opts)
		return err
	})
	if err != nil {
		return dataError(err)
	}
	if o.Output == "json" {
		return present.WriteJSON(o.Stdout, sum)
	}
	_, err = io.WriteString(o.Stdout, termtext.Text(present.DataSummaryText(sum)))
	return err
}

// DataConvert writes the bars of o.Paths inside the window to o.Out as
// one sorted Parquet file (data.Convert), and says what it wrote.
func DataConvert(ctx context.Context, o DataOptions) error {
	opts, err := o.dataOptions()
	if err != nil {
		return err
	}
	if o.Out == "" {
		return usage(errors.New("--out FILE.parquet: the file to write is missing"))
	}
	signals := listenSignals()
	defer signals.Close()
	var res *data.Converted
	err = signals.Setup(ctx, func(ctx context.Context) error {
		var err error
		res, err = data.Convert(ctx, o.Paths, opts, o.Out)
		return err
	})
	if err != nil {
		return dataError(err)
	}
	if o.Output == "json" {
		return present.WriteJSON(o.Stdout, res)
	}
	_, err = io.WriteString(o.Stdout, present.ConvertedText(res))
	return err
}
