package httpapi

import (
	"cmp"
	"net/http"
	"strconv"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// A job's versions and deployments, Nomad's paths and shapes:
//
//	GET /v1/job/{id}/versions      → {"Versions": [newest first], "Diffs": null} (blocking);
//	                                  ?diffs=true: Diffs[i] is what changed from Versions[i+1] to Versions[i];
//	                                  &diff_version=N: Diffs[i] is from version N to Versions[i]
//	GET /v1/job/{id}/deployments   → []*structs.Deployment, newest first; ?all=true
//	                                  adds those of an earlier job of the same ID (blocking)
//	GET /v1/job/{id}/deployment    → the latest deployment, or null (blocking)
//	PUT|POST /v1/job/{id}/revert   {"JobID","JobVersion","EnforcePriorVersion"}
//	                               → structs.JobRevertResponse (Nomad's JobRegisterResponse)
//	PUT|POST /v1/job/{id}/stable   {"JobID","JobVersion","Stable"}
//	                               → {"JobModifyIndex","Index"}

func init() {
	register(
		route{"GET /v1/job/{id}/versions", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobVersions},
		route{"GET /v1/job/{id}/deployments", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobDeployments},
		route{"GET /v1/job/{id}/deployment", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobLatestDeployment},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/job/{id}/revert", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobRevert},
			route{m + " /v1/job/{id}/stable", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobStable},
		)
	}
}

// JobVersionsResponse answers GET /v1/job/{id}/versions. Diffs, asked for
// with ?diffs=true, holds one diff per pair of neighbouring versions, as
// Nomad's: Diffs[i] is from Versions[i+1] to Versions[i] (contextual, as
// `job history -p` shows them). With ?diff_version=N (Nomad's), Diffs[i]
// is from version N to Versions[i], one per version.
type JobVersionsResponse struct {
	Versions []*jobView
	Diffs    []*jobdiff.JobDiff
}

// jobVersions answers the job's stored versions, newest first; 404 for an
// unknown job.
func (s *Server) jobVersions(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	diffs, err := queryBool(r, "diffs")
	if err != nil {
		return nil, err
	}
	against := int64(-1)
	if v := r.URL.Query().Get("diff_version"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid diff_version %q: want a version number", v)
		}
		against, diffs = int64(n), true
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		versions, err := snap.JobVersionsByID(o.Namespace, id)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.MaxIndex(state.TableJobs, state.TableJobVersions)
		if err != nil {
			return nil, 0, err
		}
		if len(versions) == 0 {
			return nil, idx, Errorf(http.StatusNotFound, "job versions not found")
		}
		out := &JobVersionsResponse{Versions: viewJobs(versions)}
		switch {
		case against >= 0:
			var base *structs.Job
			for _, v := range versions {
				if v.Version == uint64(against) {
					base = v
				}
			}
			if base == nil {
				return nil, idx, Errorf(http.StatusBadRequest, "diff_version %d: the job has no such version", against)
			}
			for _, v := range versions {
				out.Diffs = append(out.Diffs, jobdiff.Jobs(base, v, true))
			}
		case diffs:
			for i := 0; i+1 < len(versions); i++ {
				out.Diffs = append(out.Diffs, jobdiff.Jobs(versions[i+1], versions[i], true))
			}
		}
		return out, idx, nil
	})
}

// jobDeployments answers the job's deployments, newest first. Without
// ?all=true, only those of the job as it exists now (same JobCreateIndex).
func (s *Server) jobDeployments(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	all, _ := strconv.ParseBool(r.URL.Query().Get("all"))
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		out, idx, err := jobDeploymentsOf(snap, o.Namespace, id, all)
		return out, idx, err
	})
}

func jobDeploymentsOf(snap *state.Snapshot, ns, id string, all bool) ([]*structs.Deployment, uint64, error) {
	job, err := snap.JobByID(ns, id)
	if err != nil {
		return nil, 0, err
	}
	deps, err := snap.DeploymentsByJob(ns, id)
	if err != nil {
		return nil, 0, err
	}
	out := []*structs.Deployment{}
	for _, d := range deps {
		if !all && job != nil && d.JobCreateIndex != 0 && d.JobCreateIndex != job.CreateIndex {
			continue
		}
		out = append(out, d)
	}
	sortDeployments(out)
	idx, err := snap.MaxIndex(state.TableDeployments, state.TableJobs)
	return out, idx, err
}

// jobLatestDeployment answers the job's newest deployment, or null.
func (s *Server) jobLatestDeployment(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		deps, idx, err := jobDeploymentsOf(snap, o.Namespace, id, false)
		if err != nil || len(deps) == 0 {
			return (*structs.Deployment)(nil), idx, err
		}
		return deps[0], idx, nil
	})
}

// JobRevertRequest is the body of PUT /v1/job/{id}/revert.
type JobRevertRequest struct {
	JobID               string
	JobVersion          uint64
	EnforcePriorVersion *uint64
}

// JobStabilityRequest is the body of PUT /v1/job/{id}/stable.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
}

func (s *Server) jobRevert(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	var req JobRevertRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	// The version registered again is checked as a registration of it by
	// this caller (its host volumes). Versions never change, so the one
	// read here is the one the revert registers; an unknown one is left
	// to the revert to answer.
	if ns := cmp.Or(o.Namespace, structs.DefaultNamespace); ns != "*" {
		v, err := s.backend.State().Snapshot().JobByIDAndVersion(ns, r.PathValue("id"), req.JobVersion)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if err := checkJobVersion(r, v); err != nil {
				return nil, err
			}
			if err := s.checkJobNodePool(v); err != nil {
				return nil, err
			}
		}
	}
	resp, err := ob.RevertJob(r.Context(), o.Namespace, r.PathValue("id"), req.JobVersion, req.EnforcePriorVersion)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, resp.Index)
	return resp, nil
}

func (s *Server) jobStable(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	var req JobStabilityRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ob.SetJobStability(r.Context(), o.Namespace, r.PathValue("id"), req.JobVersion, req.Stable)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, resp.Index)
	return resp, nil
}
