# Restart and reschedule: the group's fields over the job-level reschedule
# block over the defaults for the job type; a task restart block over the
# group's.
job "policies" {
  reschedule {
    delay          = "10s"
    delay_function = "fibonacci"
    max_delay      = "10m"
  }
  group "a" {
    restart {
      attempts = 5
      delay    = "5s"
    }
    reschedule {
      unlimited = false
      attempts  = 3
      interval  = "1h"
    }
    ephemeral_disk {
      size   = 500
      sticky = true
    }
    task "t" {
      driver       = "raw_exec"
      kill_timeout = "30s"
      kill_signal  = "SIGINT"
      user         = "nobody"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      restart {
        mode = "delay"
      }
      logs {
        max_files     = 3
        max_file_size = 5
      }
      resources {
        cpu        = 200
        memory     = 128
        memory_max = 256
      }
    }
  }
}
