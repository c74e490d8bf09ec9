package main

import (
	"context"
	"net/url"
	"os"
	"strings"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// job run sends the source it read with the registration, as Nomad's
// (the servers keep it per version: GET /v1/job/{id}/submission): the
// file as read, its format ("hcl2", or "json" for a JSON file), each -var
// as a variable flag, and the -var-file files' contents one after
// another, each ending in a newline.

// jobSubmissionOf is the submission of a job file read from src.
func jobSubmissionOf(src []byte, vars, varFiles []string) *structs.JobSubmission {
	sub := &structs.JobSubmission{Source: string(src), Format: "hcl2"}
	if t := strings.TrimLeft(string(src), " \t\r\n\ufeff"); strings.HasPrefix(t, "{") {
		sub.Format = "json"
	}
	for _, v := range vars {
		if sub.VariableFlags == nil {
			sub.VariableFlags = map[string]string{}
		}
		k, val, _ := strings.Cut(v, "=")
		sub.VariableFlags[k] = val
	}
	var b strings.Builder
	for _, f := range varFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the parser read it already; one that vanished since is left out
		}
		b.Write(data)
		b.WriteString("\n")
	}
	sub.Variables = b.String()
	return sub
}

// registerSubmitted registers job with its submission sub (nil: none),
// as apiclient's Register, or RegisterChecked when checked.
func registerSubmitted(ctx context.Context, c *apiclient.Client, job *structs.Job, sub *structs.JobSubmission, checked bool, modifyIndex uint64) (*apiclient.JobRegisterResponse, error) {
	var out apiclient.JobRegisterResponse
	in := map[string]any{"Job": job}
	if sub != nil {
		in["Submission"] = sub
	}
	path := "/v1/jobs"
	if checked {
		in["EnforceIndex"], in["JobModifyIndex"] = true, modifyIndex
		path = "/v1/job/" + url.PathEscape(job.ID)
	}
	if _, err := c.Put(ctx, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
