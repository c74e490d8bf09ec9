package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

// TestJobScaleRollsOutTheCount scales a running job up and down with the
// CLI on a dev agent, reads its scale status and events through the
// official Go client, and checks what is refused.
func TestJobScaleRollsOutTheCount(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "scale", Count: 2, Version: "1", Update: "      max_parallel     = 2\n      min_healthy_time = \"100ms\""}
	s.run(t, c)
	waitRollout(t, c, "scale", 0, structs.DeploymentStatusSuccessful, 30*time.Second)

	out, err := p.cli(t, "job", "scale", "-message", "more", "scale", "4")
	if err != nil || !strings.Contains(out, "Monitoring evaluation") || !strings.Contains(out, "successful") {
		t.Fatalf("job scale up: %v\n%s", err, out)
	}
	if n := countAllocs(allocsOf(t, c, "scale"), 1, running); n != 4 {
		t.Fatalf("%d allocs of version 1 running after scaling to 4", n)
	}
	if out, err := p.cli(t, "job", "scale", "-detach", "scale", "web", "1"); err != nil || !strings.Contains(out, "Evaluation ID: ") {
		t.Fatalf("job scale down: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "one alloc running", func() error {
		if n := countAllocs(allocsOf(t, c, "scale"), 2, running); n != 1 {
			return fmt.Errorf("%d running", n)
		}
		return nil
	})

	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := nc.Jobs().ScaleStatus("scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := st.TaskGroups["web"]
	if st.JobID != "scale" || st.JobStopped || g.Desired != 1 || len(g.Events) != 2 || *g.Events[0].Count != 1 ||
		g.Events[0].PreviousCount != 4 || g.Events[1].Message != "more" || g.Events[1].EvalID == nil {
		t.Fatalf("scale status %+v, group %+v", st, g)
	}
	out, err = p.cli(t, "job", "scaling-events", "-verbose", "scale")
	if err != nil || !strings.Contains(out, "PreviousCount") || !strings.Contains(out, "more") {
		t.Fatalf("scaling-events: %v\n%s", err, out)
	}

	// Through the official client, and what is refused.
	three := 3
	if _, _, err := nc.Jobs().Scale("scale", "web", &three, "by the Go client", false, nil, nil); err != nil {
		t.Fatalf("Go client scale: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "scale", "scale", "db", "2"}, `task group "db" specified for scaling does not exist in job`},
		{[]string{"job", "scale", "scale", "web", "-1"}, ""},
		{[]string{"job", "scale", "scale", "web", "two"}, `Failed to convert count "two" to a number`},
		{[]string{"job", "scale", "nope", "2"}, `No job(s) with prefix or id "nope" found`},
	} {
		out, err := p.cli(t, c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
	}
	neg := -1
	if _, _, err := nc.Jobs().Scale("scale", "web", &neg, "", false, nil, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a negative count through the API: %v", err)
	}
}
