# surge.hcl — create before destroy: a rollout that never lowers capacity.
#
# Eight copies of a small web server. A new version (drover job run
# -var version=2 examples/surge.hcl) replaces a quarter of them at a time
# (max_parallel = "25%": 2 of 8). With max_surge as wide as the batch, each
# replacement starts beside the allocation it replaces, and the old one
# stops only once its replacement is healthy: eight copies serve at every
# moment, with at most ten running.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "surge" {
  type = "service"

  update {
    max_parallel      = "25%"
    max_surge         = "25%"
    min_healthy_time  = "10s"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
  }

  group "web" {
    count = 8

    network {
      port "http" {}
    }

    service {
      name     = "surge-web"
      port     = "http"
      provider = "nomad"

      check {
        type     = "tcp"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
