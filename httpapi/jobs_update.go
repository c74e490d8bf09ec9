package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// PUT|POST /v1/job/{id} registers a job like PUT /v1/jobs, with the whole
// of Nomad's JobRegisterRequest envelope: {"Job": …, "EnforceIndex": bool,
// "JobModifyIndex": n}. With EnforceIndex the write is conditional, checked
// in the same replicated write as the registration: JobModifyIndex 0 means
// the job must not exist yet, any other value must be the stored job's
// JobModifyIndex (`job run -check-index`). A conflict is a 409 naming both
// indexes. The job's ID must be the path's.

func init() {
	register(
		route{"PUT /v1/job/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobUpdate},
		route{"POST /v1/job/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobUpdate},
	)
}

// RegisterEnvelope is the body of a job registration, as Nomad's
// JobRegisterRequest: the job (Nomad's API JSON) and the optional check of
// the stored job's modify index.
type RegisterEnvelope struct {
	Job            json.RawMessage
	EnforceIndex   bool
	JobModifyIndex uint64
	// PreserveCounts keeps the count of each group the stored job has;
	// PreserveResources the resources of each of its tasks (as Nomad's).
	PreserveCounts, PreserveResources bool
	// EvalPriority is the priority of the registration's evaluation, 0
	// for the job's.
	EvalPriority int
	// Submission is the source the job was submitted from (Nomad's
	// JobSubmission), kept for the version registered; see
	// job_submission.go.
	Submission *structs.JobSubmission
	// MultiregionVersion, drover's own and sent by servers only, asks
	// for this region's copy of a multi-region job at that version
	// (multiregion_register.go).
	MultiregionVersion *uint64 `json:",omitempty"`
}

// envelopeFields are the keys of Nomad's JobRegisterRequest: true for
// those drover accepts (Region, Namespace, the tokens and the submitted
// source are read past: the job carries its own region and namespace),
// false for those it does not support, refused when set. Submission is
// kept (job_submission.go).
var envelopeFields = map[string]bool{
	"Job": true, "EnforceIndex": true, "JobModifyIndex": true,
	"Region": true, "Namespace": true, "SecretID": true, "AuthToken": true, "Submission": true, "EvalPriority": true,
	"PreserveCounts": true, "PreserveResources": true, "MultiregionVersion": true,
	"PolicyOverride": false, "IdempotencyToken": false,
}

// ParseRegisterEnvelope reads a registration body: malformed JSON is a 400
// naming the line and column, an unknown key a 400 naming it, a key Nomad
// defines that drover does not support a 400 when it is set.
func ParseRegisterEnvelope(body []byte) (*RegisterEnvelope, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, Errorf(http.StatusBadRequest, "malformed request body: %s", jsonErrorAt(body, err))
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		supported, known := envelopeFields[k]
		switch {
		case !known:
			return nil, Errorf(http.StatusBadRequest, "unknown field %q in the request", k)
		case !supported && !emptyJSON(raw[k]):
			return nil, Errorf(http.StatusBadRequest, "field %q is not supported by drover", k)
		}
	}
	var env RegisterEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, Errorf(http.StatusBadRequest, "malformed request body: %s", jsonErrorAt(body, err))
	}
	if emptyJSON(env.Job) {
		return nil, Errorf(http.StatusBadRequest, "request has no job")
	}
	if err := structs.CheckEvalPriority(env.EvalPriority); err != nil {
		return nil, Errorf(http.StatusBadRequest, "EvalPriority: %s", err)
	}
	return &env, nil
}

// emptyJSON reports whether v is absent, null, false, 0, "" or empty.
func emptyJSON(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "", "null", "false", "0", `""`, "{}", "[]":
		return true
	}
	return false
}

