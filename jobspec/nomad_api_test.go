package jobspec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

// Nomad's Go client is a test-only dependency: these tests hold drover's
// grammar table and spec types to Nomad's API types, which drover itself
// never imports.

// nomadBlockOf maps Nomad's API types to the grammar table.
var nomadBlockOf = map[reflect.Type]string{
	reflect.TypeFor[api.Job]():                    "job",
	reflect.TypeFor[api.TaskGroup]():              "group",
	reflect.TypeFor[api.Task]():                   "task",
	reflect.TypeFor[api.Template]():               "template",
	reflect.TypeFor[api.ChangeScript]():           "change_script",
	reflect.TypeFor[api.WaitConfig]():             "wait",
	reflect.TypeFor[api.Service]():                "service",
	reflect.TypeFor[api.ServiceCheck]():           "check",
	reflect.TypeFor[api.CheckRestart]():           "check_restart",
	reflect.TypeFor[api.DisconnectStrategy]():     "disconnect",
	reflect.TypeFor[api.NetworkResource]():        "network",
	reflect.TypeFor[api.Port]():                   "port",
	reflect.TypeFor[api.Resources]():              "resources",
	reflect.TypeFor[api.UpdateStrategy]():         "update",
	reflect.TypeFor[api.RestartPolicy]():          "restart",
	reflect.TypeFor[api.ReschedulePolicy]():       "reschedule",
	reflect.TypeFor[api.MigrateStrategy]():        "migrate",
	reflect.TypeFor[api.PeriodicConfig]():         "periodic",
	reflect.TypeFor[api.EphemeralDisk]():          "ephemeral_disk",
	reflect.TypeFor[api.LogConfig]():              "logs",
	reflect.TypeFor[api.Constraint]():             "constraint",
	reflect.TypeFor[api.Affinity]():               "affinity",
	reflect.TypeFor[api.Spread]():                 "spread",
	reflect.TypeFor[api.SpreadTarget]():           "target",
	reflect.TypeFor[api.ParameterizedJobConfig](): "parameterized",
	reflect.TypeFor[api.DispatchPayloadConfig]():  "dispatch_payload",
	reflect.TypeFor[api.TaskLifecycle]():          "lifecycle",
	reflect.TypeFor[api.TaskArtifact]():           "artifact",
	reflect.TypeFor[api.VolumeRequest]():          "volume",
	reflect.TypeFor[api.VolumeMount]():            "volume_mount",
	reflect.TypeFor[api.ScalingPolicy]():          "scaling",
}

// droverOnly names the elements drover adds to Nomad's grammar, as
// "block.JSONName" (website/rollouts.md part C: "update.MaxSurge", …). They have no
// field in Nomad's API types.
var droverOnly = map[string]bool{
	// API JSON alone: whether the job wrote stagger (a pause between batches).
	"update.StaggerSet": true,
	// The rollout policies (website/rollouts.md part C).
	"update.MaxParallelPercent": true,
	"update.MaxSurge":           true,
	"update.FirstBatch":         true,
	"update.UnhealthyFirst":     true,
	"update.MaxUnhealthy":       true,
	"update.MaxFailed":          true,
	"update.OnFailure":          true,
	"update.Checkpoints":        true,
	"update.CheckpointDelay":    true,
	"update.Zones":              true,
	// The analysis blocks (website/rollouts.md part E).
	"update.Analyses":           true,
	"update.GroupOrder":         true,
	"update.PauseBetweenGroups": true,
	// Server-set: the version a revert restored.
	"job.RevertOf": true,
}

// nomadType returns Nomad's API type of a block.
func nomadType(t *testing.T, block string) reflect.Type {
	t.Helper()
	for typ, b := range nomadBlockOf {
		if b == block {
			return typ
		}
	}
	t.Fatalf("no Nomad API type for block %s", block)
	return nil
}

// jsonFields lists a struct's fields by JSON name, in order.
func jsonFields(typ reflect.Type) ([]string, map[string]reflect.StructField) {
	var names []string
	byName := map[string]reflect.StructField{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if name := jsonName(f); name != "" && f.IsExported() {
			names = append(names, name)
			byName[name] = f
		}
	}
	return names, byName
}

// shape describes a type as encoding/json sees it, with block types named
// by their grammar block, so that a spec type and Nomad's can be compared.
func shape(typ reflect.Type, blocks map[reflect.Type]string) string {
	switch typ.Kind() {
	case reflect.Pointer:
		return "*" + shape(typ.Elem(), blocks)
	case reflect.Slice:
		return "[]" + shape(typ.Elem(), blocks)
	case reflect.Map:
		return "map[" + shape(typ.Key(), blocks) + "]" + shape(typ.Elem(), blocks)
	case reflect.Struct:
		if b, ok := blocks[typ]; ok {
			return "block " + b
		}
	}
	return typ.String()
}

