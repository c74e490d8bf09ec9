package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/jobspec"
)

// Nomad's paths that tools call before they submit anything:
//
//	PUT|POST /v1/validate/job {"Job": {...}} → {"DriverConfigValidated",
//	    "ValidationErrors": [...], "Error", "Warnings"}: 200 whether the job
//	    is valid or not, as Nomad's (`nomad job validate`); 400 only for a
//	    body that is not a request at all.
//	GET /v1/regions: see regions.go.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/validate/job", localRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).validateJob})
	}
}

// JobValidateResponse answers /v1/validate/job, Nomad's shape.
type JobValidateResponse struct {
	// DriverConfigValidated: each task's driver config was checked too.
	DriverConfigValidated bool
	// ValidationErrors lists every located problem, one a line.
	ValidationErrors []string
	// Error joins them, empty for a valid job.
	Error string
	// Warnings lists what drover accepts and ignores.
	Warnings string
}

func (s *Server) validateJob(_ http.ResponseWriter, r *http.Request) (any, error) {
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
	out := &JobValidateResponse{DriverConfigValidated: true, ValidationErrors: []string{}}
	job, diags, err := jobspec.ParseAPIJob(env.Job)
	var warnings []string
	for _, d := range diags {
		warnings = append(warnings, d.String())
	}
	out.Warnings = strings.Join(warnings, "\n")
	if err != nil {
		var je *jobspec.Errors
		if errors.As(err, &je) {
			for _, d := range je.Diagnostics {
				out.ValidationErrors = append(out.ValidationErrors, d.String())
			}
		} else {
			out.ValidationErrors = append(out.ValidationErrors, err.Error())
		}
		out.Error = strings.Join(out.ValidationErrors, "\n")
	} else if p := analysisAddressProblems(job, s.prometheusAddress); len(p) > 0 {
		out.ValidationErrors = append(out.ValidationErrors, p...)
		out.Error = strings.Join(out.ValidationErrors, "\n")
	}
	return out, nil
}
