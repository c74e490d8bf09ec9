package httpapi

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of website/api/acl.md")

const aclDocPath = "../website/api/acl.md"

const (
	routesBegin = "<!-- BEGIN routes: generated from the route table by go test ./httpapi -update -->\n"
	routesEnd   = "<!-- END routes -->\n"
)

// routeTable renders what every route needs, by path then method.
func routeTable() string {
	type row struct{ path, methods, need string }
	byKey := map[string]*row{}
	var keys []string
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		key := path + " " + rt.need.String()
		if r, ok := byKey[key]; ok {
			r.methods += ", " + method
			continue
		}
		byKey[key] = &row{path, method, rt.need.String()}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("| route | needs |\n|---|---|\n")
	for _, k := range keys {
		r := byKey[k]
		fmt.Fprintf(&b, "| `%s %s` | %s |\n", r.methods, r.path, r.need)
	}
	return b.String()
}

// TestACLDocListsEveryRoute keeps the route table of website/api/acl.md
// in step with the routes' declarations.
func TestACLDocListsEveryRoute(t *testing.T) {
	doc, err := os.ReadFile(aclDocPath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(doc, []byte(routesBegin)), bytes.Index(doc, []byte(routesEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the generated-section markers", aclDocPath)
	}
	want := append(append(append([]byte{}, doc[:begin+len(routesBegin)]...), routeTable()...), doc[end:]...)
	if *update {
		if err := os.WriteFile(aclDocPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("%s is out of date with the route table (go test ./httpapi -update)", aclDocPath)
	}
}
