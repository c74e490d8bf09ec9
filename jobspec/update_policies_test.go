package jobspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The rollout policies of the update block (website/rollouts.md part C): their
// validation (C.8), in job files and in API JSON, and how they resolve.

// policyRules are C.8's rules over job files. jobWith puts job-level lines
// from line 2 and, with no job-level lines, group lines from line 4.
func policyRules() []rule {
	jobUpd := func(lines ...string) string {
		return jobWith("  update {\n    "+strings.Join(lines, "\n    ")+"\n  }", "")
	}
	groupUpd := func(count int, lines ...string) string {
		return jobWith("", fmt.Sprintf("    count = %d\n    update {\n      %s\n    }", count, strings.Join(lines, "\n      ")))
	}
	return []rule{
		// Percent outside 0–100, or not "N%".
		{"max_parallel over 100%", jobUpd(`max_parallel = "101%"`), "update.max_parallel", 3, "update.max_parallel must be a percentage from 0% to 100% (got 101%)", false},
		{"max_parallel not N%", jobUpd(`max_parallel = "all"`), "update.max_parallel", 3, `update.max_parallel must be a whole number or a percentage "N%" (0-100) (got "all")`, false},
		{"max_surge over 100%", jobUpd(`max_surge = "150%"`), "update.max_surge", 3, "update.max_surge must be a percentage from 0% to 100% (got 150%)", false},
		{"first_batch negative percent", jobUpd(`first_batch = "-5%"`), "update.first_batch", 3, "update.first_batch must be a percentage from 0% to 100% (got -5%)", false},
		{"max_unhealthy not N%", jobUpd(`max_unhealthy = "10 percent"`), "update.max_unhealthy", 3, `update.max_unhealthy must be a whole number or a percentage "N%" (0-100) (got "10 percent")`, false},
		{"max_failed a fraction", jobUpd(`max_failed = 1.5`), "update.max_failed", 3, `update.max_failed must be a whole number or a percentage "N%" (got 1.5)`, false},
		{"max_failed a bool", jobUpd(`max_failed = true`), "update.max_failed", 3, `update.max_failed must be a whole number or a percentage "N%" (0-100) (got bool)`, false},
		{"checkpoint over 100%", groupUpd(4, `checkpoints = ["50%", "120%"]`), "update.checkpoints", 6, "update.checkpoints must be a percentage from 0% to 100% (got 120%)", false},
		{"checkpoint not N%", groupUpd(4, `checkpoints = ["half"]`), "update.checkpoints", 6, `update.checkpoints must be a whole number or a percentage "N%" (0-100) (got "half")`, false},
		{"checkpoints not a list", groupUpd(4, `checkpoints = "50%"`), "update.checkpoints", 6, `update.checkpoints must be a list of whole numbers or percentages "N%" (got string)`, false},

		// Negative counts.
		{"max_surge negative", jobUpd(`max_surge = -1`), "update.max_surge", 3, "update.max_surge must not be negative (got -1)", false},
		{"first_batch negative", groupUpd(4, `first_batch = -2`), "update.first_batch", 6, "update.first_batch must not be negative (got -2)", false},
		{"max_unhealthy negative", jobUpd(`max_unhealthy = -1`), "update.max_unhealthy", 3, "update.max_unhealthy must not be negative (got -1)", false},
		{"max_failed negative", groupUpd(4, `max_failed = -3`), "update.max_failed", 6, "update.max_failed must not be negative (got -3)", false},

		// first_batch with canary: each named where it is written.
		{"first_batch with canary", groupUpd(4, `canary = 1`, `first_batch = 1`), "update.first_batch", 7, "update.first_batch cannot be set together with canary (a canary is already a first batch)", false},
		{"first_batch in job, canary in group", jobWith("  update {\n    first_batch = \"10%\"\n  }", "    update {\n      canary = 1\n    }"), "update.first_batch", 3, "update.first_batch cannot be set together with canary", false},

		// on_failure.
		{"unknown on_failure", jobUpd(`on_failure = "retry"`), "update.on_failure", 3, `update.on_failure must be fail, pause or revert (got "retry")`, false},
		{"auto_revert with on_failure pause", jobUpd(`auto_revert = true`, `on_failure = "pause"`), "update.on_failure", 4, `update.on_failure must be revert or left unset when auto_revert = true (got "pause")`, false},
		{"auto_revert with on_failure fail", groupUpd(2, `auto_revert = true`, `on_failure = "fail"`), "update.on_failure", 7, `update.on_failure must be revert or left unset when auto_revert = true (got "fail")`, false},
		{"on_failure in job, auto_revert in group", jobWith("  update {\n    on_failure = \"pause\"\n  }", "    update {\n      auto_revert = true\n    }"), "update.on_failure", 3, `must be revert or left unset when auto_revert = true (got "pause")`, false},

		// Checkpoints.
		{"checkpoints not increasing", jobUpd(`checkpoints = ["50%", "25%"]`), "update.checkpoints", 3, "update.checkpoints must be strictly increasing (got 25% after 50%)", false},
		{"checkpoints repeated", groupUpd(10, `checkpoints = [2, 2]`), "update.checkpoints", 6, "update.checkpoints must be strictly increasing (got 2 after 2)", false},
		{"mixed checkpoints not increasing for the count", groupUpd(10, `checkpoints = [5, "40%"]`), "update.checkpoints", 6, `update.checkpoints must be strictly increasing for group "g" of count 10 (got 40% = 4 after 5)`, false},
		{"checkpoint over the count", groupUpd(4, `checkpoints = [2, 5]`), "update.checkpoints", 6, `update.checkpoints is more than the count of group "g" (5 > 4)`, false},
		{"checkpoint of zero allocs", groupUpd(4, `checkpoints = [0, 2]`), "update.checkpoints", 6, "update.checkpoints must be at least 1 (got 0)", false},
		{"checkpoint element on its own line", groupUpd(4, "checkpoints = [\n        \"75%\",\n        \"50%\",\n      ]"), "update.checkpoints", 8, "update.checkpoints must be strictly increasing (got 50% after 75%)", false},
		{"checkpoint_delay without checkpoints", jobUpd(`checkpoint_delay = "10m"`), "update.checkpoint_delay", 3, "update.checkpoint_delay needs checkpoints", false},
		{"checkpoint_delay with checkpoints cleared", jobWith("  update {\n    checkpoints = [\"50%\"]\n    checkpoint_delay = \"1m\"\n  }", "    update {\n      checkpoints = []\n    }"), "update.checkpoint_delay", 4, "update.checkpoint_delay needs checkpoints", false},
		{"checkpoint_delay negative", jobUpd(`checkpoints = ["50%"]`, `checkpoint_delay = "-1m"`), "update.checkpoint_delay", 4, "update.checkpoint_delay must not be negative (got -1m0s)", false},

		// Job types.
		{"policies on a batch job", jobWith("  type = \"batch\"\n  update {\n    max_surge = 1\n  }", ""), "update", 3, "update is not allowed for batch jobs", false},
		{"group policies on a batch job", jobWith("  type = \"batch\"", "    update {\n      checkpoints = [\"50%\"]\n    }"), "update", 4, "update is not allowed for batch jobs", false},
		{"zones on a system job", jobWith("  type = \"system\"\n  update {\n    zones {\n      attribute = \"${meta.zone}\"\n    }\n  }", ""), "update.zones", 4, "update.zones is not supported for system jobs by drover", false},
		{"max_surge on a system job", jobWith("  type = \"system\"\n  update {\n    max_surge = \"50%\"\n  }", ""), "update.max_surge", 4, "update.max_surge is not supported for system jobs: a system job runs one allocation per node", false},

		// Warnings.
		{"first_batch > max_parallel", jobUpd(`max_parallel = 2`, `first_batch = 3`), "update.first_batch", 4, "update.first_batch is greater than max_parallel (3 > 2): the first batch is capped at max_parallel", true},
		{"first_batch > max_parallel for the count", groupUpd(10, `max_parallel = "20%"`, `first_batch = "50%"`), "update.first_batch", 7, `update.first_batch is greater than max_parallel for group "g" of count 10 (50% is 5, max_parallel 2)`, true},
		{"unknown policy attribute", jobUpd(`max_surg = 1`), "update.max_surg", 3, `unknown attribute "max_surg" in update (did you mean max_surge?)`, false},
	}
}

