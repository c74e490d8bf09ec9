package jobdiff

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// A changed analysis is one Analysis object, paired by name, with its
// changed fields; `job plan` shows it.
func TestJobsAnalysis(t *testing.T) {
	job := func(success string) *structs.Job {
		u := structs.DefaultUpdateStrategy()
		u.Analyses = []*structs.Analysis{{Name: "errors", Provider: "prometheus", Query: "up", Success: success, When: "each_batch", Count: 1}}
		return &structs.Job{ID: "j", Name: "j", Type: structs.JobTypeService,
			TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Update: u, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	out := Format(Jobs(job("result < 1"), job("result < 0.5"), false), true)
	if !strings.Contains(out, `Analysis {`) || !strings.Contains(out, `Success: "result < 1" => "result < 0.5"`) {
		t.Errorf("diff:\n%s", out)
	}
}
