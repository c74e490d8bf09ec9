# first-batch.hcl — one allocation first, then the rest in batches.
#
# Six copies of a small web server. A new version (drover job run
# -var version=2 examples/first-batch.hcl) replaces a single allocation
# first (first_batch = 1); only when it has stayed healthy for
# min_healthy_time do the others follow, three at a time. Unlike a canary,
# the first batch needs no promotion: it is the rollout's own first step.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "first-batch" {
  type = "service"

  update {
    first_batch       = 1
    max_parallel      = 3
    min_healthy_time  = "15s"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
  }

  group "web" {
    count = 6

    network {
      port "http" {}
    }

    service {
      name     = "first-batch-web"
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
