package structs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// PeriodicSpecCron is the one kind of periodic spec, as Nomad's.
const PeriodicSpecCron = "cron"

// PeriodicLaunchSuffix joins a periodic job's ID and a launch's Unix time
// into the child job's ID ("backup/periodic-1764101441"), as Nomad names
// them.
const PeriodicLaunchSuffix = "/periodic-"

// PeriodicConfig makes a batch or sysbatch job a periodic one: the job
// itself runs nothing; the leader launches a child job at each time of its
// cron specs, as Nomad's periodic block.
type PeriodicConfig struct {
	Enabled bool
	// Spec is Nomad's single cron (the job file's deprecated `cron`);
	// Specs its `crons`. Launches happen at the earliest time of any.
	Spec     string   `json:",omitempty"`
	Specs    []string `json:",omitempty"`
	SpecType string
	// ProhibitOverlap skips a launch while a child is still running.
	ProhibitOverlap bool
	// TimeZone is the IANA zone the specs are read in; UTC when empty.
	TimeZone string
}

// Copy returns a deep copy.
func (p *PeriodicConfig) Copy() *PeriodicConfig {
	if p == nil {
		return nil
	}
	c := *p
	c.Specs = copySlice(p.Specs)
	return &c
}

// AllSpecs returns Spec and Specs together.
func (p *PeriodicConfig) AllSpecs() []string {
	var out []string
	if p.Spec != "" {
		out = append(out, p.Spec)
	}
	return append(out, p.Specs...)
}

// Location returns the specs' time zone.
func (p *PeriodicConfig) Location() (*time.Location, error) {
	if p.TimeZone == "" {
		return time.UTC, nil
	}
	return time.LoadLocation(p.TimeZone)
}

// Validate checks the specs and the time zone; it names the first problem.
func (p *PeriodicConfig) Validate() error {
	if p.SpecType != "" && p.SpecType != PeriodicSpecCron {
		return fmt.Errorf("spec type %q is not supported (only %q)", p.SpecType, PeriodicSpecCron)
	}
	specs := p.AllSpecs()
	if len(specs) == 0 {
		return fmt.Errorf("a periodic job needs at least one cron spec")
	}
	for _, s := range specs {
		if _, err := cronexpr.Parse(s); err != nil {
			return fmt.Errorf("invalid cron spec %q: %v", s, err)
		}
	}
	if _, err := p.Location(); err != nil {
		return fmt.Errorf("invalid time zone %q: %v", p.TimeZone, err)
	}
	return nil
}

// Next returns the earliest launch time of any spec strictly after
// after, in the config's time zone; the zero time when there is none (or
// the config is invalid).
func (p *PeriodicConfig) Next(after time.Time) time.Time {
	loc, err := p.Location()
	if err != nil {
		return time.Time{}
	}
	var next time.Time
	for _, s := range p.AllSpecs() {
		e, err := cronexpr.Parse(s)
		if err != nil {
			continue
		}
		t := e.Next(after.In(loc))
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// IsPeriodic reports whether the job is a periodic parent: it runs nothing
// itself, the leader launches its children.
func (j *Job) IsPeriodic() bool { return j != nil && j.Periodic != nil }

// IsPeriodicActive reports whether the leader launches the job's children:
// periodic, enabled, not stopped, and not a parameterized parent (as
// Nomad's: a periodic parameterized job launches nothing itself; each of
// its dispatched children is a periodic job that does).
func (j *Job) IsPeriodicActive() bool {
	return j.IsPeriodic() && j.Periodic.Enabled && !j.Stop && !j.IsParameterized()
}

// PeriodicChildID is the ID of the child launched at t.
func PeriodicChildID(parentID string, t time.Time) string {
	return parentID + PeriodicLaunchSuffix + strconv.FormatInt(t.Unix(), 10)
}

// IsPeriodicChildOf reports whether id names a launch of parentID.
func IsPeriodicChildOf(id, parentID string) bool {
	return strings.HasPrefix(id, parentID+PeriodicLaunchSuffix)
}

// PeriodicLaunch records a periodic job's latest launch, in the
// replicated state, so that a new leader neither launches it again nor
// misses the next one.
type PeriodicLaunch struct {
	Namespace string
	ID        string
	// Launch is the launch's time, UnixNano.
	Launch      int64
	CreateIndex uint64
	ModifyIndex uint64
}
