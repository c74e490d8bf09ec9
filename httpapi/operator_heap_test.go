package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// GET /v1/operator/debug/heap answers the receiving agent's live heap
// after a collection, to a request from this machine only, and with ACLs
// on to a management token only.
func TestDebugHeapIsLocalAndAnswersTheLiveHeap(t *testing.T) {
	const path = "/v1/operator/debug/heap"
	code, body := call(t, Access{}, "GET", path, "", "127.0.0.1:1234", nil)
	if code != 200 {
		t.Fatalf("loopback: %d %s", code, body)
	}
	var h HeapLive
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	if h.LiveBytes == 0 || h.Objects == 0 || h.InUseBytes < h.LiveBytes {
		t.Fatalf("heap %+v: want live bytes and objects, in use at least live", h)
	}
	if code, body := call(t, Access{}, "GET", path, "", "192.0.2.7:1234", nil); code != 403 {
		t.Fatalf("remote: %d %s, want 403", code, body)
	}
	if code, _ := call(t, Access{AllowRemote: true}, "GET", path, "", "192.0.2.7:1234", nil); code != 200 {
		t.Fatalf("remote allowed: %d, want 200", code)
	}

	f := newACLFixture(t)
	for who, want := range map[string]int{"": 403, "reader": 403, "writer": 403, "mgmt": 200} {
		code, body := f.do(t, who, "GET", path, "")
		if code != want {
			t.Errorf("%q: %d %s, want %d", who, code, body, want)
		}
		if want == 403 && !strings.Contains(body, "management") && who != "" {
			t.Errorf("%q: refusal %q does not say what it needs", who, body)
		}
	}
}
