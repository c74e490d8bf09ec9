# A service job without any update block still gets the defaults.
job "none-service" {
  group "a" {
    task "t" {
      driver = "mock"
    }
  }
}
