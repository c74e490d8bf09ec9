package jobspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The update block's zones block (website/rollouts.md#zones): its
// validation (C.8) in job files and API JSON, the merge of a group's
// zones block over the job's, and the node values an attribute may name.

const zoneAttr = `attribute = "${node.meta.zone}"`

// zonesJob is a job whose job-level update block holds a zones block: the
// zones block on line 3, its lines from line 4.
func zonesJob(lines ...string) string {
	return jobWith("  update {\n    zones {\n      "+strings.Join(lines, "\n      ")+"\n    }\n  }", "")
}

// groupZones is a job whose group of count 6 holds a zones block: the
// zones block on line 6, its lines from line 7.
func groupZones(lines ...string) string {
	return jobWith("", "    count = 6\n    update {\n      zones {\n        "+strings.Join(lines, "\n        ")+"\n      }\n    }")
}

// zoneRules are C.8's zone rules over job files.
func zoneRules() []rule {
	// The job-level zones block writes a pause (line 5); the group turns
	// the mode to concurrent (line 11).
	jobPauseGroupConcurrent := jobWith("  update {\n    zones {\n      "+zoneAttr+"\n      pause_between_zones = \"1m\"\n    }\n  }",
		"    update {\n      zones {\n        mode = \"concurrent\"\n      }\n    }")
	return []rule{
		// Unknown words.
		{"unknown mode", zonesJob(zoneAttr, `mode = "wave"`), "update.zones.mode", 5, `update.zones.mode must be zone_by_zone or concurrent (got "wave")`, false},
		{"unknown order word", zonesJob(zoneAttr, `order = "most_first"`), "update.zones.order", 5, `update.zones.order must be "fewest_first" or a list of zone names (got "most_first")`, false},
		{"order a number", zonesJob(zoneAttr, `order = 3`), "update.zones.order", 5, `update.zones.order must be "fewest_first" or a list of zone names (got number)`, false},
		{"order of lists", zonesJob(zoneAttr, `order = ["a", ["b"]]`), "update.zones.order", 5, `update.zones.order must list zone names as strings`, false},

		// zone_by_zone's fields with concurrent.
		{"pause with concurrent", zonesJob(zoneAttr, `mode = "concurrent"`, `pause_between_zones = "1m"`), "update.zones.pause_between_zones", 6,
			`update.zones.pause_between_zones applies to mode "zone_by_zone" only: with mode = "concurrent" (line 5) every zone rolls at once`, false},
		{"success_threshold with concurrent", groupZones(zoneAttr, `success_threshold = "50%"`, `mode = "concurrent"`), "update.zones.success_threshold", 8,
			`update.zones.success_threshold applies to mode "zone_by_zone" only: with mode = "concurrent" (line 9)`, false},
		{"pause in job, concurrent in group", jobPauseGroupConcurrent, "update.zones.pause_between_zones", 5,
			`update.zones.pause_between_zones applies to mode "zone_by_zone" only: with mode = "concurrent" (line 11)`, false},

		// Thresholds and budgets.
		{"success_threshold 0%", zonesJob(zoneAttr, `success_threshold = "0%"`), "update.zones.success_threshold", 5, "update.zones.success_threshold must be more than 0% (got 0%)", false},
		{"success_threshold 0", zonesJob(zoneAttr, `success_threshold = 0`), "update.zones.success_threshold", 5, "update.zones.success_threshold must be at least 1 (got 0)", false},
		{"success_threshold over 100%", groupZones(zoneAttr, `success_threshold = "101%"`), "update.zones.success_threshold", 8, "update.zones.success_threshold must be a percentage from 0% to 100% (got 101%)", false},
		{"success_threshold not N%", zonesJob(zoneAttr, `success_threshold = "most"`), "update.zones.success_threshold", 5, `update.zones.success_threshold must be a whole number or a percentage "N%" (0-100) (got "most")`, false},
		{"disruption_budget 0", zonesJob(zoneAttr, `disruption_budget = 0`), "update.zones.disruption_budget", 5, "update.zones.disruption_budget must be at least 1 (got 0)", false},
		{"disruption_budget 0%", groupZones(zoneAttr, `disruption_budget = "0%"`), "update.zones.disruption_budget", 8, "update.zones.disruption_budget must be more than 0% (got 0%)", false},
		{"disruption_budget negative", zonesJob(zoneAttr, `disruption_budget = -2`), "update.zones.disruption_budget", 5, "update.zones.disruption_budget must not be negative (got -2)", false},
		{"disruption_budget over 100%", zonesJob(zoneAttr, `disruption_budget = "150%"`), "update.zones.disruption_budget", 5, "update.zones.disruption_budget must be a percentage from 0% to 100% (got 150%)", false},
		{"disruption_budget negative percent", zonesJob(zoneAttr, `disruption_budget = "-5%"`), "update.zones.disruption_budget", 5, "update.zones.disruption_budget must be a percentage from 0% to 100% (got -5%)", false},
		{"disruption_budget a fraction", zonesJob(zoneAttr, `disruption_budget = 1.5`), "update.zones.disruption_budget", 5, `update.zones.disruption_budget must be a whole number or a percentage "N%" (got 1.5)`, false},

		// Pauses.
		{"pause negative", zonesJob(zoneAttr, `pause_between_zones = "-1s"`), "update.zones.pause_between_zones", 5, "update.zones.pause_between_zones must not be negative (got -1s)", false},
		{"pause not a duration", zonesJob(zoneAttr, `pause_between_zones = "1 minute"`), "update.zones.pause_between_zones", 5, `update.zones.pause_between_zones: invalid duration "1 minute"`, false},

		// The attribute.
		{"zones without attribute", zonesJob(`mode = "zone_by_zone"`), "update.zones.attribute", 3,
			"update.zones.attribute must be set to the node value that names each node's zone, such as ${node.meta.zone}", false},
		{"empty zones block in a group", jobWith("", "    update {\n      zones {}\n    }"), "update.zones.attribute", 5, "update.zones.attribute must be set to the node value", false},
		{"attribute empty", groupZones(`attribute = ""`), "update.zones.attribute", 7, "update.zones.attribute must be set to the node value", false},
		{"attribute a literal", zonesJob(`attribute = "rack-1"`), "update.zones.attribute", 4, `update.zones.attribute must name a node value such as ${node.meta.zone} (got "rack-1")`, false},
		{"attribute escaped", zonesJob(`attribute = "zone-$${x}"`), "update.zones.attribute", 4, `update.zones.attribute names ${x}, which is not a node value`, false},
		{"attribute of no node value", zonesJob(`attribute = "${node.zone}"`), "update.zones.attribute", 4,
			`update.zones.attribute names ${node.zone}, which is not a node value (use node.datacenter, node.class, node.pool, node.unique.name, node.unique.id, attr.<name>, meta.<name> or node.meta.<name>; got "${node.zone}")`, false},
		{"attribute of the region", zonesJob(`attribute = "${node.region}"`), "update.zones.attribute", 4, `update.zones.attribute names ${node.region}, which is not a node value`, false},
		{"attribute of a meta without a name", groupZones(`attribute = "${meta.zone}/$${meta.}"`), "update.zones.attribute", 7, `update.zones.attribute names ${meta.}, which is not a node value`, false},
		{"attribute of an environment variable", zonesJob(`attribute = "${NOMAD_DC}"`), "update.zones.attribute", 4, `update.zones.attribute names ${NOMAD_DC}, which is not a node value`, false},

		// The order list.
		{"order names a zone twice", zonesJob(zoneAttr, `order = ["a", "b", "a"]`), "update.zones.order", 5, `update.zones.order names zone "a" twice (first at line 5)`, false},
		{"order element on its own line", groupZones(zoneAttr, "order = [\n          \"a\",\n          \"a\",\n        ]"), "update.zones.order", 10, `update.zones.order names zone "a" twice (first at line 9)`, false},
		{"order names the zone of no attribute", zonesJob(zoneAttr, `order = ["a", ""]`), "update.zones.order", 5, `update.zones.order names the zone "", which holds the allocations on nodes without the attribute`, true},

		// The block itself.
		{"zones on a batch job", jobWith("  type = \"batch\"\n  update {\n    zones {\n      "+zoneAttr+"\n    }\n  }", ""), "update", 3, "update is not allowed for batch jobs", false},
		{"group zones on a batch job", jobWith("  type = \"batch\"", "    update {\n      zones {\n        "+zoneAttr+"\n      }\n    }"), "update", 4, "update is not allowed for batch jobs", false},
		{"unknown zones attribute", zonesJob(zoneAttr, `mod = "concurrent"`), "zones.mod", 5, `unknown attribute "mod" in zones (did you mean mode?)`, false},
		{"zones as an attribute", jobWith("  update {\n    zones = {}\n  }", ""), "update.zones", 3, "update.zones is a block, not an attribute: write zones { ... }", false},
		{"two zones blocks", jobWith("  update {\n    zones {\n      "+zoneAttr+"\n    }\n    zones {\n      "+zoneAttr+"\n    }\n  }", ""), "update.zones", 6, "duplicate zones block in update", false},
		{"zones with a label", jobWith("  update {\n    zones \"a\" {\n      "+zoneAttr+"\n    }\n  }", ""), "update.zones", 3, "zones block needs 0 label(s), got 1", false},
		{"zones misspelt", jobWith("  update {\n    zone {\n      "+zoneAttr+"\n    }\n  }", ""), "update.zone", 3, `unknown block "zone" in update (did you mean zones?)`, false},
	}
}

