# checkpoints.hcl — a rollout that stops to be looked at.
#
# Ten copies of a loop. A new version (drover job run -var version=2
# examples/checkpoints.hcl) rolls two at a time and pauses when 20% of the
# group (2 allocations) runs the new version healthy, then again at 60%
# (6). Each pause ends by itself after checkpoint_delay; drover deployment
# pause <id> during the delay holds it until drover deployment resume <id>.
variable "version" {
  type    = string
  default = "1"
}

job "checkpoints" {
  update {
    max_parallel      = 2
    checkpoints       = ["20%", "60%"]
    checkpoint_delay  = "1m"
    min_healthy_time  = "5s"
    healthy_deadline  = "1m"
    progress_deadline = "3m"
    health_check      = "task_states"
  }

  group "app" {
    count = 10

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
