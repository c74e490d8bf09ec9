package jobspec_test

import (
	"fmt"

	"github.com/droverhq/drover/jobspec"
)

func ExampleParse() {
	src := []byte(`
variable "version" {
  default = "1"
}

job "web" {
  update {
    max_parallel = 2
  }
  group "app" {
    count = 3
    update {
      canary = 1
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      env {
        VERSION = var.version
        PORT    = "${NOMAD_PORT_http}"
      }
    }
  }
}
`)
	job, warnings, err := jobspec.Parse("web.hcl", src, jobspec.Options{Vars: []string{"version=2"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	u := job.TaskGroups[0].Update
	fmt.Println(len(warnings), job.ID, job.Datacenters, u.MaxParallel, u.Canary, u.MinHealthyTime)
	fmt.Println(job.TaskGroups[0].Tasks[0].Env["VERSION"], job.TaskGroups[0].Tasks[0].Env["PORT"])
	// Output:
	// 0 web [*] 2 1 10s
	// 2 ${NOMAD_PORT_http}
}

func ExampleParse_errors() {
	src := []byte(`job "web" {
  group "app" {
    update {
      max_parallel = -1
      max_paralel  = 2
    }
    task "server" {
    }
  }
}
`)
	_, _, err := jobspec.Parse("web.hcl", src, jobspec.Options{})
	fmt.Println(err)
	// Output:
	// web.hcl:4:7: update.max_parallel must not be negative (got -1)
	// web.hcl:5:7: unknown attribute "max_paralel" in update (did you mean max_parallel?)
	// web.hcl:7:5: task.driver is required
}
