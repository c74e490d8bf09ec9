# artifact.hcl — a raw_exec service whose program is fetched before it starts.
#
# Serve a tarball holding app/run.sh, then run the job against it:
#
#   mkdir -p app && printf '#!/bin/sh\necho "app $1"; exec sleep 3600\n' > app/run.sh
#   chmod +x app/run.sh && tar czf app-1.tar.gz app
#   python3 -m http.server --bind 127.0.0.1 8000 &
#   drover job run -var checksum=sha256:$(sha256sum app-1.tar.gz | cut -d' ' -f1) examples/artifact.hcl
#
# The client fetches app-1.tar.gz, checks it against the checksum, unpacks it
# into local/, and starts local/app/run.sh. A wrong checksum fails the task
# with a "Failed Artifact Download" event (drover alloc status).
variable "version" {
  type        = string
  default     = "1"
  description = "Which tarball to fetch: app-<version>.tar.gz."
}

variable "base_url" {
  type    = string
  default = "http://127.0.0.1:8000"
}

variable "checksum" {
  type        = string
  default     = ""
  description = "sha256:<hex> of the tarball; empty checks nothing."
}

job "artifact" {
  group "app" {
    restart {
      attempts = 1
      delay    = "5s"
      mode     = "fail"
    }

    task "app" {
      driver = "raw_exec"

      artifact {
        source = "${var.base_url}/app-${NOMAD_META_version}.tar.gz"
        options {
          checksum = var.checksum
        }
      }

      config {
        command = "local/app/run.sh"
        args    = ["${NOMAD_META_version}"]
      }

      meta {
        version = var.version
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
