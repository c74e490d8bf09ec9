package jobspec

import (
	"encoding/json"
	"testing"
)

// artifactTaskWith is a job whose one task carries taskLines.
func artifactTaskWith(taskLines string) string {
	return "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n      config { command = \"x\" }\n" + taskLines + "\n    }\n  }\n}\n"
}

// An artifact block as Nomad's documentation writes one, and its defaults.
func TestArtifactParse(t *testing.T) {
	src := artifactTaskWith(`      artifact {
        source      = "https://example.com/app-${NOMAD_META_version}.tar.gz"
        destination = "local/app"
        mode        = "dir"
        options {
          checksum = "sha256:` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"
        }
        headers {
          X-Token = "t"
        }
      }
      artifact {
        source = "https://example.com/run.sh"
      }`)
	j, _, err := Parse("a.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(j.TaskGroups[0].Tasks[0].Artifacts)
	want := `[{"GetterSource":"https://example.com/app-${NOMAD_META_version}.tar.gz","GetterOptions":{"checksum":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},"GetterHeaders":{"X-Token":"t"},"GetterMode":"dir","RelativeDest":"local/app"},` +
		`{"GetterSource":"https://example.com/run.sh","GetterMode":"any","RelativeDest":"local/"}]`
	if string(got) != want {
		t.Fatalf("artifacts:\n got %s\nwant %s", got, want)
	}
}

// Each artifact error is located on the line that wrote it.
func TestArtifactErrors(t *testing.T) {
	for _, c := range []rule{
		{"outside the task dir", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        destination = \"../../etc\"\n      }"), "artifact.destination", 8, `must stay inside the task's directory (got "../../etc")`, false},
		{"climbs through local", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        destination = \"local/../../x\"\n      }"), "artifact.destination", 8, "must stay inside the task's directory", false},
		{"no source", artifactTaskWith("      artifact {\n        destination = \"local\"\n      }"), "artifact", 6, "source is required", false},
		{"mode", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        mode = \"tree\"\n      }"), "artifact.mode", 8, `must be "any", "file" or "dir" (got "tree")`, false},
		{"checksum form", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        options { checksum = \"abc\" }\n      }"), "artifact.options", 8, `checksum: must be written type:value`, false},
		{"checksum length", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        options { checksum = \"sha256:abcd\" }\n      }"), "artifact.options", 8, "a sha256 checksum is 64 hex digits", false},
		{"unknown field", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        dest = \"local\"\n      }"), "artifact.dest", 8, `unknown attribute "dest" in artifact`, false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "a.hcl", c) })
	}
}