// jsonErrorAt words a decoding error with the line and column it happened
// at, when the error says where.
func jsonErrorAt(body []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err.Error()
	}
	off = min(off, int64(len(body)))
	line := 1 + bytes.Count(body[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(body[:off], '\n')
	if errors.Is(err, io.ErrUnexpectedEOF) || (se != nil && strings.Contains(se.Error(), "unexpected end")) {
		return fmt.Sprintf("line %d, column %d: unexpected end of JSON input", line, col)
	}
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// preserve keeps, in job, the count of each group that cur (the stored
// job, nil for none) has, and the resources of each of its tasks, as
// Nomad's PreserveCounts and PreserveResources: a group or task cur does
// not have keeps what job says.
func preserve(job, cur *structs.Job, counts, resources bool) {
	if cur == nil {
		return
	}
	for _, tg := range job.TaskGroups {
		old := cur.LookupTaskGroup(tg.Name)
		if old == nil {
			continue
		}
		if counts {
			tg.Count = old.Count
		}
		if !resources {
			continue
		}
		for _, t := range tg.Tasks {
			for _, ot := range old.Tasks {
				if ot.Name == t.Name {
					t.Resources = ot.Resources.Copy()
				}
			}
		}
	}
}

// enforceIndexMessage words a failed EnforceIndex check as Nomad does,
// "Enforcing job modify index N: ...", which Nomad's Go client knows by
// that prefix (api.RegisterEnforceIndexErrPrefix).
func enforceIndexMessage(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+state.ErrConflict.Error())
	if i := strings.Index(msg, "enforcing job modify index"); i >= 0 {
		return "E" + msg[i+1:]
	}
	return strings.TrimPrefix(msg, "state: ")
}

// jobNamespace is the namespace a submitted job will live in.
func jobNamespace(job *structs.Job) string {
	if job.Namespace == "" {
		return structs.DefaultNamespace
	}
	return job.Namespace
}

func (s *Server) jobUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.RegisterFromEnvelope(w, r, r.PathValue("id"))
}

// RegisterFromEnvelope serves a job registration whose body is the whole
// envelope (see ParseRegisterEnvelope), EnforceIndex included; pathID,
// when not empty, must be the job's ID. PUT /v1/jobs may serve through it
// too, to honour EnforceIndex and report malformed JSON by line and column.
func (s *Server) RegisterFromEnvelope(w http.ResponseWriter, r *http.Request, pathID string) (any, error) {
	if err := s.registrationAllowed(r); err != nil {
		return nil, err
	}
	fromServer, err := s.fromServer(r) // multiregion_register.go
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return nil, Errorf(http.StatusBadRequest, "reading request body: %w", err)
	}
	env, err := ParseRegisterEnvelope(body)
	if err != nil {
		return nil, err
	}
	job, diags, err := jobspec.ParseAPIJob(env.Job)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "invalid job: %w", err)
	}
	if job == nil {
		return nil, Errorf(http.StatusBadRequest, "request has no job")
	}
	if pathID != "" && job.ID != pathID {
		return nil, Errorf(http.StatusBadRequest, "job ID %q does not match the path's %q", job.ID, pathID)
	}
	// A multi-region job: registered in every region it names, or, sent
	// by a server, this region's copy (multiregion_register.go).
	job, r, served, answer, err := s.multiregionStep(w, r, env, job, fromServer, diags)
	if served {
		return answer, err
	}
	if err := checkJobVersion(r, job); err != nil {
		return nil, err
	}
	if err := checkJobNamespace(s.backend.State().Snapshot(), job); err != nil {
		return nil, err
	}
	if err := s.checkAnalysisAddress(job); err != nil {
		return nil, err
	}
	if err := s.checkJobNodePool(job); err != nil {
		return nil, err
	}
	if env.PreserveCounts || env.PreserveResources {
		cur, err := s.backend.State().Snapshot().JobByID(jobNamespace(job), job.ID)
		if err != nil {
			return nil, err
		}
		preserve(job, cur, env.PreserveCounts, env.PreserveResources)
	}
	var warnings []string
	for _, d := range diags {
		warnings = append(warnings, d.String())
	}
	sub, warn := s.submissionOf(env.Submission)
	if warn != "" {
		warnings = append(warnings, warn)
	}
	ctx := structs.WithJobSubmission(structs.WithEvalPriority(r.Context(), env.EvalPriority), sub)
	out, err := s.registerJob(ctx, job, env.EnforceIndex, env.JobModifyIndex)
	if errors.Is(err, state.ErrConflict) {
		return nil, Errorf(http.StatusConflict, "%s", enforceIndexMessage(err))
	}
	if err != nil {
		return nil, fmt.Errorf("registering job %q: %w", job.ID, err)
	}
	out.Warnings = strings.Join(warnings, "\n")
	s.setMeta(w, out.Index)
	return out, nil
}
