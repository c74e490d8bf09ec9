# The rollout policies (website/rollouts.md), every one written in the
# job-level block and merged field by field: group "a" takes them all,
# "b" and "c" override some, "d" gets a first batch wider than its batch
# width (capped, with a warning). max_parallel "25%" resolves per group.
job "rollout-policies" {
  update {
    max_parallel     = "25%"
    max_surge        = "25%"
    first_batch      = 1
    unhealthy_first  = true
    max_unhealthy    = "10%"
    max_failed       = 2
    on_failure       = "pause"
    checkpoints      = ["25%", "75%"]
    checkpoint_delay = "5m"
  }
  group "a" {
    count = 8
    task "t" {
      driver = "mock"
    }
  }
  group "b" {
    count = 10
    update {
      max_parallel    = 3
      max_surge       = 1
      unhealthy_first = false
      on_failure      = "revert"
      checkpoints     = [2, "50%"]
    }
    task "t" {
      driver = "mock"
    }
  }
  group "c" {
    count = 4
    update {
      first_batch      = "25%"
      max_failed       = "25%"
      auto_revert      = true
      on_failure       = "revert"
      checkpoints      = []
      checkpoint_delay = "0s"
    }
    task "t" {
      driver = "mock"
    }
  }
  group "d" {
    count = 10
    update {
      first_batch = "50%"
    }
    task "t" {
      driver = "mock"
    }
  }
}
