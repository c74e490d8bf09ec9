package httpapi

import (
	"encoding/json"
	"testing"
)

// GET /v1/nodes answers each node's resources with ?resources=true only,
// as Nomad's: NodeResources, and ReservedResources (empty: a drover node
// reserves nothing).
func TestNodesListResources(t *testing.T) {
	f := newACLFixture(t)
	for _, n := range []string{"node1", "node2"} {
		if code, body := f.do(t, n, "PUT", "/v1/internal/node/register", `{"Node":{"ID":"`+n+`","Name":"`+n+`","Datacenter":"dc1","Status":"ready","NodeResources":{"Cpu":{"CpuShares":1000},"Memory":{"MemoryMB":512}}}}`); code != 200 {
			t.Fatalf("register: %d %s", code, body)
		}
	}
	for _, c := range []struct {
		query string
		with  bool
	}{{"", false}, {"?resources=true", true}} {
		code, body := f.do(t, "reader", "GET", "/v1/nodes"+c.query, "")
		var stubs []map[string]any
		if code != 200 || json.Unmarshal([]byte(body), &stubs) != nil || len(stubs) == 0 {
			t.Fatalf("%q: %d %s", c.query, code, body)
		}
		_, res := stubs[0]["NodeResources"]
		_, reserved := stubs[0]["ReservedResources"]
		if res != c.with || reserved != c.with {
			t.Errorf("%q: NodeResources %v, ReservedResources %v in %s", c.query, res, reserved, body)
		}
	}
	if code, _ := f.do(t, "reader", "GET", "/v1/nodes?resources=maybe", ""); code != 400 {
		t.Errorf("resources=maybe: %d", code)
	}
}
