package structs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/wire"
)

// The extra fields of a task event read, encode and decode as the
// event's own, in JSON and in the log; an event without them has none.
func TestTaskEventExtraIsInlined(t *testing.T) {
	plain := &TaskEvent{Type: TaskStarted, Time: 5, Message: "m", DisplayMessage: "m"}
	killing := &TaskEvent{Type: TaskKilling, KillTimeout: 7}
	killing.SetExtra().KillReason = "drained"
	killing.SetExtra().Details = map[string]string{"k": "v"}

	b, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"ExitCode":0`) || strings.Contains(s, "KillReason") || strings.Contains(s, "Extra") {
		t.Fatalf("plain event JSON %s", s)
	}
	b, err = json.Marshal(killing)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"KillReason":"drained"`) || !strings.Contains(s, `"Details":{"k":"v"}`) || strings.Contains(s, "Extra") {
		t.Fatalf("killing event JSON %s", s)
	}
	var fromJSON TaskEvent
	if err := json.Unmarshal([]byte(`{"Type":"Restarting","RestartReason":"r","DriverError":"d"}`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON.Extra().RestartReason != "r" || fromJSON.Extra().DriverError != "d" {
		t.Fatalf("decoded %+v %+v", fromJSON, fromJSON.TaskEventExtra)
	}

	for _, e := range []*TaskEvent{plain, killing} {
		enc, err := wire.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		var back TaskEvent
		if err := wire.Decode(enc, &back); err != nil {
			t.Fatal(err)
		}
		if (back.TaskEventExtra == nil) != (e.TaskEventExtra == nil) || !back.TaskEventExtra.Equal(e.TaskEventExtra) ||
			back.Type != e.Type || back.KillTimeout != e.KillTimeout {
			t.Fatalf("log round trip of %+v: %+v", e, back)
		}
	}
	if plain.Extra().KillReason != "" || plain.TaskEventExtra != nil {
		t.Fatal("reading an event's extra fields added them")
	}
}

func TestTaskStateCopyCopiesExtra(t *testing.T) {
	e := &TaskEvent{Type: TaskTerminated}
	e.SetExtra().Details = map[string]string{"oom_killed": "true"}
	s := &TaskState{State: TaskStateDead, Events: []*TaskEvent{e, {Type: TaskStarted}}}
	c := s.Copy()
	c.Events[0].Details["oom_killed"] = "false"
	c.Events[0].KillReason = "x"
	if e.Details["oom_killed"] != "true" || e.KillReason != "" || c.Events[1].TaskEventExtra != nil {
		t.Fatalf("copy shares the extra fields: %+v", e.TaskEventExtra)
	}
}
