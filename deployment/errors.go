package deployment

import "errors"

// Refusals of the operator verbs. Callers match them with errors.Is; the
// returned errors may wrap them with detail.
var (
	// ErrNoDeployment: the verb was given no deployment.
	ErrNoDeployment = errors.New("deployment not found")
	// ErrPromoteTerminal: promotion of a deployment that is no longer active.
	ErrPromoteTerminal = errors.New("can't promote terminal deployment")
	// ErrPauseTerminal: pause of a deployment that is no longer active.
	ErrPauseTerminal = errors.New("can't pause terminal deployment")
	// ErrResumeTerminal: resume of a deployment that is no longer active.
	ErrResumeTerminal = errors.New("can't resume terminal deployment")
	// ErrFailTerminal: manual failure of a deployment that is no longer active.
	ErrFailTerminal = errors.New("can't fail terminal deployment")
	// ErrHealthTerminal: setting allocation health on a terminal deployment.
	ErrHealthTerminal = errors.New("can't set health of allocations for a terminal deployment")
	// ErrNoCanaries: promotion of a deployment without canaries to promote.
	ErrNoCanaries = errors.New("deployment has no canaries to promote")
	// ErrUnknownGroup: a named task group is not part of the deployment.
	ErrUnknownGroup = errors.New("deployment has no such task group")
	// ErrCanariesUnhealthy: promotion before every canary is healthy. The
	// wrapping error names each group with "x/N healthy".
	ErrCanariesUnhealthy = errors.New("canaries are not all healthy")
	// ErrPromotePaused: promotion of a paused deployment.
	ErrPromotePaused = errors.New("can't promote paused deployment")
	// ErrNoAllocs: an allocation-health request named no allocation.
	ErrNoAllocs = errors.New("must specify at least one healthy or unhealthy allocation")
	// ErrUnknownAlloc: a named allocation is not part of the deployment.
	ErrUnknownAlloc = errors.New("allocation is not part of the deployment")
	// ErrHealthConflict: an allocation is named both healthy and unhealthy.
	ErrHealthConflict = errors.New("allocation named both healthy and unhealthy")
)
