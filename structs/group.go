package structs

import "time"

// TaskGroup is a set of tasks placed together on one node; Count copies of
// it run. Each copy is one allocation named "job.group[index]".
type TaskGroup struct {
	Name        string
	Count       int
	Constraints []*Constraint `json:",omitempty"`
	Affinities  []*Affinity   `json:",omitempty"`
	Spreads     []*Spread     `json:",omitempty"`
	Tasks       []*Task
	// Volumes are the group's volume blocks, by name (host volumes).
	Volumes          map[string]*VolumeRequest `json:",omitempty"`
	RestartPolicy    *RestartPolicy
	ReschedulePolicy *ReschedulePolicy
	EphemeralDisk    *EphemeralDisk
	// Update is the merged, defaulted strategy: the job-level block with this
	// group's own fields laid over it. Nil for batch jobs.
	Update *UpdateStrategy
	// Migrate is the merged, defaulted migrate block: how the group's
	// allocations move off a draining node. Nil for jobs other than
	// service jobs.
	Migrate       *MigrateStrategy   `json:",omitempty"`
	Networks      []*NetworkResource `json:",omitempty"`
	Services      []*Service         `json:",omitempty"`
	Meta          map[string]string
	ShutdownDelay *time.Duration `json:",omitempty"`
	// Disconnect is what servers and client do when the client cannot
	// heartbeat (the disconnect block); nil: its allocations are lost at
	// once.
	Disconnect *DisconnectStrategy `json:",omitempty"`
	// MaxRunDuration (batch and sysbatch jobs) bounds how long an
	// allocation of the group runs: its client stops it then, complete,
	// not rescheduled. Nil: no bound.
	MaxRunDuration *time.Duration `json:",omitempty"`
	// Scaling is the group's scaling block: the bounds a count must keep
	// to (job scale) and a policy for an external autoscaler. Nil: none.
	Scaling *ScalingPolicy `json:",omitempty"`
}

// LookupTask returns the named task, or nil.
func (tg *TaskGroup) LookupTask(name string) *Task {
	if tg == nil {
		return nil
	}
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Copy returns a deep copy of the group.
func (tg *TaskGroup) Copy() *TaskGroup {
	if tg == nil {
		return nil
	}
	c := *tg
	c.Constraints = copyConstraints(tg.Constraints)
	c.Affinities = copyAffinities(tg.Affinities)
	c.Spreads = copySpreads(tg.Spreads)
	c.Volumes = copyVolumes(tg.Volumes)
	if tg.Tasks != nil {
		c.Tasks = make([]*Task, len(tg.Tasks))
		for i, t := range tg.Tasks {
			c.Tasks[i] = t.Copy()
		}
	}
	c.RestartPolicy = tg.RestartPolicy.Copy()
	c.ReschedulePolicy = tg.ReschedulePolicy.Copy()
	if tg.EphemeralDisk != nil {
		d := *tg.EphemeralDisk
		c.EphemeralDisk = &d
	}
	c.Update = tg.Update.Copy()
	c.Migrate = tg.Migrate.Copy()
	c.Networks = copyNetworks(tg.Networks)
	c.Services = copyServices(tg.Services)
	c.Meta = copyMap(tg.Meta)
	if tg.ShutdownDelay != nil {
		d := *tg.ShutdownDelay
		c.ShutdownDelay = &d
	}
	if tg.MaxRunDuration != nil {
		d := *tg.MaxRunDuration
		c.MaxRunDuration = &d
	}
	c.Disconnect = tg.Disconnect.Copy()
	c.Scaling = tg.Scaling.Copy()
	return &c
}

// EphemeralDisk is the scratch space an allocation gets on its node.
type EphemeralDisk struct {
	Sticky  bool
	Migrate bool
	SizeMB  int
}

// DefaultEphemeralDiskMB is the disk an allocation asks for by default.
const DefaultEphemeralDiskMB = 300
