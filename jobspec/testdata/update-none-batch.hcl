# Batch groups have no update strategy.
job "none-batch" {
  type = "batch"
  group "a" {
    task "t" {
      driver = "mock"
    }
  }
}
