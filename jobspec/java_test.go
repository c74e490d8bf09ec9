package jobspec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// javaJob is a job whose one java task's config body starts on line 6.
func javaJob(config string) string {
	return "job \"j\" {\n  group \"g\" {\n    task \"app\" {\n      driver = \"java\"\n      config {\n" + config + "\n      }\n    }\n  }\n}\n"
}

func javaRules() []rule {
	return []rule{
		{"no config", "job \"j\" {\n  group \"g\" {\n    task \"app\" {\n      driver = \"java\"\n    }\n  }\n}\n", "task.config.jar_path", 3, "task.config.jar_path or class must be specified", false},
		{"neither jar nor class", javaJob(`        jvm_options = ["-Xmx64m"]`), "task.config.jar_path", 5, "task.config.jar_path or class must be specified", false},
		{"unknown key", javaJob("        jar_path = \"local/app.jar\"\n        jvm_option = [\"-Xmx64m\"]"), "task.config.jvm_option", 7, "task.config.jvm_option is not a java driver option (did you mean jvm_options?)", false},
		{"exec's key", javaJob("        jar_path = \"local/app.jar\"\n        command = \"java\""), "task.config.command", 7, "task.config.command is not a java driver option", false},
		{"jar_path not a string", javaJob(`        jar_path = ["a.jar"]`), "task.config.jar_path", 6, "task.config.jar_path must be a string", false},
		{"jvm_options not a list", javaJob("        class = \"Main\"\n        jvm_options = \"-Xmx64m\""), "task.config.jvm_options", 7, "task.config.jvm_options must be a list", false},
		{"bad ipc_mode", javaJob("        class = \"Main\"\n        ipc_mode = \"shared\""), "task.config.ipc_mode", 7, `must be "private" or "host" (got "shared")`, false},
		{"unknown capability", javaJob("        class = \"Main\"\n        cap_drop = [\"net_rawr\"]"), "task.config.cap_drop", 7, `names an unknown capability "net_rawr"`, false},
		{"relative work_dir", javaJob("        class = \"Main\"\n        work_dir = \"local\""), "task.config.work_dir", 7, "must be an absolute path inside the task's root", false},
	}
}

func TestJavaConfigRules(t *testing.T) {
	for _, c := range javaRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "j.hcl", c) })
	}
}

// TestNomadJavaJobsParse: jobs written as Nomad's own java jobs are —
// a jar fetched by an artifact, and a class compiled by an exec prestart
// task into the allocation's directory, run from there — parse, their
// config kept as written (runtime references as text).
func TestNomadJavaJobsParse(t *testing.T) {
	jar := `job "jar" {
  datacenters = ["dc1"]
  group "web" {
    task "app" {
      driver = "java"
      artifact {
        source = "https://example.com/app.jar"
      }
      config {
        jar_path    = "local/app.jar"
        jvm_options = ["-Xmx256m", "-Xms64m"]
        args        = ["--port", "${NOMAD_PORT_http}"]
        pid_mode    = "host"
        ipc_mode    = "private"
        cap_drop    = ["all"]
        cap_add     = ["net_bind_service"]
        work_dir    = "/local"
      }
      resources {
        cpu    = 500
        memory = 512
      }
    }
    network {
      port "http" {}
    }
  }
}
`
	class := `job "compiled" {
  type = "batch"
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }
  group "group" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "compile" {
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      driver = "exec"
      config {
        command = "javac"
        args    = ["-d", "${NOMAD_ALLOC_DIR}", "local/Main.java"]
      }
      template {
        destination = "local/Main.java"
        data        = "public class Main { public static void main(String[] a) { System.out.println(\"up\"); } }"
      }
    }
    task "run" {
      driver = "java"
      config {
        class_path = "${NOMAD_ALLOC_DIR}"
        class      = "Main"
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`
	for name, src := range map[string]string{"jar.nomad.hcl": jar, "class.nomad.hcl": class} {
		job, warns, err := Parse(name, []byte(src), Options{})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: err %v, warnings %v", name, err, warns)
		}
		tasks := job.TaskGroups[0].Tasks
		task := tasks[len(tasks)-1]
		if task.Driver != structs.DriverJava {
			t.Fatalf("%s: driver %q", name, task.Driver)
		}
		jc, errs := structs.ParseJavaConfig(task.Config)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		switch name {
		case "jar.nomad.hcl":
			want := &structs.JavaConfig{JarPath: "local/app.jar", JvmOptions: []string{"-Xmx256m", "-Xms64m"}, Args: []string{"--port", "${NOMAD_PORT_http}"},
				PidMode: "host", IpcMode: "private", CapDrop: []string{"all"}, CapAdd: []string{"net_bind_service"}, WorkDir: "/local"}
			if !reflect.DeepEqual(jc, want) {
				t.Errorf("%s: %+v, want %+v", name, jc, want)
			}
		default:
			if jc.Class != "Main" || jc.ClassPath != "${NOMAD_ALLOC_DIR}" {
				t.Errorf("%s: %+v", name, jc)
			}
		}
	}
}

// TestJavaAPIJSON: a java task's config in API JSON is checked as in a
// job file, the error naming the field.
func TestJavaAPIJSON(t *testing.T) {
	_, _, err := ParseAPIJob([]byte(`{"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "java", "Config": {"jar": "a.jar"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "Config.jar") || !strings.Contains(err.Error(), "not a java driver option") {
		t.Fatalf("err %v", err)
	}
	_, _, err = ParseAPIJob([]byte(`{"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "java", "Config": {"class_path": "local"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "Config.jar_path") || !strings.Contains(err.Error(), "or class must be specified") {
		t.Fatalf("err %v", err)
	}
	job, _, err := ParseAPIJob([]byte(`{"ID": "j", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "java", "Config": {"jar_path": "local/a.jar", "jvm_options": ["-Xmx64m"]}}]}]}`))
	if err != nil || job.TaskGroups[0].Tasks[0].Config["jar_path"] != "local/a.jar" {
		t.Fatalf("job %v, err %v", job, err)
	}
}
