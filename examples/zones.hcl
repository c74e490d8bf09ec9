# zones.hcl — a rollout that finishes one zone before it touches the next.
#
# Six copies of a loop, spread over the clients' zones: each client names
# its zone in its meta (agent config meta = { zone = "a" }, or
# drover agent -meta zone=a). A new version (drover job run -var version=2
# examples/zones.hcl) rolls zone by zone, the zone with the fewest
# allocations first (ties by name): within a zone, one allocation at a time
# (disruption_budget = 1: at most one replaced and not yet healthy; a first
# failure in a zone reaches its budget and fails the deployment); the next
# zone starts 5s after every allocation of the current one runs the new
# version healthy. No batch ever mixes zones. Allocations on clients without a zone form the
# zone "", rolled last. See website/rollouts.md#zones.
variable "version" {
  type    = string
  default = "1"
}

job "zones" {
  update {
    max_parallel      = 2
    min_healthy_time  = "5s"
    healthy_deadline  = "1m"
    progress_deadline = "3m"
    health_check      = "task_states"

    zones {
      attribute           = "${node.meta.zone}"
      mode                = "zone_by_zone"
      order               = "fewest_first"
      disruption_budget   = 1
      pause_between_zones = "5s"
    }
  }

  group "app" {
    count = 6

    spread {
      attribute = "${node.meta.zone}"
    }

    task "app" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo version $VERSION on ${NOMAD_ALLOC_INDEX}; exec /bin/sleep 3600"]
      }

      env {
        VERSION = var.version
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
