# system.hcl — a system job: one allocation on every eligible node.
#
# Each node runs one copy; nodes are updated one at a time with a pause
# (stagger) between them. The constraint keeps it on Linux nodes.
variable "version" {
  type    = string
  default = "1"
}

job "node-agent" {
  type = "system"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  update {
    max_parallel     = 1
    stagger          = "10s"
    min_healthy_time = "3s"
    healthy_deadline = "1m"
    health_check     = "task_states"
  }

  group "agent" {
    task "agent" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo agent on ${node.unique.name} in ${node.datacenter}; exec /bin/sleep 3600"]
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
