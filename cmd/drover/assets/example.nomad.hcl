# There can only be a single job definition per file. This job is named
# "example", so it is submitted under that ID.
job "example" {
  # "service" jobs run until they are stopped; "batch" jobs run to
  # completion; "system" jobs run one allocation on every eligible node.
  type = "service"

  # The datacenters the job may be placed in ("*" is every one).
  datacenters = ["*"]

  # The update block says how a new version replaces the running one: here
  # one allocation at a time, each healthy for 10s before the next, failing
  # the deployment if nothing becomes healthy within 2 minutes, and rolling
  # back to the last stable version when it fails. Drover adds rollout
  # policies beyond Nomad's (max_surge, first_batch, max_unhealthy,
  # checkpoints, zones): see the rollouts page of the docs.
  update {
    max_parallel      = 1
    min_healthy_time  = "10s"
    healthy_deadline  = "3m"
    progress_deadline = "10m"
    auto_revert       = true
    canary            = 0
  }

  # A group is a set of tasks placed together on one node. count is how
  # many allocations of the group run.
  group "web" {
    count = 2

    # A dynamic port for each allocation, given to the task as
    # NOMAD_PORT_http.
    network {
      port "http" {}
    }

    # The service's checks gate deployments: an allocation is healthy once
    # its checks pass.
    service {
      name     = "example-web"
      port     = "http"
      provider = "nomad"

      check {
        type     = "http"
        path     = "/"
        interval = "5s"
        timeout  = "2s"
      }
    }

    # Restart a failing task twice within 30 minutes before the allocation
    # fails (and is rescheduled on another node).
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "server" {
      # raw_exec runs a command on the node as the agent's user; the docker
      # driver runs an image instead.
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1"]
      }

      env {
        GREETING = "hello"
      }

      # What the task may use: CPU in MHz, memory in MB.
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
