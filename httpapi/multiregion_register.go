package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// Multi-region jobs (website/multiregion.md#multi-region-jobs): a job
// whose multiregion block names regions is registered, through a server of
// any region, in every region it names, each region holding its own copy
// (structs.Job.ForRegion) and all of them at one version.
//
// The server that receives the registration (the leader of its region)
// coordinates it:
//
//  1. every region the block names must be a region of the federation
//     (else a 400 naming it), and every region must answer what it holds
//     of the job (GET /v1/job/{id}?region=R; else a 503 naming it) and
//     take its copy (the checks of its registration: this region's here,
//     another's by planning the job there) — before anything is written
//     anywhere;
//  2. the version: when a region lacks the job, when a region's copy would
//     change what it holds, or when the regions hold different versions,
//     one past the highest version any region holds; otherwise the version
//     they all hold (an identical re-submission, evaluated again);
//  3. each region, in the order written, registers its copy at that version
//     (this region directly; the others through the envelope with
//     MultiregionVersion, forwarded and signed as any request to another
//     region). A region that fails then is a 5xx naming it, and the regions
//     already written keep their copy.
//
// MultiregionVersion is honoured only from a server (a request signed with
// the join token, or, on a server without one, from a loopback address);
// from anyone else it is a 400.

// MultiregionRegistration is one region's answer to the registration of a
// multi-region job (drover's own field of the answer, Regions).
type MultiregionRegistration struct {
	Region         string
	EvalID         string
	JobVersion     uint64
	JobModifyIndex uint64
}

// localCopyKey marks, in a registration's context, this server's own
// registration of its region's copy (step 3).
type localCopyKey struct{}

// fromServer reports whether r was sent by a server: this server's own
// step, a request signed with the join token, or, with no join token,
// one from a loopback address. It reads r's body only when r is signed
// (forwardSigned), leaving an unread copy.
func (s *Server) fromServer(r *http.Request) (bool, error) {
	if r.Context().Value(localCopyKey{}) != nil {
		return true, nil
	}
	if r.Header.Get(joinauth.ForwardHeader) != "" {
		ok, err := s.forwardSigned(r)
		if err != nil || ok {
			return ok, err
		}
	}
	return s.access.JoinToken == "" && IsLoopback(r), nil
}

// multiregionStep is what a registration does about regions. For a
// multi-region job sent by a user it coordinates the registration in
// every region and answers (served). For a region's copy sent by a server
// (MultiregionVersion) it returns this region's copy of job and r carrying
// the version to store.
func (s *Server) multiregionStep(w http.ResponseWriter, r *http.Request, env *RegisterEnvelope, job *structs.Job,
	fromServer bool, diags []jobspec.Diagnostic) (_ *structs.Job, _ *http.Request, served bool, out any, err error) {
	if env.MultiregionVersion == nil {
		if !job.IsMultiregion() {
			return job, r, false, nil, nil
		}
		out, err := s.registerMultiregion(w, r, env, job, diags)
		return nil, nil, true, out, err
	}
	switch {
	case !fromServer:
		return nil, nil, true, nil, Errorf(http.StatusBadRequest, "MultiregionVersion: set by the servers only")
	case !job.IsMultiregion():
		return nil, nil, true, nil, Errorf(http.StatusBadRequest, "MultiregionVersion: the job has no multiregion block")
	}
	local := s.localRegion()
	c := job.ForRegion(local)
	if c == nil {
		return nil, nil, true, nil, Errorf(http.StatusBadRequest, "Job.Multiregion: names no region %q (this server's)", local)
	}
	return c, r.WithContext(structs.WithJobVersion(r.Context(), *env.MultiregionVersion)), false, nil, nil
}

// regionHolding is what one region of a multi-region job holds of it and
// will hold.
type regionHolding struct {
	name string
	cur  *structs.Job // nil: none
	copy *structs.Job
}

