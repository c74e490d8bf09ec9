// Package allocrunner runs one allocation on the client: it builds the
// allocation's directory, runs a task runner per task of the group,
// derives the allocation's client status, tracks its deployment health,
// and persists task handles so that a restarted client re-attaches to
// running tasks instead of starting them twice.
package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Sentinel errors.
var (
	// ErrInvalidConfig: the allocation cannot be run as given.
	ErrInvalidConfig = errors.New("invalid alloc runner config")
	// ErrUnknownDriver: a task names a driver the client does not have.
	ErrUnknownDriver = errors.New("unknown driver")
	// ErrCorruptState: the persisted state file cannot be read.
	ErrCorruptState = errors.New("corrupt alloc state file")
)

// Config is what an AllocRunner needs.
type Config struct {
	Alloc   *structs.Allocation // with its Job
	Node    *structs.Node
	DataDir string
	Drivers map[string]drivers.Driver
	Clock   clock.Clock
	// HostEnv is the lowest layer of every task's environment.
	HostEnv map[string]string
	// ArtifactLimits bound every task's artifact downloads (nil: the
	// defaults of taskrunner.DefaultArtifactLimits).
	ArtifactLimits *taskrunner.ArtifactLimits
	// OnUpdate receives the allocation's state after every change, one
	// call at a time. It must not block for long.
	OnUpdate func(Update)
	// OnCheck, when set, receives every result of the allocation's
	// checks, from the check's goroutine. It must not block for long.
	OnCheck func(health.CheckResult)
	// Templates is how the tasks' templates are rendered.
	Templates TemplateConfig
	// Networks gives a group in "bridge" mode its network namespace
	// (network.go); nil on a client without bridge networking, where
	// such an allocation fails.
	Networks Networks
	// OnNetworkError, when set, hears of a namespace that could not be
	// removed when the allocation's tasks had all ended.
	OnNetworkError func(error)
	// Previous, when set, is the allocation this one replaces on the same
	// node, stopped by the servers, for a group whose ephemeral disk is
	// sticky or migrates: the tasks wait for it to stop and take over
	// its data first (previous.go).
	Previous *Previous
}

// TemplateConfig is what the tasks' templates need from the client.
type TemplateConfig struct {
	// Settings are the client agent's template block.
	Settings template.Settings
	// ServerAddr returns the HTTP address of a server for templates'
	// reads of Nomad's API; nil or "" when there is none.
	ServerAddr func() string
	// Identity, when set, gives each task the token its templates
	// present; nil sends none (ACLs off).
	Identity template.IdentitySource
}

// Update is the allocation's state as the client reports it.
type Update struct {
	AllocID      string
	ClientStatus string
	// ClientDescription, when set, replaces the status's usual
	// description (structs.AllocMaxRunDurationExceeded).
	ClientDescription string
	// TaskStates are the tasks' states, shared with the runner and
	// between updates: read them, never change them (a task's new state
	// is a new value).
	TaskStates map[string]*structs.TaskState
	// Health is the deployment health decision, once made.
	Health *health.Result
	// PersistErr is set if the state file could not be written.
	PersistErr error
	// NetworkStatus is the allocation's own network (bridge mode), empty
	// without one; shared between updates, like TaskStates.
	NetworkStatus *structs.AllocNetworkStatus
}

