package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// servicesFixture is an API with ACLs on whose state holds three running
// allocations of job "web" (namespace default), each registering "db" on
// its port "pg" (tags primary, v1), and one of job "q" in namespace
// "other" registering "queue".
type servicesFixture struct {
	b       *fakeBackend
	srv     *httptest.Server
	secrets map[string]string
	allocs  []string
}

func newServicesFixture(t *testing.T) *servicesFixture {
	t.Helper()
	f := &servicesFixture{b: newFakeBackend(), secrets: map[string]string{}}
	f.srv = httptest.NewServer(New(f.b, nil, WithACL(ACLConfig{Enabled: true})).Handler())
	t.Cleanup(f.srv.Close)
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := f.b.Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readonly", Rules: `namespace "default" { policy = "read" }`},
		{Name: "deployer", Rules: `namespace "default" { policy = "write" }`},
		{Name: "other", Rules: `namespace "other" { policy = "read" }`},
	}})
	for name, policy := range map[string]string{"reader": "readonly", "writer": "deployer", "otherreader": "other"} {
		secret := structs.GenerateUUID()
		f.secrets[name] = secret
		apply(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
			AccessorID: "acc-" + name, SecretHash: structs.HashSecret(secret), Name: name,
			Type: structs.ACLTokenTypeClient, Policies: []string{policy},
		}}})
	}
	apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: &structs.Node{
		ID: "node1", Name: "node1", Datacenter: "dc1", Status: structs.NodeStatusReady,
		Attributes: map[string]string{"unique.network.ip-address": "10.0.0.9"},
	}})
	place := func(ns, jobID, svc string, count int) {
		job := statetestJob(jobID)
		job.Namespace = ns
		job.TaskGroups[0].Services = []*structs.Service{{Name: svc, PortLabel: "pg", Provider: structs.ServiceProviderNomad, Tags: []string{"primary", "v1"}}}
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: ns, JobID: jobID, Status: structs.EvalStatusPending}})
		stored, _ := f.b.State().Snapshot().JobByID(ns, jobID)
		var placed, running []*structs.Allocation
		for i := range count {
			id := structs.GenerateUUID()
			placed = append(placed, &structs.Allocation{
				ID: id, Namespace: ns, JobID: jobID, TaskGroup: "g", NodeID: "node1", Name: fmt.Sprintf("%s.g[%d]", jobID, i),
				DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
				AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
					Ports: []structs.PortMapping{{Label: "pg", Value: 25000 + i}}}},
			})
			running = append(running, &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusRunning})
			if ns == "default" {
				f.allocs = append(f.allocs, id)
			}
		}
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: stored, AllocsPlaced: placed})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: running})
	}
	place("default", "web", "db", 3)
	place("other", "q", "queue", 1)
	return f
}