func TestZoneValidationRules(t *testing.T) {
	for _, c := range zoneRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// zoneJSONRules are the same rules over API JSON: the field is the JSON
// path, the line that of the value (apiJob: the job-level update block on
// line 4, the group's on line 8).
func zoneJSONRules() []rule {
	const g = "Job.TaskGroups[0].Update.Zones."
	zones := func(fields string) string { return `{"Zones": {"Attribute": "${node.meta.zone}"` + fields + `}}` }
	return []rule{
		{"unknown Mode", apiJob("service", "", 6, zones(`, "Mode": "wave"`)), g + "Mode", 8, g + `Mode must be zone_by_zone or concurrent (got "wave")`, false},
		{"Order not a list", apiJob("service", "", 6, zones(`, "Order": "fewest_first"`)), g + "Order", 8, g + "Order must be an array (got a string)", false},
		{"Order names a zone twice", apiJob("service", "", 6, zones(`, "Order": ["a", "a"]`)), g + "Order[1]", 8, g + `Order[1] names zone "a" twice`, false},
		{"PauseBetweenZones with concurrent", apiJob("service", "", 6, zones(`, "Mode": "concurrent", "PauseBetweenZones": 60000000000`)), g + "PauseBetweenZones", 8,
			g + `PauseBetweenZones applies to mode "zone_by_zone" only: with mode = "concurrent"`, false},
		{"SuccessThreshold with concurrent", apiJob("service", zones(`, "Mode": "concurrent", "SuccessThreshold": "50%"`), 6, ""), "Job.Update.Zones.SuccessThreshold", 4,
			`Job.Update.Zones.SuccessThreshold applies to mode "zone_by_zone" only`, false},
		{"SuccessThreshold 0%", apiJob("service", "", 6, zones(`, "SuccessThreshold": "0%"`)), g + "SuccessThreshold", 8, g + "SuccessThreshold must be more than 0% (got 0%)", false},
		{"SuccessThreshold over 100%", apiJob("service", "", 6, zones(`, "SuccessThreshold": "120%"`)), g + "SuccessThreshold", 8, g + "SuccessThreshold must be a percentage from 0% to 100% (got 120%)", false},
		{"DisruptionBudget 0", apiJob("service", "", 6, zones(`, "DisruptionBudget": 0`)), g + "DisruptionBudget", 8, g + "DisruptionBudget must be at least 1 (got 0)", false},
		{"DisruptionBudget 0%", apiJob("service", "", 6, zones(`, "DisruptionBudget": "0%"`)), g + "DisruptionBudget", 8, g + "DisruptionBudget must be more than 0% (got 0%)", false},
		{"DisruptionBudget a bool", apiJob("service", "", 6, zones(`, "DisruptionBudget": true`)), g + "DisruptionBudget", 8, g + `DisruptionBudget must be a whole number or a percentage "N%" (0-100) (got a bool)`, false},
		{"PauseBetweenZones negative", apiJob("service", "", 6, zones(`, "PauseBetweenZones": -1`)), g + "PauseBetweenZones", 8, g + "PauseBetweenZones must not be negative (got -1ns)", false},
		{"PauseBetweenZones a string", apiJob("service", "", 6, zones(`, "PauseBetweenZones": "1m"`)), g + "PauseBetweenZones", 8, g + "PauseBetweenZones must be a number (got a string)", false},
		{"Zones without Attribute", apiJob("service", "", 6, `{"Zones": {}}`), g + "Attribute", 8, g + "Attribute must be set to the node value", false},
		{"job-level Zones without Attribute", apiJob("service", `{"Zones": {"Mode": "concurrent"}}`, 6, ""), "Job.Update.Zones.Attribute", 4, "Job.Update.Zones.Attribute must be set to the node value", false},
		{"Attribute a literal", apiJob("service", "", 6, `{"Zones": {"Attribute": "a"}}`), g + "Attribute", 8, g + `Attribute must name a node value such as ${node.meta.zone} (got "a")`, false},
		{"Attribute of no node value", apiJob("service", "", 6, `{"Zones": {"Attribute": "${meta.zone}/${node.rack}"}}`), g + "Attribute", 8, g + "Attribute names ${node.rack}, which is not a node value", false},
		{"Attribute unterminated", apiJob("service", "", 6, `{"Zones": {"Attribute": "${meta.zone"}}`), g + "Attribute", 8, g + `Attribute has an unterminated ${ (got "${meta.zone")`, false},
		{"unknown Zones field", apiJob("service", "", 6, zones(`, "Modes": "concurrent"`)), g + "Modes", 8, g + "Modes is not a field of drover's zones block (did you mean Mode?)", false},
		{"Zones not an object", apiJob("service", "", 6, `{"Zones": "a"}`), "Job.TaskGroups[0].Update.Zones", 8, "Job.TaskGroups[0].Update.Zones must be an object (got a string)", false},
		{"Zones on a batch job", apiJob("batch", "", 6, zones("")), "Job.TaskGroups[0].Update", 8, "Job.TaskGroups[0].Update is not allowed for batch jobs", false},
	}
}

func TestZoneValidationRulesJSON(t *testing.T) {
	for _, c := range zoneJSONRules() {
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

// TestZoneErrorsAllAtOnce: every broken field of a zones block is
// reported in one go, each at its own line, along with the update block's
// other errors.
func TestZoneErrorsAllAtOnce(t *testing.T) {
	src := jobWith("  update {\n    max_surge = -1\n    zones {\n      mode = \"concurrent\"\n      order = [\"a\", \"a\"]\n      disruption_budget = \"0%\"\n"+
		"      success_threshold = \"0%\"\n      pause_between_zones = \"-1s\"\n    }\n  }", "")
	_, _, err := Parse("v.hcl", []byte(src), Options{})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, d := range errs.Diagnostics {
		got = append(got, fmt.Sprintf("%d %s", d.Line, d.Field))
	}
	want := "3 update.max_surge|4 update.zones.attribute|6 update.zones.order|7 update.zones.disruption_budget|" +
		"8 update.zones.success_threshold|8 update.zones.success_threshold|9 update.zones.pause_between_zones|9 update.zones.pause_between_zones"
	if strings.Join(got, "|") != want {
		t.Errorf("got %s\nwant %s\n%v", strings.Join(got, "|"), want, err)
	}
}

// TestZonesMerge: a group's zones block is laid field by field over the
// job's; mode defaults to zone_by_zone; "fewest_first" is an empty order,
// which clears the job's list; a group without a zones block takes the
// job's whole, and a job without one leaves the group's alone.
func TestZonesMerge(t *testing.T) {
	job := "  update {\n    zones {\n      " + zoneAttr + "\n      order = [\"b\", \"a\"]\n      disruption_budget = \"25%\"\n      pause_between_zones = \"1m\"\n    }\n  }"
	cases := []struct {
		name       string
		job, group string
		want       *structs.ZoneStrategy
	}{
		{"no zones", "", "", nil},
		{"job level only", job, "",
			&structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, Order: []string{"b", "a"}, DisruptionBudget: structs.Percent(25), PauseBetweenZones: time.Minute}},
		{"an empty group block", job, "    update {\n      zones {}\n    }",
			&structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, Order: []string{"b", "a"}, DisruptionBudget: structs.Percent(25), PauseBetweenZones: time.Minute}},
		{"a partial group block", job, "    update {\n      zones {\n        order = \"fewest_first\"\n        disruption_budget = 1\n        success_threshold = \"50%\"\n      }\n    }",
			&structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, Order: []string{}, DisruptionBudget: structs.Count(1), PauseBetweenZones: time.Minute, SuccessThreshold: structs.Percent(50)}},
		{"concurrent, the pause cleared", job, "    update {\n      zones {\n        mode = \"concurrent\"\n        pause_between_zones = \"0s\"\n        attribute = \"${node.datacenter}\"\n      }\n    }",
			&structs.ZoneStrategy{Attribute: "${node.datacenter}", Mode: structs.ZoneModeConcurrent, Order: []string{"b", "a"}, DisruptionBudget: structs.Percent(25)}},
		{"group level only", "", "    update {\n      zones {\n        attribute = \"${meta.zone}/${meta.fault_domain}\"\n        mode = \"zone_by_zone\"\n      }\n    }",
			&structs.ZoneStrategy{Attribute: "${meta.zone}/${meta.fault_domain}", Mode: structs.ZoneModeByZone}},
		{"other update fields in the group", job, "    update {\n      max_parallel = 1\n    }",
			&structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, Order: []string{"b", "a"}, DisruptionBudget: structs.Percent(25), PauseBetweenZones: time.Minute}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, warns, err := Parse("z.hcl", []byte(jobWith(c.job, c.group)), Options{})
			if err != nil || len(warns) != 0 {
				t.Fatalf("%v %v", err, warns)
			}
			if got := j.TaskGroups[0].Update.Zones; !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			// The job-level block is merged over the defaults alone.
			if c.job != "" && j.Update.Zones.Attribute != "${node.meta.zone}" {
				t.Errorf("job level: %+v", j.Update.Zones)
			}
		})
	}
}

