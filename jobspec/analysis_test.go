package jobspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The update block's analysis blocks (website/jobspec/analysis.md): their
// validation (website/jobspec/analysis.md) in job files and API JSON, the merge by
// name, the defaults, and the runtime references a query keeps.

const goodAnalysis = `query = "up"` + "\n      " + `success = "result == 1"`

// analysisJob is a job whose job-level update block holds one analysis
// "errors": the block on line 3, its lines from line 4.
func analysisJob(lines ...string) string {
	return jobWith("  update {\n    analysis \"errors\" {\n      "+strings.Join(lines, "\n      ")+"\n    }\n  }", "")
}

// groupAnalysis is the same in the group's update block: the block on line
// 5, its lines from line 6.
func groupAnalysis(lines ...string) string {
	return jobWith("", "    update {\n      analysis \"errors\" {\n        "+strings.Join(lines, "\n        ")+"\n      }\n    }")
}

func analysisRules() []rule {
	return []rule{
		{"no query", analysisJob(`success = "result < 1"`), "update.analysis.errors", 3, `analysis "errors" needs a query`, false},
		{"neither success nor failure", analysisJob(`query = "up"`), "update.analysis.errors", 3, `analysis "errors" needs success or failure`, false},
		{"success does not parse", analysisJob(`query = "up"`, `success = "result <"`), "update.analysis.errors.success", 5, "does not parse", false},
		{"failure names another variable", groupAnalysis(`query = "up"`, `failure = "errors > 1"`), "update.analysis.errors.failure", 7,
			`names "errors"; a condition may name only result and results`, false},
		{"unknown function", analysisJob(`query = "up"`, `success = "upper(result) == 1"`), "update.analysis.errors.success", 5, `calls unknown function "upper"`, false},
		{"unknown provider", analysisJob(goodAnalysis, `provider = "datadog"`), "update.analysis.errors.provider", 6, `must be prometheus (got "datadog")`, false},
		{"unknown when", analysisJob(goodAnalysis, `when = "always"`), "update.analysis.errors.when", 6, `must be canary, each_batch or background (got "always")`, false},
		{"interval under 1s", analysisJob(goodAnalysis, `interval = "500ms"`), "update.analysis.errors.interval", 6, "must be at least 1s (got 500ms)", false},
		{"count 0", groupAnalysis(goodAnalysis, `count = 0`), "update.analysis.errors.count", 8, "must be at least 1 (got 0)", false},
		{"negative failure_limit", analysisJob(goodAnalysis, `failure_limit = -1`), "update.analysis.errors.failure_limit", 6, "must not be negative (got -1)", false},
		{"negative inconclusive_limit", analysisJob(goodAnalysis, `inconclusive_limit = -1`), "update.analysis.errors.inconclusive_limit", 6, "must not be negative (got -1)", false},
		{"negative error_limit", analysisJob(goodAnalysis, `error_limit = -2`), "update.analysis.errors.error_limit", 6, "must not be negative (got -2)", false},
		{"negative initial_delay", analysisJob(goodAnalysis, `initial_delay = "-1s"`), "update.analysis.errors.initial_delay", 6, "must not be negative (got -1s)", false},
		{"canary without canary", analysisJob(goodAnalysis, `when = "canary"`), "update.analysis.errors.when", 6, `is "canary", which needs canary > 0`, false},
		{"address not a URL", analysisJob(goodAnalysis, `address = "127.0.0.1:9090"`), "update.analysis.errors.address", 6, `must be an http or https URL`, false},
		{"address of another scheme", analysisJob(goodAnalysis, `address = "ftp://x:9090"`), "update.analysis.errors.address", 6, `must be an http or https URL`, false},
		{"same name twice", jobWith("  update {\n    analysis \"a\" {\n      "+goodAnalysis+"\n    }\n    analysis \"a\" {\n      "+goodAnalysis+"\n    }\n  }", ""),
			"update.analysis.a", 7, `names analysis "a" twice in one update block (first at line 3)`, false},
		{"on a batch job", jobWith("  type = \"batch\"\n  update {\n    analysis \"a\" {\n      "+goodAnalysis+"\n    }\n  }", ""), "update", 3, "update is not allowed for batch jobs", false},
		{"on a sysbatch job", jobWith("  type = \"sysbatch\"", "    update {\n      analysis \"a\" {\n        "+goodAnalysis+"\n      }\n    }"), "update", 4, "update is not allowed for sysbatch jobs", false},
		{"no label", jobWith("  update {\n    analysis {\n      "+goodAnalysis+"\n    }\n  }", ""), "update.analysis", 3, "analysis block needs 1 label(s), got 0", false},
		{"unknown field", analysisJob(goodAnalysis, `querry = "x"`), "analysis.querry", 6, `unknown attribute "querry" in analysis (did you mean query?)`, false},
		{"unknown reference", analysisJob(`query = "x{a=\"${job.id}${foo}\"}"`, `success = "result < 1"`), "", 4, `Unknown variable`, false},
	}
}

