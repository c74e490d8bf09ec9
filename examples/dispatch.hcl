# dispatch.hcl — a parameterized batch job, run once per dispatch.
#
# The job itself runs nothing. Each `drover job dispatch` makes a child,
# dispatch/dispatch-<unix time>-<8 hex>, whose task prints the dispatch's
# meta and the payload the client wrote to local/input.txt:
#
#   echo hello | drover job dispatch -meta who=ops dispatch -
#
# `drover job status dispatch` lists the dispatched jobs.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "dispatch" {
  type = "batch"

  parameterized {
    payload       = "optional"
    meta_required = ["who"]
    meta_optional = ["why"]
  }

  group "echo" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "print" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"for $NOMAD_META_who: $(cat $NOMAD_TASK_DIR/input.txt)\""]
      }

      env {
        VERSION = var.version
      }

      dispatch_payload {
        file = "input.txt"
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
