package allocrunner

import "github.com/droverhq/drover/structs"

// ClientStatus derives an allocation's client status from its tasks'
// states, as Nomad: any failed task fails it; else any running task makes
// it running; else any pending task keeps it pending; else, all dead, it
// is complete.
func ClientStatus(states map[string]*structs.TaskState) string {
	var running, pending, dead bool
	for _, s := range states {
		switch s.State {
		case structs.TaskStateRunning:
			running = true
		case structs.TaskStatePending:
			pending = true
		case structs.TaskStateDead:
			if s.Failed {
				return structs.AllocClientStatusFailed
			}
			dead = true
		}
	}
	switch {
	case running:
		return structs.AllocClientStatusRunning
	case pending:
		return structs.AllocClientStatusPending
	case dead:
		return structs.AllocClientStatusComplete
	}
	return structs.AllocClientStatusPending
}