// TestSpecBlocksAreNomads: the spec types and Nomad's API types cover the
// same blocks.
func TestSpecBlocksAreNomads(t *testing.T) {
	var spec, nomad []string
	for _, b := range blockOf {
		if !droverBlocks[b] {
			spec = append(spec, b)
		}
	}
	for _, b := range nomadBlockOf {
		nomad = append(nomad, b)
	}
	slices.Sort(spec)
	slices.Sort(nomad)
	if !slices.Equal(spec, nomad) {
		t.Errorf("spec blocks %v, Nomad's %v", spec, nomad)
	}
}

// TestGrammarIsNomadAPI: every JSON name of the grammar table is a field of
// Nomad's API type (or one of drover's own), so that API JSON accepts no
// name Nomad lacks.
func TestGrammarIsNomadAPI(t *testing.T) {
	for _, block := range nomadBlockOf {
		_, fields := jsonFields(nomadType(t, block))
		for _, e := range grammar[block] {
			if _, ok := fields[e.JSON]; e.JSON != "" && !ok && !droverOnly[block+"."+e.JSON] {
				t.Errorf("%s.%s is in the grammar table but not in Nomad's API", block, e.JSON)
			}
		}
	}
}

// TestSpecTypesMatchNomad: each spec type has a field for each supported
// element of its block and for nothing else, of the same JSON shape as
// Nomad's field, so that Nomad's JSON decodes alike into both.
func TestSpecTypesMatchNomad(t *testing.T) {
	for specType, block := range blockOf {
		_, specFields := jsonFields(specType)
		nomadFields := map[string]reflect.StructField{}
		if !droverBlocks[block] {
			_, nomadFields = jsonFields(nomadType(t, block))
		}
		want := map[string]bool{}
		for _, e := range grammar[block] {
			if e.JSON == "" || e.Support != supported {
				continue
			}
			want[e.JSON] = true
			sf, ok := specFields[e.JSON]
			if !ok {
				t.Errorf("%s: supported field %s is missing from %s", block, e.JSON, specType.Name())
				continue
			}
			nf, ok := nomadFields[e.JSON]
			if !ok {
				continue // drover's own; TestGrammarIsNomadAPI checks it is listed
			}
			if got, want := shape(sf.Type, blockOf), shape(nf.Type, nomadBlockOf); got != want {
				t.Errorf("%s.%s: %s has %s, Nomad's API %s", block, e.JSON, specType.Name(), got, want)
			}
		}
		for name := range specFields {
			if !want[name] {
				t.Errorf("%s: %s.%s is not a supported element of the grammar table", block, specType.Name(), name)
			}
		}
	}
}

// TestGrammarOrderIsNomads: a mistyped API JSON name gets the first
// closest suggestion in grammar order, which is the field order of Nomad's
// API types, save for one pair the unsupported-features page lists the
// other way round.
func TestGrammarOrderIsNomads(t *testing.T) {
	swapped := map[string][2]string{"task": {"Identity", "Identities"}}
	for _, block := range nomadBlockOf {
		nomad, _ := jsonFields(nomadType(t, block))
		if p, ok := swapped[block]; ok {
			i, j := slices.Index(nomad, p[0]), slices.Index(nomad, p[1])
			if i < 0 || j < 0 {
				t.Fatalf("%s: %v not in Nomad's API", block, p)
			}
			nomad[i], nomad[j] = nomad[j], nomad[i]
		}
		var own []string
		for _, name := range jsonNames(block) {
			if !droverOnly[block+"."+name] {
				own = append(own, name)
			}
		}
		if !slices.Equal(own, nomad) {
			t.Errorf("%s: grammar order\n%v\nNomad's\n%v", block, own, nomad)
		}
	}
}

// TestUpdateSpecRows: every field of specUpdate has one row in updateSpec,
// and each row decodes and lays exactly the field it names; the same of
// specZones and zoneSpec.
func TestUpdateSpecRows(t *testing.T) {
	t.Run("update", func(t *testing.T) { checkRows(t, updateSpec, "Job.Update", "update") })
	t.Run("zones", func(t *testing.T) { checkRows(t, zoneSpec, "Job.Update.Zones", "update.zones") })
	t.Run("analysis", func(t *testing.T) { checkRows(t, analysisSpec, "Job.Update.Analyses[0]", "update.analysis.errors") })
}

