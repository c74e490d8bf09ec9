package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const badJob = `job "x" {
  update {
    max_parallel = -1
    max_paralel  = 2
  }
  group "g" {
    task "t" {
      config { command = "/bin/true" }
    }
  }
}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJobValidateExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.hcl")
	if len(files) < 7 {
		t.Fatalf("expected the example jobs, found %d", len(files))
	}
	for _, f := range files {
		code, out, errOut := runCLI(t, "", "job", "validate", f)
		if code != 0 || !strings.Contains(out, "Job validation successful") {
			t.Errorf("%s: code %d, stdout %q, stderr %q", f, code, out, errOut)
		}
	}
}

func TestJobValidateReportsEveryLocatedError(t *testing.T) {
	p := writeFile(t, "bad.hcl", badJob)
	code, out, errOut := runCLI(t, "", "job", "validate", p)
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout should be empty, got %q", out)
	}
	for _, want := range []string{
		p + ":3:5: update.max_parallel must not be negative",
		p + ":4:5:", "did you mean max_parallel?",
		"driver is required",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
		t.Errorf("stderr shows a Go stack:\n%s", errOut)
	}
}

func TestJobValidateStdinAndMissingFile(t *testing.T) {
	code, _, errOut := runCLI(t, badJob, "job", "validate", "-")
	if code != 1 || !strings.Contains(errOut, "<stdin>:3:5:") {
		t.Errorf("stdin: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "job", "validate", filepath.Join(t.TempDir(), "nope.hcl"))
	if code != 1 || !strings.Contains(errOut, "Error reading job file") {
		t.Errorf("missing file: code %d, stderr %q", code, errOut)
	}
	code, _, _ = runCLI(t, "", "job", "validate")
	if code == 0 {
		t.Error("validate without a file should fail")
	}
}

// inspected runs job inspect and decodes its output.
func inspected(t *testing.T, stdin string, args ...string) map[string]any {
	t.Helper()
	code, out, errOut := runCLI(t, stdin, append([]string{"job", "inspect"}, args...)...)
	if code != 0 {
		t.Fatalf("inspect %v: code %d, stderr %s", args, code, errOut)
	}
	var doc struct{ Job map[string]any }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("inspect output is not JSON: %v\n%s", err, out)
	}
	return doc.Job
}

func TestJobInspectShowsMergedUpdate(t *testing.T) {
	job := inspected(t, "", "../../examples/canary.hcl")
	tg := job["TaskGroups"].([]any)[0].(map[string]any)
	upd := tg["Update"].(map[string]any)
	if upd["Canary"].(float64) < 1 {
		t.Errorf("canary example group has Canary %v", upd["Canary"])
	}
	for _, f := range []string{"MaxParallel", "HealthCheck", "MinHealthyTime", "HealthyDeadline", "ProgressDeadline", "AutoRevert", "AutoPromote", "Stagger"} {
		if _, ok := upd[f]; !ok {
			t.Errorf("group Update lacks %s: %v", f, upd)
		}
	}
}

func TestJobInspectVarsAndStdin(t *testing.T) {
	src := `variable "v" { default = "1" }
job "j" {
  group "g" {
    task "t" {
      driver = "mock"
      env { V = var.v }
    }
  }
}
`
	env := func(job map[string]any) any {
		return job["TaskGroups"].([]any)[0].(map[string]any)["Tasks"].([]any)[0].(map[string]any)["Env"].(map[string]any)["V"]
	}
	if got := env(inspected(t, src, "-")); got != "1" {
		t.Errorf("default var: V = %v", got)
	}
	if got := env(inspected(t, src, "-var", "v=2", "-")); got != "2" {
		t.Errorf("-var v=2: V = %v", got)
	}
	vf := writeFile(t, "vars.hcl", "v = \"3\"\n")
	if got := env(inspected(t, src, "-var-file="+vf, "-")); got != "3" {
		t.Errorf("-var-file: V = %v", got)
	}
	// A service job with no update block still gets the defaults.
	upd := inspected(t, src, "-")["TaskGroups"].([]any)[0].(map[string]any)["Update"].(map[string]any)
	if upd["MaxParallel"].(float64) != 1 || upd["HealthCheck"] != "checks" || upd["MinHealthyTime"].(float64) != 10e9 {
		t.Errorf("defaults not applied: %v", upd)
	}
}

// TestJobFileFunctionsReadBesideTheFile: the CLI lets a job file read files
// with file() and fileset(), relative to the job file's directory whatever
// the working directory.
func TestJobFileFunctionsReadBesideTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "motd.txt"), []byte("hello from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := `job "files" {
  meta {
    motd  = chomp(file("motd.txt"))
    files = join(",", fileset(".", "*.txt"))
  }
  group "g" {
    task "t" {
      driver = "mock"
    }
  }
}
`
	p := filepath.Join(dir, "files.hcl")
	if err := os.WriteFile(p, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "job", "inspect", p)
	if code != 0 {
		t.Fatalf("job inspect: code %d, stderr %q", code, errOut)
	}
	var got struct {
		Job struct{ Meta map[string]string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("job inspect output: %v\n%s", err, out)
	}
	if got.Job.Meta["motd"] != "hello from a file" || got.Job.Meta["files"] != "motd.txt" {
		t.Errorf("meta = %v, want motd and files read beside the job file", got.Job.Meta)
	}
}