func TestPolicyValidationRules(t *testing.T) {
	for _, c := range policyRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// TestSystemJobPolicies: a system group's shares are of its nodes, which
// the job does not say: no check compares its policies with its count,
// and a percent width shows as 1 until the scheduler resolves it.
func TestSystemJobPolicies(t *testing.T) {
	src := jobWith("  type = \"system\"\n  update {\n    max_parallel = \"50%\"\n    first_batch = \"50%\"\n    checkpoints = [5, \"10%\", 40]\n  }", "")
	j, warns, err := Parse("s.hcl", []byte(src), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if u := j.TaskGroups[0].Update; u.MaxParallel != 1 || *u.MaxParallelPercent != 50 {
		t.Errorf("got %+v", u)
	}
}

// TestPolicyErrorsAllAtOnce: every broken policy of a job is reported in
// one go, each at its own line.
func TestPolicyErrorsAllAtOnce(t *testing.T) {
	src := jobWith("  update {\n    max_surge = -1\n    on_failure = \"later\"\n    checkpoint_delay = \"1m\"\n  }",
		"    update {\n      canary = 1\n      first_batch = 1\n      checkpoints = [\"150%\"]\n    }")
	_, _, err := Parse("v.hcl", []byte(src), Options{})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, d := range errs.Diagnostics {
		got = append(got, fmt.Sprintf("%d %s", d.Line, d.Field))
	}
	want := "3 update.max_surge|4 update.on_failure|5 update.checkpoint_delay|10 update.first_batch|11 update.checkpoints"
	if strings.Join(got, "|") != want {
		t.Errorf("got %s\nwant %s\n%v", strings.Join(got, "|"), want, err)
	}
}

// apiJob is an API job in a .json file: the job-level update block on line
// 4, the group's on line 8. A block given as "" is left out.
func apiJob(jobType string, jobUpdate string, count int, groupUpdate string) string {
	opt := func(key, v string) string {
		if v == "" {
			return "\n"
		}
		return fmt.Sprintf("  %q: %s,\n", key, v)
	}
	return "{\"Job\": {\n" +
		"  \"ID\": \"j\",\n" +
		fmt.Sprintf("  \"Type\": %q,\n", jobType) +
		opt("Update", jobUpdate) +
		"  \"TaskGroups\": [{\n" +
		"    \"Name\": \"g\",\n" +
		fmt.Sprintf("    \"Count\": %d,\n", count) +
		"  " + opt("Update", groupUpdate) +
		"    \"Tasks\": [{\"Name\": \"t\", \"Driver\": \"mock\"}]\n" +
		"  }]\n" +
		"}}\n"
}

// policyJSONRules are C.8's rules over API JSON: the field is the JSON
// path, the line that of the value.
func policyJSONRules() []rule {
	const g = "Job.TaskGroups[0].Update."
	return []rule{
		{"MaxParallelPercent over 100", apiJob("service", "", 4, `{"MaxParallelPercent": 120}`), g + "MaxParallelPercent", 8, g + "MaxParallelPercent must be a percentage from 0% to 100% (got 120%)", false},
		{"MaxParallel as a percent string", apiJob("service", "", 4, `{"MaxParallel": "25%"}`), g + "MaxParallel", 8, g + "MaxParallel must be a number (got a string)", false},
		{"MaxSurge over 100%", apiJob("service", `{"MaxSurge": "101%"}`, 4, ""), "Job.Update.MaxSurge", 4, "Job.Update.MaxSurge must be a percentage from 0% to 100% (got 101%)", false},
		{"MaxSurge not N%", apiJob("service", "", 4, `{"MaxSurge": "1/4"}`), g + "MaxSurge", 8, g + `MaxSurge must be a whole number or a percentage "N%" (0-100) (got "1/4")`, false},
		{"FirstBatch a bool", apiJob("service", "", 4, `{"FirstBatch": true}`), g + "FirstBatch", 8, g + `FirstBatch must be a whole number or a percentage "N%" (0-100) (got a bool)`, false},
		{"MaxFailed a fraction", apiJob("service", "", 4, `{"MaxFailed": 0.5}`), g + "MaxFailed", 8, g + `MaxFailed must be a whole number or a percentage "N%" (0-100) (got 0.5)`, false},
		{"MaxSurge negative", apiJob("service", "", 4, `{"MaxSurge": -1}`), g + "MaxSurge", 8, g + "MaxSurge must not be negative (got -1)", false},
		{"FirstBatch negative", apiJob("service", "", 4, `{"FirstBatch": -1}`), g + "FirstBatch", 8, g + "FirstBatch must not be negative (got -1)", false},
		{"MaxUnhealthy negative", apiJob("service", `{"MaxUnhealthy": -1}`, 4, ""), "Job.Update.MaxUnhealthy", 4, "Job.Update.MaxUnhealthy must not be negative (got -1)", false},
		{"MaxFailed negative", apiJob("service", "", 4, `{"MaxFailed": -2}`), g + "MaxFailed", 8, g + "MaxFailed must not be negative (got -2)", false},
		{"FirstBatch with Canary", apiJob("service", `{"FirstBatch": 1}`, 4, `{"Canary": 1}`), "Job.Update.FirstBatch", 4, "Job.Update.FirstBatch cannot be set together with canary", false},
		{"unknown OnFailure", apiJob("service", "", 4, `{"OnFailure": "retry"}`), g + "OnFailure", 8, g + `OnFailure must be fail, pause or revert (got "retry")`, false},
		{"AutoRevert with OnFailure pause", apiJob("service", "", 4, `{"AutoRevert": true, "OnFailure": "pause"}`), g + "OnFailure", 8, g + `OnFailure must be revert or left unset when auto_revert = true (got "pause")`, false},
		{"Checkpoints not increasing", apiJob("service", "", 4, `{"Checkpoints": ["50%", "10%"]}`), g + "Checkpoints[1]", 8, g + "Checkpoints[1] must be strictly increasing (got 10% after 50%)", false},
		{"mixed Checkpoints not increasing", apiJob("service", `{"Checkpoints": [3, "20%"]}`, 10, ""), "Job.Update.Checkpoints[1]", 4, `Job.Update.Checkpoints[1] must be strictly increasing for group "g" of count 10 (got 20% = 2 after 3)`, false},
		{"Checkpoints over 100%", apiJob("service", "", 4, `{"Checkpoints": ["101%"]}`), g + "Checkpoints[0]", 8, g + "Checkpoints[0] must be a percentage from 0% to 100% (got 101%)", false},
		{"Checkpoint over the count", apiJob("service", "", 4, `{"Checkpoints": [1, 6]}`), g + "Checkpoints[1]", 8, g + `Checkpoints[1] is more than the count of group "g" (6 > 4)`, false},
		{"Checkpoints not a list", apiJob("service", "", 4, `{"Checkpoints": "50%"}`), g + "Checkpoints", 8, g + "Checkpoints must be an array (got a string)", false},
		{"CheckpointDelay without Checkpoints", apiJob("service", "", 4, `{"CheckpointDelay": 60000000000}`), g + "CheckpointDelay", 8, g + "CheckpointDelay needs checkpoints", false},
		{"CheckpointDelay negative", apiJob("service", "", 4, `{"Checkpoints": [1], "CheckpointDelay": -1}`), g + "CheckpointDelay", 8, g + "CheckpointDelay must not be negative (got -1ns)", false},
		{"policies on a batch job", apiJob("batch", "", 4, `{"MaxSurge": 1}`), "Job.TaskGroups[0].Update", 8, "Job.TaskGroups[0].Update is not allowed for batch jobs", false},
		{"MaxSurge on a system job", apiJob("system", `{"MaxSurge": 1}`, 1, ""), "Job.Update.MaxSurge", 4, "Job.Update.MaxSurge is not supported for system jobs: a system job runs one allocation per node", false},
		{"FirstBatch > MaxParallel", apiJob("service", "", 10, `{"MaxParallel": 2, "FirstBatch": 3}`), g + "FirstBatch", 8, g + "FirstBatch is greater than max_parallel (3 > 2)", true},
	}
}

func TestPolicyValidationRulesJSON(t *testing.T) {
	for _, c := range policyJSONRules() {
		t.Run(c.name, func(t *testing.T) {
			checkRule(t, "job.json", c)
			// Sent to the API, the same problem is named by its path.
			_, warns, err := ParseAPIJob([]byte(c.src))
			text := fmt.Sprint(warns)
			if !c.warn {
				text = fmt.Sprint(err)
			}
			want := c.field + ": " + strings.TrimPrefix(strings.TrimPrefix(c.msg, c.field+" "), "is ")
			if !strings.Contains(text, want) {
				t.Errorf("ParseAPIJob: no %q in\n%s", want, text)
			}
		})
	}
}

// TestMaxParallelPercent: "N%" resolves per group (floor, at least 1);
// written in API JSON as MaxParallelPercent, it wins over MaxParallel; a
// group's count overrides the job's percentage and the other way round.
func TestMaxParallelPercent(t *testing.T) {
	hcl := jobWith("  update {\n    max_parallel = \"25%\"\n  }", "    count = 10")
	j, _, err := Parse("p.hcl", []byte(hcl), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := j.TaskGroups[0].Update; u.MaxParallel != 2 || u.MaxParallelPercent == nil || *u.MaxParallelPercent != 25 {
		t.Errorf("group: %+v", u)
	}
	if u := j.Update; u.MaxParallel != 1 || *u.MaxParallelPercent != 25 {
		t.Errorf("job-level: MaxParallel %d, want 1 (no count)", u.MaxParallel)
	}

	cases := []struct {
		name       string
		job, group string
		count      int
		parallel   int
		percent    int // 0: none
	}{
		{"percent wins over MaxParallel", "", `{"MaxParallel": 7, "MaxParallelPercent": 25}`, 8, 2, 25},
		{"floor, at least 1", "", `{"MaxParallelPercent": 10}`, 5, 1, 10},
		{"group count over job percent", `{"MaxParallelPercent": 50}`, `{"MaxParallel": 3}`, 8, 3, 0},
		{"group percent over job count", `{"MaxParallel": 3}`, `{"MaxParallelPercent": 50}`, 8, 4, 50},
		{"Nomad's shape", `{"MaxParallel": 3}`, "", 8, 3, 0},
	}
	for _, c := range cases {
		j, _, err := ParseAPIJob([]byte(apiJob("service", c.job, c.count, c.group)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := j.TaskGroups[0].Update
		got := 0
		if u.MaxParallelPercent != nil {
			got = *u.MaxParallelPercent
		}
		if u.MaxParallel != c.parallel || got != c.percent {
			t.Errorf("%s: MaxParallel %d percent %d, want %d %d", c.name, u.MaxParallel, got, c.parallel, c.percent)
		}
	}
}

// TestOnFailureResolved: the merged strategy carries the failure action
// (inspect shows it), while validation judged what was written.
func TestOnFailureResolved(t *testing.T) {
	cases := []struct{ job, group, want string }{
		{"", "", structs.OnFailureFail},
		{"auto_revert = true", "", structs.OnFailureRevert},
		{"auto_revert = true", "auto_revert = false", structs.OnFailureFail},
		{"on_failure = \"pause\"", "", structs.OnFailurePause},
		{"auto_revert = true\n    on_failure = \"revert\"", "", structs.OnFailureRevert},
		{"on_failure = \"pause\"", "on_failure = \"fail\"", structs.OnFailureFail},
	}
	for _, c := range cases {
		src := jobWith("  update {\n    "+c.job+"\n  }", "    update {\n      "+c.group+"\n    }")
		j, _, err := Parse("f.hcl", []byte(src), Options{})
		if err != nil {
			t.Fatalf("%q %q: %v", c.job, c.group, err)
		}
		if got := j.TaskGroups[0].Update.OnFailure; got != c.want {
			t.Errorf("%q %q: OnFailure %q, want %q", c.job, c.group, got, c.want)
		}
	}
}

// TestPoliciesFromNomadClient: a job Nomad's Go client sends, which knows
// none of the policies, gets none; drover's own job JSON with every policy
// set parses back to the same strategy.
func TestPoliciesFromNomadClient(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"Job": nomadClientJob()})
	j, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	u := j.TaskGroups[0].Update
	if u.MaxSurge != nil || u.FirstBatch != nil || u.MaxUnhealthy != nil || u.MaxFailed != nil || u.Checkpoints != nil ||
		u.MaxParallelPercent != nil || u.UnhealthyFirst || u.CheckpointDelay != 0 || u.OnFailure != structs.OnFailureFail {
		t.Errorf("policies from nowhere: %+v", u)
	}

	src := apiJob("service", "", 10, `{"MaxParallelPercent": 30, "MaxSurge": "10%", "FirstBatch": 1, "UnhealthyFirst": true,
    "MaxUnhealthy": 2, "MaxFailed": "20%", "OnFailure": "pause", "Checkpoints": [2, "50%"], "CheckpointDelay": 60000000000}`)
	j, _, err = ParseAPIJob([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	u = j.TaskGroups[0].Update
	want := structs.UpdateStrategy{MaxParallel: 3, MaxSurge: structs.Percent(10), FirstBatch: structs.Count(1), UnhealthyFirst: true,
		MaxUnhealthy: structs.Count(2), MaxFailed: structs.Percent(20), OnFailure: structs.OnFailurePause,
		Checkpoints: []structs.Amount{{Value: 2}, {Value: 50, Percent: true}}, CheckpointDelay: time.Minute}
	if u.MaxParallel != want.MaxParallel || *u.MaxSurge != *want.MaxSurge || *u.FirstBatch != *want.FirstBatch ||
		u.UnhealthyFirst != want.UnhealthyFirst || *u.MaxUnhealthy != *want.MaxUnhealthy || *u.MaxFailed != *want.MaxFailed ||
		u.OnFailure != want.OnFailure || fmt.Sprint(u.Checkpoints) != fmt.Sprint(want.Checkpoints) || u.CheckpointDelay != want.CheckpointDelay {
		t.Errorf("got %+v", u)
	}
}

// TestRevertOfIgnored: the server-set RevertOf of a submitted job is
// dropped, as Version or Stable are.
func TestRevertOfIgnored(t *testing.T) {
	src := `{"ID":"x","RevertOf":3,"Version":4,"TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}`
	j, warns, err := ParseAPIJob([]byte(src))
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if j.RevertOf != nil {
		t.Errorf("RevertOf kept: %d", *j.RevertOf)
	}
}
