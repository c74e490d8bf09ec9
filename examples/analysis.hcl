# analysis.hcl — a rollout gated by the service's own metrics.
#
# Four allocations roll one at a time. After each batch is healthy the
# leader asks Prometheus for the new version's error ratio three times,
# 10 seconds apart: under 1% the next batch starts; at 5% or more the
# deployment fails and auto_revert restores the last stable version; in
# between, or when Prometheus cannot answer, the rollout pauses until
# `drover deployment resume`.
#
# Point it at a Prometheus that scrapes the service (the `http_requests_total`
# and `http_errors_total` counters, labelled by `version` — the version the
# task reports, here $VERSION): either
#   drover job run -var prometheus=http://prometheus.internal:9090 examples/analysis.hcl
# or leave `address` out and give the servers
#   analysis { prometheus_address = "http://prometheus.internal:9090" }
# Without metrics for the new version every measurement is an error (an
# empty result), and the rollout pauses after its first batch: a
# monitoring gap never rolls back a good version.
variable "version" {
  type    = string
  default = "1"
}

variable "prometheus" {
  type    = string
  default = "http://127.0.0.1:9090"
}

job "analysis" {
  update {
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "1m"
    health_check     = "task_states"
    auto_revert      = true

    analysis "errors" {
      address  = var.prometheus
      query    = "sum(rate(http_errors_total{job=\"${job.name}\",version=\"${job.version}\"}[1m])) / sum(rate(http_requests_total{job=\"${job.name}\",version=\"${job.version}\"}[1m]))"
      success  = "result < 0.01"
      failure  = "result >= 0.05"
      interval = "10s"
      count    = 3
    }
  }

  group "web" {
    count = 4

    task "web" {
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
