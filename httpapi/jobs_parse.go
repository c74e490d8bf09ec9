package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/jobspec"
)

// PUT|POST /v1/jobs/parse {"JobHCL": "...", "Variables": "...",
// "Canonicalize": bool} parses a job file on the agent and answers the job
// in Nomad's API JSON shape: with Canonicalize, with defaults and the
// update merge applied; without, as written (jobspec.ParseAsWritten), as
// Nomad answers. Variables
// is read as the content of a variables file (NAME = VALUE lines). An
// invalid job is a 400 whose body lists every problem as
// "input.hcl:LINE:COL: message", one a line.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/jobs/parse", localRoute, nsCap(acl.NamespaceCapabilityParseJob), (*Server).jobsParse})
	}
}

// JobsParseRequest is the body of /v1/jobs/parse.
type JobsParseRequest struct {
	JobHCL       string
	Variables    string
	Canonicalize bool
	HCLv1        bool `json:"hclv1,omitempty"`
}

// Names the parse endpoint gives its inputs in messages.
const (
	parseJobFile = "input.hcl"
	parseVarFile = "variables.hcl"
)

func (s *Server) jobsParse(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req JobsParseRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.HCLv1 {
		return nil, Errorf(http.StatusBadRequest, "HCL1 job files are not supported")
	}
	if strings.TrimSpace(req.JobHCL) == "" {
		return nil, Errorf(http.StatusBadRequest, "request has no JobHCL")
	}
	vars, err := variableAssignments(req.Variables)
	if err != nil {
		return nil, err
	}
	opts := jobspec.Options{Vars: vars, ParseOnly: true}
	var job any
	if req.Canonicalize {
		job, _, err = jobspec.Parse(parseJobFile, []byte(req.JobHCL), opts)
	} else {
		// As Nomad's: the job as written, no defaults filled in.
		job, _, err = jobspec.ParseAsWritten(parseJobFile, []byte(req.JobHCL), opts)
	}
	if err != nil {
		var je *jobspec.Errors
		if errors.As(err, &je) {
			return nil, &CodedError{Code: http.StatusBadRequest, Msg: je.Error(), Err: err}
		}
		return nil, Errorf(http.StatusBadRequest, "parsing job: %w", err)
	}
	return job, nil
}

// variableAssignments turns the content of a variables file into -var
// style NAME=VALUE assignments: a string, number or bool as its text, any
// other value in HCL syntax as written.
func variableAssignments(src string) ([]string, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), parseVarFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, Errorf(http.StatusBadRequest, "%s", hclDiagText(diags))
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, Errorf(http.StatusBadRequest, "%s", hclDiagText(diags))
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		a := attrs[name]
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, Errorf(http.StatusBadRequest, "%s", hclDiagText(diags))
		}
		if v.IsKnown() && !v.IsNull() && v.Type().IsPrimitiveType() {
			sv, err := convert.Convert(v, cty.String)
			if err == nil {
				out = append(out, name+"="+sv.AsString())
				continue
			}
		}
		out = append(out, name+"="+string(a.Expr.Range().SliceBytes([]byte(src))))
	}
	return out, nil
}

// hclDiagText formats HCL diagnostics as "FILE:LINE:COL: message" lines.
func hclDiagText(diags hcl.Diagnostics) string {
	var lines []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		if d.Subject != nil {
			lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg))
		} else {
			lines = append(lines, msg)
		}
	}
	return strings.Join(lines, "\n")
}
