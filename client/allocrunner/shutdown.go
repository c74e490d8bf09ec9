package allocrunner

// The shutdown delays of a stopped allocation (the group's and its
// tasks' shutdown_delay), as Nomad's.

// Stop is the servers' stop of the allocation, as Nomad's: its services
// are deregistered already (the servers drop them in the entry that stops
// it), so it waits the group's shutdown_delay for clients to stop sending
// it work, then kills the tasks, each after its own shutdown_delay. It
// returns at once; SkipShutdownDelay ends the wait, and a Kill meanwhile
// stands for the one it would make.
func (ar *AllocRunner) Stop() {
	ar.stopOnce.Do(func() {
		d := ar.group.ShutdownDelay
		if d == nil || *d <= 0 {
			ar.Kill()
			return
		}
		t := ar.cfg.Clock.NewTimer(*d)
		go func() {
			defer t.Stop()
			select {
			case <-t.C():
			case <-ar.skipDelay:
			case <-ar.doneCh:
				return // the tasks ended, or the client detached from them
			}
			ar.mu.Lock()
			killed := ar.kills > 0
			ar.mu.Unlock()
			if !killed { // a second kill would stop the poststop tasks too
				ar.Kill()
			}
		}()
	})
}

// SkipShutdownDelay makes the group's and the tasks' shutdown_delay
// skipped, or ends their waits under way (an allocation stopped with
// no_shutdown_delay, a client stopping its tasks, an allocation the
// servers dropped).
func (ar *AllocRunner) SkipShutdownDelay() {
	ar.skipOnce.Do(func() {
		close(ar.skipDelay)
		for _, tr := range ar.runners {
			tr.SkipShutdownDelay()
		}
	})
}
