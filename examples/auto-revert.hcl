# auto-revert.hcl — automatic rollback of a failing version.
#
# Version 1 runs a healthy loop. Run it again with -var fail=true: the new
# task exits at once, its allocation turns unhealthy, the deployment fails
# (progress_deadline = 0 fails it on the first unhealthy allocation) and
# drover registers the last stable version again.
variable "version" {
  type    = string
  default = "1"
}

variable "fail" {
  type    = bool
  default = false
}

job "auto-revert" {
  update {
    max_parallel      = 1
    auto_revert       = true
    min_healthy_time  = "3s"
    healthy_deadline  = "30s"
    progress_deadline = "0s"
    health_check      = "task_states"
  }

  group "app" {
    count = 2

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "app" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", var.fail ? "echo failing; exit 1" : "exec /bin/sleep 3600"]
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
