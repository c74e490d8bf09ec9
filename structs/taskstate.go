package structs

import "time"

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Task event types, as Nomad's.
const (
	TaskReceived         = "Received"
	TaskSetup            = "Task Setup"
	TaskStarted          = "Started"
	TaskTerminated       = "Terminated"
	TaskKilling          = "Killing"
	TaskKilled           = "Killed"
	TaskRestarting       = "Restarting"
	TaskNotRestarting    = "Not Restarting"
	TaskDriverFailure    = "Driver Failure"
	TaskSetupFailure     = "Setup Failure"
	TaskSiblingFailed    = "Sibling Task Failed"
	TaskFailedValidation = "Failed Validation"
	// TaskRestartSignal: something asked for a restart (a failing check
	// with check_restart, or a user: TaskRestartUserRequested).
	TaskRestartSignal = "Restart Signaled"
	// TaskSignaling: a user sent the task a signal (alloc signal).
	TaskSignaling = "Signaling"
)

// TaskRestartUserRequested is the reason of a restart a user asked for
// (alloc restart), as Nomad words it.
const TaskRestartUserRequested = "User requested restart"

// TaskState is what the client reports of one task.
type TaskState struct {
	State       string    `codec:",omitempty"`
	Failed      bool      `codec:",omitempty"`
	Restarts    uint64    `codec:",omitempty"`
	LastRestart time.Time `codec:",omitempty"`
	StartedAt   time.Time `codec:",omitempty"`
	FinishedAt  time.Time `codec:",omitempty"`
	Events      []*TaskEvent
}

// Copy returns a deep copy.
func (s *TaskState) Copy() *TaskState {
	if s == nil {
		return nil
	}
	c := *s
	if s.Events != nil {
		c.Events = make([]*TaskEvent, len(s.Events))
		for i, e := range s.Events {
			ee := *e
			ee.Details = copyMap(e.Details)
			c.Events[i] = &ee
		}
	}
	return &c
}

// TaskEvent is one entry in a task's history.
type TaskEvent struct {
	Type           string            `codec:",omitempty"`
	Time           int64             `codec:",omitempty"`
	Message        string            `codec:",omitempty"`
	DisplayMessage string            `codec:",omitempty"`
	Details        map[string]string `json:",omitempty"`
	ExitCode       int               `codec:",omitempty"`
	Signal         int               `codec:",omitempty"`
	RestartReason  string            `json:",omitempty"`
	KillReason     string            `json:",omitempty"`
	// TaskSignal is the signal a TaskSignaling event sent, and
	// TaskSignalReason why, as Nomad's.
	TaskSignal       string        `json:",omitempty"`
	TaskSignalReason string        `json:",omitempty"`
	DriverError      string        `json:",omitempty"`
	KillTimeout      time.Duration `codec:",omitempty"`
}
