package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/jobspec"
)

func TestJobInitWritesValidExamplesAndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	wantCLI(t, 0, []string{"Example job file written to example.nomad.hcl"}, "job", "init")
	wantCLI(t, 1, []string{`Job file "example.nomad.hcl" already exists`}, "job", "init")
	wantCLI(t, 0, []string{"Example job file written to short.hcl"}, "job", "init", "-short", "short.hcl")
	for name, comments := range map[string]bool{"example.nomad.hcl": true, "short.hcl": false} {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "#") != comments {
			t.Fatalf("%s: comments %v, want %v", name, !comments, comments)
		}
		job, _, err := jobspec.Parse(name, src, jobspec.Options{})
		if err != nil {
			t.Fatalf("%s does not validate: %v", name, err)
		}
		if job.ID != "example" || len(job.TaskGroups) != 1 || job.TaskGroups[0].Count != 2 {
			t.Fatalf("%s: %+v", name, job)
		}
	}
	// The examples are already in fmt's canonical form.
	wantCLI(t, 0, nil, "fmt", "-check", dir)
}

func TestFmtRewritesListsAndRefusesBadSyntax(t *testing.T) {
	dir := t.TempDir()
	messy := "job \"x\" {\ngroup \"g\" {\ncount=1\n  task \"t\" {\n driver=\"raw_exec\"\n}\n}\n}\n"
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "a.nomad.hcl"), filepath.Join(sub, "b.hcl"), filepath.Join(dir, "notes.txt")} {
		if err := os.WriteFile(p, []byte(messy), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// -check changes nothing and fails.
	wantCLI(t, 1, []string{filepath.Join(dir, "a.nomad.hcl")}, "fmt", "-check", dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.nomad.hcl")); string(b) != messy {
		t.Fatal("fmt -check wrote the file")
	}

	// Without -recursive only the top directory's HCL files.
	out := wantCLI(t, 0, []string{"a.nomad.hcl"}, "fmt", dir)
	if strings.Contains(out, "b.hcl") || strings.Contains(out, "notes.txt") {
		t.Fatalf("fmt went below the directory or into a non-HCL file:\n%s", out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.nomad.hcl"))
	want := "job \"x\" {\n  group \"g\" {\n    count = 1\n    task \"t\" {\n      driver = \"raw_exec\"\n    }\n  }\n}\n"
	if string(got) != want {
		t.Fatalf("formatted:\n%s\nwant:\n%s", got, want)
	}
	wantCLI(t, 0, []string{"b.hcl"}, "fmt", "-recursive", dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != messy {
		t.Fatal("fmt rewrote a file that is not HCL")
	}
	// Formatted files are not listed again.
	if out := wantCLI(t, 0, nil, "fmt", "-recursive", dir); strings.TrimSpace(out) != "" {
		t.Fatalf("second run listed %q", out)
	}

	// Bad syntax: the file and line, exit 1, the file untouched.
	bad := filepath.Join(dir, "bad.hcl")
	if err := os.WriteFile(bad, []byte("job \"x\" {\n  a = \n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 1, []string{bad + ":2:7: Invalid expression"}, "fmt", bad)
	if b, _ := os.ReadFile(bad); string(b) != "job \"x\" {\n  a = \n}\n" {
		t.Fatal("fmt changed a file with bad syntax")
	}
	wantCLI(t, 1, []string{"no such file"}, "fmt", filepath.Join(dir, "missing.hcl"))

	// Standard input to standard output.
	code, stdout, stderr := runCLI(t, messy, "fmt", "-")
	if code != 0 || stdout != want {
		t.Fatalf("fmt -: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, _ := runCLI(t, messy, "fmt", "-check", "-"); code != 1 {
		t.Fatalf("fmt -check - of an unformatted input: exit %d", code)
	}
}
