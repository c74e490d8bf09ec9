package jobspec

import (
	"reflect"
	"time"
)

// The spec types are a job as written, before defaults and the update
// merge: the form both job files and API jobs are decoded into, and that
// the builder turns into a structs.Job.
//
// They hold only the elements drover supports (grammar.go says which).
// Field names are Nomad's API JSON names and field types are those of
// Nomad's API, so a job sent by Nomad's Go client decodes unchanged; a nil
// pointer means "not written", where the difference matters for the merge
// or a default. Elements Nomad defines but drover does not support have no
// field here: the JSON walker (apijson.go) checks them against the grammar
// table alone. A test compares these types with Nomad's API types field by
// field, so that the two cannot drift apart unnoticed.

// specJob is a job block.
type specJob struct {
	Region      *string
	Namespace   *string
	ID          *string
	Name        *string
	Type        *string
	Priority    *int
	Datacenters []string
	NodePool    *string
	Constraints []*specConstraint
	Affinities  []*specAffinity
	TaskGroups  []*specGroup
	Update      *specUpdate
	Multiregion *specMultiregion // multiregion.go
	Spreads     []*specSpread
	Reschedule  *specReschedule
	Migrate     *specMigrate
	Periodic    *specPeriodic
	// ParameterizedJob is the parameterized block (Nomad's field types:
	// no pointers, so an unwritten payload is "").
	ParameterizedJob *specParameterized
	Meta             map[string]string
}

// specParameterized is a job's parameterized block.
type specParameterized struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

// specLifecycle is a task's lifecycle block.
type specLifecycle struct {
	Hook    string
	Sidecar bool
}

// specVolume is a group's volume block.
type specVolume struct {
	Name     string
	Type     string
	Source   string
	ReadOnly bool
	PerAlloc bool
}

// specVolumeMount is a task's volume_mount block.
type specVolumeMount struct {
	Volume      *string
	Destination *string
	ReadOnly    *bool
}

// specArtifact is a task's artifact block.
type specArtifact struct {
	GetterSource   *string
	GetterOptions  map[string]string
	GetterHeaders  map[string]string
	GetterMode     *string
	GetterInsecure *bool
	RelativeDest   *string
	Chown          bool
}

// specDispatchPayload is a task's dispatch_payload block.
type specDispatchPayload struct {
	File string
}

// specScaling is a group's scaling block. Max is required; Min defaults
// to the group's count, as Nomad's.
type specScaling struct {
	Min     *int64
	Max     *int64
	Policy  map[string]any
	Enabled *bool
	Type    string
}

// specPeriodic is a job's periodic block.
type specPeriodic struct {
	Enabled         *bool
	Spec            *string
	Specs           []string
	SpecType        *string
	ProhibitOverlap *bool
	TimeZone        *string
}

// specGroup is a group block.
type specGroup struct {
	Name             *string
	Count            *int
	Constraints      []*specConstraint
	Affinities       []*specAffinity
	Tasks            []*specTask
	Spreads          []*specSpread
	RestartPolicy    *specRestart
	Disconnect       *specDisconnect
	ReschedulePolicy *specReschedule
	EphemeralDisk    *specEphemeralDisk
	Update           *specUpdate
	Migrate          *specMigrate
	Networks         []*specNetwork
	Meta             map[string]string
	Services         []*specService
	ShutdownDelay    *time.Duration
	MaxRunDuration   *time.Duration
	Scaling          *specScaling
	Volumes          map[string]*specVolume
	// The disconnect block's forms before Nomad 1.8.
	StopAfterClientDisconnect *time.Duration
	MaxClientDisconnect       *time.Duration
}

// specDisconnect is a group's disconnect block.
type specDisconnect struct {
	LostAfter         *time.Duration
	StopOnClientAfter *time.Duration
	Replace           *bool
	Reconcile         *string
}

// specTask is a task block.
type specTask struct {
	Name          string
	Driver        string
	User          string
	Config        map[string]any
	Constraints   []*specConstraint
	Affinities    []*specAffinity
	Env           map[string]string
	Services      []*specService
	Resources     *specResources
	RestartPolicy *specRestart
	Meta          map[string]string
	KillTimeout   *time.Duration
	LogConfig     *specLogs
	Leader        bool
	ShutdownDelay time.Duration
	KillSignal    string
	// DispatchPayload is the dispatch_payload block.
	DispatchPayload *specDispatchPayload
	Artifacts       []*specArtifact
	VolumeMounts    []*specVolumeMount
	Lifecycle       *specLifecycle
	Templates       []*specTemplate
}

// specTemplate is a task's template block.
type specTemplate struct {
	SourcePath    *string
	DestPath      *string
	EmbeddedTmpl  *string
	ChangeMode    *string
	ChangeScript  *specChangeScript
	ChangeSignal  *string
	Once          *bool
	Splay         *time.Duration
	Perms         *string
	Uid           *int
	Gid           *int
	LeftDelim     *string
	RightDelim    *string
	Envvars       *bool
	Wait          *specWait
	ErrMissingKey *bool
}

// specChangeScript is a template's change_script block.
type specChangeScript struct {
	Command     *string
	Args        []string
	Timeout     *time.Duration
	FailOnError *bool
}

