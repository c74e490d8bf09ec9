package allocrunner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// jsonEncoded is what the state file held before encodeState: the
// Encoder's output.
func jsonEncoded(p *persisted) ([]byte, error) {
	var buf bytes.Buffer
	err := json.NewEncoder(&buf).Encode(p)
	return buf.Bytes(), err
}

// odd are strings encoding/json escapes, each its own way.
var odd = []string{"", "plain", `quo"te`, `back\slash`, "<b>&amp;</b>", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
	"\b\f", "é ünïcödé 日本", "line\u2028sep\u2029", "bad\xffutf8\xc3", "emoji 🚀"}

// fullState is a state file with every field set, strings from odd.
func fullState(s string) *persisted {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 123456789, time.UTC)
	ev := &structs.TaskEvent{Type: structs.TaskTerminated + s, Time: t0.UnixNano(), Message: "m" + s, DisplayMessage: s,
		ExitCode: -3, Signal: 9, KillTimeout: 5 * time.Second}
	x := ev.SetExtra()
	x.Details = map[string]string{"oom_killed": "false", s: s, "b" + s: ""}
	x.RestartReason, x.KillReason, x.TaskSignal, x.TaskSignalReason, x.DriverError, x.DownloadError = s+"1", s+"2", s+"3", s+"4", s+"5", s+"6"
	cfg := &drivers.TaskConfig{
		AllocID: "a" + s, TaskName: s, JobID: s + "j", JobName: s + "n", Namespace: s + "ns", TaskGroup: s + "g",
		NodeID: s + "nid", NodeName: s + "nn", TaskDir: "/d/" + s, AllocDir: "/a/" + s,
		Ports:       []structs.PortMapping{{Label: "http" + s, Value: 8080, To: 80}},
		NetworkMode: "bridge" + s, NetNSPath: "/ns/" + s, NetworkContainerID: "c" + s, User: s,
		Env:        map[string]string{"A": s, s + "K": "v", "Z": "", "NOMAD_ALLOC_DIR": "/x"},
		Config:     map[string]any{"command": s, "args": []any{s, 1.5}, "nested": map[string]any{"k": true}},
		Resources:  &structs.AllocatedTaskResources{Cpu: structs.AllocatedCpuResources{CpuShares: 250}, Memory: structs.AllocatedMemoryResources{MemoryMB: 10, MemoryMaxMB: -1}},
		StdoutPath: "/l/" + s + ".stdout", StderrPath: "/l/" + s + ".stderr",
		LogConfig:   structs.LogConfig{MaxFiles: 3, MaxFileSizeMB: 7, Disabled: true},
		KillTimeout: time.Minute, KillSignal: "SIG" + s,
		Mounts: []drivers.MountConfig{{TaskPath: "/t" + s, HostPath: "/h" + s, Readonly: true}},
	}
	h := &drivers.TaskHandle{Version: 2, Driver: "mock" + s, Config: cfg, StartedAt: t0.Add(time.Second),
		DriverState: json.RawMessage(`{"Pid":42,"Name":"x"}`)}
	st := &structs.TaskState{State: structs.TaskStateRunning + s, Failed: true, Restarts: 4, LastRestart: t0,
		StartedAt: t0.Add(2 * time.Second), FinishedAt: t0.Add(3 * time.Second),
		Events: []*structs.TaskEvent{ev, {Type: "Received"}, nil}}
	return &persisted{Version: stateVersion, RunStartedAt: t0.In(time.FixedZone("x", 3600)), Tasks: map[string]*persistedTask{
		s + "web": {State: st, Handle: h},
		"side":    {State: &structs.TaskState{State: structs.TaskStateDead, Events: []*structs.TaskEvent{}}},
		"nil":     nil,
		"empty":   {},
	}}
}

