job "example" {
  type        = "service"
  datacenters = ["*"]

  group "web" {
    count = 2

    network {
      port "http" {}
    }

    service {
      name     = "example-web"
      port     = "http"
      provider = "nomad"

      check {
        type     = "http"
        path     = "/"
        interval = "5s"
        timeout  = "2s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1"]
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
