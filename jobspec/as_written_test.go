package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// ParseAsWritten answers Nomad's API JSON shape: every example job file,
// as written, decodes into the official client's Job, with the label as
// ID and name and nothing filled in that the file does not write.
func TestParseAsWrittenDecodesIntoNomadsJob(t *testing.T) {
	files, err := filepath.Glob("../examples/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := ParseAsWritten(f, src, Options{ParseOnly: true})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var job api.Job
		if err := json.Unmarshal(raw, &job); err != nil {
			t.Errorf("%s: decoding into api.Job: %v\n%s", f, err, raw)
			continue
		}
		if job.ID == nil || job.Name == nil || *job.Name != *job.ID || len(job.TaskGroups) == 0 {
			t.Errorf("%s: %s", f, raw)
		}
	}
	raw, _, err := ParseAsWritten("j.hcl", []byte(`job "example" {}`), Options{ParseOnly: true})
	var job api.Job
	if err != nil || json.Unmarshal(raw, &job) != nil || *job.ID != "example" || *job.Name != "example" || job.Namespace != nil || job.Type != nil || job.Priority != nil {
		t.Fatalf("job without groups: %s %v", raw, err)
	}
}
