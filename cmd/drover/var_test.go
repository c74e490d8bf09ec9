package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"net/http/httptest"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// The var commands against an API: init writes a specification that put
// reads back; put is a check-and-set unless -force; items from
// arguments, files and standard input; get in each format and -item;
// list, -q and prefixes; purge with and without -check-index; and the
// keyring's list and rotate.
func TestVarCommands(t *testing.T) {
	t.Setenv("DROVER_TOKEN", "")
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("NOMAD_NAMESPACE", "")
	srv := httptest.NewServer(httpapi.New(httpapi.NewMemBackend(), nil).Handler())
	defer srv.Close()
	cli := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, stdin, append(args[:1:1], append([]string{args[1], "-address", srv.URL}, args[2:]...)...)...)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.nv.hcl")
	if code, out, errOut := runCLI(t, "", "var", "init", spec); code != 0 || !strings.Contains(out, "written to "+spec) {
		t.Fatalf("init: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", "var", "init", spec); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("init over a file: %d %q", code, errOut)
	}
	code, out, errOut := cli("", "var", "put", "-out", "none", "@"+spec)
	if code != 0 || strings.TrimSpace(out) != `Created variable "a/path/to/your/variable" with modify index 2` {
		t.Fatalf("put from init's spec: %d %q %q", code, out, errOut)
	}

	// Key=value items; the output redirected is JSON.
	code, out, errOut = cli("", "var", "put", "app/db", "user=admin", "password=p4ss")
	var v structs.Variable
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Items["password"] != "p4ss" || v.Path != "app/db" {
		t.Fatalf("put items: %d %q %q", code, out, errOut)
	}
	// Without -force or the right -check-index, a put on an existing
	// variable is a check-and-set conflict.
	code, _, errOut = cli("", "var", "put", "app/db", "user=other")
	if code != 1 || !strings.Contains(errOut, "Check-and-Set conflict") || !strings.Contains(errOut, "-check-index=3") {
		t.Fatalf("put over an existing variable: %d %q", code, errOut)
	}
	keyFile := filepath.Join(dir, "key.pem")
	os.WriteFile(keyFile, []byte("-----KEY-----\n"), 0o600)
	code, out, errOut = cli("from-stdin\n", "var", "put", "-check-index", "3", "-out", "table", "app/db", "user=root", "cert=@"+keyFile, "token=-")
	if code != 0 || !regexp.MustCompile(`(?m)^Check Index\s+= 5$`).MatchString(out) || !regexp.MustCompile(`(?m)^cert\s+= -----KEY-----$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^token\s+= from-stdin$`).MatchString(out) || !strings.Contains(out, "\nItems\n") {
		t.Fatalf("checked put: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("", "var", "put", "-force", "-out", "none", "app/db", "user=forced"); code != 0 || !strings.HasPrefix(out, `Updated variable "app/db" with modify index 6`) {
		t.Fatalf("forced put: %d %q %q", code, out, errOut)
	}
	// A JSON specification on standard input.
	if code, _, errOut := cli(`{"Path":"app/web","Items":{"port":"8080"}}`, "var", "put", "-", "extra=1"); code != 0 {
		t.Fatalf("put from stdin: %d %q", code, errOut)
	}
	if code, out, _ := cli("", "var", "get", "-item", "port", "app/web"); code != 0 || out != "8080\n" {
		t.Fatalf("get -item: %d %q", code, out)
	}
	code, out, _ = cli("", "var", "get", "-out", "hcl", "app/web")
	if code != 0 || !strings.Contains(out, `path         = "app/web"`) || !strings.Contains(out, "items {") || !strings.Contains(out, `port  = "8080"`) {
		t.Fatalf("get -out hcl: %d %q", code, out)
	}
	// The HCL output is a specification put reads back.
	hclSpec := filepath.Join(dir, "web.nv.hcl")
	os.WriteFile(hclSpec, []byte(out), 0o644)
	if code, out, errOut := cli("", "var", "put", "-out", "none", "@"+hclSpec, "port=9090"); code != 0 || !strings.Contains(out, "Updated") {
		t.Fatalf("put of get's HCL: %d %q %q", code, out, errOut)
	}
	// Keys that are not HCL identifiers come out as a map, which put reads
	// back too.
	cli("", "var", "put", "-out", "none", "app/dotted", "db.user=u1", "plain=p")
	_, out, _ = cli("", "var", "get", "-out", "hcl", "app/dotted")
	if !strings.Contains(out, `"db.user" = "u1"`) {
		t.Fatalf("get -out hcl of dotted keys: %q", out)
	}
	dotted := filepath.Join(dir, "dotted.nv.hcl")
	os.WriteFile(dotted, []byte(strings.Replace(out, `"u1"`, `"u2"`, 1)), 0o644)
	if code, _, errOut := cli("", "var", "put", "-out", "none", "@"+dotted); code != 0 {
		t.Fatalf("put of dotted HCL: %d %q", code, errOut)
	}
	if code, out, _ := cli("", "var", "get", "-item", "db.user", "app/dotted"); code != 0 || out != "u2\n" {
		t.Fatalf("dotted item after put: %d %q", code, out)
	}
	cli("", "var", "purge", "app/dotted")
	if code, out, _ := cli("", "var", "get", "-out", "go-template", "-template", `{{.Items.port}}`, "app/web"); code != 0 || out != "9090" {
		t.Fatalf("get go-template: %d %q", code, out)
	}
	if code, _, errOut := cli("", "var", "get", "app/none"); code != 1 || !strings.Contains(errOut, "Variable not found") {
		t.Fatalf("get missing: %d %q", code, errOut)
	}
	if code, _, errOut := cli("", "var", "put", "bad..path", "k=v"); code != 1 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "Path:") {
		t.Fatalf("bad path: %d %q", code, errOut)
	}

	code, out, _ = cli("", "var", "list", "app/")
	if code != 0 || !regexp.MustCompile(`(?m)^Namespace\s+Path\s+Last Updated$`).MatchString(out) || !regexp.MustCompile(`(?m)^default\s+app/db\s+\d{4}-`).MatchString(out) ||
		strings.Contains(out, "a/path") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out, _ := cli("", "var", "list", "-q"); code != 0 || out != "a/path/to/your/variable\napp/db\napp/web\n" {
		t.Fatalf("list -q: %d %q", code, out)
	}
	if code, out, _ := cli("", "var", "list", "nothing/"); code != 0 || !strings.Contains(out, `No matching variables found with prefix "nothing/"`) {
		t.Fatalf("empty list: %d %q", code, out)
	}

	if code, _, errOut := cli("", "var", "purge", "-check-index", "1", "app/db"); code != 1 || !strings.Contains(errOut, "Check-and-Set conflict") {
		t.Fatalf("stale purge: %d %q", code, errOut)
	}
	if code, out, _ := cli("", "var", "purge", "app/db"); code != 0 || out != "Successfully purged variable \"app/db\"!\n" {
		t.Fatalf("purge: %d %q", code, out)
	}
	if code, _, _ := cli("", "var", "get", "app/db"); code != 1 {
		t.Fatal("purged variable still readable")
	}

	code, out, _ = runCLI(t, "", "operator", "root", "keyring", "list", "-address", srv.URL)
	if code != 0 || !regexp.MustCompile(`(?m)^Key\s+State\s+Create Time\n[0-9a-f]{8}\s+active\s+`).MatchString(out) {
		t.Fatalf("keyring list: %d %q", code, out)
	}
	if code, out, _ = runCLI(t, "", "operator", "root", "keyring", "rotate", "-address", srv.URL); code != 0 || !strings.Contains(out, "active") {
		t.Fatalf("rotate: %d %q", code, out)
	}
	if code, out, _ = runCLI(t, "", "operator", "root", "keyring", "list", "-address", srv.URL); code != 0 || strings.Count(out, "inactive") != 1 {
		t.Fatalf("keyring list after rotation: %d %q", code, out)
	}
	if code, out, _ := cli("", "var", "get", "-item", "port", "app/web"); code != 0 || out != "9090\n" {
		t.Fatalf("read after rotation: %d %q", code, out)
	}
	_, out, _ = runCLI(t, "", "operator", "root", "keyring", "list", "-verbose", "-address", srv.URL)
	old := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+inactive`).FindStringSubmatch(out)
	if old == nil {
		t.Fatalf("no inactive key in %q", out)
	}
	if code, _, errOut := runCLI(t, "", "operator", "root", "keyring", "remove", "-address", srv.URL, old[1]); code != 1 || !strings.Contains(errOut, "409") {
		t.Fatalf("remove of a key in use: %d %q", code, errOut)
	}
	if code, out, errOut := runCLI(t, "", "operator", "root", "keyring", "remove", "-force", "-address", srv.URL, old[1]); code != 0 || !strings.Contains(out, "Removed encryption key "+old[1]) {
		t.Fatalf("forced remove: %d %q %q", code, out, errOut)
	}
}
