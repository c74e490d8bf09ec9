# template.hcl — a configuration file and environment variables rendered
# from a Nomad variable and the task's own port.
#
#   drover var put nomad/jobs/template greeting=hello
#   drover job run examples/template.hcl
#   drover var put -force nomad/jobs/template greeting=bonjour   # the task restarts with it
#
# The task starts once both templates have rendered; a change of the
# variable renders them again and restarts the task (change_mode
# "restart", the default).
variable "version" {
  type    = string
  default = "1"
}

job "template" {
  group "web" {
    network {
      port "http" {}
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/server.conf; echo \"GREETING=$GREETING\"; exec python3 -m http.server ${NOMAD_PORT_http}"]
      }

      env {
        VERSION = var.version
      }

      template {
        data        = <<EOT
listen = "0.0.0.0:{{ env "NOMAD_PORT_http" }}"
alloc  = "{{ env "NOMAD_ALLOC_NAME" }}"
{{ with nomadVar "nomad/jobs/template" }}greeting = "{{ .greeting }}"{{ end }}
EOT
        destination = "local/server.conf"
        splay       = "1s"
      }

      template {
        data        = <<EOT
GREETING={{ with nomadVar "nomad/jobs/template" }}{{ .greeting }}{{ end }}
EOT
        destination = "secrets/server.env"
        env         = true
      }
    }
  }
}
