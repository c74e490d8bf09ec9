# Every problem is reported at once.
job "bad" {
  type     = "services"
  priority = 0
  update {
    max_parallel = -1
    max_paralel  = 2
  }
  group "a" {
    count = -1
    task "t" {
      kill_timeout = "5 seconds"
      vault {
        role = "app"
      }
    }
  }
  group "a" {
  }
}
