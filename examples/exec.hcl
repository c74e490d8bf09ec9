# exec.hcl — a plain binary run isolated by the exec driver, behind an http check.
#
# Each allocation runs busybox's httpd (Debian's busybox-static) as nobody,
# in a root of its own built from the host's /bin, /etc, /lib*, /sbin and
# /usr (read-only), with PID, IPC and mount namespaces, in a cgroup of
# 32 MB: it serves its own local/ directory, where it writes its page, and
# sees nothing else of the host's files. The client must run as root with
# cgroups (website/drivers/exec.md). A new version replaces one allocation
# at a time once the new one passes its check.
#
#   drover job run examples/exec.hcl
#   drover alloc exec <ALLOC> /bin/busybox sh -c 'id; ls /; ps'
#   drover job run -var version=2 examples/exec.hcl
variable "version" {
  type    = string
  default = "1"
}

job "exec-web" {
  update {
    max_parallel     = 1
    health_check     = "checks"
    min_healthy_time = "2s"
    healthy_deadline = "1m"
  }

  group "web" {
    count = 2

    network {
      port "http" {}
    }

    service {
      name     = "exec-web"
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
          echo "version $VERSION on $NOMAD_ALLOC_ID, as $(id -un)" > /local/index.html
          echo "serving version $VERSION on port $NOMAD_PORT_http"
          # The shell is PID 1 of the task's namespace, which gets only the
          # signals it handles: it traps kill_signal and stops httpd.
          busybox httpd -f -p "$NOMAD_PORT_http" -h /local &
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
