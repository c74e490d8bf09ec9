package fsm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// servicesJob is a job of one group "web" whose group registers
// "${NOMAD_JOB_NAME}-api" on port "http" (tags v2, canary tags canary)
// and whose task "server" registers "server-svc" (the fixture's); the
// task "sidecar" registers with consul, which drover does not catalogue.
func servicesJob(count, canaries int) *structs.Job {
	job := statetest.Job("shop", count)
	tg := job.TaskGroups[0]
	tg.Update.Canary = canaries
	tg.Networks = []*structs.NetworkResource{{Mode: "host", DynamicPorts: []structs.Port{{Label: "http"}}}}
	tg.Services = []*structs.Service{{
		Name: "${NOMAD_JOB_NAME}-api", PortLabel: "http", Provider: structs.ServiceProviderNomad,
		Tags: []string{"v2"}, CanaryTags: []string{"canary"},
	}}
	tg.Tasks[1].Services[0].Provider = structs.ServiceProviderConsul
	return job
}

// servicesFixture applies a node, the job and a plan that places count
// allocs (the last canaries of them canaries) with port http at
// 20000+index, and returns the allocs and the deployment.
func servicesFixture(t *testing.T, f *FSM, count, canaries int) (*structs.Node, []*structs.Allocation, *structs.Deployment) {
	t.Helper()
	node := statetest.Node("a")
	node.Attributes["unique.network.ip-address"] = "10.1.2.3"
	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := servicesJob(count-canaries, canaries)
	eval := statetest.Eval("register", job)
	applyOK(t, f, 2, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval, SubmitTime: 1})
	stored, _ := snap(f).JobByID("default", "shop")
	dep := statetest.Deployment(stored, canaries)
	var allocs []*structs.Allocation
	for i := range count {
		a := statetest.Alloc(stored, node, eval.ID, dep.ID, i)
		a.Job = nil
		a.DeploymentStatus.Canary = i >= count-canaries
		a.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "http", Value: 20000 + i}}
		allocs = append(allocs, a)
	}
	applyOK(t, f, 3, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, Deployment: dep, AllocsPlaced: allocs, UpdatedAt: statetest.T0.UnixNano(),
	})
	return node, allocs, dep
}

func clientUpdate(t *testing.T, f *FSM, index uint64, status string, healthy *bool, allocs ...*structs.Allocation) {
	t.Helper()
	req := &structs.AllocClientUpdateRequest{UpdatedAt: statetest.T0.Add(time.Duration(index) * time.Second).UnixNano()}
	for _, a := range allocs {
		u := &structs.Allocation{ID: a.ID, ClientStatus: status}
		if healthy != nil {
			u.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: healthy}
		}
		req.Allocs = append(req.Allocs, u)
	}
	applyOK(t, f, index, AllocClientUpdateRequestType, req)
}

// regsOf returns the allocation's registrations by ID.
func regsOf(t *testing.T, f *FSM, allocID string) []*structs.ServiceRegistration {
	t.Helper()
	regs, err := snap(f).ServiceRegistrationsByAlloc(allocID)
	if err != nil {
		t.Fatal(err)
	}
	return regs
}

