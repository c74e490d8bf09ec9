package jobspec

import (
	"encoding/json"
	"testing"
)

// groupVolumes is a job whose group has groupLines and whose docker task
// has taskLines.
func groupVolumes(groupLines, taskLines string) string {
	return "job \"j\" {\n  group \"g\" {\n" + groupLines + "\n    task \"t\" {\n      driver = \"docker\"\n      config { image = \"busybox\" }\n" + taskLines + "\n    }\n  }\n}\n"
}

// Volume and volume_mount blocks as Nomad's documentation writes them.
func TestVolumeParse(t *testing.T) {
	src := groupVolumes(`    volume "certs" {
      type      = "host"
      source    = "ca-certificates"
      read_only = true
    }
    volume "data" {
      type      = "host"
      source    = "data"
      per_alloc = true
    }`, `      volume_mount {
        volume      = "certs"
        destination = "/etc/ssl/certs"
      }
      volume_mount {
        volume           = "data"
        destination      = "/data"
        read_only        = false
        propagation_mode = "private"
      }`)
	j, _, err := Parse("v.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := j.TaskGroups[0]
	vols, _ := json.Marshal(g.Volumes)
	mounts, _ := json.Marshal(g.Tasks[0].VolumeMounts)
	if want := `{"certs":{"Name":"certs","Type":"host","Source":"ca-certificates","ReadOnly":true},"data":{"Name":"data","Type":"host","Source":"data","ReadOnly":false,"PerAlloc":true}}`; string(vols) != want {
		t.Fatalf("volumes\n got %s\nwant %s", vols, want)
	}
	if want := `[{"Volume":"certs","Destination":"/etc/ssl/certs","ReadOnly":false},{"Volume":"data","Destination":"/data","ReadOnly":false}]`; string(mounts) != want {
		t.Fatalf("mounts\n got %s\nwant %s", mounts, want)
	}
	if s := g.Volumes["data"].SourceFor(2); s != "data[2]" {
		t.Fatalf("per_alloc source %q", s)
	}
}

// Each volume error is located where it is written; CSI and dynamic host
// volumes name the field drover refuses.
func TestVolumeErrors(t *testing.T) {
	host := "      type = \"host\"\n      source = \"d\"\n"
	for _, c := range []rule{
		{"csi", groupVolumes("    volume \"d\" {\n      type = \"csi\"\n      source = \"d\"\n    }", ""), "volume.type", 4, `volume.type = "csi" is not supported by drover`, false},
		{"csi access mode", groupVolumes("    volume \"d\" {\n      type = \"csi\"\n      source = \"d\"\n      access_mode = \"single-node-writer\"\n    }", ""), "volume.access_mode", 6, "volume.access_mode is not supported by drover (no CSI volumes)", false},
		{"sticky", groupVolumes("    volume \"d\" {\n"+host+"      sticky = true\n    }", ""), "volume.sticky", 6, "volume.sticky is not supported by drover (no dynamic host volumes)", false},
		{"no type", groupVolumes("    volume \"d\" {\n      source = \"d\"\n    }", ""), "volume", 3, `volume "d" needs a type ("host")`, false},
		{"other type", groupVolumes("    volume \"d\" {\n      type = \"nfs\"\n      source = \"d\"\n    }", ""), "volume.type", 4, `must be "host" (got "nfs")`, false},
		{"no source", groupVolumes("    volume \"d\" {\n      type = \"host\"\n    }", ""), "volume", 3, `volume "d" needs a source`, false},
		{"unknown volume", groupVolumes("    volume \"d\" {\n"+host+"    }", "      volume_mount {\n        volume = \"e\"\n        destination = \"/e\"\n      }"), "volume_mount.volume", 11, `names no volume of group "g" (got "e")`, false},
		{"no destination", groupVolumes("    volume \"d\" {\n"+host+"    }", "      volume_mount {\n        volume = \"d\"\n      }"), "volume_mount", 10, "volume_mount.destination is required", false},
		{"propagation", groupVolumes("    volume \"d\" {\n"+host+"    }", "      volume_mount {\n        volume = \"d\"\n        destination = \"/d\"\n        propagation_mode = \"bidirectional\"\n      }"), "volume_mount.propagation_mode", 13, "volume_mount.propagation_mode is not supported by drover", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// The API JSON of a job with artifacts and host volumes reads back as the
// same job, as drover job inspect's output must.
func TestVolumesAndArtifactsAPIJSONRoundTrip(t *testing.T) {
	src := groupVolumes("    volume \"d\" {\n      type = \"host\"\n      source = \"d\"\n      per_alloc = true\n    }",
		"      volume_mount {\n        volume = \"d\"\n        destination = \"/d\"\n        read_only = true\n      }\n      artifact {\n        source = \"http://127.0.0.1/a.tgz\"\n        options { archive = \"false\" }\n      }")
	j, _, err := Parse("v.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(j)
	back, _, err := ParseAPIJob(b)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(j.TaskGroups[0])
	got, _ := json.Marshal(back.TaskGroups[0])
	if string(got) != string(want) {
		t.Fatalf("round trip\n got %s\nwant %s", got, want)
	}
}
