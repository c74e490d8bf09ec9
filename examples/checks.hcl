# checks.hcl — deployment health from an http service check.
#
# python3 -m http.server listens on a dynamic port; the client runs the
# http check against it. health_check = "checks" (the default) means an
# allocation is healthy once its task runs and the check passes for
# min_healthy_time.
variable "version" {
  type    = string
  default = "1"
}

job "checks" {
  update {
    max_parallel     = 1
    health_check     = "checks"
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 2

    network {
      port "http" {}
    }

    service {
      name     = "checks-web"
      port     = "http"
      provider = "nomad"
      tags     = ["v${var.version}"]

      check {
        name     = "index"
        type     = "http"
        path     = "/"
        method   = "GET"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1", "--directory", "${NOMAD_TASK_DIR}"]
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
