# batch.hcl — a batch job that runs to completion.
#
# Three allocations each count down and exit 0. Batch jobs have no update
# block and no deployments: a new version replaces what is left at once.
variable "version" {
  type    = string
  default = "1"
}

variable "steps" {
  type    = number
  default = 5

  validation {
    condition     = var.steps > 0 && var.steps <= 60
    error_message = "steps must be between 1 and 60."
  }
}

job "countdown" {
  type = "batch"

  group "work" {
    count = 3

    reschedule {
      attempts = 1
      interval = "1h"
    }

    task "count" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args = ["-c", format("for i in $(seq %d -1 1); do echo \"$i (v$VERSION, alloc ${NOMAD_ALLOC_INDEX})\"; sleep 1; done", var.steps)]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 10
        memory = 16
      }
    }
  }
}
