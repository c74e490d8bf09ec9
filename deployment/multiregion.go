package deployment

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Multi-region rollouts (a job's `multiregion` block), as Nomad's: every
// region named holds its own copy of the job at one version, and its own
// deployment of it. A region's deployment starts pending (it places
// nothing) unless it is among the first max_parallel regions in the order
// written; it runs when its turn comes; where a single-region deployment
// would be successful it turns blocked (Decide); once every region's is
// blocked (or successful) each region marks its own successful. A failure
// spreads by the strategy's on_failure.
//
// DecideRegion is the pure step of one region: it looks at its own
// deployment and what the leader read of the other regions', and names
// the one write to make. The leader's loop (server/multiregion_watch.go)
// reads the other regions over the federation and writes the step into
// this region's own replicated state.

// Refusals of the multi-region verbs, Nomad's texts.
var (
	// ErrUnblockTerminal: unblock of a deployment that is finished.
	ErrUnblockTerminal = errors.New("can't unblock terminal deployment")
	// ErrUnblockRunning: unblock of a deployment that is not blocked.
	ErrUnblockRunning = errors.New("can't unblock running deployment")
	// ErrUnblockNotMultiregion: unblock of a single-region deployment.
	ErrUnblockNotMultiregion = errors.New("can't unblock a deployment that is not of a multiregion job")
	// ErrRegionWaits: pause, resume or promotion of a pending or blocked
	// deployment, whose status the regions' rollout owns.
	ErrRegionWaits = errors.New("deployment waits for its region's turn")
)

// Peer is what the leader knows of another region's deployment of the
// same job version.
type Peer struct {
	// Region names the region.
	Region string
	// Deployment is the region's deployment of the version, nil when it
	// has none (yet).
	Deployment *structs.Deployment
	// Newer is set when the region holds a deployment of a newer version
	// of the job: the version rolled here is superseded there.
	Newer bool
	// Unreachable is set when the region could not be read; Since is
	// when that began (as this leader saw it).
	Unreachable bool
	Since       time.Time
}

// RegionObservation is everything DecideRegion looks at.
type RegionObservation struct {
	// Region is this region's name.
	Region string
	// Multiregion is the block of the deployment's job version.
	Multiregion *structs.Multiregion
	// Deployment is this region's deployment of the version.
	Deployment *structs.Deployment
	// Peers are the other regions of the block, by name.
	Peers map[string]Peer
	// Now is the time of the decision.
	Now time.Time
}

// Region step kinds.
const (
	// RegionStepNone: nothing to write.
	RegionStepNone = ""
	// RegionStepStart: a pending deployment starts running.
	RegionStepStart = "start"
	// RegionStepSucceed: a blocked deployment turns successful (the job
	// version becomes stable).
	RegionStepSucceed = "succeed"
	// RegionStepFail: the deployment fails because of a peer's failure.
	RegionStepFail = "fail"
	// RegionStepWait: the deployment waits; only its description changes.
	RegionStepWait = "wait"
)

// RegionStep is the one write DecideRegion asks for.
type RegionStep struct {
	// Kind is one of the RegionStep constants.
	Kind string
	// Status and StatusDescription are the deployment's new ones.
	Status, StatusDescription string
	// Revert asks a failure to register the stable version again where
	// the deployment's groups revert on failure (auto_revert): a region
	// that had started.
	Revert bool
	// Peer names the region the step is because of, if any.
	Peer string
}

// String is a stable summary for logs and tests.
func (s RegionStep) String() string {
	if s.Kind == RegionStepNone {
		return "none"
	}
	out := s.Kind
	if s.Status != "" {
		out += " " + s.Status
	}
	if s.Revert {
		out += " revert"
	}
	if s.Peer != "" {
		out += " peer=" + s.Peer
	}
	if s.StatusDescription != "" {
		out += fmt.Sprintf(" %q", s.StatusDescription)
	}
	return out
}

// OnFailure returns the strategy's on_failure ("" when unset).
func onFailureOf(m *structs.Multiregion) string {
	if m == nil || m.Strategy == nil {
		return ""
	}
	return m.Strategy.OnFailure
}

// MaxParallel returns the strategy's max_parallel (0: all at once).
func maxParallelOf(m *structs.Multiregion) int {
	if m == nil || m.Strategy == nil || m.Strategy.MaxParallel < 0 {
		return 0
	}
	return m.Strategy.MaxParallel
}

// StartsAtOnce reports whether region's deployment of a multi-region job
// starts running when it is created: max_parallel is 0, or the region is
// among the first max_parallel in the order written. The others start
// pending.
func StartsAtOnce(m *structs.Multiregion, region string) bool {
	n := maxParallelOf(m)
	if n == 0 || m == nil {
		return true
	}
	for i, r := range m.Regions {
		if r != nil && r.Name == region {
			return i < n
		}
	}
	// A region the block does not name rolls by itself.
	return true
}

// UnreachableReason is the wait sentence of a region that cannot be read.
func UnreachableReason(region string, since time.Time) string {
	return fmt.Sprintf("waiting for region %q (unreachable since %s)", region, since.UTC().Format("15:04:05"))
}

// unreachablePrefix starts every UnreachableReason of region.
func unreachablePrefix(region string) string {
	return fmt.Sprintf("waiting for region %q (unreachable since ", region)
}

// NewerReason is the wait sentence while another region rolls a newer
// version of the job.
func NewerReason(region string) string {
	return fmt.Sprintf("waiting for region %q: it holds a newer version of the job", region)
}

// regionState is one region's part of the rollout as DecideRegion sees it.
type regionState struct {
	name   string
	status string // the deployment's status; "" when it has none
	peer   Peer
	self   bool
}

// known reports whether the region was read.
func (r regionState) known() bool { return r.self || !r.peer.Unreachable }

func (r regionState) failed() bool { return r.status == structs.DeploymentStatusFailed }

// done reports whether the region finished its part: blocked, successful,
// or failed when on_failure is fail_local (its slot frees for the next).
func (r regionState) done(onFailure string) bool {
	switch r.status {
	case structs.DeploymentStatusBlocked, structs.DeploymentStatusSuccessful, structs.DeploymentStatusUnblocking:
		return true
	case structs.DeploymentStatusFailed:
		return onFailure == structs.MultiregionOnFailureFailLocal
	}
	return false
}

// DecideRegion returns the step to write for this region's deployment of
// a multi-region job's version. It is a pure function of obs.
//
// Rules, in order:
//   - a deployment that is not pending, running, paused or blocked, or
//     not of a multi-region job, gets none;
//   - failure (on_failure): "fail_all" — any other region's deployment of
//     the version failed: this one fails (FailedByPeer), reverting where
//     it had started; unset (Nomad's default) — a region earlier in the
//     order failed: this one fails likewise, regions before the failed
//     one keep theirs; "fail_local" — other regions' failures fail
//     nothing here;
//   - a pending deployment starts when fewer than max_parallel regions
//     before it in the order are unfinished (all at once for 0), each
//     earlier region being known (read, and not on a newer version);
//     else it waits, naming the region it waits for when that one is
//     unreachable or on a newer version;
//   - a blocked deployment turns successful once every other region's
//     deployment of the version is blocked or successful; a failed one
//     keeps it blocked (deployment unblock ends it by hand);
//   - otherwise none.
func DecideRegion(obs RegionObservation) RegionStep {
	d := obs.Deployment
	if d == nil || !d.IsMultiregion || obs.Multiregion == nil || len(obs.Multiregion.Regions) == 0 {
		return RegionStep{}
	}
	switch d.Status {
	case structs.DeploymentStatusPending, structs.DeploymentStatusRunning,
		structs.DeploymentStatusPaused, structs.DeploymentStatusBlocked:
	default:
		return RegionStep{}
	}
	onFailure := onFailureOf(obs.Multiregion)
	regions := make([]regionState, 0, len(obs.Multiregion.Regions))
	self := -1
	for _, r := range obs.Multiregion.Regions {
		if r == nil {
			continue
		}
		if r.Name == obs.Region {
			self = len(regions)
			regions = append(regions, regionState{name: r.Name, status: d.Status, self: true})
			continue
		}
		p, ok := obs.Peers[r.Name]
		if !ok {
			p = Peer{Region: r.Name, Unreachable: true, Since: obs.Now}
		}
		st := regionState{name: r.Name, peer: p}
		if p.Deployment != nil {
			st.status = p.Deployment.Status
		}
		regions = append(regions, st)
	}
	if self < 0 {
		// The block does not name this region: it rolls by itself.
		return RegionStep{}
	}

	if step, ok := failByPeer(d, regions, self, onFailure); ok {
		return step
	}

	switch d.Status {
	case structs.DeploymentStatusPending:
		return decidePending(obs, d, regions, self, onFailure)
	case structs.DeploymentStatusBlocked:
		return decideBlocked(obs, d, regions, self)
	}
	return RegionStep{}
}

// failByPeer applies on_failure: the step failing this region because of
// another's failure, if any.
func failByPeer(d *structs.Deployment, regions []regionState, self int, onFailure string) (RegionStep, bool) {
	if onFailure == structs.MultiregionOnFailureFailLocal {
		return RegionStep{}, false
	}
	for i, r := range regions {
		if r.self || !r.known() || !r.failed() {
			continue
		}
		if onFailure == "" && i > self {
			// Unset: the failed region and those after it fail; those
			// before it keep their state.
			continue
		}
		return RegionStep{
			Kind: RegionStepFail, Status: structs.DeploymentStatusFailed,
			StatusDescription: structs.DeploymentStatusDescriptionFailedByPeer,
			// A pending region never placed the version: nothing to
			// revert there.
			Revert: d.Status != structs.DeploymentStatusPending,
			Peer:   r.name,
		}, true
	}
	return RegionStep{}, false
}

// decidePending starts a pending deployment when its turn came.
func decidePending(obs RegionObservation, d *structs.Deployment, regions []regionState, self int, onFailure string) RegionStep {
	limit := maxParallelOf(obs.Multiregion)
	unfinished := 0
	var waitFor *regionState
	for i := range self {
		r := regions[i]
		if !r.known() {
			// Its state is not known: it may be rolling.
			if waitFor == nil {
				waitFor = &regions[i]
			}
			unfinished++
			continue
		}
		if !r.done(onFailure) {
			unfinished++
			if waitFor == nil {
				waitFor = &regions[i]
			}
		}
	}
	if limit == 0 || unfinished < limit {
		return RegionStep{Kind: RegionStepStart, Status: structs.DeploymentStatusRunning,
			StatusDescription: runningDescription(d)}
	}
	return waitStep(obs, d, waitFor, structs.DeploymentStatusDescriptionPendingForPeer)
}

// decideBlocked turns a blocked deployment successful once every other
// region is done.
func decideBlocked(obs RegionObservation, d *structs.Deployment, regions []regionState, self int) RegionStep {
	var waitFor *regionState
	for i, r := range regions {
		if i == self {
			continue
		}
		if !r.known() {
			// An unreachable region is named before one that is slow.
			if waitFor == nil || waitFor.known() {
				waitFor = &regions[i]
			}
			continue
		}
		switch r.status {
		case structs.DeploymentStatusBlocked, structs.DeploymentStatusSuccessful, structs.DeploymentStatusUnblocking:
		default:
			if waitFor == nil {
				waitFor = &regions[i]
			}
		}
	}
	if waitFor == nil {
		return RegionStep{Kind: RegionStepSucceed, Status: structs.DeploymentStatusSuccessful,
			StatusDescription: structs.DeploymentStatusDescriptionSuccessful}
	}
	return waitStep(obs, d, waitFor, structs.DeploymentStatusDescriptionBlocked)
}

// waitStep keeps the deployment waiting; its description names an
// unreachable region (keeping the time already written, which a new
// leader finds in state) or a region on a newer version, else it is
// Nomad's.
func waitStep(obs RegionObservation, d *structs.Deployment, r *regionState, base string) RegionStep {
	want := base
	peer := ""
	if r != nil {
		peer = r.name
		switch {
		case r.peer.Unreachable:
			if strings.HasPrefix(d.StatusDescription, unreachablePrefix(r.name)) {
				want = d.StatusDescription
			} else {
				since := r.peer.Since
				if since.IsZero() {
					since = obs.Now
				}
				want = UnreachableReason(r.name, since)
			}
		case r.peer.Newer:
			want = NewerReason(r.name)
		}
	}
	if want == d.StatusDescription {
		return RegionStep{}
	}
	return RegionStep{Kind: RegionStepWait, StatusDescription: want, Peer: peer}
}

// Unblock validates ending a blocked multi-region deployment by hand
// (`deployment unblock`): it returns the successful deployment.
func Unblock(d *structs.Deployment, now time.Time) (*structs.Deployment, error) {
	if d == nil {
		return nil, ErrNoDeployment
	}
	if !d.Active() {
		return nil, ErrUnblockTerminal
	}
	if !d.IsMultiregion {
		return nil, ErrUnblockNotMultiregion
	}
	if d.Status != structs.DeploymentStatusBlocked {
		return nil, ErrUnblockRunning
	}
	out := d.Copy()
	out.Status = structs.DeploymentStatusSuccessful
	out.StatusDescription = structs.DeploymentStatusDescriptionSuccessful
	out.ModifyTime = now.UnixNano()
	return out, nil
}

// regionWaits reports whether the regions' rollout owns d's status now
// (pending or blocked), for the verbs that would change it.
func regionWaits(d *structs.Deployment) error {
	switch d.Status {
	case structs.DeploymentStatusPending, structs.DeploymentStatusBlocked, structs.DeploymentStatusUnblocking:
		return fmt.Errorf("%w: it is %s", ErrRegionWaits, d.Status)
	}
	return nil
}

// waitsForRegions reports whether d is a multi-region deployment that
// waits for its turn (pending) or for the other regions (blocked,
// unblocking): Decide leaves it to DecideRegion, but for a cancellation.
func waitsForRegions(d *structs.Deployment) bool {
	return regionWaits(d) != nil
}

// FailByPeer returns the failed deployment of a fail step (Nomad's
// FailedByPeer description) and, when revert is set and a group of the
// deployment reverts on failure (auto_revert), the stable job to register
// again, marked RevertOf, as Decide's failures do.
func FailByPeer(d *structs.Deployment, job, stable *structs.Job, revert bool, now time.Time) (*structs.Deployment, *structs.Job) {
	out := d.Copy()
	out.Status = structs.DeploymentStatusFailed
	out.StatusDescription = structs.DeploymentStatusDescriptionFailedByPeer
	out.ModifyTime = now.UnixNano()
	if !revert || job == nil {
		return out, nil
	}
	groups := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		groups = append(groups, name)
	}
	if !autoRevert(d, job, groups) {
		return out, nil
	}
	var to *structs.Job
	out.StatusDescription, to = revertTarget(out.StatusDescription, job, stable)
	return out, to
}
