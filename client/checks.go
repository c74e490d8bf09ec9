package client

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/structs"
)

// AllocChecks returns the latest result of each check of the
// allocation's services with provider "nomad", keyed by check ID, as
// Nomad's GET /v1/client/allocation/{id}/checks: the checks this client
// runs (those that decide the allocation's deployment health or restart
// its tasks) once they have run. ErrAllocNotHeld for an allocation the
// client does not hold.
func (a *Agent) AllocChecks(allocID string) (map[string]*structs.AllocCheckStatus, error) {
	a.mu.Lock()
	e := a.allocs[allocID]
	a.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("%w %q", ErrAllocNotHeld, allocID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	group := ""
	if e.alloc != nil {
		group = e.alloc.TaskGroup
	}
	out := map[string]*structs.AllocCheckStatus{}
	for _, r := range e.checks {
		if r.Provider != structs.ServiceProviderNomad {
			continue
		}
		s := checkStatus(allocID, group, r)
		out[s.ID] = s
	}
	return out, nil
}

func checkStatus(allocID, group string, r health.CheckResult) *structs.AllocCheckStatus {
	sum := sha256.Sum256([]byte(allocID + "\x00" + group + "\x00" + r.Task + "\x00" + r.Service + "\x00" + r.CheckName))
	s := &structs.AllocCheckStatus{
		ID: hex.EncodeToString(sum[:16]), Check: r.CheckName, Group: group, Task: r.Task, Service: r.Service,
		Mode: structs.CheckModeHealthiness, Status: structs.CheckStatusFailure, Output: r.Output,
		Timestamp: r.At.Unix(),
	}
	if r.OnUpdate == structs.OnUpdateIgnore {
		s.Mode = structs.CheckModeReadiness
	}
	if r.Passing() {
		s.Status = structs.CheckStatusSuccess
	}
	return s
}
