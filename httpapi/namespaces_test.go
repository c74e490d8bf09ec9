package httpapi

import (
	"strings"
	"testing"
)

// TestNamespaceEndpoints: default and every namespace a job names are
// listed and read; an apply that names a namespace alone is accepted, one
// that sets a description is refused saying why; default and a namespace
// with jobs cannot be deleted.
func TestNamespaceEndpoints(t *testing.T) {
	_, srv := newTestAPI(t)
	job := strings.Replace(webJob, `"ID":"web"`, `"ID":"web","Namespace":"dev"`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs?namespace=dev", job); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body, _ := do(t, "GET", srv.URL+"/v1/namespaces", "")
	if code != 200 || !strings.Contains(body, `"Name":"default","Description":"Default shared namespace"`) || !strings.Contains(body, `"Name":"dev"`) {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespaces?prefix=de", ""); code != 200 || strings.Contains(body, `"default"`) != true {
		t.Errorf("prefix: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespace/dev", ""); code != 200 || !strings.Contains(body, `"Name":"dev"`) {
		t.Errorf("info: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespace/nope", ""); code != 404 || !strings.Contains(body, "namespace not found") {
		t.Errorf("unknown: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace", `{"Name":"qa","Description":""}`); code != 200 {
		t.Errorf("apply by name: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace/qa", `{"Name":"qa","Description":"QA"}`); code != 400 || !strings.Contains(body, "sets Description: drover does not store") {
		t.Errorf("apply with a description: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace", `{"Name":"a b"}`); code != 400 || !strings.Contains(body, "invalid name") {
		t.Errorf("invalid name: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/default", ""); code != 400 || !strings.Contains(body, "default namespace can not be deleted") {
		t.Errorf("delete default: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/dev", ""); code != 400 || !strings.Contains(body, "has non-terminal jobs") {
		t.Errorf("delete dev: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/qa", ""); code != 200 {
		t.Errorf("delete qa: %d %s", code, body)
	}
}

// TestNodePoolAndSystemEndpoints: the two built-in pools are listed and
// read, GET /v1/node/pool/{name} routed beside GET /v1/node/{id}/…;
// writes to pools are refused saying why; the scheduler configuration is
// drover's, and only it is accepted back.
func TestNodePoolAndSystemEndpoints(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pools", ""); code != 200 || !strings.Contains(body, `"Name":"all"`) || !strings.Contains(body, `"Name":"default"`) {
		t.Errorf("pools: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pool/default", ""); code != 200 || !strings.Contains(body, `"Description":"Default node pool."`) {
		t.Errorf("pool: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pool/gpu", ""); code != 404 {
		t.Errorf("unknown pool: %d %s", code, body)
	}
	for _, p := range []string{"/v1/node/pool/all/nodes", "/v1/node/pool/default/jobs?namespace=*"} {
		if code, body, _ := do(t, "GET", srv.URL+p, ""); code != 200 || !strings.HasPrefix(body, "[") {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/node/pools", `{"Name":"gpu"}`); code != 400 || !strings.Contains(body, "not supported by drover yet") {
		t.Errorf("apply: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/node/pool/default", ""); code != 400 || !strings.Contains(body, `modifying node pool "default" is not allowed`) {
		t.Errorf("delete default: %d %s", code, body)
	}
	code, body, _ := do(t, "GET", srv.URL+"/v1/operator/scheduler/configuration", "")
	if code != 200 || !strings.Contains(body, `"SchedulerAlgorithm":"binpack"`) {
		t.Fatalf("scheduler config: %d %s", code, body)
	}
	same := `{"SchedulerAlgorithm":"binpack","MemoryOversubscriptionEnabled":true,"PreemptionConfig":{"SystemSchedulerEnabled":false},"SomethingNew":false}`
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", same); code != 200 || !strings.Contains(body, `"Updated":true`) {
		t.Errorf("set the same: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm":"spread"}`); code != 200 || !strings.Contains(body, `"Updated":true`) {
		t.Errorf("set spread: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm":"fastest"}`); code != 400 || !strings.Contains(body, "invalid scheduler algorithm: fastest") {
		t.Errorf("set an unknown algorithm: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/system/reconcile/summaries", ""); code != 200 {
		t.Errorf("reconcile: %d %s", code, body)
	}
}
