package httpapi

import (
	"net/http"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Groups' scaling policies, Nomad's paths and shapes, as the
// nomad-autoscaler reads them:
//
//	GET /v1/scaling/policies[?job=ID][&type=horizontal] → stubs {"ID",
//	    "Enabled", "Type", "Target": {"Namespace", "Job", "Group"},
//	    "CreateIndex", "ModifyIndex"}, by namespace, job and group;
//	GET /v1/scaling/policy/{id} → the policy {"ID", "Type", "Namespace",
//	    "Target", "Policy", "Min", "Max", "Enabled", "CreateIndex",
//	    "ModifyIndex"}; 404 when no job of the namespace has it.
//
// A policy is read from its job's current version; a stopped job's
// policies are answered disabled, so that no autoscaler scales it.

func init() {
	need := nsCapOr(acl.NamespaceCapabilityListScalingPolicies, acl.NamespaceCapabilityReadJob)
	register(route{"GET /v1/scaling/policies", readRoute, need, (*Server).scalingPolicies})
	register(route{"GET /v1/scaling/policy/{id}", readRoute,
		nsCapOr(acl.NamespaceCapabilityReadScalingPolicy, acl.NamespaceCapabilityReadJob), (*Server).scalingPolicy})
}

// policiesIn returns the scaling policies of the jobs o's namespace
// matches, as answered: a stopped job's disabled.
func policiesIn(snap *state.Snapshot, o QueryOptions, jobID string) ([]*structs.ScalingPolicy, error) {
	jobs, err := snap.Jobs()
	if err != nil {
		return nil, err
	}
	var out []*structs.ScalingPolicy
	for _, j := range jobs {
		if !o.matchNamespace(j.Namespace) || (jobID != "" && j.ID != jobID) {
			continue
		}
		for _, p := range j.ScalingPolicies() {
			if j.Stop && p.Enabled {
				p = p.Copy()
				p.Enabled = false
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *Server) scalingPolicies(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	jobID, typ := r.URL.Query().Get("job"), r.URL.Query().Get("type")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		policies, err := policiesIn(snap, o, jobID)
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.ScalingPolicyListStub{}
		for _, p := range policies {
			if strings.HasPrefix(p.Type, typ) {
				out = append(out, p.Stub())
			}
		}
		sort.SliceStable(out, func(a, b int) bool {
			ta, tb := out[a].Target, out[b].Target
			for _, k := range []string{structs.ScalingTargetNamespace, structs.ScalingTargetJob, structs.ScalingTargetGroup} {
				if ta[k] != tb[k] {
					return ta[k] < tb[k]
				}
			}
			return out[a].ID < out[b].ID
		})
		idx, err := snap.Index(state.TableJobs)
		return out, idx, err
	})
}

func (s *Server) scalingPolicy(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.Index(state.TableJobs)
		if err != nil {
			return nil, 0, err
		}
		policies, err := policiesIn(snap, o, "")
		if err != nil {
			return nil, 0, err
		}
		for _, p := range policies {
			if p.ID == id {
				return p, idx, nil
			}
		}
		return nil, idx, Errorf(http.StatusNotFound, "scaling policy %q not found", id)
	})
}
