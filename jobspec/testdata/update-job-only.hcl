# The job-level block is defaulted and copied into every group.
job "job-only" {
  update {
    max_parallel = 3
    canary       = 1
    auto_revert  = true
  }
  group "a" {
    count = 4
    task "t" {
      driver = "mock"
    }
  }
  group "b" {
    count = 2
    task "t" {
      driver = "mock"
    }
  }
}
