# docker.hcl — a container behind an http check, rolled out with a canary.
#
# Each allocation runs the image's busybox httpd on port 8080 inside its
# container; the group's port "http" maps a dynamic host port on 127.0.0.1
# to it, and the service check probes that host port. A new version starts
# one canary, promotes itself once the canary is healthy, then replaces the
# others one at a time.
#
# The image must be on the node or pullable. Without a registry, build a
# tiny one from Debian's busybox-static as website/drivers/docker.md shows
# ("A local image"), then:
#
#   drover job run -var image=drover-example/busybox:1 examples/docker.hcl
#   drover job run -var image=drover-example/busybox:1 -var version=2 examples/docker.hcl
variable "version" {
  type    = string
  default = "1"
}

variable "image" {
  type    = string
  default = "drover-example/busybox:1"
}

job "docker-web" {
  update {
    max_parallel     = 1
    canary           = 1
    auto_promote     = true
    health_check     = "checks"
    min_healthy_time = "2s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 3

    network {
      port "http" {
        to = 8080
      }
    }

    service {
      name     = "docker-web"
      port     = "http"
      provider = "nomad"
      tags     = ["v${var.version}"]

      check {
        name     = "index"
        type     = "http"
        path     = "/"
        interval = "1s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "docker"

      config {
        image   = var.image
        command = "/bin/sh"
        args = ["-c", <<-EOT
          echo "version $VERSION on $NOMAD_ALLOC_ID" > "$NOMAD_TASK_DIR/index.html"
          echo "serving version $VERSION on port 8080"
          exec httpd -f -p 8080 -h "$NOMAD_TASK_DIR"
        EOT
        ]
        ports   = ["http"]
        init    = true

        labels {
          version = var.version
        }
      }

      env {
        VERSION = var.version
      }

      kill_timeout = "5s"

      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
