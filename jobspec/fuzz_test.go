package jobspec

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzParse: no job file panics, and a successful parse round-trips
// through ParseAPIJob.
func FuzzParse(f *testing.F) {
	for _, file := range jobFiles(f) {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte(`{"Job":{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}}`))
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    task \"t\" { driver = \"${NOMAD_X}\" }\n  }\n}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		job, _, err := Parse("fuzz.hcl", src, Options{})
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("error is %T, not *Errors: %v", err, err)
			}
			return
		}
		data, err := json.Marshal(job)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, _, err := ParseAPIJob(data); err != nil {
			t.Fatalf("a parsed job does not parse back: %v\n%s", err, data)
		}
	})
}

// FuzzParseAPIJob: no API job panics.
func FuzzParseAPIJob(f *testing.F) {
	for _, file := range jobFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if job, _, err := Parse(file, src, Options{}); err == nil {
			data, _ := json.Marshal(job)
			f.Add(data)
		}
	}
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Volumes":{"d":{}},"Tasks":[{"Name":"t","Driver":"mock","Config":{"a":[1,2.5,{"b":null}]}}]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		job, _, err := ParseAPIJob(data)
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("error is %T, not *Errors: %v", err, err)
			}
			return
		}
		if job == nil {
			t.Fatal("nil job without error")
		}
	})
}
