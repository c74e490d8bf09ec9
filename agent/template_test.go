package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestTemplateReadsVariableWithIdentity: with ACLs on, a task's template
// reads its job's variable from the servers with the task's workload
// identity, its env = true variable reaches the process, and a new value
// of the variable restarts the task with it.
func TestTemplateReadsVariableWithIdentity(t *testing.T) {
	cfg := testConfig(t, "s1", 1)
	cfg.ACLEnabled = true
	s := startAgentWith(t, cfg)
	waitLeader(t, s)
	anon := nomadAPI(t, s)
	var boot *nomad.ACLToken
	waitFor(t, "ACL bootstrap", func() (err error) {
		boot, _, err = anon.ACLTokens().Bootstrap(nil)
		return err
	})
	mgmt := nomadAPI(t, s)
	mgmt.SetSecretID(boot.SecretID)
	v := nomad.NewVariable("nomad/jobs/tpljob")
	v.Items["pass"] = "one"
	if _, _, err := mgmt.Variables().Create(v, nil); err != nil {
		t.Fatal(err)
	}

	settings := template.DefaultSettings()
	settings.Wait = &structs.WaitConfig{}
	settings.RenderTimeout = 20 * time.Second
	dataDir := filepath.Join(t.TempDir(), "c1")
	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: dataDir,
		HTTPAddr: loopback.Addr(t), NodeName: "c1", Templates: settings,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })

	job := &nomad.Job{ID: new("tpljob"), Name: new("tpljob"), Type: new("service"), Datacenters: []string{"dc1"},
		TaskGroups: []*nomad.TaskGroup{{Name: new("web"), Count: new(1), Tasks: []*nomad.Task{{
			Name: "app", Driver: "raw_exec", KillTimeout: new(time.Second),
			Config: map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo "$PASS $(cat local/pass)" >> starts; exec sleep 600`}},
			Templates: []*nomad.Template{
				{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/tpljob" }}{{ .pass }}{{ end }}`), DestPath: new("local/pass"), Splay: new(time.Duration(0))},
				{EmbeddedTmpl: new(`PASS={{ with nomadVar "nomad/jobs/tpljob" }}{{ .pass }}{{ end }}`), DestPath: new("secrets/env"), Envvars: new(true), Splay: new(time.Duration(0))},
			},
		}}}}}
	waitFor(t, "registering the job", func() error {
		_, _, err := mgmt.Jobs().Register(job, nil)
		return err
	})
	var allocID string
	waitFor(t, "the allocation running", func() error {
		allocs, _, err := mgmt.Jobs().Allocations("tpljob", false, nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				allocID = a.ID
				return nil
			}
		}
		return fmt.Errorf("allocations %d", len(allocs))
	})
	starts := filepath.Join(dataDir, "alloc", allocID, "app", "starts")
	read := func() []string {
		b, _ := os.ReadFile(starts)
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "|"))
	}
	waitFor(t, "the first start", func() error {
		if got := read(); !slices.Equal(got, []string{"one|one"}) {
			return fmt.Errorf("starts %q", got)
		}
		return nil
	})

	v, _, err := mgmt.Variables().Read("nomad/jobs/tpljob", nil)
	if err != nil {
		t.Fatal(err)
	}
	v.Items["pass"] = "two"
	if _, _, err := mgmt.Variables().Update(v, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restart with the new value", func() error {
		if got := read(); !slices.Equal(got, []string{"one|one", "two|two"}) {
			return fmt.Errorf("starts %q", got)
		}
		return nil
	})
}
