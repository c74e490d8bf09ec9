package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// TestReadCommandsTakeJSONAndTemplates runs every read command with -json
// and -t, and the errors of a bad template.
func TestReadCommandsTakeJSONAndTemplates(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: cliNode()})
	job := b.registerWeb(t)
	b.placeCanary(t, job, depA, "alloc-a")
	evals, _ := b.State().Snapshot().EvalsByJob(structs.DefaultNamespace, "web")
	if len(evals) == 0 {
		t.Fatal("no evaluation")
	}

	cases := []struct {
		args []string
		tmpl string
		want string
	}{
		{[]string{"job", "status"}, `{{range .}}{{.ID}}/{{.Type}}{{end}}`, "web/service"},
		{[]string{"job", "status", "web"}, `{{.Job.ID}} {{.LatestDeployment.ID}} {{len .Allocations}}`, "web " + depA + " 1"},
		{[]string{"job", "history", "web"}, `{{range .}}v{{.Version}}{{end}}`, "v0"},
		{[]string{"deployment", "list"}, `{{range .}}{{.Status}}{{end}}`, "running"},
		{[]string{"deployment", "status", depA}, `{{.StatusDescription}}`, "Deployment is running but requires manual promotion"},
		{[]string{"alloc", "status", "alloc-a"}, `{{.ID}} {{.ClientStatus}}`, "alloc-a running"},
		{[]string{"node", "status"}, `{{range .}}{{.Name}}{{end}}`, "n1"},
		{[]string{"node", "status", "n1"}, `{{.Datacenter}}`, "dc1"},
		{[]string{"eval", "status", evals[0].ID}, `{{.JobID}} {{.TriggeredBy}}`, "web job-register"},
	}
	for _, c := range cases {
		out := wantCLI(t, 0, nil, flagsFirst(c.args, "-address", addr, "-t", c.tmpl)...)
		if strings.TrimSpace(out) != c.want {
			t.Fatalf("%v -t: %q, want %q", c.args, out, c.want)
		}
		out = wantCLI(t, 0, nil, flagsFirst(c.args, "-address", addr, "-json")...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v -json is not JSON: %v\n%s", c.args, err, out)
		}
	}

	// A field the answer does not have, a template that does not parse,
	// both flags: one line, exit 1, nothing printed.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-t", "{{.Nope}}"}, "Error formatting the data"},
		{[]string{"-t", "{{.ID"}, "Error formatting the data"},
		{[]string{"-json", "-t", "{{.ID}}"}, "Both json and template formatting are not allowed"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"alloc", "status", "-address", addr}, append(c.args, "alloc-a")...)...)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
}

// flagsFirst puts the flags before a command's last positional argument
// (a command like "job status web" takes its flags before "web").
func flagsFirst(cmd []string, flags ...string) []string {
	n := 2
	if len(cmd) < 2 {
		n = len(cmd)
	}
	out := append([]string{}, cmd[:n]...)
	out = append(out, flags...)
	return append(out, cmd[n:]...)
}
