# Groups one at a time (website/rollouts.md#groups-one-at-a-time): the
# job-level group_order names db, then api; web and cache, which it does not
# name, follow in the order this file declares them (web, then cache), with
# 30s after each group is done. Both fields stay in the job's update block:
# no group's merged strategy carries them, whether the group writes a block
# of its own (api, its canary; cache, its max_parallel) or not.
job "group-order" {
  update {
    max_parallel         = 2
    min_healthy_time     = "5s"
    group_order          = ["db", "api"]
    pause_between_groups = "30s"
  }
  group "web" {
    count = 4
    task "t" {
      driver = "mock"
    }
  }
  group "db" {
    count = 2
    task "t" {
      driver = "mock"
    }
  }
  group "api" {
    count = 3
    update {
      canary = 1
    }
    task "t" {
      driver = "mock"
    }
  }
  group "cache" {
    count = 2
    update {
      max_parallel = 1
    }
    task "t" {
      driver = "mock"
    }
  }
}
