# Both levels: the group's written fields are laid over the job's block;
# unset fields come from the job block, then from the defaults.
job "both" {
  update {
    max_parallel      = 2
    stagger           = "10s"
    healthy_deadline  = "2m"
    progress_deadline = "5m"
    auto_revert       = true
  }
  group "a" {
    count = 4
    update {
      max_parallel = 1
      canary       = 2
      auto_promote = true
    }
    task "t" {
      driver = "mock"
    }
  }
  group "b" {
    count = 4
    update {
      auto_revert = false
    }
    task "t" {
      driver = "mock"
    }
  }
}
