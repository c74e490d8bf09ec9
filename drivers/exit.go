package drivers

import "sync"

// ExitNotifier holds a task's exit result and hands it to any number of
// waiters without a goroutine per waiter: each Wait gets a one-slot
// channel that is filled and closed when the task exits (or at once if it
// already has). The zero value is ready to use.
type ExitNotifier struct {
	mu      sync.Mutex
	done    bool
	result  ExitResult
	waiters []chan ExitResult
}

// Wait returns a channel that receives the exit result once, then closes.
func (n *ExitNotifier) Wait() <-chan ExitResult {
	ch := make(chan ExitResult, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		ch <- n.result
		close(ch)
		return ch
	}
	n.waiters = append(n.waiters, ch)
	return ch
}

// Exit records the result and wakes every waiter. Only the first call
// counts; it reports whether this call was it.
func (n *ExitNotifier) Exit(r ExitResult) bool {
	n.mu.Lock()
	if n.done {
		n.mu.Unlock()
		return false
	}
	n.done, n.result = true, r
	ws := n.waiters
	n.waiters = nil
	n.mu.Unlock()
	for _, ch := range ws {
		ch <- r
		close(ch)
	}
	return true
}

// Result returns the exit result and whether the task has exited.
func (n *ExitNotifier) Result() (ExitResult, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.result, n.done
}
