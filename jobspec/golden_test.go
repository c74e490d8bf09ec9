package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// jobFiles lists the golden inputs: testdata/*.hcl and every example.
func jobFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"testdata/*.hcl", "../examples/*.hcl"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d job files", len(files))
	}
	return files
}

func goldenName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".hcl")
	if strings.HasPrefix(file, "../examples/") {
		base = "example-" + base
	}
	return filepath.Join("testdata", base+".golden")
}

// render is what a golden file holds: warnings, then the job as indented
// JSON, or the errors.
func render(job *structs.Job, warns []Diagnostic, err error) []byte {
	var b bytes.Buffer
	for _, w := range warns {
		b.WriteString("warning: " + w.String() + "\n")
	}
	if err != nil {
		b.WriteString("error:\n" + err.Error() + "\n")
		return b.Bytes()
	}
	out, _ := json.MarshalIndent(job, "", "  ")
	b.Write(out)
	b.WriteByte('\n')
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, file := range jobFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			job, warns, perr := Parse(filepath.Base(file), src, Options{})
			if perr != nil && !errors.Is(perr, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", perr)
			}
			got := render(job, warns, perr)
			golden := goldenName(file)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./jobspec -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the parse result (go test ./jobspec -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// TestExamplesValid: every example parses without errors.
func TestExamplesValid(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.hcl")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, vars := range [][]string{nil, {"version=2"}} {
			if _, _, err := Parse(file, src, Options{Vars: vars}); err != nil {
				t.Errorf("%s with %v: %v", file, vars, err)
			}
		}
	}
}

// TestExamplesNewVersion: -var version=2 changes every example's spec.
func TestExamplesNewVersion(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.hcl")
	for _, file := range files {
		src, _ := os.ReadFile(file)
		v1, _, err1 := Parse(file, src, Options{})
		v2, _, err2 := Parse(file, src, Options{Vars: []string{"version=2"}})
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", file, err1, err2)
		}
		if !v1.SpecChanged(v2) {
			t.Errorf("%s: -var version=2 does not change the job", file)
		}
	}
}

// TestRoundTrip: HCL → Job → JSON → ParseAPIJob gives the same job, bare
// and wrapped, and through Parse of a .json file.
func TestRoundTrip(t *testing.T) {
	for _, file := range jobFiles(t) {
		src, _ := os.ReadFile(file)
		job, _, err := Parse(file, src, Options{})
		if err != nil {
			continue
		}
		bare, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		wrapped, _ := json.Marshal(map[string]any{"Job": job})
		for name, data := range map[string][]byte{"bare": bare, "wrapped": wrapped} {
			back, _, err := ParseAPIJob(data)
			if err != nil {
				t.Errorf("%s %s: %v", file, name, err)
				continue
			}
			if !reflect.DeepEqual(job, back) {
				a, _ := json.Marshal(back)
				t.Errorf("%s %s: round trip differs:\n%s\n%s", file, name, bare, a)
			}
			fromFile, _, err := Parse("job.json", data, Options{})
			if err != nil || !reflect.DeepEqual(job, fromFile) {
				t.Errorf("%s %s as a .json job file: %v", file, name, err)
			}
		}
	}
}

func osWriteFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

// TestExamplesShape: each example opens with a comment header naming it,
// runs raw_exec tasks (mock.hcl the mock driver), and declares "version".
func TestExamplesShape(t *testing.T) {
	want := []string{"auto-revert", "batch", "blue-green", "canary", "checkpoints", "checks", "first-batch", "group-order", "mock", "rolling", "surge", "system", "sysbatch", "thresholds", "zones"}
	for _, name := range want {
		file := "../examples/" + name + ".hcl"
		src, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("missing example: %v", err)
			continue
		}
		if !strings.HasPrefix(string(src), "# "+name+".hcl — ") {
			t.Errorf("%s: no comment header", file)
		}
		if !strings.Contains(string(src), `variable "version"`) {
			t.Errorf("%s: no version variable", file)
		}
		job, _, err := Parse(file, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		driver := "raw_exec"
		if name == "mock" {
			driver = "mock"
		}
		for _, tg := range job.TaskGroups {
			for _, task := range tg.Tasks {
				if task.Driver != driver {
					t.Errorf("%s: task %s uses %s, want %s", file, task.Name, task.Driver, driver)
				}
			}
		}
	}
}
