# Only one group writes a block; Job.Update stays nil and the other group
# gets the defaults.
job "group-only" {
  group "a" {
    count = 3
    update {
      max_parallel     = 2
      min_healthy_time = "30s"
      health_check     = "task_states"
    }
    task "t" {
      driver = "mock"
    }
  }
  group "b" {
    task "t" {
      driver = "mock"
    }
  }
}