// registerMultiregion coordinates the registration of a multi-region job
// in every region it names (see the top of this file).
func (s *Server) registerMultiregion(w http.ResponseWriter, r *http.Request, env *RegisterEnvelope, job *structs.Job, diags []jobspec.Diagnostic) (any, error) {
	if env.EnforceIndex {
		return nil, Errorf(http.StatusBadRequest, "EnforceIndex: not supported for a multi-region job (each region has its own modify index)")
	}
	local := s.localRegion()
	known := []string{local}
	if f, ok := s.backend.(Federator); ok {
		known = f.Regions()
	}
	for i, reg := range job.Multiregion.Regions {
		if !slices.Contains(known, reg.Name) {
			return nil, Errorf(http.StatusBadRequest, "Job.Multiregion.Regions[%d].Name: %v %q: the regions known are %s",
				i, ErrNoRegionPath, reg.Name, strings.Join(known, ", "))
		}
	}
	ns := jobNamespace(job)

	// 1. What each region holds, and whether it takes its copy; every
	// region must answer.
	var holdings []*regionHolding
	for _, reg := range job.Multiregion.Regions {
		h := &regionHolding{name: reg.Name, copy: job.ForRegion(reg.Name)}
		var err error
		if reg.Name == local {
			if h.cur, err = s.backend.State().Snapshot().JobByID(ns, job.ID); err == nil {
				err = s.checkLocalCopy(r, h.copy)
			}
		} else if h.cur, err = s.regionJob(r, reg.Name, ns, job.ID); err == nil {
			err = s.checkRegionCopy(r, reg.Name, env, job.ID)
		}
		if err != nil {
			return nil, err
		}
		holdings = append(holdings, h)
	}

	// 2. The version all regions take.
	version := multiregionVersion(holdings)

	// 3. Each region's copy, in the order written.
	body, err := regionEnvelope(env, version)
	if err != nil {
		return nil, err
	}
	var answers []*JobRegisterResponse
	var regions []*MultiregionRegistration
	var written []string
	for _, h := range holdings {
		var a *JobRegisterResponse
		if h.name == local {
			a, err = s.registerLocalCopy(r, body)
		} else {
			a, err = s.registerRegionCopy(r, h.name, body)
		}
		if err != nil {
			kept := "no region holds the job's new copy"
			if len(written) > 0 {
				kept = fmt.Sprintf("the regions registered already keep their copy: %s", strings.Join(written, ", "))
			}
			return nil, wrapRegionError(err, fmt.Sprintf("multi-region job %q: registering in region %q (version %d): ", job.ID, h.name, version),
				fmt.Sprintf(" (%s)", kept))
		}
		written = append(written, h.name)
		answers = append(answers, a)
		regions = append(regions, &MultiregionRegistration{Region: h.name, EvalID: a.EvalID, JobVersion: version, JobModifyIndex: a.JobModifyIndex})
	}

	// The answer is this region's, else the first region's.
	i := slices.IndexFunc(holdings, func(h *regionHolding) bool { return h.name == local })
	out := *answers[max(i, 0)]
	out.Regions = regions
	var warnings []string
	for _, d := range diags {
		warnings = append(warnings, d.String())
	}
	if out.Warnings != "" {
		warnings = append(warnings, out.Warnings)
	}
	out.Warnings = strings.Join(slices.Compact(warnings), "\n")
	if i >= 0 {
		s.setMeta(w, out.Index)
	} else {
		// Another region's raft index means nothing here.
		out.Index = 0
	}
	return &out, nil
}

// multiregionVersion is the version every region of a multi-region job
// takes: the one they all hold when no copy changes it, else one past the
// highest any holds.
func multiregionVersion(holdings []*regionHolding) uint64 {
	var next uint64
	changed := false
	var common *uint64
	for _, h := range holdings {
		if h.cur == nil {
			changed = true
			continue
		}
		next = max(next, h.cur.Version+1)
		switch {
		case common == nil:
			v := h.cur.Version
			common = &v
		case *common != h.cur.Version:
			changed = true
		}
		// The copy as the region's leader would store it: its scaling
		// policies keep the IDs and indexes of the stored ones.
		c := h.copy.Copy()
		structs.CanonicalizeScaling(c, h.cur, func() string { return "" })
		if c.SpecChanged(h.cur) {
			changed = true
		}
	}
	if !changed && common != nil {
		return *common
	}
	return next
}

