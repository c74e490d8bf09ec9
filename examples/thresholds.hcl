# thresholds.hcl — failure thresholds that pause a rollout.
#
# Ten copies of a loop. Run a new version with -var fail=true: each new
# task exits at once and its allocation fails. The rollout goes on through
# the first failure (max_failed = 1, rescheduled as the reschedule policy
# says); the second one pauses the deployment (on_failure = "pause") with a
# description naming the threshold and the figures. No batch starts either
# while more than 20% of the group serves nothing (max_unhealthy). Then
# drover deployment resume <id> goes on (the failure count is kept), or
# drover deployment fail <id> ends it.
variable "version" {
  type    = string
  default = "1"
}

variable "fail" {
  type    = bool
  default = false
}

job "thresholds" {
  update {
    max_parallel      = 2
    max_failed        = 1
    max_unhealthy     = "20%"
    on_failure        = "pause"
    min_healthy_time  = "3s"
    healthy_deadline  = "30s"
    progress_deadline = "2m"
    health_check      = "task_states"
  }

  group "app" {
    count = 10

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
