package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// A node is answered with Nomad's SecretID field, empty: the secret its
// client registered with (in the token header, or, dropped, in the body)
// is never answered.
func TestNodeAnswersAnEmptySecretID(t *testing.T) {
	f := newACLFixture(t)
	const planted = "0f5f4c1e-6a35-4b8e-9d55-7f1b5a0c2d11"
	code, body := f.do(t, "node1", "PUT", "/v1/internal/node/register", `{"Node":{"ID":"node1","Name":"node1","Datacenter":"dc1","Status":"ready","SecretID":"`+planted+`"}}`)
	if code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body = f.do(t, "reader", "GET", "/v1/node/node1", "")
	var raw map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &raw) != nil {
		t.Fatalf("node: %d %s", code, body)
	}
	if v, ok := raw["SecretID"]; !ok || v != "" || strings.Contains(body, planted) || strings.Contains(body, f.secrets["node1"]) {
		t.Fatalf("node's SecretID: %v in %s", v, body)
	}
}
