package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// promSample is one line of the Prometheus text format: name{labels}.
type promSamples map[string]float64

// scrape reads /v1/metrics?format=prometheus.
func scrape(t testing.TB, addr string) promSamples {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/v1/metrics?format=prometheus")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	out := promSamples{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("malformed line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("malformed value in %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the samples of a name whose labels contain every given
// label (`route="/v1/jobs"`).
func (p promSamples) sum(name string, labels ...string) float64 {
	var total float64
	for k, v := range p {
		base, rest, _ := strings.Cut(k, "{")
		if base != name {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(rest, l)
		}
		if ok {
			total += v
		}
	}
	return total
}

// TestMetricsDuringRollout scrapes a dev agent's Prometheus metrics
// while it rolls a job out with real processes: the rollout's figures
// move (batches measured, plans applied, deployments by status, the
// rollout's progress), and so do Raft's, the broker's and the HTTP
// API's by route. The agent logs JSON (-log-json): every line of it
// parses.
func TestMetricsDuringRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for tens of seconds")
	}
	p := startDevAgent(t, "-log-json")
	c := p.client()

	v0 := parseJob(t, "testdata/rolling.hcl", "version=1")
	registerJob(t, c, v0)
	waitDeploymentStatus(t, c, v0.ID, 0, structs.DeploymentStatusSuccessful)
	before := scrape(t, p.httpAddr)

	// Sample while version 2 rolls out.
	var mu sync.Mutex
	var runningSeen, desiredSeen, healthySeen float64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			s := scrape(t, p.httpAddr)
			mu.Lock()
			runningSeen = max(runningSeen, s.sum("nomad_drover_deployments", `status="running"`))
			desiredSeen = max(desiredSeen, s["nomad_drover_rollout_desired"])
			healthySeen = max(healthySeen, s["nomad_drover_rollout_healthy"])
			mu.Unlock()
		}
	}()
	registerJob(t, c, parseJob(t, "testdata/rolling.hcl", "version=2"))
	waitDeploymentStatus(t, c, v0.ID, 1, structs.DeploymentStatusSuccessful)
	close(stop)
	<-sampled
	after := scrape(t, p.httpAddr)

	grew := func(name string, by float64, labels ...string) {
		t.Helper()
		b, a := before.sum(name, labels...), after.sum(name, labels...)
		if a-b < by {
			t.Errorf("%s%v went from %v to %v, want an increase of at least %v", name, labels, b, a, by)
		}
	}
	// Four allocations, two at a time: at least two batches, four healthy.
	grew("nomad_drover_rollout_batch_duration_count", 2)
	grew("nomad_drover_rollout_batches_healthy", 2)
	grew("nomad_drover_rollout_alloc_healthy_time_count", 4)
	grew("nomad_nomad_plan_apply_count", 2)
	grew("nomad_nomad_plan_evaluate_count", 2)
	grew("nomad_nomad_worker_invoke_scheduler_service_count", 2)
	grew("nomad_nomad_broker_wait_time_count", 2, `eval_type="service"`)
	grew("nomad_raft_apply", 4)
	grew("nomad_raft_commitTime_count", 4)
	grew("nomad_drover_http_request_count", 1, `method="PUT"`, `route="/v1/jobs"`, `code="200"`)
	if d := after.sum("nomad_drover_rollout_batch_duration_sum") - before.sum("nomad_drover_rollout_batch_duration_sum"); d < 1000 {
		t.Errorf("batch durations sum to %vms; each batch waits min_healthy_time (1s)", d)
	}
	mu.Lock()
	if runningSeen < 1 || desiredSeen < 4 || healthySeen < 1 {
		t.Errorf("during the rollout: deployments running %v, rollout desired %v, healthy %v", runningSeen, desiredSeen, healthySeen)
	}
	mu.Unlock()
	// The gauges are sampled every collection interval (1s): they catch up.
	eventually(t, 10*time.Second, "the state's gauges after the rollout", func() error {
		g := scrape(t, p.httpAddr)
		ok, run := g.sum("nomad_drover_deployments", `status="successful"`), g.sum("nomad_drover_deployments", `status="running"`)
		srvRunning, clientRunning := g.sum("nomad_drover_allocations", `client_status="running"`), g["nomad_client_allocations_running"]
		if ok != 2 || run != 0 || srvRunning != 4 || clientRunning != 4 || g["nomad_drover_rollout_desired"] != 0 {
			return fmt.Errorf("deployments %v successful, %v running; running allocs: servers %v, client %v; rollout desired %v",
				ok, run, srvRunning, clientRunning, g["nomad_drover_rollout_desired"])
		}
		return nil
	})
	if after["nomad_drover_raft_is_leader"] != 1 {
		t.Errorf("is_leader %v", after["nomad_drover_raft_is_leader"])
	}
	// No series is labelled with an ID.
	for k := range after {
		for _, a := range []string{"alloc", "eval", "deployment", "node"} {
			if strings.Contains(k, a+"_id=") {
				t.Errorf("a series carries an ID label: %s", k)
			}
		}
	}

	// Nomad's JSON, through the official client.
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	// The summary is the last finished in-memory interval (10 s), as
	// Nomad's: gauges first set in the current one (the leader's, when
	// the election ended after an interval began) show once it ends.
	var sum *nomad.MetricsSummary
	eventually(t, 15*time.Second, "the JSON summary's gauges", func() error {
		var err error
		if sum, _, err = nc.Operator().MetricsSummary(nil); err != nil {
			return err
		}
		names := map[string]bool{}
		for _, g := range sum.Gauges {
			names[g.Name] = true
		}
		for _, s := range sum.Samples {
			names[s.Name] = true
		}
		for _, want := range []string{"nomad.drover.deployments", "nomad.nomad.broker.total_ready", "nomad.drover.rollout.desired"} {
			if !names[want] {
				return fmt.Errorf("JSON summary lacks %s", want)
			}
		}
		return nil
	})
	if sum.Timestamp == "" {
		t.Error("JSON summary without a Timestamp")
	}

	// -log-json: every line the agent logged is one JSON object (the
	// "==>" lines are the command's own output, on stdout, as Nomad's).
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(p.logs.String()), "\n") {
		if !strings.HasPrefix(l, "==> ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 5 {
		t.Fatalf("only %d log lines", len(lines))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["@message"] == nil || m["@level"] == nil {
			t.Fatalf("log line is not go-hclog JSON: %q", l)
		}
	}
}

// waitDeploymentStatus waits for the job's deployment of version to
// reach status.
func waitDeploymentStatus(t *testing.T, c *apiclient.Client, jobID string, version uint64, status string) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("deployment of version %d %s", version, status), func() error {
		d, err := latestDeployment(t, c, jobID)
		if err != nil {
			return err
		}
		if d == nil || d.JobVersion != version || d.Status != status {
			return fmt.Errorf("deployment %+v", d)
		}
		return nil
	})
}
