package contract

// Op is what a command asks of the market. A worker may send an op the
// market does not know; the market rejects it, so Op is not restricted to
// the constants.
type Op string

// Command operations.
const (
	OpBuy    Op = "buy"
	OpSell   Op = "sell"
	OpCancel Op = "cancel"
)

// Side is the side of an order: buy or sell.
type Side string

// Order sides.
const (
	SideBuy  Side = "buy"
	SideSell Side = "sell"
)

// SideOf returns the side of an order op: buy or sell, and false for any
// other op.
func SideOf(op Op) (Side, bool) {
	switch op {
	case OpBuy:
		return SideBuy, true
	case OpSell:
		return SideSell, true
	}
	return "", false
}

// ExecStatus is what happened to an order.
type ExecStatus string

// Execution statuses.
const (
	ExecFilled   ExecStatus = "filled"
	ExecRejected ExecStatus = "rejected"
	ExecCanceled ExecStatus = "canceled"
)

// Execution is an order fill, rejection or cancel, delivered to on_execution.
// Cash and Position are the portfolio after it, so the worker's ctx.cash and
// ctx.position() stay exact without a round trip.
type Execution struct {
	OrderID  int64      `json:"order_id"`
	Symbol   string     `json:"symbol"`
	Side     Side       `json:"side"` // empty for a rejected command that was no order
	Qty      float64    `json:"qty"`
	Price    float64    `json:"price"`
	Fee      float64    `json:"fee"`
	Status   ExecStatus `json:"status"`
	Reason   string     `json:"reason"`
	Time     int64      `json:"time"` // unix nanoseconds
	Event    int        `json:"event"`
	Cash     float64    `json:"cash"`
	Position float64    `json:"position"`
}

// Command is an order or cancel issued by a hook, committed when the hook succeeded.
type Command struct {
	Op      Op       `json:"op"`
	OrderID int64    `json:"id"` // the new order's id, or the order to cancel
	Symbol  string   `json:"symbol,omitempty"`
	Qty     float64  `json:"qty,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
	// Hook is the hook that issued the command; the driver knows the event
	// from the yield.
	Hook Hook `json:"hook"`
}
