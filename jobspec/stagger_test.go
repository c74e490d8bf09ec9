package jobspec

import (
	"testing"
	"time"
)

// TestStaggerSet: a rollout pauses between batches only when the job
// writes stagger; Nomad's default, which Nomad's Go client fills into API
// JSON, does not count as written.
func TestStaggerSet(t *testing.T) {
	group := func(update string) string {
		return `job "s" {
  ` + update + `
  group "g" {
    task "t" {
      driver = "mock"
    }
  }
}
`
	}
	hcl := []struct {
		name, src string
		set       bool
		stagger   time.Duration
	}{
		{"none", group(""), false, 30 * time.Second},
		{"job level", group(`update { stagger = "5s" }`), true, 5 * time.Second},
		{"default written", group(`update { stagger = "30s" }`), true, 30 * time.Second},
		{"other fields only", group(`update { max_parallel = 2 }`), false, 30 * time.Second},
	}
	for _, c := range hcl {
		j, _, err := Parse("s.hcl", []byte(c.src), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := j.TaskGroups[0].Update
		if u.StaggerSet != c.set || u.Stagger != c.stagger {
			t.Errorf("%s: StaggerSet=%t Stagger=%s, want %t %s", c.name, u.StaggerSet, u.Stagger, c.set, c.stagger)
		}
		if j.Update != nil && j.Update.StaggerSet != c.set {
			t.Errorf("%s: job-level StaggerSet=%t, want %t", c.name, j.Update.StaggerSet, c.set)
		}
	}

	api := func(update string) string {
		return `{"Job":{"ID":"s","Name":"s","Type":"service","TaskGroups":[{"Name":"g","Count":1,` +
			`"Update":` + update + `,"Tasks":[{"Name":"t","Driver":"mock"}]}]}}`
	}
	js := []struct {
		name, src string
		set       bool
	}{
		{"nomad default", api(`{"Stagger":30000000000,"MaxParallel":1}`), false},
		{"other value", api(`{"Stagger":5000000000}`), true},
		{"stated false", api(`{"Stagger":5000000000,"StaggerSet":false}`), false},
		{"stated true", api(`{"Stagger":30000000000,"StaggerSet":true}`), true},
		{"absent", api(`{"MaxParallel":2}`), false},
	}
	for _, c := range js {
		j, _, err := ParseAPIJob([]byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := j.TaskGroups[0].Update.StaggerSet; got != c.set {
			t.Errorf("%s: StaggerSet=%t, want %t", c.name, got, c.set)
		}
	}
}
