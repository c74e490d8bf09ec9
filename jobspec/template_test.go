package jobspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

// taskWith wraps task body lines into a job file; they start on line 6.
func taskWith(lines string) string {
	return fmt.Sprintf("job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n      config { command = \"/bin/true\" }\n%s\n    }\n  }\n}\n", lines)
}

func TestTemplateParse(t *testing.T) {
	src := taskWith(`      template {
        data = <<EOT
port={{ env "NOMAD_PORT_http" }}
{{ with nomadVar "nomad/jobs/j" }}pass={{ .pass }}{{ end }}
EOT
        destination = "local/app.env"
        env = true
        change_mode = "signal"
        change_signal = "sigusr1"
        splay = "1s"
        perms = "0600"
        uid = 1000
        gid = 1000
        error_on_missing_key = true
        wait {
          min = "1s"
          max = "4s"
        }
      }
      template {
        source = "local/in.tpl"
        destination = "${NOMAD_SECRETS_DIR}/out"
        left_delimiter = "[["
        right_delimiter = "]]"
        change_mode = "script"
        change_script {
          command = "/bin/reload"
          args = ["-q"]
          timeout = "3s"
          fail_on_error = true
        }
      }
      template {
        data = "x"
        destination = "alloc/shared.txt"
      }`)
	job, warns, err := Parse("t.hcl", []byte(src), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse: %v %v", err, warns)
	}
	ts := job.TaskGroups[0].Tasks[0].Templates
	if len(ts) != 3 {
		t.Fatalf("%d templates", len(ts))
	}
	d1, d4 := time.Second, 4*time.Second
	uid := 1000
	want0 := &structs.Template{
		DestPath: "local/app.env", EmbeddedTmpl: "port={{ env \"NOMAD_PORT_http\" }}\n{{ with nomadVar \"nomad/jobs/j\" }}pass={{ .pass }}{{ end }}\n",
		ChangeMode: "signal", ChangeSignal: "SIGUSR1", Splay: time.Second, Perms: "0600", Uid: &uid, Gid: &uid,
		LeftDelim: "{{", RightDelim: "}}", Envvars: true, ErrMissingKey: true, Wait: &structs.WaitConfig{Min: &d1, Max: &d4},
	}
	if !reflect.DeepEqual(ts[0], want0) {
		t.Errorf("template 0:\n got %+v\nwant %+v", ts[0], want0)
	}
	want1 := &structs.Template{
		SourcePath: "local/in.tpl", DestPath: "${NOMAD_SECRETS_DIR}/out", ChangeMode: "script",
		ChangeScript: &structs.ChangeScript{Command: "/bin/reload", Args: []string{"-q"}, Timeout: 3 * time.Second, FailOnError: true},
		Splay:        structs.DefaultTemplateSplay, Perms: "0644", LeftDelim: "[[", RightDelim: "]]",
	}
	if !reflect.DeepEqual(ts[1], want1) {
		t.Errorf("template 1:\n got %+v\nwant %+v", ts[1], want1)
	}
	if ts[2].ChangeMode != "restart" || ts[2].ChangeSignal != "" || ts[2].Perms != "0644" || ts[2].Splay != 5*time.Second {
		t.Errorf("defaults: %+v", ts[2])
	}

	// Copy is deep.
	c := job.TaskGroups[0].Tasks[0].Copy()
	*c.Templates[0].Wait.Min = time.Hour
	c.Templates[1].ChangeScript.Args[0] = "changed"
	*c.Templates[0].Uid = 0
	if *ts[0].Wait.Min != time.Second || ts[1].ChangeScript.Args[0] != "-q" || *ts[0].Uid != 1000 {
		t.Error("Task.Copy shares template fields")
	}
}

