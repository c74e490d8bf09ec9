package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/droverhq/drover/httpapi"
)

// The acl commands against an API with ACLs on: bootstrap once, a policy
// from a file (checked locally first, located), a client token whose
// secret is printed once, -token and NOMAD_TOKEN, update, self, list,
// delete.
func TestACLCommands(t *testing.T) {
	t.Setenv("DROVER_TOKEN", "")
	t.Setenv("NOMAD_TOKEN", "")
	srv := httptest.NewServer(httpapi.New(httpapi.NewMemBackend(), nil, httpapi.WithACL(httpapi.ACLConfig{Enabled: true})).Handler())
	defer srv.Close()
	addr := []string{"-address", srv.URL}
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, "", append(args, addr...)...)
	}
	secretRE := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`)
	accessorRE := regexp.MustCompile(`(?m)^Accessor ID\s+= ([0-9a-f-]{36})$`)

	code, out, errOut := cli("acl", "bootstrap")
	m := secretRE.FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "Type         = management") || !strings.Contains(out, "Name         = Bootstrap Token") {
		t.Fatalf("bootstrap: %d %q %q", code, out, errOut)
	}
	root := m[1]
	if code, _, errOut := cli("acl", "bootstrap"); code != 1 || !strings.Contains(errOut, "Error bootstrapping: Unexpected response code: 400 (ACL bootstrap already done (reset index: ") {
		t.Fatalf("second bootstrap: %d %q", code, errOut)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("namespace \"default\" {\n  policy = \"reed\"\n}\n"), 0o644)
	if code, _, errOut := cli("acl", "policy", "apply", "-token", root, "ro", bad); code != 1 ||
		!strings.Contains(errOut, bad+`:2:12: namespace "default".policy: "reed" is not one of`) {
		t.Fatalf("bad policy: %d %q", code, errOut)
	}
	good := filepath.Join(dir, "ro.hcl")
	os.WriteFile(good, []byte("namespace \"default\" {\n  policy = \"read\"\n}\n"), 0o644)
	if code, out, errOut := cli("acl", "policy", "apply", "-token", root, "-description", "read only", "ro", good); code != 0 ||
		strings.TrimSpace(out) != `Successfully wrote "ro" ACL policy!` {
		t.Fatalf("apply: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli("acl", "policy", "apply", "ro", good); code != 1 || !strings.Contains(errOut, "403 (Permission denied") {
		t.Fatalf("apply without a token: %d %q", code, errOut)
	}
	t.Setenv("NOMAD_TOKEN", root)
	if code, out, _ := cli("acl", "policy", "list"); code != 0 || !regexp.MustCompile(`(?m)^ro\s+read only$`).MatchString(out) {
		t.Fatalf("policy list: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "policy", "info", "ro"); code != 0 || !strings.Contains(out, "Name        = ro\nDescription = read only") ||
		!strings.Contains(out, "Rules\n\nnamespace \"default\" {") {
		t.Fatalf("policy info: %d %q", code, out)
	}

	code, out, errOut = cli("acl", "token", "create", "-name", "ci", "-policy", "ro", "-ttl", "1h")
	m, a := secretRE.FindStringSubmatch(out), accessorRE.FindStringSubmatch(out)
	if code != 0 || m == nil || a == nil || !strings.Contains(out, "Policies     = [ro]") || strings.Contains(out, "Expiry Time  = <none>") {
		t.Fatalf("token create: %d %q %q", code, out, errOut)
	}
	ci, ciAccessor := m[1], a[1]
	// The secret is printed to a management token and to the token
	// itself, as Nomad's; never in a list.
	for _, args := range [][]string{{"acl", "token", "list"}, {"acl", "token", "info", ciAccessor}} {
		code, out, _ := cli(args...)
		if code != 0 || !strings.Contains(out, ciAccessor) || strings.Contains(out, ci) != (args[2] == "info") {
			t.Fatalf("%v: %d %q", args, code, out)
		}
	}
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", ci)
	if code, out, _ := cli("acl", "token", "self"); code != 0 || !strings.Contains(out, "Name         = ci") || !strings.Contains(out, "Secret ID    = "+ci) {
		t.Fatalf("token self: %d %q", code, out)
	}
	if code, _, errOut := cli("acl", "token", "list"); code != 1 || !strings.Contains(errOut, "Permission denied") {
		t.Fatalf("client token lists tokens: %d %q", code, errOut)
	}
	if code, out, _ := cli("acl", "token", "update", "-token", root, "-name", "ci2", ciAccessor); code != 0 || !strings.Contains(out, "Name         = ci2") {
		t.Fatalf("token update: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "token", "delete", "-token", root, ciAccessor); code != 0 || strings.TrimSpace(out) != "Token "+ciAccessor+" successfully deleted" {
		t.Fatalf("token delete: %d %q", code, out)
	}
	if code, _, errOut := cli("acl", "token", "self"); code != 1 || !strings.Contains(errOut, "ACL token not found") {
		t.Fatalf("deleted token: %d %q", code, errOut)
	}
	if code, out, _ := cli("acl", "policy", "delete", "-token", root, "ro"); code != 0 || !strings.Contains(out, `Successfully deleted "ro" ACL policy!`) {
		t.Fatalf("policy delete: %d %q", code, out)
	}
}
