package jobspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// dockerJob is a job whose group (network on lines 3-6) runs one docker
// task whose config body starts on line 10.
func dockerJob(mode, config string) string {
	return "job \"j\" {\n  group \"g\" {\n    network {\n      mode = \"" + mode + "\"\n      port \"http\" { to = 80 }\n    }\n    task \"web\" {\n      driver = \"docker\"\n      config {\n" +
		config + "\n      }\n    }\n  }\n}\n"
}

func dockerRules() []rule {
	return []rule{
		{"image required", dockerJob("host", `        ports = ["http"]`), "task.config.image", 9, "task.config.image is required", false},
		{"image not a string", dockerJob("host", `        image = 5`), "task.config.image", 10, "task.config.image must be a string (got a number)", false},
		{"port label unknown", dockerJob("host", "        image = \"web:1\"\n        ports = [\"htp\"]"), "task.config.ports", 11, `"htp" is not a port label of the group network (did you mean http?)`, false},
		{"unknown key", dockerJob("host", "        image = \"web:1\"\n        imagee = \"x\""), "task.config.imagee", 11, `task.config.imagee is not a docker driver option (did you mean image?)`, false},
		{"refused key", dockerJob("host", "        image = \"web:1\"\n        privileged = true"), "task.config.privileged", 11, "task.config.privileged is not supported by drover (privileged containers are not run)", false},
		{"bad volume", dockerJob("host", "        image = \"web:1\"\n        volumes = [\"data\"]"), "task.config.volumes", 11, `must be "source:target"`, false},
		{"volume escaping the allocation", dockerJob("host", "        image = \"web:1\"\n        volumes = [\"../../etc:/etc2\"]"), "task.config.volumes", 11, `leaves the allocation's directory`, false},
		{"volume on /local", dockerJob("host", "        image = \"web:1\"\n        volumes = [\"data:/local\"]"), "task.config.volumes", 11, "target /local is where drover mounts the allocation's local directory", false},
		{"mount without target", dockerJob("host", "        image = \"web:1\"\n        mount {\n          type = \"tmpfs\"\n        }"), "task.config.mount.target", 11, "task.config.mount.target is required", false},
		{"mount bad type", dockerJob("host", "        image = \"web:1\"\n        mount {\n          type = \"nfs\"\n          target = \"/x\"\n        }"), "task.config.mount.type", 12, `must be bind, volume or tmpfs (got "nfs")`, false},
		{"mount option unknown", dockerJob("host", "        image = \"web:1\"\n        mount {\n          type = \"bind\"\n          target = \"/x\"\n          source = \"d\"\n          readonly = true\n          propagation = \"shared\"\n        }"), "task.config.mount.propagation", 16, "is not an option of a mount block", false},
		{"network_mode container", dockerJob("host", "        image = \"web:1\"\n        network_mode = \"container:db\""), "task.config.network_mode", 11, "is not supported by drover (a task cannot join another container's network)", false},
		{"ports with host network", dockerJob("host", "        image = \"web:1\"\n        network_mode = \"host\"\n        ports = [\"http\"]"), "task.config.ports", 12, `cannot be published with network_mode = "host"`, false},
		{"network_mode in a bridge group", dockerJob("bridge", "        image = \"web:1\"\n        network_mode = \"host\""), "task.config.network_mode", 11, `must be empty or "bridge" in a group whose network mode is "bridge"`, false},
		{"drover's own label", dockerJob("host", "        image = \"web:1\"\n        labels = {\n          \"com.hashicorp.nomad.alloc_id\" = \"x\"\n        }"), "", 11, "is set by drover on every container", false},
		{"bad pull timeout", dockerJob("host", "        image = \"web:1\"\n        image_pull_timeout = \"soon\""), "task.config.image_pull_timeout", 11, `must be a duration such as "5m" (got "soon")`, false},
		{"unknown network mode", dockerJob("cni/mynet", `        image = "web:1"`), "network.mode", 4, `network.mode "cni/mynet" is not supported by drover ("host" or "bridge")`, false},
		{"unknown driver", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"podman\"\n    }\n  }\n}\n", "task.driver", 4, `task.driver "podman" is not supported by drover (raw_exec, exec, java, docker or mock)`, false},
		{"two tasks publish one port", "job \"j\" {\n  group \"g\" {\n    network {\n      port \"http\" {}\n    }\n    task \"a\" {\n      driver = \"docker\"\n      config {\n        image = \"x\"\n        ports = [\"http\"]\n      }\n    }\n    task \"b\" {\n      driver = \"docker\"\n      config {\n        image = \"x\"\n        ports = [\"http\"]\n      }\n    }\n  }\n}\n",
			"task.config.ports", 17, `publishes port "http", which task "a" publishes too`, false},
	}
}

func TestDockerConfigRules(t *testing.T) {
	for _, c := range dockerRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "d.hcl", c) })
	}
}

func TestDockerJobParses(t *testing.T) {
	src := dockerJob("bridge", `        image = "web:1"
        command = "/bin/httpd"
        args = ["-f", "-p", "80"]
        labels {
          team = "web"
        }
        volumes = ["data:/data:ro", "../alloc/data:/shared"]
        mount {
          type = "tmpfs"
          target = "/scratch"
          tmpfs_options {
            size = 1048576
          }
        }
        force_pull = false
        image_pull_timeout = "30s"`)
	job, warns, err := Parse("ok.hcl", []byte(src), Options{})
	if err != nil || len(warns) > 0 {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	tg := job.TaskGroups[0]
	if tg.Networks[0].Mode != "bridge" || tg.Tasks[0].Driver != structs.DriverDocker {
		t.Fatalf("group %+v", tg)
	}
	dc, errs := structs.ParseDockerConfig(tg.Tasks[0].Config)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if dc.Image != "web:1" || dc.Labels["team"] != "web" || len(dc.Volumes) != 2 || len(dc.Mounts) != 1 ||
		dc.Mounts[0].TmpfsSizeBytes != 1<<20 || dc.ImagePullTimeout.Seconds() != 30 {
		t.Fatalf("config %+v", dc)
	}
}

// TestDockerConfigAPIErrorsNameTheField: an API job's docker config
// errors name the JSON path of the key.
func TestDockerConfigAPIErrorsNameTheField(t *testing.T) {
	src := `{"Job": {"ID": "j", "Name": "j", "TaskGroups": [{"Name": "g",
  "Networks": [{"DynamicPorts": [{"Label": "http", "To": 80}]}],
  "Tasks": [{"Name": "web", "Driver": "docker",
    "Config": {"image": "web:1", "ports": ["http", "admin"], "mount": [{"type": "bind", "target": "/x"}]}}]}]}}`
	_, _, err := ParseAPIJob([]byte(src))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want *Errors, got %v", err)
	}
	var got []string
	for _, d := range errs.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`Job.TaskGroups[0].Tasks[0].Config.ports[1]`, `"admin" is not a port label of the group network`,
		`Job.TaskGroups[0].Tasks[0].Config.mount[0].source`, `required for a bind mount`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
}
