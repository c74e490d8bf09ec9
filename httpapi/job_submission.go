package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// GET /v1/job/{id}/submission?version=N answers the source job version N
// was submitted from (Nomad's JobSubmission: Source, Format,
// VariableFlags, Variables), or 404 "job source not found" when none is
// kept: the registration carried none, the version is older than the
// job's tracked versions, or the job was purged. A registration keeps the
// Submission of its envelope (RegisterEnvelope.Submission) for the version
// it leaves current; one larger than structs.MaxJobSourceSize is discarded
// with a warning, the job still registered, as Nomad's. While a server of
// the Raft configuration runs a build before jobSubmissionBuild, which
// would apply the registration without it, none is kept either (the
// warning says so): the servers keep the same sources.

func init() {
	register(
		route{"GET /v1/job/{id}/submission", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobSubmission},
	)
}

func (s *Server) jobSubmission(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	version, err := strconv.ParseUint(r.URL.Query().Get("version"), 10, 64)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "Unable to parse job submission version parameter")
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(state.TableJobs, state.TableJobSubmissions)
		if err != nil {
			return nil, 0, err
		}
		sub, err := snap.JobSubmission(o.Namespace, id, version)
		if err != nil {
			return nil, idx, err
		}
		if sub == nil {
			return nil, idx, Errorf(http.StatusNotFound, "job source not found")
		}
		return &jobSubmissionView{Source: sub.Source, Format: sub.Format, VariableFlags: sub.VariableFlags, Variables: sub.Variables}, idx, nil
	})
}

// jobSubmissionView is the answer's shape, Nomad's api.JobSubmission.
type jobSubmissionView struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string
}

// ServerBuildBackend is a backend that knows the lowest
// structs.ServerBuild among the servers of the Raft configuration (the
// agent); without it every build is taken as current.
type ServerBuildBackend interface {
	MinServerBuild() int
}

// jobSubmissionBuild is the structs.ServerBuild whose servers keep job
// submissions (JobRegisterRequest.Submission).
const jobSubmissionBuild = 2

// submissionOf is the submission a registration keeps, or nil with a
// warning: Nomad's when it is larger than structs.MaxJobSourceSize, or
// that a server does not keep sources yet.
func (s *Server) submissionOf(sub *structs.JobSubmission) (*structs.JobSubmission, string) {
	if sub == nil {
		return nil, ""
	}
	if b, ok := s.backend.(ServerBuildBackend); ok && b.MinServerBuild() < jobSubmissionBuild {
		return nil, "job source not kept: not every server runs a build that keeps job sources yet"
	}
	if n := sub.Size(); n > structs.MaxJobSourceSize {
		return nil, fmt.Sprintf("job source size of %s exceeds maximum of %s and will be discarded",
			siBytes(uint64(n)), siBytes(structs.MaxJobSourceSize))
	}
	c := sub.Copy()
	c.Namespace, c.JobID, c.Version, c.JobModifyIndex = "", "", 0, 0
	if len(c.VariableFlags) == 0 {
		c.VariableFlags = nil
	}
	return c, ""
}

// siBytes words n as go-humanize's Bytes does (SI units, "1.0 MB").
func siBytes(n uint64) string {
	if n < 10 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	f, i := float64(n), 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if f < 10 {
		return fmt.Sprintf("%.1f %s", f, units[i])
	}
	return fmt.Sprintf("%.0f %s", f, units[i])
}
