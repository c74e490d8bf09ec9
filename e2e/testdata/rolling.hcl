# The rolling example (examples/rolling.hcl) with a short rollout, for the
# end-to-end tests: each new allocation must stay healthy for 1s, batches
# are 1s apart.
variable "version" {
  type    = string
  default = "1"
}

job "rolling" {
  type = "service"

  update {
    max_parallel      = 2
    min_healthy_time  = "1s"
    healthy_deadline  = "30s"
    progress_deadline = "1m"
    stagger           = "1s"
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
        interval = "1s"
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