func TestServicesRegisteredWhileRunning(t *testing.T) {
	f := newTestFSM(t)
	node, allocs, _ := servicesFixture(t, f, 2, 0)
	a := allocs[0]
	if regs := regsOf(t, f, a.ID); len(regs) != 0 {
		t.Fatalf("pending alloc has registrations: %+v", regs)
	}

	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, a)
	regs := regsOf(t, f, a.ID)
	if len(regs) != 2 {
		t.Fatalf("running alloc has %d registrations, want 2 (group and task, not the consul one): %+v", len(regs), regs)
	}
	want := []*structs.ServiceRegistration{
		{ID: "_nomad-task-" + a.ID + "-group-web-shop-api-http", ServiceName: "shop-api", Namespace: "default",
			NodeID: node.ID, Datacenter: "dc1", JobID: "shop", AllocID: a.ID, Tags: []string{"v2"},
			Address: "10.1.2.3", Port: 20000, CreateIndex: 4, ModifyIndex: 4},
		{ID: "_nomad-task-" + a.ID + "-server-server-svc-http", ServiceName: "server-svc", Namespace: "default",
			NodeID: node.ID, Datacenter: "dc1", JobID: "shop", AllocID: a.ID, Tags: []string{"v1", "web"},
			Address: "10.1.2.3", Port: 20000, CreateIndex: 4, ModifyIndex: 4},
	}
	for i, w := range want {
		if got := regs[i]; !w.SameContent(got) || got.CreateIndex != w.CreateIndex || got.ModifyIndex != w.ModifyIndex {
			t.Errorf("registration %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	byName, _ := snap(f).ServiceRegistrationsByName("default", "shop-api")
	if len(byName) != 1 || byName[0].AllocID != a.ID {
		t.Fatalf("by name = %+v", byName)
	}
	if idx, _ := snap(f).Index("service_registrations"); idx != 4 {
		t.Fatalf("table index = %d, want 4", idx)
	}

	// A report that changes nothing of the registration leaves it alone.
	clientUpdate(t, f, 5, structs.AllocClientStatusRunning, nil, a)
	if got := regsOf(t, f, a.ID); got[0].ModifyIndex != 4 {
		t.Fatalf("an unchanged registration was rewritten at %d", got[0].ModifyIndex)
	}

	// The client reports it finished: gone in the same entry.
	clientUpdate(t, f, 6, structs.AllocClientStatusComplete, nil, a)
	if regs := regsOf(t, f, a.ID); len(regs) != 0 {
		t.Fatalf("complete alloc keeps registrations: %+v", regs)
	}
}

func TestServicesRemovedWhenStopped(t *testing.T) {
	f := newTestFSM(t)
	_, allocs, _ := servicesFixture(t, f, 2, 0)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	if n := len(regsOf(t, f, allocs[0].ID)); n != 2 {
		t.Fatalf("%d registrations", n)
	}
	// The servers stop one: its registrations go before its client acts.
	applyOK(t, f, 5, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: statetest.ID("eval/stop"), UpdatedAt: statetest.T0.UnixNano(),
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: allocs[0].ID, DesiredDescription: "alloc not needed"}},
	})
	if regs := regsOf(t, f, allocs[0].ID); len(regs) != 0 {
		t.Fatalf("stopped alloc keeps registrations: %+v", regs)
	}
	if n := len(regsOf(t, f, allocs[1].ID)); n != 2 {
		t.Fatalf("the other alloc has %d registrations, want 2", n)
	}
	// The other fails.
	clientUpdate(t, f, 6, structs.AllocClientStatusFailed, nil, allocs[1])
	if all, _ := snap(f).ServiceRegistrations(); len(all) != 0 {
		t.Fatalf("registrations left: %+v", all)
	}
}

func TestServicesRemovedWhenNodeDown(t *testing.T) {
	f := newTestFSM(t)
	node, allocs, _ := servicesFixture(t, f, 2, 0)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	if regs, _ := snap(f).ServiceRegistrationsByNode(node.ID); len(regs) != 4 {
		t.Fatalf("node has %d registrations, want 4", len(regs))
	}
	applyOK(t, f, 5, NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: node.ID, Status: structs.NodeStatusDown, UpdatedAt: statetest.T0.Add(time.Minute).UnixNano(),
	})
	if regs, _ := snap(f).ServiceRegistrationsByNode(node.ID); len(regs) != 0 {
		t.Fatalf("down node keeps registrations: %+v", regs)
	}
	if a, _ := snap(f).AllocByID(allocs[0].ID); a.ClientStatus != structs.AllocClientStatusLost {
		t.Fatalf("alloc is %s, want lost", a.ClientStatus)
	}
}

func TestServicesCanaryTagsUntilPromoted(t *testing.T) {
	f := newTestFSM(t)
	_, allocs, dep := servicesFixture(t, f, 2, 1)
	old, canary := allocs[0], allocs[1]
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, statetest.Bool(true), allocs...)
	tagsOf := func(id string) []string {
		for _, r := range regsOf(t, f, id) {
			if r.ServiceName == "shop-api" {
				return r.Tags
			}
		}
		t.Fatalf("alloc %s has no shop-api registration", id)
		return nil
	}
	if got := tagsOf(canary.ID); !slices.Equal(got, []string{"canary"}) {
		t.Fatalf("canary's tags = %v, want [canary]", got)
	}
	if got := tagsOf(old.ID); !slices.Equal(got, []string{"v2"}) {
		t.Fatalf("non-canary's tags = %v, want [v2]", got)
	}
	// A service without canary_tags keeps its tags on a canary.
	for _, r := range regsOf(t, f, canary.ID) {
		if r.ServiceName == "server-svc" && !slices.Equal(r.Tags, []string{"v1", "web"}) {
			t.Fatalf("server-svc tags on the canary = %v", r.Tags)
		}
	}
	applyOK(t, f, 5, DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{
		DeploymentID: dep.ID, All: true, PromotedAt: statetest.T0.Add(time.Minute),
	})
	if got := tagsOf(canary.ID); !slices.Equal(got, []string{"v2"}) {
		t.Fatalf("promoted canary's tags = %v, want [v2]", got)
	}
	for _, r := range regsOf(t, f, canary.ID) {
		if r.ServiceName == "shop-api" && (r.CreateIndex != 4 || r.ModifyIndex != 5) {
			t.Fatalf("promoted registration indexes = %d/%d, want 4/5", r.CreateIndex, r.ModifyIndex)
		}
	}
}

