package structs

import "time"

// Analysis (drover): rollouts gated by the service's own metrics. An
// update block names any number of analyses; the deployment watcher runs
// them at the moments When says, the leader measures them against a
// Prometheus server, and every run with its last measurements lives in the
// replicated deployment (DeploymentState.Analyses).

// Analysis providers.
const (
	AnalysisProviderPrometheus = "prometheus"
)

// When an analysis runs.
const (
	// AnalysisWhenCanary: one run once every canary of the group is
	// healthy; promotion waits for its success.
	AnalysisWhenCanary = "canary"
	// AnalysisWhenEachBatch: one run after each batch is healthy; the next
	// batch (zone, group, checkpoint) waits for its success.
	AnalysisWhenEachBatch = "each_batch"
	// AnalysisWhenBackground: measurements from the first healthy new alloc
	// until the deployment ends; a failure at any moment fails it.
	AnalysisWhenBackground = "background"
)

// Defaults of an analysis block.
const (
	DefaultAnalysisInterval   = 10 * time.Second
	MinAnalysisInterval       = time.Second
	DefaultAnalysisCount      = 1
	DefaultAnalysisErrorLimit = 4
	// AnalysisQueryTimeout bounds one query to the provider.
	AnalysisQueryTimeout = 10 * time.Second
	// AnalysisMeasurementsKept is how many measurements a run keeps.
	AnalysisMeasurementsKept = 20
)

// Analysis is one `analysis "name" { … }` block of an update block, after
// the job level is merged into the group by name.
type Analysis struct {
	Name     string
	Provider string
	// Address is the provider's base URL; empty: the servers'
	// analysis { prometheus_address }.
	Address string `json:",omitempty"`
	// Query is the PromQL instant query, with its runtime references
	// (${job.name}, ${job.version}, ${stable.version}, ${group.name},
	// ${deployment.id}, ${zone}) substituted at each measurement.
	Query string
	// Success and Failure are HCL expressions over result and results
	// that give a bool; at least one is set.
	Success string `json:",omitempty"`
	Failure string `json:",omitempty"`
	When    string
	// Interval between measurements; Count measurements per run (not for
	// background); InitialDelay before a run's first measurement.
	Interval     time.Duration
	Count        int
	InitialDelay time.Duration
	// Limits: failed and inconclusive measurements a run tolerates, and
	// consecutive errors before it is inconclusive.
	FailureLimit      int
	InconclusiveLimit int
	ErrorLimit        int
}

// Copy returns a copy.
func (a *Analysis) Copy() *Analysis {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// CopyAnalyses copies a list of analyses.
func CopyAnalyses(in []*Analysis) []*Analysis {
	if in == nil {
		return nil
	}
	out := make([]*Analysis, len(in))
	for i, a := range in {
		out[i] = a.Copy()
	}
	return out
}

// Phases of an analysis run.
const (
	AnalysisPhaseRunning      = "running"
	AnalysisPhaseSuccessful   = "successful"
	AnalysisPhaseFailed       = "failed"
	AnalysisPhaseInconclusive = "inconclusive"
	// AnalysisPhaseAccepted: an inconclusive run that `deployment resume`
	// accepted.
	AnalysisPhaseAccepted = "accepted"
	// AnalysisPhaseSkipped: a canary run ended by a promotion by hand.
	AnalysisPhaseSkipped = "skipped"
)

// Outcomes of one measurement.
const (
	AnalysisOutcomeSuccess      = "success"
	AnalysisOutcomeFailure      = "failure"
	AnalysisOutcomeInconclusive = "inconclusive"
	AnalysisOutcomeError        = "error"
)

// AnalysisRun is one run of an analysis in a deployment's group.
type AnalysisRun struct {
	Name string
	When string
	// Batch is the batch (1, 2, …) after which an each_batch run gates;
	// 0 for canary and background runs.
	Batch int `json:",omitempty"`
	// Zone is the zone the run's batch belongs to in a zone rollout.
	Zone      string `json:",omitempty"`
	Phase     string
	StartedAt time.Time
	// Counts of the run's measurements by outcome; Errors counts the
	// consecutive errors (a measurement of any other outcome resets it).
	Successes     int
	Failures      int
	Inconclusives int
	Errors        int
	// Measurements are the last AnalysisMeasurementsKept, oldest first.
	Measurements []*AnalysisMeasurement
	// Healthy is, for an each_batch run, the group's healthy new allocs
	// when it started: the batches it covers. The next batch waits for a
	// successful run that covers every healthy alloc of the group.
	Healthy int `json:",omitempty"`
}

// Terminal reports whether the run has ended.
func (r *AnalysisRun) Terminal() bool {
	return r != nil && r.Phase != AnalysisPhaseRunning
}

// Copy returns a deep copy.
func (r *AnalysisRun) Copy() *AnalysisRun {
	if r == nil {
		return nil
	}
	c := *r
	if r.Measurements != nil {
		c.Measurements = make([]*AnalysisMeasurement, len(r.Measurements))
		for i, m := range r.Measurements {
			c.Measurements[i] = m.Copy()
		}
	}
	return &c
}

// CopyAnalysisRuns copies a list of runs.
func CopyAnalysisRuns(in []*AnalysisRun) []*AnalysisRun {
	if in == nil {
		return nil
	}
	out := make([]*AnalysisRun, len(in))
	for i, r := range in {
		out[i] = r.Copy()
	}
	return out
}

// AnalysisMeasurement is one query's result and its outcome. At is the
// leader's stamp.
type AnalysisMeasurement struct {
	At time.Time
	// Result is the first sample's value; Results every sample's value in
	// the order the provider returned them. Both empty on an error.
	Result  *float64  `json:",omitempty"`
	Results []float64 `json:",omitempty"`
	Outcome string
	Error   string `json:",omitempty"`
}

// Copy returns a copy.
func (m *AnalysisMeasurement) Copy() *AnalysisMeasurement {
	if m == nil {
		return nil
	}
	c := *m
	if m.Result != nil {
		v := *m.Result
		c.Result = &v
	}
	c.Results = copySlice(m.Results)
	return &c
}
