# sysbatch.hcl — a sysbatch job: run once on every eligible node.
#
# Each Linux node runs the report once and is done; a node that joins later
# gets its own run. Nothing is rescheduled: a task that fails is restarted
# by its restart policy on its node, then left failed. No update block, no
# deployments; the job is dead once every node has finished.
variable "version" {
  type    = string
  default = "1"
}

job "node-report" {
  type = "sysbatch"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "report" {
    restart {
      attempts = 1
      delay    = "5s"
      mode     = "fail"
    }

    task "report" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"report v$VERSION from ${node.unique.name}: $(uname -sr), up $(cut -d' ' -f1 /proc/uptime)s\""]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 10
        memory = 16
      }
    }
  }
}
