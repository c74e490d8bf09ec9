package structs

// Multiregion is a job's `multiregion` block: the job rolls out region by
// region across federated regions, each region holding its own copy of
// the job (its count, datacenters, node pool and meta) at one version.
// Field names are Nomad's.
type Multiregion struct {
	Strategy *MultiregionStrategy
	// Regions in the order written, which is the order rolled.
	Regions []*MultiregionRegion
}

// MultiregionStrategy says how many regions roll at once and what a
// region's failure does to the others.
type MultiregionStrategy struct {
	// MaxParallel is the number of regions rolling at once; 0 means all.
	MaxParallel int
	// OnFailure is MultiregionOnFailureFailAll, MultiregionOnFailureFailLocal
	// or "" (unset, Nomad's documented default).
	OnFailure string
}

// MultiregionRegion is one region of the block: its copy of the job takes
// Count for every group, Datacenters and NodePool when set, and Meta
// merged over the job's.
type MultiregionRegion struct {
	Name        string
	Count       int
	Datacenters []string
	NodePool    string
	Meta        map[string]string
}

// On-failure values of a multiregion strategy, as Nomad's.
const (
	MultiregionOnFailureFailAll   = "fail_all"
	MultiregionOnFailureFailLocal = "fail_local"
)

// Deployment statuses of multi-region rollouts, as Nomad's: a region's
// deployment starts pending (it places nothing) until its turn, and waits
// blocked once it has succeeded until the other regions are done.
const (
	DeploymentStatusPending    = "pending"
	DeploymentStatusBlocked    = "blocked"
	DeploymentStatusUnblocking = "unblocking"
)

// Deployment status descriptions of multi-region rollouts, as Nomad's.
const (
	DeploymentStatusDescriptionFailedByPeer   = "Failed because of an error in peer region"
	DeploymentStatusDescriptionBlocked        = "Deployment is complete but waiting for peer region"
	DeploymentStatusDescriptionUnblocking     = "Deployment is unblocking remaining regions"
	DeploymentStatusDescriptionPendingForPeer = "Deployment is pending, waiting for peer region"
)

// IsMultiregion reports whether the job names regions to roll across.
func (j *Job) IsMultiregion() bool {
	return j != nil && j.Multiregion != nil && len(j.Multiregion.Regions) > 0
}

// Region returns the block's entry for region, or nil.
func (m *Multiregion) Region(name string) *MultiregionRegion {
	if m == nil {
		return nil
	}
	for _, r := range m.Regions {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Copy returns a deep copy.
func (m *Multiregion) Copy() *Multiregion {
	if m == nil {
		return nil
	}
	c := &Multiregion{}
	if m.Strategy != nil {
		s := *m.Strategy
		c.Strategy = &s
	}
	if m.Regions != nil {
		c.Regions = make([]*MultiregionRegion, len(m.Regions))
		for i, r := range m.Regions {
			rc := *r
			rc.Datacenters = copySlice(r.Datacenters)
			rc.Meta = copyMap(r.Meta)
			c.Regions[i] = &rc
		}
	}
	return c
}
