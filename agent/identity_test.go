package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

// A client node asks the servers for its task's workload identity
// (client.Agent.TaskIdentity); with ACLs on, the identity reads the
// task's own variables and nothing else, until the allocation stops.
func TestTaskIdentityReadsItsOwnVariables(t *testing.T) {
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
	c := startClientAgent(t, s, "c1")

	job := &nomad.Job{ID: new("idjob"), Name: new("idjob"), Type: new("service"), Datacenters: []string{"dc1"},
		TaskGroups: []*nomad.TaskGroup{{Name: new("web"), Count: new(1), Tasks: []*nomad.Task{{
			Name: "app", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sh", "args": []string{"-c", "exec sleep 600"}},
		}}}}}
	waitFor(t, "registering the job", func() error {
		_, _, err := mgmt.Jobs().Register(job, nil)
		return err
	})
	var allocID string
	waitFor(t, "the allocation running", func() error {
		allocs, _, err := mgmt.Jobs().Allocations("idjob", false, nil)
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
	for _, p := range []string{"nomad/jobs/idjob", "nomad/jobs/idjob/web/app", "nomad/jobs/other", "app/db"} {
		v := nomad.NewVariable(p)
		v.Items["k"] = p
		if _, _, err := mgmt.Variables().Create(v, nil); err != nil {
			t.Fatal(err)
		}
	}

	jwt, err := c.Client().TaskIdentity(bounded(t), allocID, "app")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client().TaskIdentity(bounded(t), allocID, "nope"); err == nil {
		t.Fatal("an identity for a task the allocation has not")
	}
	task := nomadAPI(t, s)
	task.SetSecretID(jwt)
	for _, p := range []string{"nomad/jobs/idjob", "nomad/jobs/idjob/web/app"} {
		if v, _, err := task.Variables().Read(p, nil); err != nil || v.Items["k"] != p {
			t.Fatalf("identity reads %s: %+v %v", p, v, err)
		}
	}
	for _, p := range []string{"nomad/jobs/other", "app/db"} {
		if _, _, err := task.Variables().Read(p, nil); err == nil || !strings.Contains(err.Error(), "403") {
			t.Fatalf("identity reads %s: %v", p, err)
		}
	}
	v := nomad.NewVariable("nomad/jobs/idjob")
	v.Items["k"] = "overwritten"
	if _, _, err := task.Variables().Update(v, nil); err == nil {
		t.Fatal("identity wrote its variable")
	}

	if _, _, err := mgmt.Jobs().Deregister("idjob", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the identity refused once the allocation stops", func() error {
		_, _, err := task.Variables().Read("nomad/jobs/idjob", nil)
		if err == nil {
			return errors.New("still readable")
		}
		if !strings.Contains(err.Error(), "403") {
			return err
		}
		return nil
	})
}
