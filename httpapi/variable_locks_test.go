package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestVariableLocks walks Nomad's lock operations over HTTP: acquire
// (defaults filled), the lock guarding writes, renew (the ModifyIndex
// kept), release, and the refusals with their statuses.
func TestVariableLocks(t *testing.T) {
	_, srv := newTestAPI(t)
	u := srv.URL + "/v1/var/app/leader"
	if code, body, _ := do(t, "PUT", u, `{"Items":{"k":"v"}}`); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body, _ := do(t, "PUT", u+"?lock-acquire", `{"Items":{"k":"v"}}`)
	held := decodeVar(t, body)
	if code != 200 || held.Lock == nil || held.Lock.ID == "" || held.Lock.TTL != 15*time.Second ||
		held.Lock.LockDelay != 15*time.Second || held.Items["k"] != "v" {
		t.Fatalf("acquire: %d %s", code, body)
	}
	if !strings.Contains(body, `"TTL":"15s"`) || !strings.Contains(body, `"LockDelay":"15s"`) {
		t.Fatalf("durations not in Nomad's form: %s", body)
	}
	lockBody := func(id string, items bool) string {
		b, _ := json.Marshal(map[string]any{"Lock": map[string]string{"ID": id}})
		if items {
			b, _ = json.Marshal(map[string]any{"Lock": map[string]string{"ID": id}, "Items": map[string]string{"k": "w"}})
		}
		return string(b)
	}

	// Another caller can neither take the lock nor write nor delete; the
	// conflict names only the path.
	for _, c := range []struct{ method, url, body string }{
		{"PUT", u + "?lock-acquire", `{"Lock":{"ID":"someone-else"}}`},
		{"PUT", u, `{"Items":{"k":"w"}}`},
		{"DELETE", u, ""},
	} {
		code, body, _ := do(t, c.method, c.url, c.body)
		if v := decodeVar(t, body); code != 409 || v.Path != "app/leader" || v.Items != nil || v.ModifyIndex != 0 {
			t.Fatalf("%s %s: %d %s", c.method, c.url, code, body)
		}
	}
	// The holder writes, and keeps the lock.
	code, body, _ = do(t, "PUT", u, lockBody(held.Lock.ID, true))
	if w := decodeVar(t, body); code != 200 || w.Items["k"] != "w" || w.Lock == nil || w.Lock.ID != held.Lock.ID {
		t.Fatalf("holder's write: %d %s", code, body)
	}
	_, body, _ = do(t, "GET", u, "")
	written := decodeVar(t, body)

	// Renewal answers the metadata at the variable's own index.
	code, body, hdr := do(t, "PUT", u+"?lock-renew", lockBody(held.Lock.ID, false))
	var m structs.VariableMetadata
	if err := json.Unmarshal([]byte(body), &m); err != nil || code != 200 || m.ModifyIndex != written.ModifyIndex ||
		m.Lock == nil || m.Lock.ID != held.Lock.ID || hdr.Get("X-Nomad-Index") == "" {
		t.Fatalf("renew: %d %s", code, body)
	}
	for _, c := range []struct {
		query, body string
		code        int
		text        string
	}{
		{"?lock-renew", lockBody("someone-else", false), 409, "attempting to modify locked variable"},
		{"?lock-renew", `{}`, 400, "missing lock ID"},
		{"?lock-release", `{}`, 400, "missing lock information"},
		{"?lock-release", lockBody(held.Lock.ID, true), 400, "lock release operation doesn't take variable items"},
		{"?lock-acquire&lock-renew", lockBody(held.Lock.ID, false), 400, "only one lock operation"},
		{"?lock-acquire&cas=1", lockBody(held.Lock.ID, false), 400, "CAS can't be used with lock operations"},
	} {
		if code, body, _ := do(t, "PUT", u+c.query, c.body); code != c.code || !strings.Contains(body, c.text) {
			t.Errorf("%s %s: %d %s", c.query, c.body, code, body)
		}
	}
	// A release by another ID is a conflict; the holder's removes the lock.
	if code, body, _ := do(t, "PUT", u+"?lock-release", lockBody("someone-else", false)); code != 409 {
		t.Fatalf("release by another: %d %s", code, body)
	}
	code, body, _ = do(t, "PUT", u+"?lock-release", lockBody(held.Lock.ID, false))
	if r := decodeVar(t, body); code != 200 || r.Lock != nil || len(r.Items) != 0 || r.ModifyIndex <= written.ModifyIndex {
		t.Fatalf("release: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", u+"?lock-renew", lockBody(held.Lock.ID, false)); code != 409 || !strings.Contains(body, "variable doesn't hold a lock") {
		t.Fatalf("renew after release: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/var/app/none?lock-release", lockBody("x", false)); code != 404 {
		t.Fatalf("release of an absent variable: %d %s", code, body)
	}
	_, body, _ = do(t, "GET", u, "")
	if v := decodeVar(t, body); v.Items["k"] != "w" || v.Lock != nil {
		t.Fatalf("after release: %s", body)
	}
}

func TestVariableLockAcquireChecksTheLock(t *testing.T) {
	_, srv := newTestAPI(t)
	u := srv.URL + "/v1/var/app/x"
	for body, text := range map[string]string{
		`{"Lock":{"TTL":"1s"}}`:        "TTL 1s must be between 10s and 24h0m0s",
		`{"Lock":{"TTL":"48h"}}`:       "TTL 48h0m0s must be between",
		`{"Lock":{"LockDelay":"-1s"}}`: "must be positive",
		`{"Lock":{"TTL":"soon"}}`:      "Lock.TTL",
	} {
		if code, got, _ := do(t, "PUT", u+"?lock-acquire", body); code != 400 || !strings.Contains(got, text) {
			t.Errorf("%s: %d %s", body, code, got)
		}
	}
	// A plain write may not carry a lock's durations.
	if code, got, _ := do(t, "PUT", u, `{"Items":{"a":"b"},"Lock":{"TTL":"20s"}}`); code != 400 || !strings.Contains(got, "variable should not contain lock definition") {
		t.Errorf("write with a lock: %d %s", code, got)
	}
	// A lock on a path that holds no variable creates it, items or not;
	// the list shows the lock (ACLs off).
	code, body, _ := do(t, "PUT", u+"?lock-acquire", `{"Lock":{"TTL":"20s","LockDelay":"1s"}}`)
	if v := decodeVar(t, body); code != 200 || v.Lock == nil || v.Lock.TTL != 20*time.Second || v.Lock.LockDelay != time.Second {
		t.Fatalf("acquire on a new path: %d %s", code, body)
	}
	_, body, _ = do(t, "GET", srv.URL+"/v1/vars", "")
	var list []structs.VariableMetadata
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 1 || list[0].Lock == nil {
		t.Fatalf("list: %s", body)
	}
}