// regionEnvelope is the registration body each region receives: the
// envelope as sent, with the version to store.
func regionEnvelope(env *RegisterEnvelope, version uint64) ([]byte, error) {
	e := *env
	e.EnforceIndex, e.JobModifyIndex = false, 0
	e.MultiregionVersion = &version
	return json.Marshal(&e)
}

// registerLocalCopy registers this region's copy through the registration
// path itself (the checks of a region's copy: its namespace, its node
// pool), marked as this server's own step.
func (s *Server) registerLocalCopy(r *http.Request, body []byte) (*JobRegisterResponse, error) {
	r2 := r.Clone(context.WithValue(r.Context(), localCopyKey{}, true))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	out, err := s.RegisterFromEnvelope(httptest.NewRecorder(), r2, "")
	if err != nil {
		return nil, err
	}
	a, ok := out.(*JobRegisterResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T to a registration", out)
	}
	return a, nil
}

// registerRegionCopy registers region's copy through a server of region.
func (s *Server) registerRegionCopy(r *http.Request, region string, body []byte) (*JobRegisterResponse, error) {
	code, data, err := s.callRegion(r, region, http.MethodPost, "/v1/jobs?region="+url.QueryEscape(region), body)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, Errorf(code, "%s", strings.TrimSpace(string(data)))
	}
	var a JobRegisterResponse
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, Errorf(http.StatusBadGateway, "region %q answered the registration with %q: %v", region, truncate(data), err)
	}
	return &a, nil
}

// checkLocalCopy makes the checks this region's registration of its copy
// makes (its namespace, node pool, analysis address, the servers' build),
// before anything is written anywhere.
func (s *Server) checkLocalCopy(r *http.Request, c *structs.Job) error {
	err := checkJobVersion(r, c)
	if err == nil {
		err = checkJobNamespace(s.backend.State().Snapshot(), c)
	}
	if err == nil {
		err = s.checkAnalysisAddress(c)
	}
	if err == nil {
		err = s.checkJobNodePool(c)
	}
	if err != nil {
		return wrapRegionError(err, fmt.Sprintf("multi-region job %q: region %q: ", c.ID, s.localRegion()), " (nothing was registered)")
	}
	return nil
}

// checkRegionCopy asks region whether it takes its copy: the job planned
// there (POST /v1/job/{id}/plan?region=R, which plans a multi-region job as
// that region's copy, with the checks of its registration), before
// anything is written anywhere.
func (s *Server) checkRegionCopy(r *http.Request, region string, env *RegisterEnvelope, id string) error {
	body, err := json.Marshal(map[string]any{"Job": env.Job, "Diff": false})
	if err != nil {
		return err
	}
	code, data, err := s.callRegion(r, region, http.MethodPost, "/v1/job/"+url.PathEscape(id)+"/plan?region="+url.QueryEscape(region), body)
	if err == nil && code != http.StatusOK {
		err = Errorf(code, "%s", strings.TrimSpace(string(data)))
	}
	if err != nil {
		return wrapRegionError(err, fmt.Sprintf("multi-region job %q: region %q: ", id, region), " (nothing was registered)")
	}
	return nil
}

// regionJob returns the job region holds (nil: none), read through a
// server of region.
func (s *Server) regionJob(r *http.Request, region, ns, id string) (*structs.Job, error) {
	q := url.Values{"region": {region}, "namespace": {ns}}
	code, data, err := s.callRegion(r, region, http.MethodGet, "/v1/job/"+url.PathEscape(id)+"?"+q.Encode(), nil)
	if err != nil {
		return nil, wrapRegionError(err, fmt.Sprintf("multi-region job %q: reading it in region %q: ", id, region), " (nothing was registered)")
	}
	switch code {
	case http.StatusNotFound:
		return nil, nil
	case http.StatusOK:
	default:
		return nil, Errorf(code, "multi-region job %q: reading it in region %q: %s (nothing was registered)", id, region, strings.TrimSpace(string(data)))
	}
	var j structs.Job
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, Errorf(http.StatusBadGateway, "multi-region job %q: region %q answered %q: %v (nothing was registered)", id, region, truncate(data), err)
	}
	return &j, nil
}

