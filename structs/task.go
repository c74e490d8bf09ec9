package structs

import "time"

// Task drivers drover ships.
const (
	DriverRawExec = "raw_exec"
	DriverExec    = "exec"
	DriverDocker  = "docker"
	DriverMock    = "mock"
	DriverJava    = "java"
)

// DriverMockNomad is Nomad's name for its test driver: drover's mock
// driver runs it too, with Nomad's defaults (drivers/mock).
const DriverMockNomad = "mock_driver"

// CanonicalDriver returns the name of the driver drover ships that a task
// naming driver runs on, for the checks that depend on it: the mock
// driver for mock_driver, else driver itself.
func CanonicalDriver(driver string) string {
	if driver == DriverMockNomad {
		return DriverMock
	}
	return driver
}

// Task is one process (or simulated process) in a task group.
type Task struct {
	Name   string
	Driver string
	User   string `json:",omitempty"`
	// Config is the driver's free-form block, kept as plain JSON-like data
	// (string, float64/int64, bool, []any, map[string]any). Runtime
	// references such as "${NOMAD_PORT_http}" stay as text until the client
	// fills them in.
	Config        map[string]any
	Constraints   []*Constraint `json:",omitempty"`
	Affinities    []*Affinity   `json:",omitempty"`
	Env           map[string]string
	Services      []*Service `json:",omitempty"`
	Resources     *Resources
	RestartPolicy *RestartPolicy `json:",omitempty"`
	Meta          map[string]string
	KillTimeout   time.Duration
	KillSignal    string `json:",omitempty"`
	LogConfig     *LogConfig
	Leader        bool
	ShutdownDelay time.Duration
	// Lifecycle, when set, runs the task before, beside or after the
	// group's main tasks (structs/lifecycle.go).
	Lifecycle *TaskLifecycle `json:",omitempty"`
	// DispatchPayload names the file a dispatched job's payload is
	// written into, under the task's local directory.
	DispatchPayload *DispatchPayloadConfig `json:",omitempty"`
	// Templates are rendered into the task's directory before it starts
	// (template.go).
	Templates []*Template `json:",omitempty"`
	// Artifacts are fetched into the task's directory before it starts.
	Artifacts []*TaskArtifact `json:",omitempty"`
	// VolumeMounts mount the group's volumes into the task.
	VolumeMounts []*VolumeMount `json:",omitempty"`
}

// Copy returns a deep copy of the task.
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Config = copyAnyMap(t.Config)
	c.Constraints = copyConstraints(t.Constraints)
	c.Affinities = copyAffinities(t.Affinities)
	c.Env = copyMap(t.Env)
	c.Services = copyServices(t.Services)
	c.Resources = t.Resources.Copy()
	c.RestartPolicy = t.RestartPolicy.Copy()
	c.Meta = copyMap(t.Meta)
	if t.Lifecycle != nil {
		l := *t.Lifecycle
		c.Lifecycle = &l
	}
	c.Artifacts = copyArtifacts(t.Artifacts)
	c.VolumeMounts = copyVolumeMounts(t.VolumeMounts)
	if t.DispatchPayload != nil {
		d := *t.DispatchPayload
		c.DispatchPayload = &d
	}
	c.Templates = copyTemplates(t.Templates)
	if t.LogConfig != nil {
		l := *t.LogConfig
		c.LogConfig = &l
	}
	return &c
}

// Defaults for tasks.
const (
	DefaultKillTimeout  = 5 * time.Second
	DefaultLogMaxFiles  = 10
	DefaultLogMaxFileMB = 10
	DefaultTaskCPU      = 100
	DefaultTaskMemoryMB = 300
	DefaultKillSignal   = "SIGTERM"
)

// LogConfig bounds the stdout/stderr files a task's logs rotate through.
type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

// DefaultLogConfig returns Nomad's log defaults: 10 files of 10 MB.
func DefaultLogConfig() *LogConfig {
	return &LogConfig{MaxFiles: DefaultLogMaxFiles, MaxFileSizeMB: DefaultLogMaxFileMB}
}