// The state file is byte for byte what encoding/json writes, for every
// field, every kind of string and the edge cases of each type.
func TestEncodeStateAsEncodingJSON(t *testing.T) {
	cases := map[string]*persisted{
		"running mock":   runningState(t),
		"empty":          {Version: stateVersion},
		"no tasks":       {Version: stateVersion, Tasks: map[string]*persistedTask{}},
		"nil env, cfg":   {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{Config: &drivers.TaskConfig{Config: map[string]any{}}}}}},
		"nil config":     {Tasks: map[string]*persistedTask{"t": {State: &structs.TaskState{}, Handle: &drivers.TaskHandle{}}}},
		"raw with space": {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{DriverState: json.RawMessage("{ \"a\" : [1, 2] }\n")}}}},
		"raw with html":  {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{DriverState: json.RawMessage(`{"a":"<&>"}`)}}}},
		"raw unicode":    {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{DriverState: json.RawMessage("{\"a\":\"\u2028é\"}")}}}},
	}
	for i, s := range odd {
		cases[fmt.Sprintf("full %d %q", i, s)] = fullState(s)
	}
	for name, p := range cases {
		want, err := jsonEncoded(p)
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		got, err := encodeState([]byte("prefix"), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got[len("prefix"):], want)
		}
	}
}

// What encoding/json refuses, encodeState refuses with its error.
func TestEncodeStateRefusesAsEncodingJSON(t *testing.T) {
	for name, p := range map[string]*persisted{
		"year 10000":    {Tasks: map[string]*persistedTask{"t": {State: &structs.TaskState{StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}},
		"bad raw":       {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{DriverState: json.RawMessage(`{"a":`)}}}},
		"empty raw":     {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{DriverState: json.RawMessage{}}}}},
		"unencodable":   {Tasks: map[string]*persistedTask{"t": {Handle: &drivers.TaskHandle{Config: &drivers.TaskConfig{Config: map[string]any{"f": func() {}}}}}}},
		"run start far": {RunStartedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, want := jsonEncoded(p)
		_, got := encodeState(nil, p)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: error %v, encoding/json's %v", name, got, want)
		}
	}
}

// A state file saved by encodeState reads back as the state saved, and a
// file encoding/json wrote (an earlier build's) reads as before.
func TestSaveStateReadsBack(t *testing.T) {
	p := fullState("x")
	delete(p.Tasks, "nil")
	path := t.TempDir() + "/state.json"
	if err := saveState(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(p)
	back, _ := json.Marshal(got)
	if !bytes.Equal(want, back) {
		t.Errorf("read back\n%s\nsaved\n%s", back, want)
	}
}

// encodeState writes each field of these types by hand: a field added to
// one of them must be added there (statejson.go), and then here.
func TestEncodeStateKnowsEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[persisted]():                        "Version Tasks RunStartedAt:,omitzero",
		reflect.TypeFor[persistedTask]():                    "State Handle:,omitempty",
		reflect.TypeFor[structs.TaskState]():                "State Failed Restarts LastRestart StartedAt FinishedAt Events",
		reflect.TypeFor[structs.TaskEvent]():                "Type Time Message DisplayMessage ExitCode Signal KillTimeout TaskEventExtra",
		reflect.TypeFor[structs.TaskEventExtra]():           "Details:,omitempty RestartReason:,omitempty KillReason:,omitempty TaskSignal:,omitempty TaskSignalReason:,omitempty DriverError:,omitempty DownloadError:,omitempty",
		reflect.TypeFor[drivers.TaskHandle]():               "Version Driver Config StartedAt DriverState",
		reflect.TypeFor[structs.LogConfig]():                "MaxFiles MaxFileSizeMB Disabled",
		reflect.TypeFor[structs.AllocatedTaskResources]():   "Cpu Memory",
		reflect.TypeFor[structs.AllocatedCpuResources]():    "CpuShares",
		reflect.TypeFor[structs.AllocatedMemoryResources](): "MemoryMB MemoryMaxMB",
		reflect.TypeFor[drivers.TaskConfig](): "AllocID TaskName JobID:,omitempty JobName:,omitempty Namespace:,omitempty TaskGroup:,omitempty " +
			"NodeID:,omitempty NodeName:,omitempty TaskDir AllocDir:,omitempty Ports:,omitempty NetworkMode:,omitempty " +
			"NetNSPath:,omitempty NetworkContainerID:,omitempty User:,omitempty Env Config Resources:,omitempty " +
			"StdoutPath StderrPath LogConfig KillTimeout KillSignal Mounts:,omitempty",
	} {
		var got []string
		for f := range typ.Fields() {
			s := f.Name
			if tag := f.Tag.Get("json"); tag != "" {
				s += ":" + tag
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%v's fields are now\n%s\nnot\n%s\nas encodeState (statejson.go) writes them: update it", typ, strings.Join(got, " "), want)
		}
	}
}

