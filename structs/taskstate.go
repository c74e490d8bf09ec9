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
	// TaskDownloadingArtifacts and TaskArtifactDownloadFailed: the client
	// fetches a task's artifacts, and one of them failed (the event's
	// DownloadError says which and why).
	TaskDownloadingArtifacts   = "Downloading Artifacts"
	TaskArtifactDownloadFailed = "Failed Artifact Download"
	// TaskRestartSignal: something asked for a restart (a failing check
	// with check_restart, or a user: TaskRestartUserRequested).
	TaskRestartSignal = "Restart Signaled"
	// TaskSignaling: a user sent the task a signal (alloc signal).
	TaskSignaling = "Signaling"
	// TaskWaitingShuttingDownDelay: the task is being killed and waits
	// its shutdown_delay first; TaskSkippingShutdownDelay: it does not,
	// the allocation being stopped with no_shutdown_delay.
	TaskWaitingShuttingDownDelay = "Waiting for shutdown delay"
	TaskSkippingShutdownDelay    = "Skipping shutdown delay"
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
			if e.TaskEventExtra != nil {
				x := *e.TaskEventExtra
				x.Details = copyMap(x.Details)
				ee.TaskEventExtra = &x
			}
			c.Events[i] = &ee
		}
	}
	return &c
}

// TaskEvent is one entry in a task's history.
//
// What only some events carry is in TaskEventExtra, nil for the others:
// the servers keep up to ten events for every task of every alloc, most of
// them without any of it (80 bytes less each). JSON and the log inline its
// fields, so that they read and decode as the event's own; set them
// through SetExtra, and read them through an event that has them (a nil
// TaskEventExtra panics on a field read; Extra() does not).
type TaskEvent struct {
	Type           string        `codec:",omitempty"`
	Time           int64         `codec:",omitempty"`
	Message        string        `codec:",omitempty"`
	DisplayMessage string        `codec:",omitempty"`
	ExitCode       int           `codec:",omitempty"`
	Signal         int           `codec:",omitempty"`
	KillTimeout    time.Duration `codec:",omitempty"`
	*TaskEventExtra
}

// TaskEventExtra holds the fields of a TaskEvent few events set.
type TaskEventExtra struct {
	Details       map[string]string `json:",omitempty"`
	RestartReason string            `json:",omitempty"`
	KillReason    string            `json:",omitempty"`
	// TaskSignal is the signal a TaskSignaling event sent, and
	// TaskSignalReason why, as Nomad's.
	TaskSignal       string `json:",omitempty"`
	TaskSignalReason string `json:",omitempty"`
	DriverError      string `json:",omitempty"`
	DownloadError    string `json:",omitempty"`
}

// Extra returns a copy of the event's extra fields, the zero ones when it
// has none: a read that cannot panic on an event without them. To set
// them, use SetExtra.
func (e *TaskEvent) Extra() TaskEventExtra {
	if e.TaskEventExtra == nil {
		return TaskEventExtra{}
	}
	return *e.TaskEventExtra
}

// SetExtra returns the event's extra fields to set, adding them if it
// has none.
func (e *TaskEvent) SetExtra() *TaskEventExtra {
	if e.TaskEventExtra == nil {
		e.TaskEventExtra = &TaskEventExtra{}
	}
	return e.TaskEventExtra
}

// Equal reports whether x holds the same values as o.
func (x *TaskEventExtra) Equal(o *TaskEventExtra) bool {
	if x == nil || o == nil {
		return x == o
	}
	if x.RestartReason != o.RestartReason || x.KillReason != o.KillReason || x.TaskSignal != o.TaskSignal ||
		x.TaskSignalReason != o.TaskSignalReason || x.DriverError != o.DriverError ||
		len(x.Details) != len(o.Details) || (x.Details == nil) != (o.Details == nil) {
		return false
	}
	for k, v := range x.Details {
		if w, ok := o.Details[k]; !ok || w != v {
			return false
		}
	}
	return true
}
