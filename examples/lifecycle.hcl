# lifecycle.hcl — prestart, poststart sidecar and poststop tasks around a main task.
#
# "init" runs to completion before "server" starts; "shipper" starts once
# "server" runs and is stopped after it; "flush" runs once both are dead
# (also on `drover job stop lifecycle`). Each task appends a line to
# $NOMAD_ALLOC_DIR/order; `drover alloc status` shows each task's hook,
# its "Task hook" waits and the events' order.
variable "version" {
  type        = string
  default     = "1"
  description = "Changes the task environment, so each value is a new job version."
}

job "lifecycle" {
  group "web" {
    update {
      health_check     = "task_states"
      min_healthy_time = "2s"
    }

    task "init" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"init $(date)\" >> $NOMAD_ALLOC_DIR/order; sleep 2"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"server $(date)\" >> $NOMAD_ALLOC_DIR/order; exec sleep 3600"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }

    task "shipper" {
      driver = "raw_exec"

      lifecycle {
        hook    = "poststart"
        sidecar = true
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"shipper $(date)\" >> $NOMAD_ALLOC_DIR/order; exec sleep 3600"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }

    task "flush" {
      driver = "raw_exec"

      lifecycle {
        hook = "poststop"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"flush $(date)\" >> $NOMAD_ALLOC_DIR/order"]
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
