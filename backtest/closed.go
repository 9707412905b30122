package backtest

// closedKept is how many of the latest closed orders the driver remembers,
// so that a cancel of one of them is rejected with what happened to it
// ("cancel: order 12 already filled"). A cancel of an order that closed
// before them gets a generic reason; a strategy placing and cancelling
// orders as fast as the protocol allows closes about this many in a second.
const closedKept = 1 << 16

// closedNameBytes bounds the bytes of symbol names the remembered orders
// hold beyond the symbol table's (orders for symbols not in the data, whose
// names the worker chose).
const closedNameBytes = 1 << 20

// closedOrder is what a cancel reply says about a closed order.
type closedOrder struct {
	id      int64
	qty     float64
	name    string // the symbol as given: the symbol table's copy when known
	buy     bool
	status  uint8 // index in statusNames
	foreign bool  // name is not the symbol table's: it counts toward closedNameBytes
}

// closedOrders remembers the latest closed orders, oldest first, in a ring
// of at most closedKept.
type closedOrders struct {
	ring      []closedOrder
	head, n   int             // the oldest entry, and how many there are
	byID      map[int64]int32 // id -> index in ring
	nameBytes int
}

func newClosedOrders() closedOrders {
	return closedOrders{byID: map[int64]int32{}}
}

// add remembers o, forgetting the oldest orders beyond the bounds.
func (c *closedOrders) add(o closedOrder) {
	if o.foreign {
		c.nameBytes += len(o.name)
	}
	for c.n > 0 && (c.n == closedKept || c.nameBytes > closedNameBytes) {
		c.dropOldest()
	}
	if c.n == len(c.ring) {
		// Grow (not beyond closedKept: the loop above made room), oldest
		// first.
		ring := make([]closedOrder, min(max(2*len(c.ring), 64), closedKept))
		for k := 0; k < c.n; k++ {
			ring[k] = c.ring[(c.head+k)%len(c.ring)]
			c.byID[ring[k].id] = int32(k)
		}
		c.ring, c.head = ring, 0
	}
	i := (c.head + c.n) % len(c.ring)
	c.ring[i] = o
	c.byID[o.id] = int32(i)
	c.n++
}

func (c *closedOrders) dropOldest() {
	old := &c.ring[c.head]
	if i, ok := c.byID[old.id]; ok && int(i) == c.head {
		delete(c.byID, old.id)
	}
	if old.foreign {
		c.nameBytes -= len(old.name)
	}
	*old = closedOrder{}
	c.head = (c.head + 1) % len(c.ring)
	c.n--
}

func (c *closedOrders) has(id int64) bool {
	_, ok := c.byID[id]
	return ok
}

func (c *closedOrders) get(id int64) (closedOrder, bool) {
	i, ok := c.byID[id]
	if !ok {
		return closedOrder{}, false
	}
	return c.ring[i], true
}
