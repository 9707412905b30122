package data

import (
	"regexp"
	"strings"
)

// freqtrade's data folders (user_data/data/EXCHANGE) hold one file per pair,
// timeframe and candle type, named PAIR-TIMEFRAME[-CANDLE].EXT: the pair
// with "/", " ", ".", "@", "$", "+" and ":" written as "_"
// (BTC/USDT:USDT → BTC_USDT_USDT), the timeframe with "M" (month) written
// "Mo", and the candle type (futures, mark, index, premiumIndex,
// funding_rate) after the timeframe for futures data, which freqtrade keeps
// in a futures/ folder. EXT is feather (its default), parquet, json or
// json.gz. The names are parsed here as freqtrade's own data handlers parse
// them (freqtrade/data/history/datahandlers/idatahandler.py: _OHLCV_REGEX,
// rebuild_pair_from_filename, rebuild_timeframe_from_filename).

// ftName is what a freqtrade file's name says.
type ftName struct {
	pair      string // BTC/USDT, BTC/USDT:USDT
	timeframe string // 1m, 1h, 1M
	candle    string // "" (spot), futures, mark, index, premiumIndex, funding_rate
}

// ftNamePattern is freqtrade's _OHLCV_REGEX, its lookahead for the "."
// written as a match of it, anchored at the extensions freqtrade writes
// (\p{Nd} is Python's \d: any decimal digit).
var ftNamePattern = regexp.MustCompile(`^([a-zA-Z_\p{Nd}-]+)\-(\p{Nd}+[a-zA-Z]{1,2})\-?([a-zA-Z_]*)\.(?:feather|parquet|json|json\.gz)$`)

// ftPairHead is the part of rebuild_pair_from_filename that finds the
// first "_" to turn into "/": after a base of up to 10 letters and digits,
// or of up to 6 letters and dashes.
var ftPairHead = regexp.MustCompile(`^(([A-Za-z\p{Nd}]{1,10})|([A-Za-z\-]{1,6}))_`)

// ftCandles are the candle types freqtrade writes.
var ftCandles = []string{"", "futures", "mark", "index", "premiumIndex", "funding_rate"}

// parseFTName parses a file name as freqtrade names its candle files, or
// returns nil when it is not one (a trades file, PAIR-trades.EXT, is not).
func parseFTName(name string) *ftName {
	m := ftNamePattern.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	candle := m[3]
	known := false
	for _, c := range ftCandles {
		known = known || c == candle
	}
	if !known {
		return nil
	}
	return &ftName{pair: ftPair(m[1]), timeframe: ftTimeframe(m[2]), candle: candle}
}

// ftPair is freqtrade's rebuild_pair_from_filename: the first "_" after
// the base currency becomes "/", the next "_" ":" (the settlement currency
// of a futures pair).
func ftPair(s string) string {
	if loc := ftPairHead.FindStringSubmatchIndex(s); loc != nil {
		s = s[:loc[1]-1] + "/" + s[loc[1]:]
	}
	return strings.Replace(s, "_", ":", 1)
}

// ftTimeframe is freqtrade's rebuild_timeframe_from_filename: "1mo" (in any
// letter case) is the month, 1M.
func ftTimeframe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+3 <= len(s) && strings.EqualFold(s[i:i+3], "1mo") {
			b.WriteString("1M")
			i += 3
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// tradeCandles reports whether a freqtrade candle type is of the pair's
// trades (spot, or futures): the others (mark, index, premium index and
// funding rate) are series of their own, left out of a folder.
func (n *ftName) tradeCandles() bool { return n.candle == "" || n.candle == "futures" }
