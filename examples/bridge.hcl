# bridge.hcl — an exec task in the allocation's own network namespace, reached through its mapped host port.
#
# Each allocation gets a network namespace of its own, made by the client
# and wired to the host's "nomad" bridge by the CNI reference plugins
# (website/networking.md): the task has its own eth0 and address in
# 172.26.64.0/20 and listens on port 8080 there, whatever other
# allocations on the node do; the host maps a dynamic port to it, which
# the service advertises and the check probes. The client must run as
# root with the plugins installed (Debian's containernetworking-plugins)
# and iptables.
#
#   drover job run examples/bridge.hcl
#   drover alloc exec <ALLOC> /bin/busybox sh -c 'ip addr; echo $NOMAD_ALLOC_ADDR_http'
#   curl http://<NOMAD_HOST_ADDR_http>/
#   drover job run -var version=2 examples/bridge.hcl
variable "version" {
  type    = string
  default = "1"
}

job "bridge-web" {
  update {
    max_parallel     = 1
    health_check     = "checks"
    min_healthy_time = "2s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 2

    network {
      mode = "bridge"

      port "http" {
        to = 8080
      }
    }

    service {
      name     = "bridge-web"
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
      driver = "exec"

      config {
        command = "/bin/busybox"
        args = ["sh", "-c", <<-EOT
          echo "version $VERSION on $NOMAD_ALLOC_ADDR_http (host $NOMAD_HOST_ADDR_http)" > /local/index.html
          # The shell is PID 1 of the task's namespace, which gets only the
          # signals it handles: it traps kill_signal and stops httpd.
          busybox httpd -f -p 8080 -h /local &
          trap 'kill $!; exit 0' TERM
          wait
        EOT
        ]
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
