package jobdiff

import (
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// line renders a diff's changes one per line, "path: Type old => new
// [annotations]", so that scenarios state exactly what they expect.
func lines(d *JobDiff) []string {
	var out []string
	add := func(path string, f *FieldDiff) {
		s := path + f.Name + ": " + f.Type + " " + f.Old + " => " + f.New
		if len(f.Annotations) > 0 {
			s += " [" + strings.Join(f.Annotations, ",") + "]"
		}
		out = append(out, s)
	}
	var objs func(path string, os []*ObjectDiff)
	objs = func(path string, os []*ObjectDiff) {
		for _, o := range os {
			p := path + o.Name + "(" + o.Type + ")/"
			for _, f := range o.Fields {
				add(p, f)
			}
			objs(p, o.Objects)
		}
	}
	out = append(out, "Job: "+d.Type)
	for _, f := range d.Fields {
		add("", f)
	}
	objs("", d.Objects)
	for _, g := range d.TaskGroups {
		p := "Group " + g.Name + "(" + g.Type + ")/"
		for _, f := range g.Fields {
			add(p, f)
		}
		objs(p, g.Objects)
		for _, t := range g.Tasks {
			tp := p + "Task " + t.Name + "(" + t.Type + ")"
			if len(t.Annotations) > 0 {
				tp += "[" + strings.Join(t.Annotations, ",") + "]"
			}
			tp += "/"
			out = append(out, tp)
			for _, f := range t.Fields {
				add(tp, f)
			}
			objs(tp, t.Objects)
		}
	}
	return out
}

func TestJobsScenarios(t *testing.T) {
	base := func() *structs.Job {
		j := statetest.Job("web", 2)
		j.TaskGroups[0].Tasks[0].Templates = []*structs.Template{{
			DestPath: "local/app.conf", EmbeddedTmpl: "v1", ChangeMode: "restart", Splay: 5 * time.Second,
			Perms: "0644", LeftDelim: "{{", RightDelim: "}}",
		}}
		return j
	}
	cases := []struct {
		name   string
		change func(j *structs.Job)
		want   []string
		// prefix: the diff starts with want (a deleted task lists
		// every field it had).
		prefix bool
	}{
		{"identical", func(*structs.Job) {}, []string{"Job: None"}, false},
		{"env value forces a destructive update", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Env["GREETING"] = "hi"
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Env[GREETING]: Edited hello => hi",
		}, false},
		{"task meta is in place", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[1].Meta["owner"] = "team-b"
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task sidecar(Edited)[forces in-place update]/",
			"Group web(Edited)/Task sidecar(Edited)[forces in-place update]/Meta[owner]: Edited team-a => team-b",
		}, false},
		{"a changed template, by destination", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl = "v2"
			j.TaskGroups[0].Tasks[0].Templates[0].ChangeMode = "noop"
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Edited)/ChangeMode: Edited restart => noop",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Edited)/EmbeddedTmpl: Edited v1 => v2",
		}, false},
		{"a template added", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Templates = append(j.TaskGroups[0].Tasks[0].Templates, &structs.Template{
				DestPath: "secrets/env", EmbeddedTmpl: "X=1", ChangeMode: "signal", ChangeSignal: "SIGHUP", Envvars: true,
				ChangeScript: nil, Wait: &structs.WaitConfig{Min: new(time.Second)},
			})
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Added)/ChangeMode: Added  => signal",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Added)/ChangeSignal: Added  => SIGHUP",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Added)/DestPath: Added  => secrets/env",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Added)/EmbeddedTmpl: Added  => X=1",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Template(Added)/Envvars: Added  => true",
		}, true},
		{"count up forces create", func(j *structs.Job) { j.TaskGroups[0].Count = 5 }, []string{
			"Job: Edited",
			"Group web(Edited)/Count: Edited 2 => 5 [forces create]",
		}, false},
		{"count down forces destroy", func(j *structs.Job) { j.TaskGroups[0].Count = 1 }, []string{
			"Job: Edited",
			"Group web(Edited)/Count: Edited 2 => 1 [forces destroy]",
		}, false},
		{"config list item", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Config["args"] = []any{"60"}
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Config(Edited)/args[0]: Edited 3600 => 60",
		}, false},
		{"task added and removed", func(j *structs.Job) {
			t := j.TaskGroups[0].Tasks[1].Copy()
			t.Name = "logger"
			t.Meta = nil
			t.Env = nil
			t.Services = nil
			t.Config = map[string]any{"command": "/bin/true"}
			t.Resources = nil
			t.KillTimeout = 0
			j.TaskGroups[0].Tasks = []*structs.Task{j.TaskGroups[0].Tasks[0], t}
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task logger(Added)[forces create]/",
			"Group web(Edited)/Task logger(Added)[forces create]/Driver: Added  => raw_exec",
			"Group web(Edited)/Task logger(Added)[forces create]/KillTimeout: Added  => 0",
			"Group web(Edited)/Task logger(Added)[forces create]/Leader: Added  => false",
			"Group web(Edited)/Task logger(Added)[forces create]/ShutdownDelay: Added  => 0",
			"Group web(Edited)/Task logger(Added)[forces create]/Config(Added)/command: Added  => /bin/true",
			"Group web(Edited)/Task sidecar(Deleted)[forces destroy]/",
			"Group web(Edited)/Task sidecar(Deleted)[forces destroy]/Driver: Deleted raw_exec => ",
		}, true},
		{"datacenters as a set", func(j *structs.Job) { j.Datacenters = []string{"dc1", "dc2"} }, []string{
			"Job: Edited",
			"Datacenters(Edited)/Datacenters: Added  => dc2",
		}, false},
		{"update block field", func(j *structs.Job) {
			j.TaskGroups[0].Update.MaxParallel = 3
			j.TaskGroups[0].Update.MinHealthyTime = 30 * time.Second
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Update(Edited)/MaxParallel: Edited 1 => 3",
			"Group web(Edited)/Update(Edited)/MinHealthyTime: Edited 10000000000 => 30000000000",
		}, false},
		{"a share writes as written", func(j *structs.Job) {
			j.TaskGroups[0].Update.MaxSurge = &structs.Amount{Value: 25, Percent: true}
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Update(Edited)/MaxSurge: Added  => 25%",
		}, false},
		{"a check inside a service, by name", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Services[0].Checks[0].Path = "/ready"
			j.TaskGroups[0].Tasks[0].Services[0].Tags = []string{"v2", "web"}
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Service(Edited)/Check(Edited)/Path: Edited /health => /ready",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Service(Edited)/Tags(Edited)/Tags: Deleted v1 => ",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Service(Edited)/Tags(Edited)/Tags: Added  => v2",
		}, false},
		{"a group-level network replaces every task", func(j *structs.Job) {
			j.TaskGroups[0].Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "http"}}}}
			j.TaskGroups[0].Tasks[0].Meta["owner"] = "team-b"
		}, []string{
			"Job: Edited",
			"Group web(Edited)/Network(Added)/Dynamic Port(Added)/Label: Added  => http",
			"Group web(Edited)/Network(Added)/Dynamic Port(Added)/To: Added  => 0",
			"Group web(Edited)/Network(Added)/Dynamic Port(Added)/Value: Added  => 0",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/",
			"Group web(Edited)/Task server(Edited)[forces create/destroy update]/Meta[owner]: Edited team-a => team-b",
		}, false},
		{"job meta and priority", func(j *structs.Job) {
			j.Priority = 70
			delete(j.Meta, "team")
		}, []string{
			"Job: Edited",
			"Meta[team]: Deleted a => ",
			"Priority: Edited 50 => 70",
		}, false},
		{"server-set fields are not changes", func(j *structs.Job) {
			j.Version, j.Stable, j.SubmitTime, j.ModifyIndex, j.Status = 7, true, 99, 12, "running"
		}, []string{"Job: None"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, cur := base(), base()
			c.change(cur)
			got := lines(Jobs(old, cur, false))
			if c.prefix && len(got) > len(c.want) {
				got = got[:len(c.want)]
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestJobsNewAndContextual(t *testing.T) {
	j := statetest.Job("web", 2)
	d := Jobs(nil, j, false)
	if d.Type != TypeAdded || d.ID != "web" || len(d.TaskGroups) != 1 || d.TaskGroups[0].Type != TypeAdded {
		t.Fatalf("new job: %+v", d)
	}
	for _, task := range d.TaskGroups[0].Tasks {
		if task.Type != TypeAdded || task.Annotations[0] != AnnotationForcesCreate {
			t.Fatalf("new task %+v", task)
		}
	}

	cur := statetest.Job("web", 3)
	d = Jobs(statetest.Job("web", 2), cur, true)
	g := d.TaskGroups[0]
	var count, untouched *FieldDiff
	for _, f := range g.Fields {
		switch f.Name {
		case "Count":
			count = f
		case "Meta[tier]":
			untouched = f
		}
	}
	if count == nil || count.Type != TypeEdited || untouched == nil || untouched.Type != TypeNone || untouched.New != "front" {
		t.Fatalf("contextual group fields %+v", g.Fields)
	}
	// Contextual lists unchanged tasks too, as None with no annotation.
	if len(g.Tasks) != 2 || g.Tasks[0].Type != TypeNone || len(g.Tasks[0].Annotations) != 0 {
		t.Fatalf("contextual tasks %+v", g.Tasks)
	}
}

func TestJobsDeletedGroup(t *testing.T) {
	old := statetest.Job("web", 2)
	cur := statetest.Job("web", 2)
	g := cur.TaskGroups[0].Copy()
	g.Name = "api"
	cur.TaskGroups = []*structs.TaskGroup{g}
	d := Jobs(old, cur, false)
	if d.Type != TypeEdited || len(d.TaskGroups) != 2 {
		t.Fatalf("groups %+v", d.TaskGroups)
	}
	if d.TaskGroups[0].Name != "api" || d.TaskGroups[0].Type != TypeAdded ||
		d.TaskGroups[1].Name != "web" || d.TaskGroups[1].Type != TypeDeleted {
		t.Fatalf("groups %s %s, %s %s", d.TaskGroups[0].Name, d.TaskGroups[0].Type, d.TaskGroups[1].Name, d.TaskGroups[1].Type)
	}
}

// A stored scaling policy's ID, target and indexes are not changes: a
// submitted job lacks them. Its bounds are.
func TestJobsScalingPolicy(t *testing.T) {
	old := statetest.Job("web", 2)
	old.TaskGroups[0].Scaling = &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Namespace: "default", Min: 1, Max: 4, Enabled: true,
		Target: map[string]string{"Namespace": "default", "Job": "web", "Group": old.TaskGroups[0].Name}, CreateIndex: 5, ModifyIndex: 5}
	cur := statetest.Job("web", 2)
	cur.TaskGroups[0].Scaling = &structs.ScalingPolicy{Type: "horizontal", Min: 1, Max: 4, Enabled: true}
	if d := Jobs(old, cur, false); d.Type != TypeNone {
		t.Fatalf("unchanged policy: %v", lines(d))
	}
	cur.TaskGroups[0].Scaling.Max = 6
	got := strings.Join(lines(Jobs(old, cur, false)), "\n")
	if !strings.Contains(got, "Scaling(Edited)/Max: Edited 4 => 6") || strings.Contains(got, "p1") {
		t.Fatalf("changed policy:\n%s", got)
	}
	if old.TaskGroups[0].Scaling.ID != "p1" {
		t.Fatal("the diff changed the stored job")
	}
}
