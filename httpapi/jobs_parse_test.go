package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

const parseHCL = `variable "n" {
  type    = number
  default = 1
}
variable "tags" {
  type    = list(string)
  default = []
}
job "web" {
  group "g" {
    count = var.n
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = concat(["60"], var.tags)
      }
    }
  }
}
`

func TestJobsParse(t *testing.T) {
	_, srv := newTestAPI(t)
	req := func(hcl, vars string) string {
		b, _ := json.Marshal(JobsParseRequest{JobHCL: hcl, Variables: vars, Canonicalize: true})
		return string(b)
	}
	code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs/parse", req(parseHCL, ""))
	var job structs.Job
	decode(t, body, &job)
	if code != 200 || job.ID != "web" || job.TaskGroups[0].Count != 1 || job.Type != structs.JobTypeService ||
		job.TaskGroups[0].Update == nil {
		t.Fatalf("parse: %d %s", code, body)
	}
	code, body, _ = do(t, "POST", srv.URL+"/v1/jobs/parse", req(parseHCL, "n = 3\ntags = [\"x\", \"y\"]\n"))
	decode(t, body, &job)
	args, _ := job.TaskGroups[0].Tasks[0].Config["args"].([]any)
	if code != 200 || job.TaskGroups[0].Count != 3 || len(args) != 3 || args[2] != "y" {
		t.Fatalf("parse with variables: %d %s", code, body)
	}
	for _, c := range []struct{ body, text string }{
		{req(strings.Replace(parseHCL, `driver = "raw_exec"`, `driver = "raw_exec"`+"\n      bogus = 1", 1), ""), "input.hcl:14:7: unknown attribute \"bogus\""},
		{req(parseHCL, "n = \"many\""), `want number (got "many")`},
		{req(parseHCL, "n = = 3"), "variables.hcl:1:"},
		{req("", ""), "no JobHCL"},
		{`{"JobHCL": 3}`, "malformed request body"},
		// The agent reads no file of its own for a job file.
		{req(strings.Replace(parseHCL, `"/bin/sleep"`, `file("/etc/hostname")`, 1), ""), "input.hcl:15:19: Error in function call"},
		{req(strings.Replace(parseHCL, `"/bin/sleep"`, `join(",", fileset("/", "*"))`, 1), ""), "filesystem functions are disabled"},
	} {
		if code, out, _ := do(t, "PUT", srv.URL+"/v1/jobs/parse", c.body); code != 400 || !strings.Contains(out, c.text) {
			t.Fatalf("parse %s: %d %q, want 400 with %q", c.body, code, out, c.text)
		}
	}
}

// Parse is not validate, as Nomad's: a job without groups parses (with
// none), and its registration is what refuses it.
func TestJobsParseOfAJobWithoutGroups(t *testing.T) {
	_, srv := newTestAPI(t)
	b, _ := json.Marshal(JobsParseRequest{JobHCL: "job \"example\" {\n  name = \"the example\"\n}\n"})
	code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs/parse", string(b))
	var job structs.Job
	if err := json.Unmarshal([]byte(body), &job); code != 200 || err != nil || job.ID != "example" || job.Name != "the example" || len(job.TaskGroups) != 0 {
		t.Fatalf("parse: %d %s", code, body)
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/jobs", `{"Job":{"ID":"example"}}`)
	if code != 400 || !strings.Contains(body, "has no groups") {
		t.Fatalf("register: %d %s", code, body)
	}
}

// A registration's EvalPriority is its evaluation's priority (1 to 100,
// as Nomad's); without it the evaluation has the job's.
func TestRegisterEvalPriority(t *testing.T) {
	b, srv := newTestAPI(t)
	job := `{"ID":"web","Priority":40,"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"mock"}]}]}`
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"Job":` + job + `,"EvalPriority":99}`, 99},
		{`{"Job":` + job + `}`, 40},
	} {
		code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", c.body)
		var out JobRegisterResponse
		if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil {
			t.Fatalf("register: %d %s", code, body)
		}
		e, err := b.State().Snapshot().EvalByID(out.EvalID)
		if err != nil || e == nil || e.Priority != c.want {
			t.Errorf("%s: eval %+v %v, want priority %d", c.body, e, err, c.want)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", `{"Job":`+job+`,"EvalPriority":101}`); code != 400 || !strings.Contains(body, "eval priority must be between 1 and 100") {
		t.Fatalf("EvalPriority 101: %d %s", code, body)
	}
}

// Without Canonicalize the job is answered as written, as Nomad's: what
// the file leaves out is null (no namespace, no defaults); with it, the
// defaults are filled in.
func TestJobsParseAsWritten(t *testing.T) {
	_, srv := newTestAPI(t)
	for _, canon := range []bool{false, true} {
		b, _ := json.Marshal(JobsParseRequest{JobHCL: parseHCL, Canonicalize: canon})
		code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs/parse", string(b))
		var job map[string]any
		if err := json.Unmarshal([]byte(body), &job); code != 200 || err != nil || job["ID"] != "web" || job["Name"] != "web" {
			t.Fatalf("canonicalize %v: %d %s", canon, code, body)
		}
		groups, _ := job["TaskGroups"].([]any)
		if len(groups) != 1 {
			t.Fatalf("canonicalize %v: groups %s", canon, body)
		}
		if ns := job["Namespace"]; (ns == nil) == canon || (canon && ns != "default") {
			t.Errorf("canonicalize %v: Namespace %v", canon, ns)
		}
		if count := groups[0].(map[string]any)["Count"]; count != float64(1) {
			t.Errorf("canonicalize %v: Count %v (the variable's default)", canon, count)
		}
	}
}
