# rolling.hcl — a rolling update.
#
# Four copies of a small web server. A new version (drover job run
# -var version=2 examples/rolling.hcl) replaces two allocations at a time:
# each new allocation must pass its http check for 10s before the next
# batch starts, and the deployment fails if nothing becomes healthy for
# 2 minutes.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "rolling" {
  type = "service"

  update {
    max_parallel      = 2
    min_healthy_time  = "10s"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
    stagger           = "5s"
  }

  group "web" {
    count = 4

    network {
      port "http" {}
    }

    service {
      name     = "rolling-web"
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
