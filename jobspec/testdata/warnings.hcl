# Harmless unsupported elements are warnings; max_parallel > count too.
job "warn" {
  all_at_once = true
  migrate {
    max_parallel = 1
  }
  group "a" {
    count = 1
    update {
      max_parallel = 3
    }
    consul {
      namespace = "x"
    }
    task "t" {
      driver = "mock"
      resources {
        iops = 10
      }
    }
  }
}