// AllocRunner runs one allocation. Create it with New, then Run.
type AllocRunner struct {
	cfg     Config
	dir     AllocDir
	group   *structs.TaskGroup
	runners map[string]*taskrunner.TaskRunner
	leader  string
	// shared and statePath are dir's SharedDir and StatePath.
	shared, statePath string
	// gates order the lifecycle tasks (lifecycle.go); nil when the group
	// has none.
	gates   *gates
	tracker *health.Tracker
	checks  []health.Check
	// restarts restarts the tasks of failing checks (check_restart); nil
	// when no check has one.
	restarts *health.RestartWatcher
	// checksGate: the tracker decides on checks too.
	checksGate bool
	// gateChecks: the checks of prestart sidecars (check name → task),
	// which the main tasks wait for.
	gateChecks map[string]string
	doneCh     chan struct{}
	// prevReady is closed once the previous allocation (Config.Previous)
	// stopped and its data moved here; nil when there is none to wait
	// for.
	prevReady chan struct{}

	cancelChecks context.CancelFunc
	killOnce     sync.Once
	// stopOnce and skipOnce guard Stop and SkipShutdownDelay; skipDelay is
	// closed by the latter.
	stopOnce  sync.Once
	skipOnce  sync.Once
	skipDelay chan struct{}
	// net is the allocation's network namespace (network.go); nil
	// outside a bridge group.
	net *network.Status
	// netStatus is what the updates report of net (under mu), shared by
	// them: read it, never change it.
	netStatus *structs.AllocNetworkStatus
	// netInit and sandbox are the driver that made the namespace and
	// what it made (a group with a docker task: docker's pause
	// container); nil when the client made it.
	netInit drivers.NetworkInitiator
	sandbox *drivers.NetworkSandbox
	// netLeft: a restored allocation with no task left to run, whose
	// network (if a stopped client left one) is removed when it is done.
	netLeft bool
	// runStart is when the allocation first ran (persisted): the
	// group's max_run_duration counts from it.
	runStart   time.Time
	maxRun     clock.Timer
	maxRunOnce sync.Once

	mu       sync.Mutex
	states   map[string]*structs.TaskState
	passing  map[string]bool // gateChecks that pass now
	handles  map[string]*drivers.TaskHandle
	health   *health.Result
	exceeded bool // stopped at max_run_duration
	detached bool // Detach was called: the tasks run on
	kills    int  // calls of Kill, KillFor and max_run_duration's kill

	emitMu sync.Mutex // orders OnUpdate calls and state file writes
	// saved is what the state file holds, per task (under emitMu); see
	// needsSave.
	saved map[string]savedTask
}

