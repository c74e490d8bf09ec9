# The migrate block merged as Nomad's: the job-level block's fields over
# the defaults, then each group's own.
job "migrate" {
  migrate {
    max_parallel     = 2
    min_healthy_time = "20s"
  }
  group "web" {
    count = 4
    migrate {
      health_check     = "task_states"
      healthy_deadline = "2m"
    }
    task "t" {
      driver = "mock"
    }
  }
  group "api" {
    count = 2
    task "t" {
      driver = "mock"
    }
  }
}
