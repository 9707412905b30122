package sweepview

import "sync"

// queue hands updates to the view (Options.Updates: Out) in order without
// ever blocking the sweep that pushes them: a slow screen costs memory for
// a moment, not runs. Its goroutine ends once Close's updates are
// delivered, or at Discard.
type queue struct {
	out  chan Update
	mu   sync.Mutex
	cond *sync.Cond
	q    []Update
	done bool // no more pushes
	gone bool // nobody reads any more
}

// newQueue returns an empty queue.
func newQueue() *queue {
	u := &queue{out: make(chan Update)}
	u.cond = sync.NewCond(&u.mu)
	go u.forward()
	return u
}

// Push adds up to the queue; after Discard it drops it.
func (u *queue) Push(up Update) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.gone {
		u.q = append(u.q, up)
		u.cond.Signal()
	}
}

// Close ends the queue once what it holds is delivered: Out is closed
// then.
func (u *queue) Close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done = true
	u.cond.Signal()
}

// Discard drops what is left: the view is gone.
func (u *queue) Discard() {
	u.mu.Lock()
	u.gone, u.q = true, nil
	u.cond.Signal()
	u.mu.Unlock()
	for range u.out {
	}
}

// Out is the queue's updates, in order.
func (u *queue) Out() <-chan Update { return u.out }

// forward delivers the queue to out, then closes it.
func (u *queue) forward() {
	defer close(u.out)
	for {
		u.mu.Lock()
		for len(u.q) == 0 && !u.done && !u.gone {
			u.cond.Wait()
		}
		if u.gone || len(u.q) == 0 {
			u.mu.Unlock()
			return
		}
		next := u.q[0]
		u.q = u.q[1:]
		u.mu.Unlock()
		u.out <- next
	}
}