func TestTemplateRules(t *testing.T) {
	tmpl := func(body string) string {
		return taskWith("      template {\n" + body + "\n      }")
	}
	cases := []rule{
		{"no destination", tmpl(`        data = "x"`), "template", 6, "needs a destination", false},
		{"escaping destination", tmpl("        data = \"x\"\n        destination = \"../other/x\""), "template.destination", 8, `"../other/x" escapes the task directory`, false},
		{"escaping through a dir variable", tmpl("        data = \"x\"\n        destination = \"${NOMAD_TASK_DIR}/../../x\""), "template.destination", 8, "escapes the task directory", false},
		{"escaping source", tmpl("        source = \"../../etc/passwd\"\n        destination = \"local/x\""), "template.source", 7, "escapes the task directory", false},
		{"no data nor source", tmpl(`        destination = "local/x"`), "template", 6, "needs data (the template) or source", false},
		{"data and source", tmpl("        source = \"local/a\"\n        data = \"x\"\n        destination = \"local/x\""), "template.data", 8, "cannot be set together with source", false},
		{"unknown function", tmpl("        data = \"{{ nomadVars \\\"x\\\" }}\"\n        destination = \"local/x\""), "template.data", 7, `unknown template function: "nomadVars" (did you mean "nomadVar"?)`, false},
		{"consul function", tmpl("        data = <<EOT\n{{ key \"app/x\" }}\nEOT\n        destination = \"local/x\""), "template.data", 7, `function "key" reads Consul: not supported by drover`, false},
		{"vault function", tmpl("        data = \"{{ with secret \\\"kv/x\\\" }}{{ .Data }}{{ end }}\"\n        destination = \"local/x\""), "template.data", 7, `function "secret" reads Vault: not supported by drover`, false},
		{"syntax", tmpl("        data = \"{{ env \\\"x\\\" \"\n        destination = \"local/x\""), "template.data", 7, "template syntax error", false},
		{"bad change_mode", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"reload\""), "template.change_mode", 9, `must be restart, signal, noop or script (got "reload")`, false},
		{"signal without signal mode", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_signal = \"SIGHUP\""), "template.change_signal", 9, `a signal is sent only with change_mode = "signal"`, false},
		{"unknown signal", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"signal\"\n        change_signal = \"SIGNOPE\""), "template.change_signal", 10, `"SIGNOPE" is not a signal`, false},
		{"script block without script mode", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_script {\n          command = \"/bin/true\"\n        }"), "change_script", 9, `the script runs only with change_mode = "script"`, false},
		{"script mode without block", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"script\""), "template.change_mode", 9, "needs a change_script block", false},
		{"script without command", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        change_mode = \"script\"\n        change_script {\n          args = [\"x\"]\n        }"), "", 10, "change_script.command is required", false},
		{"bad perms", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        perms = \"rw\""), "template.perms", 9, `must be an octal file mode`, false},
		{"wait min above max", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        wait {\n          min = \"10s\"\n          max = \"1s\"\n        }"), "wait.max", 11, "must not be less than min", false},
		{"negative splay", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        splay = \"-1s\""), "template.splay", 9, "must not be negative", false},
		{"one delimiter", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        left_delimiter = \"[[\""), "template.left_delimiter", 9, "needs right_delimiter too", false},
		{"two templates one file", taskWith("      template {\n        data = \"x\"\n        destination = \"local/x\"\n      }\n      template {\n        data = \"y\"\n        destination = \"local/x\"\n      }"), "template.destination", 12, `"local/x" is the destination of another template (at line 8)`, false},
		{"unknown attribute", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        chnage_mode = \"noop\""), "template.chnage_mode", 9, "did you mean change_mode?", false},
		{"vault_grace ignored", tmpl("        data = \"x\"\n        destination = \"local/x\"\n        vault_grace = \"5s\""), "template.vault_grace", 9, "ignored (no Vault integration)", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// TestTemplateJSON: a job with templates as Nomad's Go client sends it
// (canonicalized, every default written out) is accepted, and drover's
// job survives a JSON round trip.
func TestTemplateJSON(t *testing.T) {
	job := nomadClientJob()
	task := job.TaskGroups[0].Tasks[0]
	task.Templates = []*api.Template{
		{EmbeddedTmpl: new(`{{ env "NOMAD_ALLOC_ID" }}`), DestPath: new("local/a"), ChangeMode: new("signal"), ChangeSignal: new("SIGHUP"), Envvars: new(true)},
		{EmbeddedTmpl: new("x"), DestPath: new("local/b"), ChangeMode: new("script"),
			ChangeScript: &api.ChangeScript{Command: new("/bin/true"), Timeout: new(2 * time.Second)}},
	}
	job.Canonicalize()
	data, _ := json.Marshal(map[string]any{"Job": job})
	got, warns, err := ParseAPIJob(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	for _, w := range warns {
		if !strings.Contains(w.Message, "ignored") {
			t.Errorf("warning %v", w)
		}
	}
	ts := got.TaskGroups[0].Tasks[0].Templates
	if len(ts) != 2 || ts[0].ChangeSignal != "SIGHUP" || !ts[0].Envvars || ts[1].ChangeScript.Timeout != 2*time.Second || ts[0].LeftDelim != "{{" {
		t.Fatalf("templates %+v %+v", ts[0], ts[1])
	}

	// Round trip: drover's job as JSON parses back to the same templates.
	back, err := json.Marshal(map[string]any{"Job": got})
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := ParseAPIJob(back)
	if err != nil {
		t.Fatalf("round trip: %v", err)
	}
	if !reflect.DeepEqual(again.TaskGroups[0].Tasks[0].Templates, ts) {
		t.Errorf("round trip changed templates:\n%+v\n%+v", again.TaskGroups[0].Tasks[0].Templates, ts)
	}

	// Empty strings are the defaults, as Nomad's API sends them.
	raw := `{"ID":"j","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"mock","Templates":[` +
		`{"DestPath":"local/x","EmbeddedTmpl":"x","ChangeMode":"","Perms":"","LeftDelim":"","RightDelim":""}]}]}]}`
	j, _, err := ParseAPIJob([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if tt := j.TaskGroups[0].Tasks[0].Templates[0]; tt.ChangeMode != "restart" || tt.Perms != "0644" || tt.LeftDelim != "{{" {
		t.Fatalf("defaults from empty strings: %+v", tt)
	}

	// A refused function in JSON is located by its path.
	task.Templates[0].EmbeddedTmpl = new(`{{ key "x" }}`)
	data, _ = json.Marshal(job)
	if _, _, err := ParseAPIJob(data); err == nil || !strings.Contains(err.Error(), `Job.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl: function "key" reads Consul: not supported by drover`) {
		t.Fatalf("refused function: %v", err)
	}
}
