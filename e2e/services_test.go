package e2e

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// servicesSpec is a job of two raw_exec tasks serving HTTP (python3's
// http.server on the port "http", on every address) that register the
// nomad service "<job>-api", tagged with their version, and gate their
// deployment on its http check.
func servicesSpec(id, version string) rolloutSpec {
	group := fmt.Sprintf(`    network {
      port "http" {}
    }
    service {
      name     = "${NOMAD_JOB_NAME}-api"
      port     = "http"
      provider = "nomad"
      tags     = ["v%s"]
      check {
        type     = "http"
        path     = "/"
        interval = "500ms"
        timeout  = "1s"
      }
    }`, version)
	return rolloutSpec{ID: id, Count: 2, Version: version, Group: group,
		Script: `exec python3 -m http.server "$NOMAD_PORT_http" --bind 0.0.0.0`,
		Update: `      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "1s"
      healthy_deadline  = "30s"
      progress_deadline = "1m"`}
}

func nomadClientOf(t *testing.T, p *agentProc) *nomad.Client {
	t.Helper()
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// checkRegistrations checks that the service's registrations are exactly
// the running allocs of version (by alloc ID), each at its node's address
// and the host port the alloc was given for "http", tagged as want, and
// answering HTTP there.
func checkRegistrations(t *testing.T, c *apiclient.Client, nc *nomad.Client, jobID string, version uint64, tag string) error {
	regs, _, err := nc.Services().Get(jobID+"-api", nil)
	if err != nil {
		return err
	}
	want := map[string]*structs.AllocationListStub{}
	for _, a := range allocsOf(t, c, jobID) {
		if running(a) && a.JobVersion == version {
			want[a.ID] = a
		}
	}
	if len(regs) != len(want) || len(want) != 2 {
		return fmt.Errorf("%d registrations, %d running allocs of version %d", len(regs), len(want), version)
	}
	for _, r := range regs {
		if want[r.AllocID] == nil {
			return fmt.Errorf("registration %s of alloc %s, which is not a running alloc of version %d", r.ID, r.AllocID, version)
		}
		alloc, _, err := nc.Allocations().Info(r.AllocID, nil)
		if err != nil {
			return err
		}
		node, _, err := nc.Nodes().Info(r.NodeID, nil)
		if err != nil {
			return err
		}
		var port int
		for _, p := range alloc.AllocatedResources.Shared.Ports {
			if p.Label == "http" {
				port = p.Value
			}
		}
		if r.Port != port || r.Address != node.Attributes["unique.network.ip-address"] || r.Datacenter != node.Datacenter {
			t.Fatalf("registration %s at %s:%d in %s; the alloc's port is %d, the node's address %s in %s",
				r.ID, r.Address, r.Port, r.Datacenter, port, node.Attributes["unique.network.ip-address"], node.Datacenter)
		}
		if !slices.Equal(r.Tags, []string{tag}) || r.JobID != jobID || r.Namespace != "default" {
			t.Fatalf("registration %s", jsonString(r))
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + net.JoinHostPort(r.Address, strconv.Itoa(r.Port)) + "/")
		if err != nil {
			return fmt.Errorf("the registered address: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("the registered address answered %d", resp.StatusCode)
		}
	}
	return nil
}

// TestServiceRegisteredWhileRunning: on a dev agent, the running allocs
// of a job register their service at the address and port they serve
// on, and the registrations go when the job stops.
func TestServiceRegisteredWhileRunning(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	nc := nomadClientOf(t, p)
	s := servicesSpec("svcreg", "1")
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	eventually(t, 10*time.Second, "the registrations of the two running allocs", func() error {
		return checkRegistrations(t, c, nc, s.ID, 0, "v1")
	})
	list, _, err := nc.Services().List(nil)
	if err != nil || len(list) != 1 || len(list[0].Services) != 1 || list[0].Services[0].ServiceName != "svcreg-api" {
		t.Fatalf("services list = %s, %v", jsonString(list), err)
	}
	// The client serves its checks' latest results, as Nomad's.
	regs, _, err := nc.Services().Get(s.ID+"-api", nil)
	if err != nil || len(regs) == 0 {
		t.Fatalf("%d registrations, %v", len(regs), err)
	}
	checks, err := nc.Allocations().Checks(regs[0].AllocID, nil)
	if err != nil || len(checks) != 1 {
		t.Fatalf("alloc checks = %s, %v", jsonString(checks), err)
	}
	for _, c := range checks {
		if c.Status != "success" || c.Mode != "healthiness" || c.Service != "svcreg-api" || c.Group != "web" || c.Timestamp == 0 {
			t.Fatalf("alloc check = %s", jsonString(c))
		}
	}
	out, err := p.cli(t, "alloc", "checks", regs[0].AllocID[:8])
	if err != nil || !strings.Contains(out, "Status of 1 Nomad Service Checks") || !strings.Contains(out, "Status    = success") ||
		!strings.Contains(out, "Service   = svcreg-api") || !strings.Contains(out, "Task      = (group)") {
		t.Fatalf("alloc checks:\n%s\n%v", out, err)
	}

	if _, _, err := nc.Jobs().Deregister(s.ID, false, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "no registration once the job stopped", func() error {
		regs, _, err := nc.Services().Get(s.ID+"-api", nil)
		if err != nil {
			return err
		}
		if len(regs) != 0 {
			return fmt.Errorf("%d registrations left", len(regs))
		}
		list, _, err := nc.Services().List(nil)
		if err != nil || len(list) != 0 {
			return fmt.Errorf("services list = %s, %v", jsonString(list), err)
		}
		return nil
	})
}

// TestServiceRegistrationsFollowARollingUpdate: through a rolling update
// (max_parallel 1) the service never has no instance and never lists an
// alloc the servers stopped; at the end its instances are the new
// version's, with the new tags, and none of the old.
func TestServiceRegistrationsFollowARollingUpdate(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	nc := nomadClientOf(t, p)
	s := servicesSpec("svcroll", "1")
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	eventually(t, 10*time.Second, "version 0 registered", func() error {
		return checkRegistrations(t, c, nc, s.ID, 0, "v1")
	})
	var old []string
	for _, a := range allocsOf(t, c, s.ID) {
		old = append(old, a.ID)
	}

	// Sample the registrations through the rollout, with blocking queries
	// as a template engine reads them.
	var (
		mu       sync.Mutex
		empty    int
		samples  int
		problems []string
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var index uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			regs, meta, err := nc.Services().Get(s.ID+"-api", &nomad.QueryOptions{WaitIndex: index, WaitTime: time.Second})
			if err != nil {
				continue
			}
			index = meta.LastIndex
			mu.Lock()
			samples++
			if len(regs) == 0 {
				empty++
			}
			for _, r := range regs {
				a, _, err := nc.Allocations().Info(r.AllocID, nil)
				if err == nil && a.DesiredStatus != structs.AllocDesiredStatusRun && a.ModifyIndex < meta.LastIndex {
					problems = append(problems, fmt.Sprintf("alloc %s (desired %s at %d) registered at %d", a.ID, a.DesiredStatus, a.ModifyIndex, meta.LastIndex))
				}
			}
			mu.Unlock()
		}
	}()

	s2 := servicesSpec("svcroll", "2")
	s2.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	eventually(t, 10*time.Second, "version 1 registered", func() error {
		return checkRegistrations(t, c, nc, s.ID, 1, "v2")
	})
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d samples of the registrations during the rollout", samples)
	if samples < 2 {
		t.Fatalf("only %d samples", samples)
	}
	if empty > 0 {
		t.Errorf("the service had no instance in %d samples", empty)
	}
	for _, p := range problems {
		t.Error(p)
	}
	regs, _, err := nc.Services().Get(s.ID+"-api", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if slices.Contains(old, r.AllocID) {
			t.Errorf("an alloc of version 0 is still registered: %s", r.ID)
		}
	}
}
