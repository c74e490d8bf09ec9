# canary.hcl — canaries with manual promotion.
#
# One canary of the new version runs beside the three old allocations.
# Nothing else changes until an operator promotes the deployment
# (drover deployment promote <id>); then the rest roll one at a time.
variable "version" {
  type    = string
  default = "1"
}

job "canary" {
  update {
    canary           = 1
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
    health_check     = "task_states"
  }

  group "app" {
    count = 3

    task "app" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo version $VERSION on ${NOMAD_ALLOC_INDEX}; exec /bin/sleep 3600"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