// New prepares an allocation: it builds its directory, reads any state a
// previous client left, and creates (but does not start) its task runners.
func New(cfg Config) (*AllocRunner, error) {
	a := cfg.Alloc
	if a == nil || a.Job == nil || cfg.DataDir == "" {
		return nil, fmt.Errorf("%w: alloc with job and data dir required", ErrInvalidConfig)
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || len(tg.Tasks) == 0 {
		return nil, fmt.Errorf("%w: job %s has no task group %q", ErrInvalidConfig, a.JobID, a.TaskGroup)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.OnUpdate == nil {
		cfg.OnUpdate = func(Update) {}
	}
	if cfg.OnCheck == nil {
		cfg.OnCheck = func(health.CheckResult) {}
	}
	ar := &AllocRunner{
		cfg: cfg, dir: NewAllocDir(cfg.DataDir, a.ID), group: tg,
		runners:   map[string]*taskrunner.TaskRunner{},
		doneCh:    make(chan struct{}),
		skipDelay: make(chan struct{}),
		states:    map[string]*structs.TaskState{},
		handles:   map[string]*drivers.TaskHandle{},
	}
	names := make([]string, len(tg.Tasks))
	for i, t := range tg.Tasks {
		names[i] = t.Name
		if t.Leader {
			ar.leader = t.Name
		}
		if !t.IsMain() {
			ar.gates = newGates()
		}
	}
	ar.shared, ar.statePath = ar.dir.SharedDir(), ar.dir.StatePath()
	if err := ar.dir.Build(names); err != nil {
		return nil, err
	}
	for _, t := range tg.Tasks {
		if err := ar.dir.WritePayload(t, a.Job.Payload); err != nil {
			return nil, err
		}
	}
	prev, err := loadState(ar.statePath)
	if err != nil {
		return nil, err
	}
	ar.runStart = prev.RunStartedAt
	if clientBridge(tg) && allDead(tg, prev) {
		// Nothing left to run: what a client that stopped before the
		// teardown left of the network goes once the runner is done.
		ar.netLeft, ar.netInit = true, ar.networkInitiator()
	} else if clientBridge(tg) && !dockerBridgeBefore(tg, prev) {
		if err := ar.setupNetwork(len(prev.Tasks) > 0); err != nil {
			// No task runs: the allocation fails with the reason.
			ar.failSetup(err)
			return ar, nil
		}
	}
	if cfg.Previous != nil && !anyStarted(prev) {
		// Once a task started (before a client restart), the data was
		// taken over; until then taking it over again moves what is left.
		ar.prevReady = make(chan struct{})
	}
	var firstEnv *taskenv.Env
	for _, t := range tg.Tasks {
		env, err := ar.addTask(t, prev.Tasks[t.Name])
		if err != nil {
			ar.teardownNetwork()
			return nil, err
		}
		if firstEnv == nil {
			firstEnv = env
		}
	}
	if err := ar.setupHealth(firstEnv); err != nil {
		ar.teardownNetwork()
		return nil, err
	}
	return ar, nil
}

// addTask creates the task's runner, re-attaching to a persisted handle;
// a task a previous client saw die is not run again.
func (ar *AllocRunner) addTask(t *structs.Task, prev *persistedTask) (*taskenv.Env, error) {
	a := ar.cfg.Alloc
	d, ok := ar.cfg.Drivers[t.Driver]
	if !ok {
		return nil, fmt.Errorf("%w: task %s wants %q", ErrUnknownDriver, t.Name, t.Driver)
	}
	in := taskenv.Input{
		Alloc: a, Task: t, Node: ar.cfg.Node,
		AllocDir: ar.shared, TaskDir: ar.dir.TaskLocalDir(t.Name), SecretsDir: ar.dir.TaskSecretsDir(t.Name),
		HostEnv: ar.cfg.HostEnv, AllocNetwork: ar.allocNetwork(),
	}
	if fsi := drivers.CapabilitiesOf(d).FSIsolation; fsi == drivers.FSIsolationImage || fsi == drivers.FSIsolationChroot {
		// The task runs in an image or a root of its own: it sees the
		// allocation's directories where the driver mounts them, and none
		// of the client's own variables (as Nomad's docker and exec tasks).
		in.AllocDir, in.TaskDir, in.SecretsDir = "/alloc", "/local", "/secrets"
		in.HostEnv = nil
	}
	env := taskenv.Build(in)
	if prev != nil && prev.State != nil {
		ar.states[t.Name] = prev.State
		if prev.State.State == structs.TaskStateDead {
			return env, nil
		}
	} else {
		ar.states[t.Name] = &structs.TaskState{State: structs.TaskStatePending}
	}
	lc := structs.DefaultLogConfig()
	if t.LogConfig != nil {
		lc = t.LogConfig
	}
	tc := &drivers.TaskConfig{
		AllocID: a.ID, TaskName: t.Name, TaskDir: ar.dir.TaskDir(t.Name), AllocDir: ar.shared,
		JobID: a.JobID, JobName: a.Job.Name, Namespace: a.Job.Namespace, TaskGroup: a.TaskGroup,
		User: t.User, Env: env.Vars(), Config: env.ReplaceConfig(t.Config),
		StdoutPath: filepath.Join(ar.shared, "logs", t.Name+".stdout"),
		StderrPath: filepath.Join(ar.shared, "logs", t.Name+".stderr"),
		LogConfig:  *lc, KillTimeout: t.KillTimeout, KillSignal: t.KillSignal,
		NetworkMode: "host",
	}
	if n := ar.cfg.Node; n != nil {
		tc.NodeID, tc.NodeName = n.ID, n.Name
	}
	if len(ar.group.Networks) > 0 && ar.group.Networks[0].Mode != "" {
		tc.NetworkMode = ar.group.Networks[0].Mode
	}
	if ar.net != nil {
		tc.NetNSPath = ar.net.NetNSPath
	}
	if ar.sandbox != nil {
		tc.NetworkContainerID = ar.sandbox.ContainerID
	}
	mounts, err := taskMounts(ar.group, a.Index(), t, ar.cfg.Node) // volumes.go
	if err != nil {
		return nil, err
	}
	tc.Mounts = mounts
	if a.AllocatedResources != nil {
		tc.Resources = a.AllocatedResources.Tasks[t.Name]
		tc.Ports = slices.Clone(a.AllocatedResources.Shared.Ports)
	}
	policy := t.RestartPolicy
	if policy == nil {
		policy = ar.group.RestartPolicy
	}
	rc := taskrunner.Config{
		Task: t, JobType: a.Job.Type, Driver: d, TaskConfig: tc, RestartPolicy: policy,
		Clock: ar.cfg.Clock, OnUpdate: ar.onTaskUpdate,
		Artifacts: interpolateArtifacts(t.Artifacts, env), ArtifactLimits: ar.cfg.ArtifactLimits,
	}
	if len(t.Templates) > 0 {
		rc.Templates = ar.templates(t, env)
	}
	if ar.gates != nil {
		rc.StartAfter, rc.WaitMessage = ar.gates.gateFor(t)
	}
	if ar.prevReady != nil {
		rc.AfterPrevious = ar.prevReady
	}
	if prev != nil && prev.Handle != nil {
		rc.Handle, rc.State = prev.Handle, prev.State
		ar.handles[t.Name] = prev.Handle
	}
	tr, err := taskrunner.New(rc)
	if err != nil {
		return nil, err
	}
	ar.runners[t.Name] = tr
	return env, nil
}

// Run starts the task runners, the health tracker and the checks, and
// returns at once; Done closes when every task runner has stopped.
func (ar *AllocRunner) Run() {
	if ar.tracker != nil {
		ar.tracker.Start()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ar.cancelChecks = cancel
	waitChecks := func() {}
	if len(ar.checks) > 0 {
		waitChecks = health.RunChecks(ctx, ar.cfg.Clock, ar.checks, ar.onCheck)
	}
	ar.armMaxRun()
	ar.advanceLifecycle()
	for _, tr := range ar.runners {
		tr.Run()
	}
	if ar.prevReady != nil {
		go ar.takeOver()
	}
	ar.emit()
	go func() {
		for _, tr := range ar.runners {
			<-tr.Done()
		}
		ar.mu.Lock()
		if ar.maxRun != nil {
			ar.maxRun.Stop()
		}
		ar.mu.Unlock()
		cancel()
		waitChecks()
		if ar.tracker != nil {
			ar.tracker.Stop()
		}
		ar.mu.Lock()
		detached := ar.detached
		ar.mu.Unlock()
		if !detached {
			ar.teardownNetwork()
		}
		close(ar.doneCh)
	}()
}

// armMaxRun starts the group's max_run_duration, counted from when the
// allocation first ran (a restarted client goes on counting), as Nomad's
// whatever the tasks' states: once it has passed, every task is killed
// and the allocation completes, described as exceeding it.
func (ar *AllocRunner) armMaxRun() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.runStart.IsZero() {
		ar.runStart = ar.cfg.Clock.Now()
	}
	d := ar.group.MaxRunDuration
	if d == nil || *d <= 0 {
		return
	}
	left := ar.runStart.Add(*d).Sub(ar.cfg.Clock.Now())
	ar.maxRun = ar.cfg.Clock.AfterFunc(max(left, 0), ar.maxRunExceeded)
}

func (ar *AllocRunner) maxRunExceeded() {
	ar.maxRunOnce.Do(func() {
		ar.mu.Lock()
		ar.exceeded = true
		ar.mu.Unlock()
		ar.killTasks(structs.TaskKilling, structs.AllocMaxRunDurationExceeded)
		ar.emit()
	})
}

// Kill stops every task; Done closes once they are all dead. As Nomad's,
// the main tasks (and ephemeral prestart and poststart tasks) are stopped
// first, the sidecars once the main tasks are dead, and then the poststop
// tasks run (to completion). A second Kill (a client shutting down while
// they run, say) stops the poststop tasks too.
func (ar *AllocRunner) Kill() { ar.killTasks("", "") }

// KillFor is Kill with the event each task gets first (see
// taskrunner.KillFor).
func (ar *AllocRunner) KillFor(eventType, message string) { ar.killTasks(eventType, message) }

// killTasks stops the tasks that stop with the allocation (see
// stopsWithAlloc); every task from the second call on.
func (ar *AllocRunner) killTasks(eventType, message string) {
	ar.mu.Lock()
	ar.kills++
	again := ar.kills > 1
	ar.mu.Unlock()
	for _, t := range ar.group.Tasks {
		if tr := ar.runners[t.Name]; tr != nil && (again || ar.stopsWithAlloc(t)) {
			tr.KillFor(eventType, message)
		}
	}
}

// stopsWithAlloc reports whether a task is stopped at once when the
// allocation is, a task fails or the leader dies: killedWithAlloc, and
// the sidecars too in a group without main tasks (nothing else would
// stop them).
func (ar *AllocRunner) stopsWithAlloc(t *structs.Task) bool {
	if killedWithAlloc(t) {
		return true
	}
	return !t.IsHook(structs.TaskLifecycleHookPoststop) && !slices.ContainsFunc(ar.group.Tasks, (*structs.Task).IsMain)
}

// advanceLifecycle opens the lifecycle gates the tasks' states allow and,
// once the main tasks are all dead, stops the sidecars (and any prestart
// or poststart task left) with a "Main Tasks Dead" event.
func (ar *AllocRunner) advanceLifecycle() {
	if ar.gates == nil {
		return
	}
	ar.mu.Lock()
	unhealthy := map[string]bool{}
	for check, task := range ar.gateChecks {
		if !ar.passing[check] {
			unhealthy[task] = true
		}
	}
	p := lifecyclePhase(ar.group.Tasks, ar.states, unhealthy)
	ar.mu.Unlock()
	if p.mainDead {
		ar.gates.sidecarsOnce.Do(func() {
			for _, t := range ar.group.Tasks {
				if tr := ar.runners[t.Name]; tr != nil && !t.IsMain() && !t.IsHook(structs.TaskLifecycleHookPoststop) {
					tr.KillFor(structs.TaskMainDead, "Main tasks in the group died")
				}
			}
		})
	}
	ar.gates.open(p)
}

// Detach stops the runners but leaves the tasks running, for a client
// that shuts down and will re-attach from the state file.
func (ar *AllocRunner) Detach() {
	ar.mu.Lock()
	ar.detached = true
	ar.mu.Unlock()
	for _, tr := range ar.runners {
		tr.Detach()
	}
}

// Done is closed when every task runner has stopped.
func (ar *AllocRunner) Done() <-chan struct{} { return ar.doneCh }

// Dir returns the allocation's directory tree.
func (ar *AllocRunner) Dir() AllocDir { return ar.dir }

// Status returns the allocation's current state.
func (ar *AllocRunner) Status() Update {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.snapshotLocked()
}

func (ar *AllocRunner) snapshotLocked() Update {
	u := Update{AllocID: ar.cfg.Alloc.ID, TaskStates: make(map[string]*structs.TaskState, len(ar.states))}
	// The states are never changed once stored (a task runner sends a
	// copy of its own with each change), so an update shares them
	// instead of copying every task's events on each event.
	for k, v := range ar.states {
		u.TaskStates[k] = v
	}
	u.ClientStatus = ClientStatus(u.TaskStates)
	// As Nomad's clients, an empty one without a network of its own.
	// The network is made before the runner runs and kept: one value
	// serves every update.
	if ar.netStatus == nil {
		ar.netStatus = &structs.AllocNetworkStatus{}
		if ar.net != nil {
			ar.netStatus = &structs.AllocNetworkStatus{InterfaceName: ar.net.InterfaceName, Address: ar.net.Address}
		}
	}
	u.NetworkStatus = ar.netStatus
	if ar.exceeded {
		u.ClientDescription = structs.AllocMaxRunDurationExceeded
	}
	if ar.health != nil {
		h := *ar.health
		u.Health = &h
	}
	return u
}

// onTaskUpdate records a task's change, kills the siblings of a failed
// task or of a dead leader, feeds the health tracker and reports.
func (ar *AllocRunner) onTaskUpdate(u taskrunner.Update) {
	ar.mu.Lock()
	ar.states[u.Task] = u.State
	if u.Handle != nil {
		ar.handles[u.Task] = u.Handle
	} else {
		delete(ar.handles, u.Task)
	}
	ar.mu.Unlock()
	if u.State.State == structs.TaskStateDead && (u.State.Failed || u.Task == ar.leader) {
		ar.killOnce.Do(func() {
			typ, msg := structs.TaskSiblingFailed, fmt.Sprintf("Task's sibling %q failed", u.Task)
			if !u.State.Failed {
				typ, msg = structs.TaskLeaderDead, fmt.Sprintf("Leader task %q is dead", u.Task)
			}
			for _, t := range ar.group.Tasks {
				if tr := ar.runners[t.Name]; tr != nil && t.Name != u.Task && ar.stopsWithAlloc(t) {
					tr.KillFor(typ, msg)
				}
			}
		})
	}
	ar.advanceLifecycle()
	if ar.tracker != nil {
		ar.tracker.TaskUpdated(u.Task, u.State)
	}
	ar.restarts.TaskUpdated(u.Task, u.State)
	ar.emit()
}

// Exec runs cmd inside one of the allocation's tasks through its driver
// (drivers.ExecTaskDriver), as script checks do; the task must be
// running.
func (ar *AllocRunner) Exec(ctx context.Context, task string, cmd []string) ([]byte, int, error) {
	tr := ar.runners[task]
	t := ar.group.LookupTask(task)
	if tr == nil || t == nil {
		return nil, 0, fmt.Errorf("%w: no task %q runs in the allocation", drivers.ErrTaskNotFound, task)
	}
	h := tr.Handle()
	if h == nil {
		return nil, 0, fmt.Errorf("%w: task %q is not running", drivers.ErrTaskNotFound, task)
	}
	ed, ok := ar.cfg.Drivers[t.Driver].(drivers.ExecTaskDriver)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %s", drivers.ErrExecNotSupported, t.Driver)
	}
	return ed.Exec(ctx, h, cmd)
}

// emit persists the state file and reports the allocation's state.
func (ar *AllocRunner) emit() {
	ar.emitMu.Lock()
	defer ar.emitMu.Unlock()
	ar.mu.Lock()
	u := ar.snapshotLocked()
	// Most events change nothing saved: the file's contents are built
	// only for a write.
	next, save := ar.needsSave(u.TaskStates, ar.handles)
	var p *persisted
	if save {
		p = &persisted{Version: stateVersion, Tasks: make(map[string]*persistedTask, len(u.TaskStates)), RunStartedAt: ar.runStart}
		for name, st := range u.TaskStates {
			p.Tasks[name] = &persistedTask{State: st, Handle: ar.handles[name]}
		}
	}
	ar.mu.Unlock()
	if save {
		if u.PersistErr = saveState(ar.statePath, p); u.PersistErr == nil {
			ar.saved = next
		}
	}
	ar.cfg.OnUpdate(u)
}

// savedTask is the part of a task's persisted state that re-attachment
// depends on.
type savedTask struct {
	state    string
	failed   bool
	restarts uint64
	handle   *drivers.TaskHandle
}

// needsSave reports whether the tasks' states and handles differ from
// the state file in what a restarted client needs: a task's handle (to
// re-attach), its state (running, dead: not to run a finished task
// again), its restarts. A change of events alone is not written (a crash
// loses only events the client already reported), nor is a state in
// which every task is still pending without a handle (a restarted client
// starts such tasks anew, as it would from that file). It returns what
// to remember as saved once the write succeeded. Called with emitMu and
// mu held.
func (ar *AllocRunner) needsSave(states map[string]*structs.TaskState, handles map[string]*drivers.TaskHandle) (map[string]savedTask, bool) {
	saved := func(name string) savedTask {
		st := savedTask{handle: handles[name]}
		if t := states[name]; t != nil {
			st.state, st.failed, st.restarts = t.State, t.Failed, t.Restarts
		}
		return st
	}
	// Most events change nothing saved: tell so without building the
	// next map (one per task event otherwise).
	same, started := ar.saved != nil && len(ar.saved) == len(states), false
	for name := range states {
		st := saved(name)
		started = started || st.handle != nil || (st.state != "" && st.state != structs.TaskStatePending)
		if same {
			old, ok := ar.saved[name]
			same = ok && old == st
		}
	}
	if (ar.saved == nil && !started) || same {
		return nil, false
	}
	next := make(map[string]savedTask, len(states))
	for name := range states {
		next[name] = saved(name)
	}
	return next, true
}
