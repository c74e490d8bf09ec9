package structs

// Lifecycle hooks a task can run at, as Nomad's task lifecycle block.
const (
	// TaskLifecycleHookPrestart: before the main tasks start.
	TaskLifecycleHookPrestart = "prestart"
	// TaskLifecycleHookPoststart: after the main tasks are running.
	TaskLifecycleHookPoststart = "poststart"
	// TaskLifecycleHookPoststop: after the main tasks have stopped.
	TaskLifecycleHookPoststop = "poststop"
)

// Task events of lifecycle tasks, as Nomad's.
const (
	// TaskMainDead: the group's main tasks are dead, so the client stops
	// its sidecars (and any other prestart or poststart task still
	// running).
	TaskMainDead = "Main Tasks Dead"
	// TaskHookWaiting: a task waits for other tasks of its allocation
	// before it starts (its message says for which).
	TaskHookWaiting = "Task hook"
)

// Messages of TaskHookWaiting events.
const (
	TaskWaitingPrestart = "Waiting for prestart tasks"
	TaskWaitingMain     = "Waiting for main tasks to start"
	// TaskWaitingPrevious: the allocation this one replaces on the node
	// is stopping, and hands over its data once stopped (sticky
	// ephemeral disk).
	TaskWaitingPrevious = "Waiting for the previous allocation to stop"
	TaskWaitingMainStop = "Waiting for main tasks to stop"
)

// TaskLifecycle is a task's lifecycle block: when it runs relative to the
// group's main tasks (those without the block), and whether it keeps
// running beside them (a sidecar) or runs to completion (ephemeral).
type TaskLifecycle struct {
	Hook    string
	Sidecar bool
}

// ValidTaskLifecycleHook reports whether hook is one Nomad knows.
func ValidTaskLifecycleHook(hook string) bool {
	switch hook {
	case TaskLifecycleHookPrestart, TaskLifecycleHookPoststart, TaskLifecycleHookPoststop:
		return true
	}
	return false
}

// IsMain reports whether the task is a main task: no lifecycle block (or
// one without a hook, which Nomad treats the same).
func (t *Task) IsMain() bool { return t.Lifecycle == nil || t.Lifecycle.Hook == "" }

// IsHook reports whether the task runs at the given lifecycle hook.
func (t *Task) IsHook(hook string) bool { return t.Lifecycle != nil && t.Lifecycle.Hook == hook }

// IsSidecar reports whether the task is a prestart or poststart task that
// keeps running beside the main tasks.
func (t *Task) IsSidecar() bool {
	return t.Lifecycle != nil && t.Lifecycle.Sidecar && t.Lifecycle.Hook != TaskLifecycleHookPoststop && t.Lifecycle.Hook != ""
}

// IsEphemeral reports whether the task is a lifecycle task that runs to
// completion: a prestart or poststart task that is not a sidecar, or a
// poststop task. A successful exit ends it for good, whatever the job's
// type.
func (t *Task) IsEphemeral() bool { return !t.IsMain() && !t.IsSidecar() }