func checkRows[W, S any](t *testing.T, spec []specRow[W, S], path, name string) {
	specNames, _ := jsonFields(reflect.TypeFor[W]())
	var rows []string
	for _, f := range spec {
		rows = append(rows, f.JSON)
	}
	if !slices.Equal(rows, specNames) {
		t.Fatalf("rows %v, %s fields %v", rows, reflect.TypeFor[W]().Name(), specNames)
	}
	for _, f := range spec {
		if f.HCL == "" || f.Kind == block {
			// A field of the API form alone has no job-file attribute to
			// decode; the JSON tests cover it. A block (zones) has rows
			// of its own, checked on their own.
			continue
		}
		t.Run(f.HCL, func(t *testing.T) {
			field, ok := reflect.TypeFor[W]().FieldByName(f.JSON)
			if !ok || field.Type.Kind() != reflect.Pointer {
				t.Fatalf("%s.%s is not a pointer field", reflect.TypeFor[W]().Name(), f.JSON)
			}
			var src string
			var want any
			switch field.Type.Elem() {
			case reflect.TypeFor[time.Duration]():
				src, want = `"7s"`, 7*time.Second
			case reflect.TypeFor[int]():
				src, want = `7`, 7
			case reflect.TypeFor[string]():
				src, want = `"x"`, "x"
			case reflect.TypeFor[bool]():
				src, want = `true`, true
			case reflect.TypeFor[structs.Amount]():
				src, want = `"7%"`, structs.Amount{Value: 7, Percent: true}
			case reflect.TypeFor[[]structs.Amount]():
				src, want = `[7, "7%"]`, []structs.Amount{{Value: 7}, {Value: 7, Percent: true}}
			case reflect.TypeFor[[]string]():
				src, want = `["b", "a"]`, []string{"b", "a"}
			default:
				t.Fatalf("no sample for %s", field.Type.Elem())
			}

			// decode: a job file's attribute lands in the field of its name.
			file, diags := hclsyntax.ParseConfig([]byte(f.HCL+" = "+src+"\n"), "u.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			a := file.Body.(*hclsyntax.Body).Attributes[f.HCL]
			d := &decoder{file: "u.hcl", r: &report{}, lc: newLocator("u.hcl", false), ctx: &hcl.EvalContext{}}
			w := new(W)
			f.decode(d, a, path+"."+f.JSON, name+"."+f.HCL, w)
			if len(d.r.errs) > 0 {
				t.Fatalf("decode: %v", d.r.errs)
			}
			wv := reflect.ValueOf(w).Elem()
			for i := 0; i < wv.NumField(); i++ {
				name, p := wv.Type().Field(i).Name, wv.Field(i)
				switch {
				case name == f.JSON && (p.IsNil() || !reflect.DeepEqual(p.Elem().Interface(), want)):
					t.Errorf("decode set %s to %v, want %v", name, p, want)
				case name != f.JSON && !p.IsNil():
					t.Errorf("decode of %s also set %s", f.HCL, name)
				}
			}
			if !d.lc.has(path + "." + f.JSON) {
				t.Errorf("decode did not record where %s is written", f.HCL)
			}

			// lay: the written value replaces that field alone.
			got := new(S)
			f.lay(got, w)
			exp := new(S)
			out := reflect.ValueOf(exp).Elem().FieldByName(f.JSON)
			if out.Kind() == reflect.Pointer {
				// The strategy holds an unset policy as nil.
				out.Set(reflect.New(out.Type().Elem()))
				out = out.Elem()
			}
			out.Set(reflect.ValueOf(want))
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("lay: got %+v, want %+v", got, exp)
			}
			f.lay(got, new(W))
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("lay of an unwritten field changed the strategy: %+v", got)
			}
		})
	}
}

// TestUpdateGrammar: the update block's grammar entries are updateSpec's
// rows, and the zones block's zoneSpec's, so a new row is accepted in job
// files and API JSON alike.
func TestUpdateGrammar(t *testing.T) {
	for block, rows := range map[string][]element{"update": rowsGrammar(updateSpec), "zones": rowsGrammar(zoneSpec)} {
		var got []string
		for _, e := range grammar[block] {
			got = append(got, fmt.Sprintf("%s/%s/%d/%d", e.HCL, e.JSON, e.Kind, e.Support))
		}
		var want []string
		for _, e := range rows {
			want = append(want, fmt.Sprintf("%s/%s/%d/%d", e.HCL, e.JSON, e.Kind, e.Support))
		}
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: grammar %v, rows %v", block, got, want)
		}
	}
	if e, ok := lookupHCL("update", "zones"); !ok || e.Kind != block {
		t.Errorf("update.zones is not a block of the grammar: %+v", e)
	}
}

// TestUnsupportedZeroOfAnyKind: an unsupported or server-set field is
// judged by the grammar table alone. Zero or null passes whatever its JSON
// kind, as the unsupported-features page says: drover no longer decodes
// such fields into Nomad's types, whose decoder refused a zero of the
// wrong kind ("cannot be decoded").
func TestUnsupportedZeroOfAnyKind(t *testing.T) {
	const job = `{"ID":"x","AllAtOnce":0,"Status":5,` +
		`"TaskGroups":[{"Name":"a","PreventRescheduleOnLost":0,"Tasks":[{"Name":"t","Driver":"mock","Vault":""}]}]}`
	if _, warns, err := ParseAPIJob([]byte(job)); err != nil || len(warns) != 0 {
		t.Fatalf("got %v %v", err, warns)
	}
	_, _, err := ParseAPIJob([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","PreventRescheduleOnLost":true,"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "Job.TaskGroups[0].PreventRescheduleOnLost: not supported by drover") {
		t.Fatalf("a set unsupported field passed: %v", err)
	}
}
