package jobspec

import (
	"encoding/json"
	"strings"
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
		{"outside the task dir", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        destination = \"../../etc\"\n      }"), "artifact.destination", 8, `must stay inside the task's directory or the allocation's shared ../alloc (got "../../etc")`, false},
		{"another task's directory", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        destination = \"../other/local\"\n      }"), "artifact.destination", 8, `(got "../other/local")`, false},
		{"out through alloc", artifactTaskWith("      artifact {\n        source = \"http://x/y\"\n        destination = \"../alloc/../../x\"\n      }"), "artifact.destination", 8, "must stay inside", false},
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

// A source on the client's own host, as go-getter would detect it, and a
// getter drover lacks are located errors on the source's line; a source
// whose beginning is an interpolation is left to the client.
func TestArtifactSourceRules(t *testing.T) {
	src := func(s string) string {
		return artifactTaskWith("      artifact {\n        source = \"" + s + "\"\n      }")
	}
	const local = "a path on the client's own host is refused"
	for _, c := range []rule{
		{"bare path", src("/etc/hostname"), "artifact.source", 7, `"/etc/hostname": ` + local, false},
		{"relative path", src("local/x"), "artifact.source", 7, local, false},
		{"file URL", src("file:///etc/hostname"), "artifact.source", 7, local, false},
		{"git over file", src("git::file:///srv/repo"), "artifact.source", 7, local, false},
		{"git over a path", src("git::/srv/repo"), "artifact.source", 7, local, false},
		{"hg over file", src("hg::file:///srv/repo"), "artifact.source", 7, local, false},
		{"forced file", src("file::/etc/hostname"), "artifact.source", 7, local, false},
		{"http forced on a path", src("http::/etc/hostname"), "artifact.source", 7, local, false},
		{"path then a variable", src("/etc/${NOMAD_META_f}"), "artifact.source", 7, local, false},
		{"file then a variable", src("file://${NOMAD_META_f}"), "artifact.source", 7, local, false},
		{"s3", src("s3::https://s3.amazonaws.com/bucket/key"), "artifact.source", 7, "s3:: is not supported by drover", false},
		{"gcs", src("gcs::https://www.googleapis.com/storage/v1/b/o"), "artifact.source", 7, "gcs:: is not supported by drover", false},
		{"smb", src("smb://host/share/f"), "artifact.source", 7, "smb:// is not supported by drover", false},
		{"checksums file on the host", artifactTaskWith("      artifact {\n        source = \"https://x/y\"\n        options { checksum = \"file:/etc/sums\" }\n      }"), "artifact.options", 8, "checksums file", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "a.hcl", c) })
	}
	for _, ok := range []string{
		"https://example.com/a.tar.gz", "http://10.0.0.1/f", "git::https://example.com/r.git//sub?ref=v1",
		"github.com/hashicorp/nomad", "git@github.com:hashicorp/nomad.git", "hg::https://example.com/r",
		"${NOMAD_META_src}", "https://${NOMAD_META_host}/f", "git::${NOMAD_META_repo}",
	} {
		if _, _, err := Parse("a.hcl", []byte(src(ok)), Options{}); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

// The JSON API's register and validate path refuses the same, naming the
// JSON field.
func TestArtifactSourceRulesJSON(t *testing.T) {
	job := func(src string) string {
		return `{"Job": {"ID": "j", "Name": "j", "Type": "batch", "Datacenters": ["dc1"], "TaskGroups": [{"Name": "g", "Tasks": [
			{"Name": "t", "Driver": "raw_exec", "Config": {"command": "x"}, "Artifacts": [{"GetterSource": "` + src + `"}]}]}]}}`
	}
	for _, src := range []string{"/etc/hostname", "file:///etc/hostname", "git::file:///srv/repo", "s3::https://s3.amazonaws.com/b/k"} {
		_, _, err := ParseAPIJob([]byte(job(src)))
		if err == nil || !strings.Contains(err.Error(), "Job.TaskGroups[0].Tasks[0].Artifacts[0].GetterSource") {
			t.Errorf("%s: %v, want an error naming Job.TaskGroups[0].Tasks[0].Artifacts[0].GetterSource", src, err)
		}
	}
	if _, _, err := ParseAPIJob([]byte(job("https://example.com/f"))); err != nil {
		t.Fatal(err)
	}
}