// specWait is a template's wait block.
type specWait struct {
	Min *time.Duration
	Max *time.Duration
}

// specResources is a task's resources block.
type specResources struct {
	CPU         *int
	Cores       *int
	MemoryMB    *int
	MemoryMaxMB *int
}

// specLogs is a task's logs block.
type specLogs struct {
	MaxFiles      *int
	MaxFileSizeMB *int
	Enabled       *bool
	Disabled      *bool
}

// specEphemeralDisk is a group's ephemeral_disk block.
type specEphemeralDisk struct {
	Sticky  *bool
	Migrate *bool
	SizeMB  *int
}

// specRestart is a restart block (group or task).
type specRestart struct {
	Interval *time.Duration
	Attempts *int
	Delay    *time.Duration
	Mode     *string
}

// specReschedule is a reschedule block (job or group).
type specReschedule struct {
	Attempts      *int
	Interval      *time.Duration
	Delay         *time.Duration
	DelayFunction *string
	MaxDelay      *time.Duration
	Unlimited     *bool
}

// specMigrate is a migrate block (job or group).
type specMigrate struct {
	MaxParallel     *int
	HealthCheck     *string
	MinHealthyTime  *time.Duration
	HealthyDeadline *time.Duration
}

// specConstraint is a constraint block, shorthands already resolved.
type specConstraint struct {
	LTarget string
	RTarget string
	Operand string
}

// specAffinity is an affinity block. Weight is nil when not written
// (Nomad's default, 50).
type specAffinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  *int8
}

// specSpread is a spread block.
type specSpread struct {
	Attribute    string
	Weight       *int8
	SpreadTarget []*specSpreadTarget
}

// specSpreadTarget is a spread's target block.
type specSpreadTarget struct {
	Value   string
	Percent uint8
}

// specNetwork is a group's network block. Job files write every port as
// port "label" { ... } (DynamicPorts); API jobs may list static ports
// under ReservedPorts.
type specNetwork struct {
	Mode          string
	ReservedPorts []specPort
	DynamicPorts  []specPort
}

// specPort is a port block.
type specPort struct {
	Label       string
	Value       int
	To          int
	HostNetwork string
}

// specService is a service block (group or task).
type specService struct {
	Name         string
	Tags         []string
	CanaryTags   []string
	PortLabel    string
	AddressMode  string
	Address      string
	Checks       []specCheck
	CheckRestart *specCheckRestart
	Meta         map[string]string
	TaskName     string
	OnUpdate     string
	Provider     string
}

// specCheck is a service's check block.
type specCheck struct {
	Name         string
	Type         string
	Command      string
	Args         []string
	Path         string
	Protocol     string
	PortLabel    string
	Interval     time.Duration
	Timeout      time.Duration
	Header       map[string][]string
	Method       string
	CheckRestart *specCheckRestart
	TaskName     string
	OnUpdate     string
}

// specCheckRestart is a check_restart block (service or check).
type specCheckRestart struct {
	Limit          int
	Grace          *time.Duration
	IgnoreWarnings bool
}

// blockOf maps each spec type to its block in the grammar table.
var blockOf = map[reflect.Type]string{
	reflect.TypeFor[specJob]():             "job",
	reflect.TypeFor[specGroup]():           "group",
	reflect.TypeFor[specTask]():            "task",
	reflect.TypeFor[specTemplate]():        "template",
	reflect.TypeFor[specChangeScript]():    "change_script",
	reflect.TypeFor[specWait]():            "wait",
	reflect.TypeFor[specService]():         "service",
	reflect.TypeFor[specCheck]():           "check",
	reflect.TypeFor[specCheckRestart]():    "check_restart",
	reflect.TypeFor[specDisconnect]():      "disconnect",
	reflect.TypeFor[specNetwork]():         "network",
	reflect.TypeFor[specPort]():            "port",
	reflect.TypeFor[specResources]():       "resources",
	reflect.TypeFor[specUpdate]():          "update",
	reflect.TypeFor[specZones]():           "zones",    // drover's own (spec_zones.go)
	reflect.TypeFor[specAnalysis]():        "analysis", // drover's own (spec_analysis.go)
	reflect.TypeFor[specRestart]():         "restart",
	reflect.TypeFor[specReschedule]():      "reschedule",
	reflect.TypeFor[specMigrate]():         "migrate",
	reflect.TypeFor[specPeriodic]():        "periodic",
	reflect.TypeFor[specEphemeralDisk]():   "ephemeral_disk",
	reflect.TypeFor[specLogs]():            "logs",
	reflect.TypeFor[specConstraint]():      "constraint",
	reflect.TypeFor[specAffinity]():        "affinity",
	reflect.TypeFor[specSpread]():          "spread",
	reflect.TypeFor[specSpreadTarget]():    "target",
	reflect.TypeFor[specParameterized]():   "parameterized",
	reflect.TypeFor[specDispatchPayload](): "dispatch_payload",
	reflect.TypeFor[specLifecycle]():       "lifecycle",
	reflect.TypeFor[specArtifact]():        "artifact",
	reflect.TypeFor[specVolume]():          "volume",
	reflect.TypeFor[specVolumeMount]():     "volume_mount",
	reflect.TypeFor[specScaling]():         "scaling",
}
