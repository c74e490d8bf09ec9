package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
)

// Dispatch and scaling policies through a real server, with Nomad's Go
// client: Jobs().Dispatch makes a child with the meta and payload, the
// same idempotency token answers the same child, what the parameterized
// block refuses is a 400 naming the field; Scaling().ListPolicies and
// GetPolicy read a group's policy, and a scale beyond its max is a 400
// naming the bounds.
func TestDispatchAndScalingPoliciesThroughNomadsClient(t *testing.T) {
	a := startAgent(t, "s1", 1)
	waitFor(t, "leadership", func() error {
		if !a.leader.Leading() {
			return errors.New("not leading")
		}
		return nil
	})
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}

	enc := nomad.NewBatchJob("enc", "enc", "global", 50)
	enc.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"who"}, MetaOptional: []string{"why"}}
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "mock")
	task.DispatchPayload = &nomad.DispatchPayloadConfig{File: "in.txt"}
	tg.AddTask(task)
	enc.AddTaskGroup(tg)
	if _, _, err := nc.Jobs().Register(enc, nil); err != nil {
		t.Fatal(err)
	}
	parent, _, err := nc.Jobs().Info("enc", nil)
	if err != nil || *parent.Status != "running" || !parent.IsParameterized() {
		t.Fatalf("parent %+v %v", parent, err)
	}

	resp, _, err := nc.Jobs().DispatchOpts(&nomad.DispatchOptions{JobID: "enc", Meta: map[string]string{"who": "me"},
		Payload: []byte("data"), Priority: 70}, &nomad.WriteOptions{IdempotencyToken: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.DispatchedJobID, "enc/dispatch-") || resp.EvalID == "" || resp.JobCreateIndex == 0 {
		t.Fatalf("dispatch %+v", resp)
	}
	child, _, err := nc.Jobs().Info(resp.DispatchedJobID, nil)
	if err != nil || *child.ParentID != "enc" || !child.Dispatched || *child.Priority != 70 || string(child.Payload) != "data" || child.Meta["who"] != "me" {
		t.Fatalf("child %+v %v", child, err)
	}
	again, _, err := nc.Jobs().DispatchOpts(&nomad.DispatchOptions{JobID: "enc", Meta: map[string]string{"who": "me"},
		Payload: []byte("other")}, &nomad.WriteOptions{IdempotencyToken: "t1"})
	if err != nil || again.DispatchedJobID != resp.DispatchedJobID {
		t.Fatalf("same token: %+v %v", again, err)
	}
	stubs, _, err := nc.Jobs().PrefixList("enc")
	if err != nil || len(stubs) != 2 {
		t.Fatalf("jobs %v %v", stubs, err)
	}
	for _, s := range stubs {
		if s.ID == "enc" && (!s.ParameterizedJob || s.JobSummary.Children.Pending+s.JobSummary.Children.Running+s.JobSummary.Children.Dead != 1) {
			t.Fatalf("parent stub %+v %+v", s, s.JobSummary.Children)
		}
	}

	for _, c := range []struct {
		opts *nomad.DispatchOptions
		want string
	}{
		{&nomad.DispatchOptions{JobID: "enc", Meta: map[string]string{"who": "me"}}, "Payload is required"},
		{&nomad.DispatchOptions{JobID: "enc", Payload: []byte("x")}, `Meta: the dispatch did not give the required meta keys "who"`},
		{&nomad.DispatchOptions{JobID: "enc", Payload: []byte("x"), Meta: map[string]string{"who": "me", "what": "?"}}, `Meta: the dispatch gave meta keys the job does not allow ("what")`},
		{&nomad.DispatchOptions{JobID: "enc", Payload: make([]byte, 16*1024+1), Meta: map[string]string{"who": "me"}}, "Payload exceeds the maximum size"},
	} {
		_, _, err := nc.Jobs().DispatchOpts(c.opts, nil)
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.opts.Meta, err)
		}
	}
	if _, _, err := nc.Jobs().Dispatch("nope", nil, nil, "", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown job: %v", err)
	}
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	var se *apiclient.StatusError
	if _, err := c.Post(context.Background(), "/v1/job/enc/dispatch", map[string]any{"JobID": "other"}, nil); !errors.As(err, &se) || se.Code != 400 {
		t.Errorf("a body naming another job: %v", err)
	}

	// Scaling policies.
	web := nomad.NewServiceJob("web", "web", "global", 50)
	wg := nomad.NewTaskGroup("front", 2)
	minC, maxC := int64(1), int64(3)
	wg.Scaling = &nomad.ScalingPolicy{Min: &minC, Max: &maxC, Policy: map[string]any{"cooldown": "1m"}}
	wg.AddTask(nomad.NewTask("t", "mock"))
	web.AddTaskGroup(wg)
	if _, _, err := nc.Jobs().Register(web, nil); err != nil {
		t.Fatal(err)
	}
	list, _, err := nc.Scaling().ListPolicies(nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("policies %v %v", list, err)
	}
	stub := list[0]
	if stub.Type != "horizontal" || !stub.Enabled || stub.Target["Namespace"] != "default" || stub.Target["Job"] != "web" ||
		stub.Target["Group"] != "front" || stub.CreateIndex == 0 {
		t.Fatalf("stub %+v", stub)
	}
	for q, n := range map[string]int{"job=web": 1, "job=enc": 0, "type=horizontal": 1, "type=vertical_cpu": 0} {
		k, v, _ := strings.Cut(q, "=")
		got, _, err := nc.Scaling().ListPolicies(&nomad.QueryOptions{Params: map[string]string{k: v}})
		if err != nil || len(got) != n {
			t.Errorf("?%s: %d policies, want %d (%v)", q, len(got), n, err)
		}
	}
	p, _, err := nc.Scaling().GetPolicy(stub.ID, nil)
	if err != nil || *p.Min != 1 || *p.Max != 3 || !*p.Enabled || p.Policy["cooldown"] != "1m" || p.Target["Group"] != "front" || p.ID != stub.ID {
		t.Fatalf("policy %+v %v", p, err)
	}
	if _, _, err := nc.Scaling().GetPolicy("no-such-policy", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown policy: %v", err)
	}
	four := 4
	if _, _, err := nc.Jobs().Scale("web", "front", &four, "", false, nil, nil); err == nil || !strings.Contains(err.Error(), "400") ||
		!strings.Contains(err.Error(), "greater than the scaling policy's maximum 3") {
		t.Errorf("scale beyond max: %v", err)
	}
	three := 3
	if _, _, err := nc.Jobs().Scale("web", "front", &three, "", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The policy keeps its ID across the new version.
	list, _, err = nc.Scaling().ListPolicies(nil)
	if err != nil || len(list) != 1 || list[0].ID != stub.ID {
		t.Fatalf("after scaling: %v %v", list, err)
	}
}
