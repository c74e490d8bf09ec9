# max_parallel = 0: no deployment, every alloc replaced at once.
job "no-deployment" {
  update {
    max_parallel = 0
  }
  group "a" {
    count = 3
    task "t" {
      driver = "mock"
    }
  }
}
