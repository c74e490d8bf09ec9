# blue-green.hcl — a blue/green deployment.
#
# canary = count: a full second set (green) of the new version starts
# beside the running set (blue). Once every green allocation is healthy the
# deployment is promoted automatically and blue is stopped.
variable "version" {
  type    = string
  default = "1"
}

locals {
  count = 2
}

job "blue-green" {
  update {
    canary           = local.count
    max_parallel     = local.count
    auto_promote     = true
    auto_revert      = true
    min_healthy_time = "5s"
    healthy_deadline = "1m"
    health_check     = "task_states"
  }

  group "app" {
    count = local.count

    task "app" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      env {
        VERSION = var.version
        COLOR   = var.version == "1" ? "blue" : "green"
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