func TestServicesDeleteByHand(t *testing.T) {
	f := newTestFSM(t)
	_, allocs, _ := servicesFixture(t, f, 1, 0)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	regs := regsOf(t, f, allocs[0].ID)
	id := regs[0].ID
	// The wrong service name: refused, nothing deleted.
	resp := f.Apply(raftLog(5, entry(t, ServiceRegistrationDeleteRequestType,
		&structs.ServiceRegistrationDeleteRequest{Namespace: "default", ServiceName: "other", ID: id})))
	if _, ok := resp.(error); !ok {
		t.Fatalf("deleting under another name answered %v, want an error", resp)
	}
	applyOK(t, f, 6, ServiceRegistrationDeleteRequestType,
		&structs.ServiceRegistrationDeleteRequest{Namespace: "default", ServiceName: regs[0].ServiceName, ID: id})
	if r, _ := snap(f).ServiceRegistrationByID(id); r != nil {
		t.Fatalf("deleted registration still there: %+v", r)
	}
	// The client's repeated report recomputes nothing: still deleted.
	clientUpdate(t, f, 7, structs.AllocClientStatusRunning, nil, allocs...)
	if r, _ := snap(f).ServiceRegistrationByID(id); r != nil {
		t.Fatalf("a repeated report brought the deleted registration back: %+v", r)
	}
}

// A node registering again with another address moves its allocations'
// registrations to it (and recomputes them).
func TestServicesFollowTheNodeAddress(t *testing.T) {
	f := newTestFSM(t)
	node, allocs, _ := servicesFixture(t, f, 1, 0)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	n := node.Copy()
	n.Attributes["unique.network.ip-address"] = "10.9.9.9"
	applyOK(t, f, 5, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	regs := regsOf(t, f, allocs[0].ID)
	if len(regs) != 2 {
		t.Fatalf("%d registrations", len(regs))
	}
	for _, r := range regs {
		if r.Address != "10.9.9.9" || r.CreateIndex != 4 || r.ModifyIndex != 5 {
			t.Fatalf("registration after the node's new address = %+v", r)
		}
	}
}

func TestServicesSnapshotRoundTrip(t *testing.T) {
	f := newTestFSM(t)
	_, allocs, _ := servicesFixture(t, f, 2, 1)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	before := dump(t, f)
	if n, _ := snap(f).ServiceRegistrations(); len(n) != 4 {
		t.Fatalf("%d registrations before the snapshot, want 4", len(n))
	}
	g := snapshotRestore(t, f)
	if after := dump(t, g); after != before {
		t.Fatalf("restored state differs:\n%s\nwant\n%s", after, before)
	}
	if n, _ := snap(g).ServiceRegistrationsByName("default", "shop-api"); len(n) != 2 {
		t.Fatalf("restored by-name index has %d, want 2", len(n))
	}
}

func raftLog(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: data}
}

// Registrations are events of topic Service, typed by what happened to
// them whatever the entry: made, then removed when the alloc completes.
func TestServicesPublishEvents(t *testing.T) {
	f := newTestFSM(t)
	buf := stream.NewBuffer(64)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicService: {"shop-api"}}, Namespace: "default"})
	defer sub.Close()
	_, allocs, _ := servicesFixture(t, f, 1, 0)
	clientUpdate(t, f, 4, structs.AllocClientStatusRunning, nil, allocs...)
	clientUpdate(t, f, 5, structs.AllocClientStatusComplete, nil, allocs...)
	got := drain(t, sub)
	id := "_nomad-task-" + allocs[0].ID + "-group-web-shop-api-http"
	want := []string{
		"4 ServiceRegistration Service:" + id + " shop-api",
		"5 ServiceDeregistration Service:" + id + " shop-api (deleted)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
