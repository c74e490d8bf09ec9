package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// regionBackend is a fakeBackend of a region that knows the servers of
// other regions.
type regionBackend struct {
	*fakeBackend
	region string
	auth   string // the authoritative region; region when empty
	others map[string][]structs.ServerMember
	gone   map[string]bool
	joined []string
}

func (b *regionBackend) LocalRegion() string { return b.region }

func (b *regionBackend) Regions() []string {
	out := []string{b.region}
	for r := range b.others {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func (b *regionBackend) RegionServers(region string) ([]structs.ServerMember, bool) {
	return b.others[region], b.gone[region]
}

func (b *regionBackend) AuthoritativeRegion() string {
	if b.auth != "" {
		return b.auth
	}
	return b.region
}

func (b *regionBackend) JoinAddresses(_ context.Context, addrs []string) (int, error) {
	n := 0
	var errs []error
	for _, a := range addrs {
		if strings.HasPrefix(a, "bad") {
			errs = append(errs, errors.New(a+": refused"))
			continue
		}
		b.joined = append(b.joined, a)
		n++
	}
	return n, errors.Join(errs...)
}

// newRegionAPI serves a regionBackend of region.
func newRegionAPI(t *testing.T, region string) (*regionBackend, *httptest.Server) {
	t.Helper()
	b := &regionBackend{fakeBackend: newFakeBackend(), region: region, others: map[string][]structs.ServerMember{}, gone: map[string]bool{}}
	srv := httptest.NewServer(New(b, nil, WithForwardHold(testForwardHold)).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// A request for another region is forwarded to one of its servers: by
// ?region=, or for a job's registration by the job's Region; "global" is
// the local region; an unknown region is a 400, one whose servers are gone
// or do not answer a 503, each naming the region; a request forwarded from
// another region is never forwarded again.
func TestRequestsForAnotherRegionAreForwarded(t *testing.T) {
	east, eastSrv := newRegionAPI(t, "east")
	_, westSrv := newRegionAPI(t, "west")
	// A server of "north" that refuses connections: a closed listener.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := hostOf(t, dead.URL)
	dead.Close()
	east.others["west"] = []structs.ServerMember{{ID: "w1", Region: "west", HTTPAddr: hostOf(t, westSrv.URL)}}
	east.others["north"] = []structs.ServerMember{{ID: "n1", Region: "north", HTTPAddr: deadAddr}}
	east.gone["south"] = true

	if code, body, _ := do(t, "GET", eastSrv.URL+"/v1/regions", ""); code != 200 || strings.TrimSpace(body) != `["east","north","west"]` {
		t.Fatalf("regions: %d %s", code, body)
	}
	westJob := strings.Replace(webJob, `"ID":"web"`, `"ID":"web","Region":"west"`, 1)
	if code, body, _ := do(t, "PUT", eastSrv.URL+"/v1/jobs", westJob); code != 200 {
		t.Fatalf("registering west's job through east: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", westSrv.URL+"/v1/job/web", ""); code != 200 || !strings.Contains(body, `"Region":"west"`) {
		t.Fatalf("west's job in west: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", eastSrv.URL+"/v1/job/web", ""); code != 404 {
		t.Fatalf("west's job in east: %d", code)
	}
	if code, body, _ := do(t, "GET", eastSrv.URL+"/v1/job/web?region=west", ""); code != 200 || !strings.Contains(body, `"ID":"web"`) {
		t.Fatalf("?region=west through east: %d %s", code, body)
	}
	// "global" and the envelope's Region.
	globalJob := strings.Replace(webJob, `"ID":"web"`, `"ID":"glob","Region":"global"`, 1)
	if code, body, _ := do(t, "PUT", eastSrv.URL+"/v1/jobs", globalJob); code != 200 {
		t.Fatalf("a global job through east: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", eastSrv.URL+"/v1/job/glob", ""); code != 200 {
		t.Fatalf("a global job is not east's: %d", code)
	}
	envJob := strings.Replace(webJob, `{"Job":`, `{"Region":"west","Job":`, 1)
	envJob = strings.Replace(envJob, `"ID":"web"`, `"ID":"env"`, 1)
	if code, body, _ := do(t, "PUT", eastSrv.URL+"/v1/jobs", envJob); code != 200 {
		t.Fatalf("envelope Region: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", westSrv.URL+"/v1/job/env", ""); code != 200 {
		t.Fatalf("the envelope's region did not route the job: %d", code)
	}

	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/v1/jobs?region=nowhere", 400, `No path to region "nowhere"`},
		{"/v1/jobs?region=south", 503, `region "south"`},
		{"/v1/jobs?region=north", 503, `region "north"`},
	} {
		start := time.Now()
		code, body, _ := do(t, "GET", eastSrv.URL+c.path, "")
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.path, code, body)
		}
		if took := time.Since(start); took > testForwardHold+2*time.Second {
			t.Errorf("%s took %s", c.path, took)
		}
	}
	req, _ := http.NewRequest("GET", eastSrv.URL+"/v1/jobs?region=west", nil)
	req.Header.Set(RegionForwardedHeader, "north")
	if code, body, _ := send(t, req); code != 400 || !strings.Contains(body, `forwarded here from region "north"`) {
		t.Errorf("a forwarded request forwarded again: %d %s", code, body)
	}
	// The agent's own routes stay here.
	if code, body, _ := do(t, "GET", eastSrv.URL+"/v1/regions?region=west", ""); code != 200 || !strings.Contains(body, "east") {
		t.Errorf("regions with ?region=west: %d %s", code, body)
	}
}

func TestAgentJoinAnswersAsNomad(t *testing.T) {
	b, srv := newRegionAPI(t, "east")
	code, body, _ := do(t, "PUT", srv.URL+"/v1/agent/join?address=127.0.0.1:1&address=bad:2", "")
	if code != 200 || !strings.Contains(body, `"num_joined":1`) || !strings.Contains(body, `"error":"bad:2: refused"`) {
		t.Fatalf("join: %d %s", code, body)
	}
	if !slices.Equal(b.joined, []string{"127.0.0.1:1"}) {
		t.Fatalf("joined %v", b.joined)
	}
	for _, q := range []string{"", "?address=", "?address=" + strings.Repeat("&address=a:1", 70)} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/agent/join"+q, ""); code != 400 || !strings.Contains(body, "address") {
			t.Errorf("join%s: %d %s", q, code, body)
		}
	}
	// A backend that cannot join.
	_, plain := newTestAPI(t)
	if code, _, _ := do(t, "PUT", plain.URL+"/v1/agent/join?address=a:1", ""); code != http.StatusNotImplemented {
		t.Errorf("join on a backend without federation: %d", code)
	}
}

// In a region that is not the authoritative one, writes of what replicates
// from it (ACL policies, global tokens) go to the authoritative region;
// a token that is not global stays.
func TestACLWritesGoToTheAuthoritativeRegion(t *testing.T) {
	east, srv := newRegionAPI(t, "east")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := hostOf(t, dead.URL)
	dead.Close()
	east.auth = "north"
	east.others["north"] = []structs.ServerMember{{ID: "n1", Region: "north", HTTPAddr: deadAddr}}
	// Auth methods replicated from north.
	cfg := &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"k"}}
	if _, _, err := east.Apply(context.Background(), fsm.ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: []*structs.ACLAuthMethod{
		{Name: "global-jwt", Type: "JWT", TokenLocality: "global", Default: true, Config: cfg},
		{Name: "local-jwt", Type: "JWT", TokenLocality: "local", Config: cfg},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/v1/acl/policy/ops", `{"Name":"ops","Rules":""}`},
		{"DELETE", "/v1/acl/policy/ops", ""},
		{"PUT", "/v1/acl/token", `{"Name":"g","Type":"management","Global":true}`},
		{"PUT", "/v1/namespace/ops", `{"Name":"ops"}`},
		{"DELETE", "/v1/namespace/ops", ""},
		{"PUT", "/v1/node/pools", `{"Name":"gpu"}`},
		{"DELETE", "/v1/node/pool/gpu", ""},
		{"PUT", "/v1/acl/role", `{"Name":"ops"}`},
		{"POST", "/v1/acl/role/r1", `{"ID":"r1","Name":"ops"}`},
		{"DELETE", "/v1/acl/role/r1", ""},
		{"POST", "/v1/acl/auth-method", `{"Name":"jwt"}`},
		{"PUT", "/v1/acl/auth-method/jwt", `{"Name":"jwt"}`},
		{"DELETE", "/v1/acl/auth-method/jwt", ""},
		{"POST", "/v1/acl/binding-rule", `{"AuthMethod":"jwt"}`},
		{"PUT", "/v1/acl/binding-rule/b1", `{"ID":"b1"}`},
		{"DELETE", "/v1/acl/binding-rule/b1", ""},
		// A login with a method whose tokens are global, by name or as the
		// default JWT method, as Nomad's.
		{"POST", "/v1/acl/login", `{"AuthMethodName":"global-jwt","LoginToken":"x"}`},
		{"PUT", "/v1/acl/login", `{"LoginToken":"x"}`},
	} {
		if code, body, _ := do(t, c.method, srv.URL+c.path, c.body); code != 503 || !strings.Contains(body, `region "north"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/acl/token", `{"Name":"l","Type":"management"}`); code == 503 || strings.Contains(body, "north") {
		t.Errorf("a local token went to the authoritative region: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/acl/login", `{"AuthMethodName":"local-jwt","LoginToken":"x"}`); code == 503 || strings.Contains(body, "north") {
		t.Errorf("a login with a method of local tokens went to the authoritative region: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/acl/policies", ""); code == 503 || strings.Contains(body, "north") {
		t.Errorf("a read went to the authoritative region: %d %s", code, body)
	}
}
