package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestDispatchRunsWithPayloadAndMeta dispatches a parameterized job on a
// dev agent with the CLI: the raw_exec child reads its payload from
// local/<dispatch_payload.file> and its meta from NOMAD_META_*, and writes
// both where the test reads them; the parent runs nothing; job status
// lists the child; refused dispatches print the field at fault. A scaled
// job refuses a count beyond its scaling block's max.
func TestDispatchRunsWithPayloadAndMeta(t *testing.T) {
	p := startDevAgent(t)
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	result := filepath.Join(dir, "result.txt")
	script := fmt.Sprintf(`printf '%%s|%%s' "$(cat ${NOMAD_TASK_DIR}/input/payload.txt)" "$NOMAD_META_greeting" > %s; echo "read $NOMAD_META_greeting"`, result)
	job := fmt.Sprintf(`job "greet" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["greeting"]
    meta_optional = ["extra"]
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      dispatch_payload {
        file = "input/payload.txt"
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, script)
	path := filepath.Join(dir, "greet.hcl")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "run", path); err != nil || !strings.Contains(out, "Job registration successful") {
		t.Fatalf("job run of a parameterized job: %v\n%s", err, out)
	}
	payload := filepath.Join(dir, "payload")
	if err := os.WriteFile(payload, []byte("from the payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := p.cli(t, "job", "dispatch", "-meta", "greeting=hello", "-idempotency-token", "once", "greet", payload)
	if err != nil || !strings.Contains(out, "Dispatched Job ID") || !strings.Contains(out, "greet/dispatch-") {
		t.Fatalf("job dispatch: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "the child's output", func() error {
		b, err := os.ReadFile(result)
		if err != nil {
			return err
		}
		if string(b) != "from the payload|hello" {
			return fmt.Errorf("output %q", b)
		}
		return nil
	})
	var childID string
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "greet/dispatch-") {
			childID = f
		}
	}
	eventually(t, 30*time.Second, "the child dead", func() error {
		j, _, err := nc.Jobs().Info(childID, nil)
		if err != nil {
			return err
		}
		if *j.Status != "dead" {
			return fmt.Errorf("child %s", *j.Status)
		}
		return nil
	})
	allocs, _, err := nc.Jobs().Allocations(childID, false, nil)
	if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
		t.Fatalf("child allocs %v %v", allocs, err)
	}
	if parentAllocs, _, err := nc.Jobs().Allocations("greet", false, nil); err != nil || len(parentAllocs) != 0 {
		t.Fatalf("the parent has allocs: %v %v", parentAllocs, err)
	}

	// The same token answers the same child; stdin is a payload source.
	again, stderr, code := droverRun(t, p, "more", "job", "dispatch", "-detach", "-meta", "greeting=hi", "-idempotency-token", "once", "greet", "-")
	if code != 0 || !strings.Contains(again, childID) {
		t.Fatalf("dispatch with the same token: exit %d\n%s%s", code, again, stderr)
	}
	out, err = p.cli(t, "job", "status", "greet")
	if err != nil || !strings.Contains(out, "Parameterized = true") || !strings.Contains(out, "Dispatched Jobs") || !strings.Contains(out, childID) {
		t.Fatalf("job status of the parent: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "dispatch", "-meta", "greeting=x", "greet"}, "Payload is required"},
		{[]string{"job", "dispatch", "-meta", "nope=x", "greet", payload}, `the required meta keys "greeting"`},
		{[]string{"job", "dispatch", "-meta", "greeting=x", "-meta", "nope=1", "greet", payload}, `meta keys the job does not allow ("nope")`},
	} {
		out, err := p.cli(t, c.args...)
		if err == nil || !strings.Contains(out, c.want) || !strings.Contains(out, "400") {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
	}

	// Scaling bounds.
	scaled := `job "bounded" {
  group "web" {
    count = 1
    scaling {
      min = 1
      max = 2
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`
	path = filepath.Join(dir, "bounded.hcl")
	if err := os.WriteFile(path, []byte(scaled), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "run", "-detach", path); err != nil {
		t.Fatalf("job run: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = p.cli(t, "job", "stop", "-purge", "-detach", "bounded") })
	out, err = p.cli(t, "job", "scale", "-detach", "bounded", "web", "3")
	if err == nil || !strings.Contains(out, "greater than the scaling policy's maximum 2") {
		t.Fatalf("scale beyond max: %v\n%s", err, out)
	}
	policies, _, err := nc.Scaling().ListPolicies(nil)
	if err != nil || len(policies) != 1 || policies[0].Target["Job"] != "bounded" {
		t.Fatalf("scaling policies %v %v", policies, err)
	}
	out, err = p.cli(t, "scaling", "policy", "list")
	if err != nil || !strings.Contains(out, policies[0].ID) || !strings.Contains(out, "Group:web,Job:bounded,Namespace:default") {
		t.Fatalf("scaling policy list: %v\n%s", err, out)
	}
	out, err = p.cli(t, "scaling", "policy", "info", policies[0].ID)
	if err != nil || !strings.Contains(out, "Max") || !strings.Contains(out, "= 2") || !strings.Contains(out, "Policy:") {
		t.Fatalf("scaling policy info: %v\n%s", err, out)
	}
}
