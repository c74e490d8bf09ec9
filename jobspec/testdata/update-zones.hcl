# Zones (website/rollouts.md#zones): the job-level zones block, merged
# field by field. Group "a" takes it whole (mode defaults to zone_by_zone);
# "b" writes a partial zones block over it (its own order, budget and
# threshold) beside a canary; "c" rolls every zone at once, clearing the
# job's pause; "e" names its zones by two node values (Azure's zone ×
# fault domain) and clears the job's order with "fewest_first".
job "zones" {
  update {
    max_parallel = 2
    max_surge    = 1
    zones {
      attribute           = "${node.meta.zone}"
      order               = ["eu-1"]
      disruption_budget   = "25%"
      pause_between_zones = "1m"
    }
  }
  group "a" {
    count = 6
    task "t" {
      driver = "mock"
    }
  }
  group "b" {
    count = 9
    update {
      canary = 1
      zones {
        order             = ["eu-2", "eu-1"]
        disruption_budget = 2
        success_threshold = "80%"
      }
    }
    task "t" {
      driver = "mock"
    }
  }
  group "c" {
    count = 4
    update {
      checkpoints = ["50%"]
      zones {
        mode                = "concurrent"
        pause_between_zones = "0s"
      }
    }
    task "t" {
      driver = "mock"
    }
  }
  group "e" {
    count = 4
    update {
      zones {
        attribute = "${meta.zone}/${attr.platform.fault_domain}"
        order     = "fewest_first"
      }
    }
    task "t" {
      driver = "mock"
    }
  }
}
