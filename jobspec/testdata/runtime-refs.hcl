# Runtime references stay as text for the client and the constraint
# checker; var, local and functions are evaluated.
variable "image" {
  type    = string
  default = "app"
}
variable "ports" {
  type    = list(number)
  default = [8080, 8081]
}
locals {
  name  = upper(var.image)
  cmd   = join(" ", ["run", local.name])
  extra = merge({ a = "1" }, { b = "2" })
}
job "refs" {
  datacenters = ["dc1", "dc2"]
  priority    = 70
  meta = {
    owner = "team"
  }
  constraint {
    attribute = "${meta.zone}"
    operator  = "regexp"
    value     = "^eu-"
  }
  constraint {
    distinct_hosts = true
  }
  spread {
    attribute = "${node.datacenter}"
    weight    = 80
    target "dc1" {
      percent = 60
    }
    target "dc2" {
      percent = 40
    }
  }
  group "g" {
    count          = length(var.ports)
    shutdown_delay = "5s"
    network {
      port "http" {
        static = var.ports[0]
      }
      port "admin" {
        to = 9000
      }
    }
    service {
      port = "admin"
      tags = ["${local.name}", "x"]
      check {
        type     = "tcp"
        interval = "10s"
        timeout  = "2s"
      }
    }
    task "t" {
      driver = "raw_exec"
      leader = true
      config {
        command = "/bin/sh"
        args    = ["-c", "${local.cmd} --port=${NOMAD_PORT_http} --url=http://${NOMAD_ADDR_http}/x --host=${attr.unique.hostname}"]
        nested {
          depth = 1.5
          on    = true
        }
        extra = local.extra
      }
      env {
        HOSTNAME_AT_RUNTIME = "${node.unique.name}"
        LITERAL             = "$${not_interpolated}"
        SUM                 = 1 + 2
        JSON                = jsonencode({ x = [1, 2] })
        HOME_DIR            = "${HOME}"
      }
      service {
        name = "task-svc"
        port = "http"
        check {
          type     = "http"
          path     = "/health"
          interval = "5s"
          timeout  = "1s"
          header {
            X-Check = ["1"]
          }
        }
      }
    }
  }
}