// TestZonesMergeJSON: the same merge over API JSON, where a field left out
// or null inherits the job's and [] clears the job's order.
func TestZonesMergeJSON(t *testing.T) {
	job := `{"Zones": {"Attribute": "${node.meta.zone}", "Order": ["b"], "DisruptionBudget": 2, "PauseBetweenZones": 5000000000, "SuccessThreshold": "60%"}}`
	src := apiJob("service", job, 6, `{"Canary": 1, "Zones": {"Order": [], "DisruptionBudget": null, "Mode": "zone_by_zone", "PauseBetweenZones": 0}}`)
	j, warns, err := ParseAPIJob([]byte(src))
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	want := &structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, Order: []string{},
		DisruptionBudget: structs.Count(2), SuccessThreshold: structs.Percent(60)}
	if got := j.TaskGroups[0].Update.Zones; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if u := j.TaskGroups[0].Update; u.Canary != 1 {
		t.Errorf("canary lost: %+v", u)
	}
}

// TestZonesWithOtherPolicies: zones combine with every other policy of
// the update block, canaries included (C.8 names no conflict).
func TestZonesWithOtherPolicies(t *testing.T) {
	src := jobWith("  update {\n    max_parallel = \"50%\"\n    max_surge = 1\n    canary = 1\n    max_unhealthy = 1\n    max_failed = \"20%\"\n    on_failure = \"pause\"\n"+
		"    checkpoints = [\"50%\"]\n    checkpoint_delay = \"1m\"\n    unhealthy_first = true\n    zones {\n      "+zoneAttr+"\n      disruption_budget = 1\n"+
		"      success_threshold = \"50%\"\n      pause_between_zones = \"5s\"\n    }\n  }", "    count = 6")
	j, warns, err := Parse("z.hcl", []byte(src), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if u := j.TaskGroups[0].Update; u.Zones == nil || u.MaxParallel != 3 || u.Canary != 1 {
		t.Errorf("got %+v", u)
	}
	// A system job's rollout goes node by node: zones are refused there
	// rather than silently ignored.
	src = jobWith("  type = \"system\"\n  update {\n    zones {\n      attribute = \"${node.datacenter}\"\n    }\n  }", "")
	if _, _, err := Parse("s.hcl", []byte(src), Options{}); err == nil || !strings.Contains(err.Error(), "not supported for system jobs") {
		t.Errorf("system job with zones: %v", err)
	}
}

// TestZoneAttributeKept: the attribute's ${...} are Nomad's run-time
// interpolations, kept as written — several in one string, beside
// variables that are evaluated.
func TestZoneAttributeKept(t *testing.T) {
	cases := map[string]string{
		`"${node.meta.zone}"`:                            "${node.meta.zone}",
		`"${meta.zone}/${meta.fault_domain}"`:            "${meta.zone}/${meta.fault_domain}",
		`"${node.datacenter}-${attr.platform.aws.zone}"`: "${node.datacenter}-${attr.platform.aws.zone}",
		`"${var.prefix}${node.unique.name}"`:             "z-${node.unique.name}",
		`"${node.class}:${node.pool}:${node.unique.id}"`: "${node.class}:${node.pool}:${node.unique.id}",
		`"$${node.meta.zone}"`:                           "${node.meta.zone}",
		`node.meta.zone`:                                 "${node.meta.zone}",
	}
	for expr, want := range cases {
		src := "variable \"prefix\" {\n  default = \"z-\"\n}\n" + jobWith("  update {\n    zones {\n      attribute = "+expr+"\n    }\n  }", "")
		j, _, err := Parse("z.hcl", []byte(src), Options{})
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got := j.TaskGroups[0].Update.Zones.Attribute; got != want {
			t.Errorf("%s: got %q, want %q", expr, got, want)
		}
	}
}

// TestZoneKeysAreNodeValues: the node values an attribute may name are
// those structs.NodeValue reads, so that no attribute passes validation
// and then names every node's zone "".
func TestZoneKeysAreNodeValues(t *testing.T) {
	n := &structs.Node{ID: "id", Name: "n", Datacenter: "dc", NodeClass: "c", NodePool: "p",
		Attributes: map[string]string{"k": "v", "a.b": "v"}, Meta: map[string]string{"k": "v"}}
	for _, key := range []string{"node.datacenter", "node.class", "node.pool", "node.unique.name", "node.unique.id",
		"attr.k", "attr.a.b", "meta.k", "node.meta.k"} {
		if !zoneKnown(key) {
			t.Errorf("%s refused", key)
		}
		if _, ok := structs.NodeValue(n, key); !ok {
			t.Errorf("%s accepted, but structs.NodeValue does not read it", key)
		}
	}
	for _, key := range []string{"node.region", "node.zone", "node", "attr", "attr.", "meta.", "node.meta.", "node.meta",
		"unique.name", "env.X", "NOMAD_DC", "", "meta.a b"} {
		if zoneKnown(key) {
			t.Errorf("%q accepted", key)
		}
	}
	if got := structs.ZoneOf(n, "${node.datacenter}/${meta.k}"); got != "dc/v" {
		t.Errorf("ZoneOf: %q", got)
	}
}

// TestZonesRoundTripJSON: drover's own job JSON with zones parses back to
// the same job, and a job from Nomad's Go client, which knows no zones,
// gets none.
func TestZonesRoundTripJSON(t *testing.T) {
	src := jobWith("  update {\n    zones {\n      "+zoneAttr+"\n      order = [\"a\"]\n      success_threshold = 2\n    }\n  }",
		"    update {\n      zones {\n        order = \"fewest_first\"\n        disruption_budget = \"10%\"\n      }\n    }")
	j, _, err := Parse("z.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(j)
	back, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j, back) {
		t.Errorf("round trip differs:\n%+v\n%+v", j.TaskGroups[0].Update.Zones, back.TaskGroups[0].Update.Zones)
	}
	data, _ = json.Marshal(map[string]any{"Job": nomadClientJob()})
	nj, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if nj.Update.Zones != nil || nj.TaskGroups[0].Update.Zones != nil {
		t.Errorf("zones from nowhere: %+v", nj.TaskGroups[0].Update.Zones)
	}
	if out, _ := json.Marshal(nj.TaskGroups[0].Update); strings.Contains(string(out), "Zones") {
		t.Errorf("an update block without zones says Zones: %s", out)
	}
}