func (f *servicesFixture) client(t *testing.T, who string) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: f.srv.URL, SecretID: f.secrets[who]})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The official client's Services() reads and deletes registrations.
func TestServicesNomadClient(t *testing.T) {
	f := newServicesFixture(t)
	c := f.client(t, "writer")

	list, meta, err := c.Services().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex == 0 {
		t.Error("List answered index 0")
	}
	if len(list) != 1 || list[0].Namespace != "default" || len(list[0].Services) != 1 ||
		list[0].Services[0].ServiceName != "db" || !slices.Equal(list[0].Services[0].Tags, []string{"primary", "v1"}) {
		t.Fatalf("List = %s", jsonOf(list))
	}

	regs, _, err := c.Services().Get("db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 3 {
		t.Fatalf("Get answered %d registrations, want 3", len(regs))
	}
	ports := map[int]bool{}
	for _, r := range regs {
		if r.Address != "10.0.0.9" || r.NodeID != "node1" || r.Datacenter != "dc1" || r.JobID != "web" || r.Namespace != "default" {
			t.Errorf("registration %s", jsonOf(r))
		}
		if r.ID != "_nomad-task-"+r.AllocID+"-group-g-db-pg" {
			t.Errorf("ID %q", r.ID)
		}
		ports[r.Port] = true
	}
	if !ports[25000] || !ports[25001] || !ports[25002] {
		t.Fatalf("ports = %v", ports)
	}

	// Unknown: an empty list, as Nomad's.
	if regs, _, err := c.Services().Get("nope", nil); err != nil || len(regs) != 0 {
		t.Fatalf("unknown service: %v, %v", regs, err)
	}

	if _, err := c.Services().Delete("db", regs[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	after, _, err := c.Services().Get("db", nil)
	if err != nil || len(after) != 2 {
		t.Fatalf("after delete: %d registrations, %v", len(after), err)
	}
	for _, r := range after {
		if r.ID == regs[0].ID {
			t.Fatalf("deleted registration still listed")
		}
	}
	// Deleting it again, or under another service's name: 404.
	if _, err := c.Services().Delete("db", regs[0].ID, nil); err == nil || !isStatus(err, 404) {
		t.Fatalf("second delete: %v, want a 404", err)
	}
	if _, err := c.Services().Delete("other", regs[1].ID, nil); err == nil || !isStatus(err, 404) {
		t.Fatalf("delete under another name: %v, want a 404", err)
	}
}

func isStatus(err error, code int) bool {
	var e nomad.UnexpectedResponseError
	if ok := asUnexpected(err, &e); ok {
		return e.StatusCode() == code
	}
	return false
}

func asUnexpected(err error, out *nomad.UnexpectedResponseError) bool {
	for err != nil {
		if e, ok := err.(nomad.UnexpectedResponseError); ok {
			*out = e
			return true
		}
		if e, ok := err.(*nomad.UnexpectedResponseError); ok {
			*out = *e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ?choose=N|key picks N instances by rendezvous hashing: the same N for
// the same key, a subset of a larger N's picks, spread over keys.
func TestServicesChoose(t *testing.T) {
	f := newServicesFixture(t)
	get := func(q string) []*structs.ServiceRegistration {
		t.Helper()
		code, body := f.do(t, "reader", "GET", "/v1/service/db"+q)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", q, code, body)
		}
		var out []*structs.ServiceRegistration
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	one := get("?choose=1|alloc-a")
	if len(one) != 1 {
		t.Fatalf("choose 1: %d", len(one))
	}
	if again := get("?choose=1|alloc-a"); again[0].ID != one[0].ID {
		t.Fatalf("choose is not stable: %s then %s", one[0].ID, again[0].ID)
	}
	two := get("?choose=2|alloc-a")
	if len(two) != 2 || two[0].ID != one[0].ID {
		t.Fatalf("choose 2 does not start with choose 1's pick: %s, %s", jsonOf(two), one[0].ID)
	}
	if all := get("?choose=9|alloc-a"); len(all) != 3 {
		t.Fatalf("choose 9 of 3 answered %d", len(all))
	}
	// Over many keys, every instance is somebody's first pick.
	firsts := map[string]bool{}
	for i := range 60 {
		firsts[get("?choose=1|key-" + strconv.Itoa(i))[0].ID] = true
	}
	if len(firsts) != 3 {
		t.Fatalf("60 keys picked %d distinct instances first, want 3", len(firsts))
	}
	// The weight is Nomad's: ChooseServices orders by it.
	regs, _ := f.b.State().Snapshot().ServiceRegistrationsByName("default", "db")
	w := ChooseServices(regs, 3, "alloc-a")
	for i := 1; i < len(w); i++ {
		if rendezvousWeight(w[i-1], "alloc-a") > rendezvousWeight(w[i], "alloc-a") {
			t.Fatalf("choose is not in weight order")
		}
	}
	for _, bad := range []string{"x|k", "2", "2|", "-1|k"} {
		if code, body := f.do(t, "reader", "GET", "/v1/service/db?choose="+bad); code != 400 {
			t.Errorf("choose=%s: %d %s, want 400", bad, code, body)
		}
	}
}

func (f *servicesFixture) do(t *testing.T, who, method, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, f.srv.URL+path, nil)
	req.RequestURI = ""
	if who != "" {
		req.Header.Set(TokenHeader, f.secrets[who])
	}
	return roundTrip(t, req)
}

// Reads need read-job in the namespace, the deletion submit-job; across
// namespaces a list shows only those the token may read.
func TestServicesACL(t *testing.T) {
	f := newServicesFixture(t)
	regs, _ := f.b.State().Snapshot().ServiceRegistrationsByName("default", "db")
	del := "/v1/service/db/" + regs[0].ID
	for _, c := range []struct {
		who, method, path string
		want              int
	}{
		{"", "GET", "/v1/services", 403},
		{"reader", "GET", "/v1/services", 200},
		{"reader", "GET", "/v1/service/db", 200},
		{"otherreader", "GET", "/v1/service/db", 403},
		{"otherreader", "GET", "/v1/service/queue?namespace=other", 200},
		{"reader", "GET", "/v1/service/queue?namespace=other", 403},
		{"reader", "DELETE", del, 403},
		{"writer", "DELETE", del + "?namespace=*", 400}, // a write names one namespace
		{"writer", "DELETE", del, 200},
	} {
		if code, body := f.do(t, c.who, c.method, c.path); code != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.who, c.method, c.path, code, body, c.want)
		}
	}
	code, body := f.do(t, "reader", "GET", "/v1/services?namespace=*")
	var list []*structs.ServiceRegistrationListStub
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("list *: %d %s", code, body)
	}
	if len(list) != 1 || list[0].Namespace != "default" {
		t.Fatalf("reader's list across namespaces = %s, want default alone", body)
	}
}

// A blocking query on a service answers when an instance leaves.
func TestServicesBlockingQuery(t *testing.T) {
	f := newServicesFixture(t)
	c := f.client(t, "reader")
	regs, meta, err := c.Services().Get("db", nil)
	if err != nil || len(regs) != 3 {
		t.Fatalf("%d, %v", len(regs), err)
	}
	type result struct {
		regs []*nomad.ServiceRegistration
		meta *nomad.QueryMeta
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		r, m, err := c.Services().Get("db", &nomad.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 10 * time.Second})
		ch <- result{r, m, err}
	}()
	select {
	case r := <-ch:
		t.Fatalf("answered before any change: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	if _, _, err := f.b.Apply(context.Background(), fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: f.allocs[0], ClientStatus: structs.AllocClientStatusComplete}},
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		if r.err != nil || len(r.regs) != 2 || r.meta.LastIndex <= meta.LastIndex {
			t.Fatalf("after the alloc completed: %d registrations at %d (was %d), %v", len(r.regs), r.meta.LastIndex, meta.LastIndex, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not answer")
	}
}
