package jobspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/nomad/api"
)

func disconnectOf(t *testing.T, groupLines string) *structs.DisconnectStrategy {
	t.Helper()
	job, _, err := Parse("d.hcl", []byte(jobWith("", groupLines)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(job)
	back, _, err := ParseAPIJob(data)
	if err != nil || !reflect.DeepEqual(back.TaskGroups[0].Disconnect, job.TaskGroups[0].Disconnect) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, back.TaskGroups[0].Disconnect, job.TaskGroups[0].Disconnect)
	}
	return job.TaskGroups[0].Disconnect
}

func TestDisconnectBlock(t *testing.T) {
	hour, twelve := time.Hour, 12*time.Hour
	for _, c := range []struct {
		name, src string
		want      *structs.DisconnectStrategy
	}{
		{"none", "", nil},
		{"lost_after with Nomad's defaults", "    disconnect {\n      lost_after = \"1h\"\n    }",
			&structs.DisconnectStrategy{LostAfter: hour, Replace: true, Reconcile: structs.ReconcileBestScore}},
		{"every field", "    disconnect {\n      lost_after = \"1h\"\n      replace = false\n      reconcile = \"keep_original\"\n    }",
			&structs.DisconnectStrategy{LostAfter: hour, Replace: false, Reconcile: structs.ReconcileKeepOriginal}},
		{"stop_on_client_after", "    disconnect {\n      stop_on_client_after = \"12h\"\n      reconcile = \"longest_running\"\n    }",
			&structs.DisconnectStrategy{StopOnClientAfter: &twelve, Replace: true, Reconcile: structs.ReconcileLongestRunning}},
		{"max_client_disconnect", "    max_client_disconnect = \"1h\"",
			&structs.DisconnectStrategy{LostAfter: hour, Replace: true, Reconcile: structs.ReconcileBestScore}},
		{"stop_after_client_disconnect", "    stop_after_client_disconnect = \"12h\"",
			&structs.DisconnectStrategy{StopOnClientAfter: &twelve, Replace: true, Reconcile: structs.ReconcileBestScore}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := disconnectOf(t, c.src); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestDisconnectFromNomadClient: Nomad's Go client sends the block with
// its Canonicalize defaults, and the older fields as it names them.
func TestDisconnectFromNomadClient(t *testing.T) {
	job := nomadClientJob()
	lost := 30 * time.Minute
	job.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: &lost}
	job.Canonicalize()
	data, _ := json.Marshal(map[string]any{"Job": job})
	got, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	want := &structs.DisconnectStrategy{LostAfter: lost, Replace: true, Reconcile: structs.ReconcileBestScore}
	if d := got.TaskGroups[0].Disconnect; !reflect.DeepEqual(d, want) {
		t.Fatalf("got %+v", d)
	}

	job = nomadClientJob()
	job.TaskGroups[0].MaxClientDisconnect = &lost
	data, _ = json.Marshal(map[string]any{"Job": job})
	if got, _, err = ParseAPIJob(data); err != nil || !reflect.DeepEqual(got.TaskGroups[0].Disconnect, want) {
		t.Fatalf("MaxClientDisconnect: %v %+v", err, got)
	}
}

func TestDisconnectErrors(t *testing.T) {
	block := func(lines string) string { return "    disconnect {\n" + lines + "\n    }" }
	for _, c := range []rule{
		{"both times", jobWith("", block("      lost_after = \"1h\"\n      stop_on_client_after = \"1h\"")), "disconnect.stop_on_client_after", 6,
			"disconnect.stop_on_client_after cannot be set together with lost_after", false},
		{"legacy both", jobWith("", "    max_client_disconnect = \"1h\"\n    stop_after_client_disconnect = \"1h\""), "group.stop_after_client_disconnect", 5,
			"group.stop_after_client_disconnect cannot be set together with max_client_disconnect", false},
		{"bad reconcile", jobWith("", block("      lost_after = \"1h\"\n      reconcile = \"newest\"")), "disconnect.reconcile", 6,
			`disconnect.reconcile must be best_score, keep_original, keep_replacement or longest_running (got "newest")`, false},
		{"negative lost_after", jobWith("", block("      lost_after = \"-1s\"")), "disconnect.lost_after", 5, "disconnect.lost_after must not be negative (got -1s)", false},
		{"negative stop", jobWith("", "    stop_after_client_disconnect = \"-1s\""), "group.stop_after_client_disconnect", 4,
			"group.stop_after_client_disconnect must not be negative (got -1s)", false},
		{"block and older field", jobWith("", "    max_client_disconnect = \"1h\"\n"+block("      lost_after = \"1h\"")), "group.max_client_disconnect", 4,
			"group.max_client_disconnect cannot be set together with the disconnect block", false},
		{"system job", jobWith("  type = \"system\"", block("      lost_after = \"1h\"")), "disconnect", 4,
			"disconnect is not supported by drover for system jobs", false},
		{"replace not a bool", jobWith("", block("      replace = \"no\"")), "disconnect.replace", 5, "disconnect.replace must be bool", false},
		{"unknown field", jobWith("", block("      lost_afer = \"1h\"")), "disconnect.lost_afer", 5, `unknown attribute "lost_afer" in disconnect (did you mean lost_after?)`, false},
		{"prevent_reschedule_on_lost stays refused", jobWith("", "    prevent_reschedule_on_lost = true"), "group.prevent_reschedule_on_lost", 4,
			"group.prevent_reschedule_on_lost is not supported by drover", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
	const head = `{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}],`
	for src, want := range map[string]string{
		head + `"Disconnect":{"LostAfter":3600000000000,"Reconcile":"x"}}]}`: `Job.TaskGroups[0].Disconnect.Reconcile: must be best_score, keep_original, keep_replacement or longest_running (got "x")`,
		head + `"Disconnect":{"LostAfter":"1h"}}]}`:                          "Job.TaskGroups[0].Disconnect.LostAfter: must be a number (got a string)",
		head + `"Disconnect":{"LostAftr":1}}]}`:                              "Job.TaskGroups[0].Disconnect.LostAftr: not a field of a Nomad disconnect (did you mean LostAfter?)",
		head + `"MaxClientDisconnect":1,"Disconnect":{"LostAfter":1}}]}`:     "Job.TaskGroups[0].MaxClientDisconnect: cannot be set together with the disconnect block",
	} {
		if _, _, err := ParseAPIJob([]byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", src, err, want)
		}
	}
}