// callRegion sends a request of this server's to a server of region, as a
// request forwarded there (forwardRegion: signed with the join token,
// tried on each of its servers within the hold), with r's credentials,
// and returns the status and body of the answer. A region with no server
// known is an error with the status forwarding answers.
func (s *Server) callRegion(r *http.Request, region, method, uri string, body []byte) (int, []byte, error) {
	f, ok := s.backend.(Federator)
	if !ok {
		return 0, nil, Errorf(http.StatusBadRequest, "%v %q: this server federates with no other region", ErrNoRegionPath, region)
	}
	servers, gone := f.RegionServers(region)
	if len(servers) == 0 {
		if gone {
			return 0, nil, Errorf(http.StatusServiceUnavailable, "region %q: %v: no server of it has been heard from lately", region, ErrRegionUnreachable)
		}
		return 0, nil, Errorf(http.StatusBadRequest, "%v %q: the regions known are %s", ErrNoRegionPath, region, strings.Join(f.Regions(), ", "))
	}
	req, err := http.NewRequestWithContext(r.Context(), method, uri, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = r.RemoteAddr
	for _, h := range []string{"X-Nomad-Token", "Authorization"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	rec := httptest.NewRecorder()
	s.forwardRegion(rec, req, f, region, servers)
	return rec.Code, rec.Body.Bytes(), nil
}

// wrapRegionError words err with a prefix and a suffix, keeping its
// status (a coded error's; a region's fault otherwise, 503).
func wrapRegionError(err error, prefix, suffix string) error {
	if ce, ok := err.(*CodedError); ok {
		return &CodedError{Code: ce.Code, Msg: prefix + ce.Msg + suffix, Err: ce.Err}
	}
	return Errorf(statusOr(err, http.StatusServiceUnavailable), "%s%v%s", prefix, err, suffix)
}

// statusOr is statusFor(err) when err says more than a fault (4xx), else def.
func statusOr(err error, def int) int {
	if c := statusFor(err); c < 500 {
		return c
	}
	return def
}

// truncate shortens an answer quoted in an error.
func truncate(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// deregisterMultiregion stops (or purges) a multi-region job in every
// region its block names (DELETE /v1/job/{id}?global=true, `job stop
// -global`): this region directly, the others through a server of each.
// A region that fails is a 5xx naming it; the regions stopped already
// stay stopped. The answer is this region's.
func (s *Server) deregisterMultiregion(r *http.Request, db JobDeregisterBackend, job *structs.Job, ns string, purge bool, prio int) (*JobDeregisterResponse, error) {
	local := s.localRegion()
	var out *JobDeregisterResponse
	var done []string
	for _, reg := range job.Multiregion.Regions {
		var err error
		if reg.Name == local {
			out, err = db.DeregisterJob(structs.WithEvalPriority(r.Context(), prio), ns, job.ID, purge)
		} else {
			q := url.Values{"region": {reg.Name}, "namespace": {ns}}
			if purge {
				q.Set("purge", "true")
			}
			if prio != 0 {
				q.Set("eval_priority", strconv.Itoa(prio))
			}
			var code int
			var data []byte
			code, data, err = s.callRegion(r, reg.Name, http.MethodDelete, "/v1/job/"+url.PathEscape(job.ID)+"?"+q.Encode(), nil)
			if err == nil && code != http.StatusOK {
				err = Errorf(code, "%s", strings.TrimSpace(string(data)))
			}
		}
		if err != nil {
			kept := "no region was stopped"
			if len(done) > 0 {
				kept = "stopped already: " + strings.Join(done, ", ")
			}
			return nil, wrapRegionError(err, fmt.Sprintf("multi-region job %q: stopping it in region %q: ", job.ID, reg.Name), " ("+kept+")")
		}
		done = append(done, reg.Name)
	}
	if out == nil {
		// This region is not one of the job's (it holds a copy all the
		// same, registered before the block changed): stopped too.
		return db.DeregisterJob(structs.WithEvalPriority(r.Context(), prio), ns, job.ID, purge)
	}
	return out, nil
}
