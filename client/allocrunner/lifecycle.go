package allocrunner

import (
	"sync"

	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/structs"
)

// Task lifecycle, as Nomad's: prestart tasks run first (to completion, or
// as sidecars until running with their own services' checks passing);
// the main tasks start once they have; the
// poststart tasks once every main task has started; when the main tasks
// are all dead the remaining prestart and poststart tasks (sidecars) are
// stopped; the poststop tasks run once every other task is dead, also
// when the allocation is stopped or a task failed.
//
// The rule is the pure function lifecyclePhase over the tasks' states;
// the alloc runner's shell opens the gates it says may open (each once)
// and stops the sidecars.

// phase is what the tasks' states allow.
type phase struct {
	mainMay      bool // every prestart task is done (sidecars: running)
	poststartMay bool // every main task has started
	poststopMay  bool // every task other than poststop ones is dead
	mainDead     bool // the group has main tasks and all are dead
}

// lifecyclePhase reads the phase from the tasks' states. A task without a
// state is pending. unhealthy names the prestart sidecars whose service
// checks do not all pass yet: the main tasks wait for those too.
func lifecyclePhase(tasks []*structs.Task, states map[string]*structs.TaskState, unhealthy map[string]bool) phase {
	p := phase{mainMay: true, poststartMay: true, poststopMay: true}
	mains, deadMains := 0, 0
	for _, t := range tasks {
		st := states[t.Name]
		if st == nil {
			st = &structs.TaskState{State: structs.TaskStatePending}
		}
		dead := st.State == structs.TaskStateDead
		switch {
		case t.IsMain():
			mains++
			if dead {
				deadMains++
			}
			if st.StartedAt.IsZero() {
				p.poststartMay = false
			}
		case t.IsHook(structs.TaskLifecycleHookPrestart):
			if t.IsSidecar() {
				p.mainMay = p.mainMay && st.State == structs.TaskStateRunning && !unhealthy[t.Name]
			} else {
				p.mainMay = p.mainMay && dead && !st.Failed
			}
		}
		if !t.IsHook(structs.TaskLifecycleHookPoststop) && !dead {
			p.poststopMay = false
		}
	}
	p.mainDead = mains > 0 && deadMains == mains
	return p
}

// gates are the channels lifecycle tasks wait on (taskrunner
// Config.StartAfter), each closed once.
type gates struct {
	main, poststart, poststop         chan struct{}
	mainOnce, poststartOnce, stopOnce sync.Once
	sidecarsOnce                      sync.Once
}

func newGates() *gates {
	return &gates{main: make(chan struct{}), poststart: make(chan struct{}), poststop: make(chan struct{})}
}

// gateFor returns what a task waits for before its first start and the
// event's message; nil for a prestart task, which starts at once.
func (g *gates) gateFor(t *structs.Task) (<-chan struct{}, string) {
	switch {
	case t.IsMain():
		return g.main, structs.TaskWaitingPrestart
	case t.IsHook(structs.TaskLifecycleHookPoststart):
		return g.poststart, structs.TaskWaitingMain
	case t.IsHook(structs.TaskLifecycleHookPoststop):
		return g.poststop, structs.TaskWaitingMainStop
	}
	return nil, ""
}

// open closes the gates p allows. The main tasks' gate opens before the
// poststart one (a poststart task never starts before the main tasks are
// let go), and the poststop one whenever every other task is dead.
func (g *gates) open(p phase) {
	if p.mainMay {
		g.mainOnce.Do(func() { close(g.main) })
		if p.poststartMay {
			g.poststartOnce.Do(func() { close(g.poststart) })
		}
	}
	if p.poststopMay {
		g.stopOnce.Do(func() { close(g.poststop) })
	}
}

// sidecarChecks maps the names of the checks of the prestart sidecars'
// own services to their tasks.
func sidecarChecks(tg *structs.TaskGroup) map[string]string {
	out := map[string]string{}
	for _, t := range tg.Tasks {
		if !t.IsSidecar() || !t.IsHook(structs.TaskLifecycleHookPrestart) {
			continue
		}
		for _, s := range t.Services {
			for _, c := range s.Checks {
				out[health.CheckName(s, c)] = t.Name
			}
		}
	}
	return out
}

// killedWithAlloc reports whether a task is stopped at once when the
// allocation is (or when a task fails or the leader dies): the main tasks
// and the ephemeral prestart and poststart tasks. Sidecars are stopped
// after the main tasks are dead, and poststop tasks are not stopped: they
// run once the others are dead.
func killedWithAlloc(t *structs.Task) bool {
	return !t.IsSidecar() && !t.IsHook(structs.TaskLifecycleHookPoststop)
}
