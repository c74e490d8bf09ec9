package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

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

// inspectSubmission is job inspect -hcl [-with-vars]: the source of the
// job's version (the current one when version is negative), as Nomad's.
func inspectSubmission(cmd *cobra.Command, f *opFlags, prefix string, version int64, hcl, withVars bool) error {
	switch {
	case hcl && f.json:
		return &exitError{code: 1, msg: "can only use one of -hcl or -json"}
	case withVars && !hcl:
		return &exitError{code: 1, msg: "can only use -with-vars with -hcl"}
	}
	if isJobFile(prefix) {
		return &exitError{code: 1, msg: "-hcl reads a registered job's source: give the job's name, not a file"}
	}
	job, err := f.registeredJob(cmd, prefix, version)
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	var sub structs.JobSubmission
	q := &apiclient.QueryOptions{Params: map[string]string{"version": strconv.FormatUint(job.Version, 10)}}
	if _, err := c.Get(cmd.Context(), "/v1/job/"+url.PathEscape(job.ID)+"/submission", q, &sub); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error inspecting job: job %q with version %d couldn't be found: %v", job.ID, job.Version, err)}
	}
	fmt.Fprintln(cmd.OutOrStdout(), sub.Source)
	if withVars {
		fmt.Fprint(cmd.ErrOrStderr(), withVarsOutput(job.Namespace, job.ID, sub.Variables, sub.VariableFlags))
	}
	return nil
}

// withVarsOutput is Nomad's hint of how to submit the source again.
func withVarsOutput(ns, id, fileVars string, flags map[string]string) string {
	args := []string{"-namespace", ns}
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-var", k+"="+flags[k])
	}
	for _, l := range strings.Split(fileVars, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			args = append(args, "-var", l)
		}
	}
	args = append(args, "-")
	return fmt.Sprintf("\nTo run this job as originally submitted:\n\n$ drover job inspect -namespace %s -hcl %s |\n    drover job run %s\n",
		ns, id, strings.Join(args, " "))
}
