package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// mrBody is a registration of a multi-region job naming regions (each
// "name:count").
func mrBody(id string, regions ...string) string {
	var rs []string
	for _, r := range regions {
		name, count, _ := strings.Cut(r, ":")
		rs = append(rs, `{"Name":"`+name+`","Count":`+count+`}`)
	}
	return `{"Job":{"ID":"` + id + `","Multiregion":{"Regions":[` + strings.Join(rs, ",") +
		`]},"TaskGroups":[{"Name":"g","Count":5,"Tasks":[{"Name":"t","Driver":"mock"}]}]}}`
}

// TestMultiregionRegisterOneRegion: a server of no federation registers a
// multi-region job naming only its own region as that region's copy, and
// refuses one naming another region with a 400 naming it, writing nothing.
func TestMultiregionRegisterOneRegion(t *testing.T) {
	b, srv := newTestAPI(t)
	code, body, _ := do(t, http.MethodPut, srv.URL+"/v1/jobs", mrBody("mr", "global:2", "west:1"))
	if code != http.StatusBadRequest || !strings.Contains(body, `Job.Multiregion.Regions[1].Name: No path to region "west"`) {
		t.Fatalf("naming west: %d %s", code, body)
	}
	if j, _ := b.State().Snapshot().JobByID("default", "mr"); j != nil {
		t.Fatalf("stored after a refusal: %+v", j)
	}
	code, body, _ = do(t, http.MethodPut, srv.URL+"/v1/jobs", mrBody("mr", "global:2"))
	if code != http.StatusOK {
		t.Fatalf("naming this region: %d %s", code, body)
	}
	var out JobRegisterResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil || out.EvalID == "" || len(out.Regions) != 1 ||
		out.Regions[0].Region != "global" || out.Regions[0].EvalID != out.EvalID {
		t.Fatalf("answer %s (%v)", body, err)
	}
	j, _ := b.State().Snapshot().JobByID("default", "mr")
	if j == nil || j.TaskGroups[0].Count != 2 || !j.IsMultiregion() || j.Version != 0 {
		t.Fatalf("stored %+v", j)
	}
	// Unchanged: the same version.
	if code, body, _ = do(t, http.MethodPut, srv.URL+"/v1/jobs", mrBody("mr", "global:2")); code != http.StatusOK {
		t.Fatalf("again: %d %s", code, body)
	}
	if j, _ := b.State().Snapshot().JobByID("default", "mr"); j.Version != 0 {
		t.Fatalf("identical re-run made version %d", j.Version)
	}
	// -check-index has no meaning across regions.
	code, body, _ = do(t, http.MethodPut, srv.URL+"/v1/job/mr", strings.Replace(mrBody("mr", "global:3"), `{"Job"`, `{"EnforceIndex":true,"JobModifyIndex":1,"Job"`, 1))
	if code != http.StatusBadRequest || !strings.Contains(body, "EnforceIndex") {
		t.Fatalf("EnforceIndex: %d %s", code, body)
	}
}

// TestMultiregionVersionFromUsers: the version of a region's copy is
// honoured from servers only; a user who sets it gets a 400.
func TestMultiregionVersionFromUsers(t *testing.T) {
	b := newFakeBackend()
	srv := httptest.NewServer(New(b, nil, WithAccess(Access{JoinToken: "jt"})).Handler())
	t.Cleanup(srv.Close)
	body := strings.Replace(mrBody("mr", "global:1"), `{"Job"`, `{"MultiregionVersion":7,"Job"`, 1)
	code, out, _ := do(t, http.MethodPut, srv.URL+"/v1/jobs", body)
	if code != http.StatusBadRequest || !strings.Contains(out, "MultiregionVersion: set by the servers only") {
		t.Fatalf("got %d %s", code, out)
	}
	if j, _ := b.State().Snapshot().JobByID("default", "mr"); j != nil {
		t.Fatalf("stored: %+v", j)
	}
}

// TestMultiregionVersion: the version every region takes.
func TestMultiregionVersion(t *testing.T) {
	copyOf := func(count int) *structs.Job {
		return &structs.Job{ID: "mr", TaskGroups: []*structs.TaskGroup{{Name: "g", Count: count}}}
	}
	scaled := func(j *structs.Job, id string) *structs.Job {
		j.TaskGroups[0].Scaling = &structs.ScalingPolicy{Min: 1, Max: 5, Enabled: true}
		if id != "" {
			structs.CanonicalizeScaling(j, nil, func() string { return id })
			structs.StampScaling(j, 9)
		}
		return j
	}
	held := func(v uint64, count int) *structs.Job {
		j := copyOf(count)
		j.Version = v
		return j
	}
	for _, c := range []struct {
		name string
		hs   []*regionHolding
		want uint64
	}{
		{"new everywhere", []*regionHolding{{copy: copyOf(1)}, {copy: copyOf(2)}}, 0},
		{"new in one region", []*regionHolding{{cur: held(4, 1), copy: copyOf(1)}, {copy: copyOf(2)}}, 5},
		{"unchanged at one version", []*regionHolding{{cur: held(3, 1), copy: copyOf(1)}, {cur: held(3, 2), copy: copyOf(2)}}, 3},
		{"unchanged at two versions", []*regionHolding{{cur: held(3, 1), copy: copyOf(1)}, {cur: held(6, 2), copy: copyOf(2)}}, 7},
		{"changed in one", []*regionHolding{{cur: held(3, 1), copy: copyOf(1)}, {cur: held(3, 2), copy: copyOf(4)}}, 4},
		{"unchanged with a scaling policy", []*regionHolding{{cur: scaled(held(3, 1), "p1"), copy: scaled(copyOf(1), "")}}, 3},
	} {
		if got := multiregionVersion(c.hs); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