// A client that dies without a word (no Detach, no Kill) leaves the
// state file as its last write left it: when the task started (its
// handle) and when it died. A new client on the same data dir (a new
// driver: the old one's memory is gone) re-attaches to the running task
// without starting it again, with the events of that write; once the
// task has died, the next one finds it dead and does not run it again.
func TestCrashedClientRestoresFromStateFile(t *testing.T) {
	data := t.TempDir()
	alloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
	runner := func(rec *recorder) *AllocRunner {
		ar := newRunner(t, data, clock.Real{}, mock.New(mock.Options{}), alloc, rec)
		ar.Run()
		return ar
	}
	count := func(st *structs.TaskState, typ string) (n int) {
		for _, e := range st.Events {
			if e.Type == typ {
				n++
			}
		}
		return n
	}
	ar1 := runner(&recorder{})
	t.Cleanup(func() { ar1.Kill(); <-ar1.Done() })
	waitUntil(t, "the first client's task to run", func() bool {
		return ar1.Status().ClientStatus == structs.AllocClientStatusRunning
	})
	// The first client is gone (its runner is left as it is).

	ar2 := runner(&recorder{})
	waitUntil(t, "the second client to re-attach", func() bool {
		return ar2.Status().ClientStatus == structs.AllocClientStatusRunning
	})
	st := ar2.Status().TaskStates["web"]
	if count(st, structs.TaskReceived) != 1 || count(st, structs.TaskStarted) != 1 || st.Restarts != 0 || st.State != structs.TaskStateRunning {
		t.Fatalf("re-attached task: %s, restarts %d, events %+v", st.State, st.Restarts, st.Events)
	}
	ar2.Kill()
	<-ar2.Done()

	rec3 := &recorder{}
	ar3 := runner(rec3)
	<-ar3.Done()
	st = ar3.Status().TaskStates["web"]
	if s := ar3.Status().ClientStatus; s != structs.AllocClientStatusComplete || st.State != structs.TaskStateDead ||
		count(st, structs.TaskStarted) != 1 || count(st, structs.TaskKilled) != 1 {
		t.Fatalf("after the task died: %s, task %s, events %+v", s, st.State, st.Events)
	}
}

// FuzzEncodeState: whatever the strings and the driver's state, the
// state file is what encoding/json writes, or fails as it does.
func FuzzEncodeState(f *testing.F) {
	for _, s := range odd {
		f.Add(s, s+"v", []byte(`{"Pid":1}`))
	}
	f.Add("web", "NOMAD_TASK_NAME", []byte("{ \"a\" : 1 }"))
	f.Add("", "", []byte(nil))
	f.Fuzz(func(t *testing.T, s, k string, raw []byte) {
		p := fullState(s)
		h := p.Tasks[s+"web"].Handle
		h.Config.Env[k] = s
		h.Config.Config = nil
		h.DriverState = raw
		want, werr := jsonEncoded(p)
		got, gerr := encodeState(nil, p)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("error %v, encoding/json's %v", gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