func TestAnalysisValidationRules(t *testing.T) {
	for _, c := range analysisRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

func analysisJSONRules() []rule {
	const g = "Job.TaskGroups[0].Update.Analyses[0]."
	one := func(fields string) string {
		return `{"Analyses": [{"Name": "errors", "Query": "up", "Success": "result == 1", "Interval": 10000000000, "Count": 1` + fields + `}]}`
	}
	return []rule{
		{"no Query", apiJob("service", "", 4, `{"Analyses": [{"Name": "errors", "Success": "result < 1"}]}`), "Job.TaskGroups[0].Update.Analyses[0]", 8, `analysis "errors" needs a query`, false},
		{"no Name", apiJob("service", "", 4, `{"Analyses": [{"Query": "up", "Success": "result < 1"}]}`), g + "Name", 8, "must be set: each analysis has a name", false},
		{"neither Success nor Failure", apiJob("service", `{"Analyses": [{"Name": "e", "Query": "up"}]}`, 4, ""), "Job.Update.Analyses[0]", 4, `analysis "e" needs success or failure`, false},
		{"Success names another variable", apiJob("service", "", 4, one(`, "Failure": "x > 1"`)), g + "Failure", 8, `names "x"`, false},
		{"unknown When", apiJob("service", "", 4, one(`, "When": "later"`)), g + "When", 8, `must be canary, each_batch or background (got "later")`, false},
		{"Interval under 1s", apiJob("service", "", 4, one(`, "Interval": 1000`)), g + "Interval", 8, "must be at least 1s (got 1µs)", false},
		{"Interval a string", apiJob("service", "", 4, one(`, "Interval": "10s"`)), g + "Interval", 8, "must be a number (got a string)", false},
		{"Count 0", apiJob("service", "", 4, one(`, "Count": 0`)), g + "Count", 8, "must be at least 1 (got 0)", false},
		{"negative ErrorLimit", apiJob("service", "", 4, one(`, "ErrorLimit": -1`)), g + "ErrorLimit", 8, "must not be negative (got -1)", false},
		{"canary without Canary", apiJob("service", "", 4, one(`, "When": "canary"`)), g + "When", 8, `needs canary > 0`, false},
		{"Address not a URL", apiJob("service", "", 4, one(`, "Address": "prom:9090"`)), g + "Address", 8, "must be an http or https URL", false},
		{"unknown field", apiJob("service", "", 4, one(`, "Querry": "x"`)), g + "Querry", 8, "is not a field of drover's analysis block (did you mean Query?)", false},
		{"the same Name twice", apiJob("service", "", 4, `{"Analyses": [{"Name": "e", "Query": "up", "Success": "result < 1"}, {"Name": "e", "Query": "up", "Success": "result < 1"}]}`),
			"Job.TaskGroups[0].Update.Analyses[1].Name", 8, `names analysis "e" twice`, false},
		{"Analyses not a list", apiJob("service", "", 4, `{"Analyses": {"Name": "e"}}`), "Job.TaskGroups[0].Update.Analyses", 8, "must be an array (got an object)", false},
		{"on a batch job", apiJob("batch", "", 4, one("")), "Job.TaskGroups[0].Update", 8, "Job.TaskGroups[0].Update is not allowed for batch jobs", false},
	}
}

func TestAnalysisValidationRulesJSON(t *testing.T) {
	for _, c := range analysisJSONRules() {
		t.Run(c.name, func(t *testing.T) {
			checkRule(t, "job.json", c)
			_, _, err := ParseAPIJob([]byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Errorf("ParseAPIJob: %v, want an error naming %s", err, c.field)
			}
		})
	}
}

// TestAnalysisMerge: the job's analyses are merged into each group's by
// name, the group's fields winning field by field; a new name is added;
// every field has its default.
func TestAnalysisMerge(t *testing.T) {
	src := `job "j" {
  update {
    canary = 1
    analysis "errors" {
      address  = "http://prom:9090"
      query    = "sum(rate(http_errors_total{job=\"${job.name}\",version=\"${job.version}\"}[1m])) / $${literal}"
      success  = "result < 0.01"
      failure  = "result >= 0.05"
      interval = "5s"
      count    = 3
    }
    analysis "latency" {
      query   = "histogram_quantile(0.99, x{zone=\"${zone}\",g=\"${group.name}\",d=\"${deployment.id}\",s=\"${stable.version}\"})"
      success = "max(results...) < 0.5"
      when    = "background"
    }
  }
  group "g" {
    update {
      analysis "errors" {
        count         = 5
        failure_limit = 1
        when          = "canary"
      }
      analysis "own" {
        query   = "up"
        failure = "result == 0"
      }
    }
    task "t" {
      driver = "mock"
    }
  }
}
`
	j, warns, err := Parse("a.hcl", []byte(src), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	errorsQuery := `sum(rate(http_errors_total{job="${job.name}",version="${job.version}"}[1m])) / ${literal}`
	latency := &structs.Analysis{Name: "latency", Provider: "prometheus",
		Query:   `histogram_quantile(0.99, x{zone="${zone}",g="${group.name}",d="${deployment.id}",s="${stable.version}"})`,
		Success: "max(results...) < 0.5", When: "background", Interval: 10 * time.Second, Count: 1, ErrorLimit: 4}
	want := []*structs.Analysis{
		{Name: "errors", Provider: "prometheus", Address: "http://prom:9090", Query: errorsQuery, Success: "result < 0.01", Failure: "result >= 0.05",
			When: "canary", Interval: 5 * time.Second, Count: 5, FailureLimit: 1, ErrorLimit: 4},
		latency,
		{Name: "own", Provider: "prometheus", Query: "up", Failure: "result == 0", When: "each_batch", Interval: 10 * time.Second, Count: 1, ErrorLimit: 4},
	}
	if got := j.TaskGroups[0].Update.Analyses; !reflect.DeepEqual(got, want) {
		t.Errorf("group:\n%s\nwant\n%s", dumpAnalyses(got), dumpAnalyses(want))
	}
	wantJob := []*structs.Analysis{
		{Name: "errors", Provider: "prometheus", Address: "http://prom:9090", Query: errorsQuery, Success: "result < 0.01", Failure: "result >= 0.05",
			When: "each_batch", Interval: 5 * time.Second, Count: 3, ErrorLimit: 4},
		latency,
	}
	if got := j.Update.Analyses; !reflect.DeepEqual(got, wantJob) {
		t.Errorf("job:\n%s\nwant\n%s", dumpAnalyses(got), dumpAnalyses(wantJob))
	}

	// The job's JSON reads back the same (drover's own job JSON).
	data, _ := json.Marshal(j)
	back, warns, err := ParseAPIJob(data)
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if got := back.TaskGroups[0].Update.Analyses; !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n%s\nwant\n%s", dumpAnalyses(got), dumpAnalyses(want))
	}
}

// TestAnalysisMergeJSON: over API JSON a group's analysis of the job's name
// takes the job's fields it leaves out; [] clears the job's.
func TestAnalysisMergeJSON(t *testing.T) {
	job := `{"Analyses": [{"Name": "e", "Query": "up", "Success": "result == 1", "Interval": 2000000000}]}`
	j, warns, err := ParseAPIJob([]byte(apiJob("service", job, 4, `{"Analyses": [{"Name": "e", "Count": 2}]}`)))
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	want := []*structs.Analysis{{Name: "e", Provider: "prometheus", Query: "up", Success: "result == 1", When: "each_batch",
		Interval: 2 * time.Second, Count: 2, ErrorLimit: 4}}
	if got := j.TaskGroups[0].Update.Analyses; !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", dumpAnalyses(got), dumpAnalyses(want))
	}
	j, _, err = ParseAPIJob([]byte(apiJob("service", job, 4, `{"Analyses": []}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.TaskGroups[0].Update.Analyses; len(got) != 0 {
		t.Errorf("[] kept %s", dumpAnalyses(got))
	}
}

func dumpAnalyses(as []*structs.Analysis) string {
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, "  %+v\n", *a)
	}
	return b.String()
}
