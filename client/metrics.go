package client

import "github.com/droverhq/drover/structs"

// AllocCounts are the client's allocations by what they are doing, for
// the agent's metrics (nomad.client.allocations.*, as Nomad's).
type AllocCounts struct {
	Pending, Running, Terminal int
}

// AllocCounts counts the allocations the client holds by the status it
// last reported (pending until the runner reported anything).
func (a *Agent) AllocCounts() AllocCounts {
	a.mu.Lock()
	entries := make([]*allocEntry, 0, len(a.allocs))
	for _, e := range a.allocs {
		entries = append(entries, e)
	}
	a.mu.Unlock()
	var c AllocCounts
	for _, e := range entries {
		e.mu.Lock()
		status := e.last.ClientStatus
		e.mu.Unlock()
		switch status {
		case structs.AllocClientStatusRunning:
			c.Running++
		case structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
			c.Terminal++
		default:
			c.Pending++
		}
	}
	return c
}
