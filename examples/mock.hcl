# mock.hcl — the mock driver, for tests and demos without processes.
#
# Each mock task "runs" for 10 minutes and then exits successfully; nothing
# is started on the host. A new -var version gives a new job version.
variable "version" {
  type    = string
  default = "1"
}

job "mock" {
  update {
    max_parallel     = 2
    min_healthy_time = "1s"
    healthy_deadline = "30s"
    health_check     = "task_states"
  }

  group "sim" {
    count = 5

    task "sim" {
      driver = "mock"

      config {
        run_for = "10m"
      }

      env {
        VERSION = var.version
      }
    }
  }
}
