package jobspec

import (
	"strings"
	"testing"
)

// A job's name defaults to its ID and may differ from it, and an ID may
// hold any character but a space and NUL, as Nomad's Job.Validate: tabs,
// newlines, "?", "&", ":", "/" and non-ASCII letters included.
func TestJobIDAndNameAsNomad(t *testing.T) {
	apiJob := func(id, name string) string {
		q := jsonString
		n := ""
		if name != "" {
			n = `"Name":` + q(name) + `,`
		}
		return `{"ID":` + q(id) + `,` + n + `"TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}`
	}
	for _, c := range []struct{ id, name, wantName string }{
		{"job1", "redis", "redis"},
		{"job1", "", "job1"},
		{"job-id/with\\troublesome:characters\n?&字", "", "job-id/with\\troublesome:characters\n?&字"},
		{"tab\there", "a name with spaces", "a name with spaces"},
	} {
		job, _, err := ParseAPIJob([]byte(apiJob(c.id, c.name)))
		if err != nil {
			t.Fatalf("%q/%q: %v", c.id, c.name, err)
		}
		if job.ID != c.id || job.Name != c.wantName {
			t.Errorf("%q/%q: ID %q, Name %q", c.id, c.name, job.ID, job.Name)
		}
	}
	for _, c := range []struct{ id, name, want string }{
		{"has space", "", "Job.ID: must not contain a space"},
		{"nul\x00", "", "Job.ID: must not contain a NUL character"},
		{"ok", "nul\x00", "Job.Name: must not contain a NUL character"},
	} {
		_, _, err := ParseAPIJob([]byte(apiJob(c.id, c.name)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q/%q: %v, want %q", c.id, c.name, err, c.want)
		}
	}

	// In HCL the label is the ID; name may differ.
	job, _, err := Parse("j.hcl", []byte(`job "web" {
  name = "the web"
  group "g" {
    task "t" {
      driver = "mock"
    }
  }
}
`), Options{})
	if err != nil || job.ID != "web" || job.Name != "the web" {
		t.Fatalf("HCL name: %+v %v", job, err)
	}
}
