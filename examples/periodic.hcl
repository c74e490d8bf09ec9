# periodic.hcl — a batch job launched on a schedule.
#
# Every minute the leader launches a child job, periodic/periodic-<unix
# time>, which prints the time and finishes. prohibit_overlap skips a
# launch while the previous child still runs. `drover job status periodic`
# shows the next launch and the launched jobs; `drover job periodic force
# periodic` launches one now.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "periodic" {
  type = "batch"

  periodic {
    crons            = ["* * * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  group "tick" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "date" {
      driver = "raw_exec"

      config {
        command = "/bin/date"
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
