# group-order.hcl — a rollout that finishes one group before it starts the next.
#
# Three groups of loops: db (1 copy), api (2) and web (2). A new version
# (drover job run -var version=2 examples/group-order.hcl) rolls db first,
# then api, then web — group_order names db and api, and web, which it does
# not name, follows in the order of this file. A group starts only when
# every group before it runs the new version healthy and still serves in
# full, and 5s after the last of them is done; while it waits, drover
# deployment status shows each group's order and state. The job's first
# version places all three groups at once. See
# website/rollouts.md#groups-one-at-a-time.
variable "version" {
  type    = string
  default = "1"
}

job "group-order" {
  update {
    max_parallel         = 1
    min_healthy_time     = "3s"
    healthy_deadline     = "1m"
    progress_deadline    = "3m"
    health_check         = "task_states"
    group_order          = ["db", "api"]
    pause_between_groups = "5s"
  }

  group "db" {
    count = 1

    task "db" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo db version $VERSION on ${NOMAD_ALLOC_INDEX}; exec /bin/sleep 3600"]
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

  group "api" {
    count = 2

    task "api" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo api version $VERSION on ${NOMAD_ALLOC_INDEX}; exec /bin/sleep 3600"]
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

  group "web" {
    count = 2

    task "web" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo web version $VERSION on ${NOMAD_ALLOC_INDEX}; exec /bin/sleep 3600"]
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
