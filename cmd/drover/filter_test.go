package main

import (
	"strings"
	"testing"
)

// TestFilter: Nomad's -filter grammar over an item's JSON form.
func TestFilter(t *testing.T) {
	item := map[string]any{
		"Name": "web-12", "Status": "ready", "Drain": false, "Count": float64(3),
		"Tags":       []any{"a", "b"},
		"Meta":       map[string]any{"owner": "ops"},
		"Attributes": map[string]any{"os.name": "linux"},
		"Empty":      map[string]any{},
	}
	for expr, want := range map[string]bool{
		`Status == "ready"`:                           true,
		`Status == ready`:                             true,
		`Status != "ready"`:                           false,
		`Name contains "web"`:                         true,
		`Name not contains "db"`:                      true,
		`Name matches "^web-[0-9]+$"`:                 true,
		`Name not matches "^db"`:                      true,
		`"a" in Tags`:                                 true,
		`"z" not in Tags`:                             true,
		`Tags contains "b"`:                           true,
		`Meta.owner == "ops"`:                         true,
		`Meta contains "owner"`:                       true,
		`Attributes["os.name"] == "linux"`:            true,
		`Empty is empty`:                              true,
		`Meta is not empty`:                           true,
		`Missing is empty`:                            true,
		`Drain == false and Count == 3`:               true,
		`Drain == true or Count == 3`:                 true,
		`not (Drain == true or Name == "x")`:          true,
		`Status == "ready" and not Name contains "w"`: false,
	} {
		f, err := parseFilter(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got, _ := f.eval(item); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
	for _, bad := range []string{`Status >= 3`, `Status ==`, `(Status == "a"`, `Name matches "("`, `"a" Tags`} {
		if _, err := parseFilter(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}

// TestFilterFlag: -filter keeps the items of a list it selects; an
// expression drover does not understand is an error that says so.
func TestFilterFlag(t *testing.T) {
	_, addr, _ := newCLIServer(t)
	code, out, errOut := runCLI(t, "", "node", "pool", "list", "-filter", `Name == "all"`, "-address="+addr)
	if code != 0 || !strings.Contains(out, "all") || strings.Contains(out, "default") {
		t.Fatalf("filter: %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "node", "status", "-filter", `Status >= 3`, "-address="+addr)
	if code != 1 || !strings.Contains(errOut, "invalid -filter") {
		t.Fatalf("bad filter: %d %q", code, errOut)
	}
}
