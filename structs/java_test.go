package structs

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestJavaDocListsEveryKey keeps website/drivers/java.md true: every key
// the driver runs has a row in its config table.
func TestJavaDocListsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../website/drivers/java.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range javaKeys {
		if !strings.Contains(string(b), "| `"+k+"` |") {
			t.Errorf("java.md has no row for %s", k)
		}
	}
}

func TestParseJavaConfig(t *testing.T) {
	c, errs := ParseJavaConfig(map[string]any{
		"class": "Main", "class_path": "local/a.jar:local/b.jar", "jvm_options": []any{"-Xmx64m"},
		"args": []any{"x"}, "pid_mode": "host", "cap_add": []any{"CAP_NET_RAW"}, "work_dir": "/local",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := &JavaConfig{Class: "Main", ClassPath: "local/a.jar:local/b.jar", JvmOptions: []string{"-Xmx64m"},
		Args: []string{"x"}, PidMode: "host", CapAdd: []string{"net_raw"}, WorkDir: "/local"}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v, want %+v", c, want)
	}
	_, errs = ParseJavaConfig(map[string]any{"class": 1, "jar": "a.jar"})
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	// A class that is not a string is not also reported missing.
	if !reflect.DeepEqual(keys, []string{"class", "jar"}) {
		t.Fatalf("errors %v", errs)
	}
}
